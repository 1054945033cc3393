"""A stateful SDK server whose answers depend on how the host answered its questions.

`ask` elicits a confirmation and counts the host's answers (accept, decline, cancel); `status`
(read-only) says the counts and the last answer. The state lives as long as the server object:
`build()` makes a fresh one (the tests run it in memory, once per sequence of answers).

    python tests/servers/elicit_counter.py    (stdio)
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel


class Confirm(BaseModel):
    confirm: bool


def build() -> MCPServer:
    """A server with fresh counts."""
    server = MCPServer("counter")
    counts = {"accept": 0, "decline": 0, "cancel": 0}
    last = ["none"]

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Ask the host to go on, and count its answer."""
        answer = await ctx.elicit("Go on?", Confirm)
        counts[answer.action] += 1
        last[0] = answer.action
        return f"{answer.action} number {counts[answer.action]}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def status() -> str:
        """The answers counted so far, and the last."""
        return f"last {last[0]}; accepts {counts['accept']}, declines {counts['decline']}, cancels {counts['cancel']}"

    return server


if __name__ == "__main__":
    build().run()
