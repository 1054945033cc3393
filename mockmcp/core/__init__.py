"""The pure core: JSON-RPC and MCP vocabulary, matching, the replay engine, the recorder, reports.

Nothing here reads, writes, sleeps, spawns or looks at a clock: values come in, values (and
actions for a shell to carry out) go out. It imports only the standard library, `mockmcp.errors`
and the cassette model (`mockmcp.cassette.model`), never a shell, a tool or the CLI.
"""

__all__: list[str] = []
