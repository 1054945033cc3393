"""The vocabulary every layer speaks: JSON-RPC's message shapes (`jsonrpc`), MCP's facts (`protocol`),
mockmcp's own words (`words`), and `namedtuple`, typing's class syntax without importing typing.

No I/O, nothing of mockmcp's above it. Internal: users import from `mockmcp`.
"""

__all__: list[str] = []
