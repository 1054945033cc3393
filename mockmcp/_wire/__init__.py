"""The vocabulary every layer speaks: `jsonrpc` (JSON-RPC's shapes), `protocol` (MCP's facts), `words` (mockmcp's
own), `credentials`, `identity` (the cassette a server is named by), `patterns` (RE2), `namedtuple` (typing's class
syntax without typing). No I/O, nothing of
mockmcp's above it. Internal: users import from `mockmcp`.
"""

__all__: list[str] = []
