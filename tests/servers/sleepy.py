"""An MCP server (official SDK) whose one tool answers after the given number of seconds.

Two calls in flight, a slow one first: the real server answers the fast one first. `--http PORT`: over
Streamable HTTP (0: a port the system picks), as `examples/notes_server.py`; `--http PORT --sse`: over the legacy
HTTP+SSE transport (`/sse`).
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("sleepy")


@server.tool()
async def wait(seconds: float) -> str:
    """Answer after `seconds`."""
    await anyio.sleep(seconds)
    return f"waited {seconds}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"] and sys.argv[3:4] == ["--sse"]:
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
