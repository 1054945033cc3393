"""The vocabulary every layer speaks: JSON-RPC's message shapes (`jsonrpc`), MCP's facts (`protocol`),
mockmcp's own words (`words`), `credentials` (key shapes; a server's command line as a cassette names it,
without them), and `namedtuple`, typing's class syntax without importing typing.

No I/O, nothing of mockmcp's above it. Internal: users import from `mockmcp`.
"""

__all__: list[str] = []
