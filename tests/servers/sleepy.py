"""An MCP server (official SDK) whose one tool answers after the given number of seconds.

Two calls in flight, a slow one first: the real server answers the fast one first.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("sleepy")


@server.tool()
async def wait(seconds: float) -> str:
    """Answer after `seconds`."""
    await anyio.sleep(seconds)
    return f"waited {seconds}"


if __name__ == "__main__":
    server.run()
