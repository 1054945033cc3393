"""An SDK server whose tools take time and talk while they run, for the tests of replay's order.

    python tests/servers/causal.py                 (stdio)
    python tests/servers/causal.py --http PORT     (Streamable HTTP at http://127.0.0.1:PORT/mcp; 0: any
                                                    free port, which uvicorn logs on stderr)

- `steps(n, interval)`: reports progress 1..n, `interval` seconds apart (progress first, then the
  wait), then answers; cancelled meanwhile, the SDK answers the call -32800 "Request cancelled";
- `wait(seconds)`: answers after `seconds`, so calls in flight together are answered in the order of
  their waits, not of their requests;
- `confirm(what)`: asks the host (`elicitation/create`), then answers with what the host said.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("causal")


@server.tool()
async def steps(n: int, interval: float, ctx: Context) -> str:
    """Report progress n times, `interval` seconds apart, then answer."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        await anyio.sleep(interval)
    return f"did {n} steps"


@server.tool()
async def wait(seconds: float) -> str:
    """Answer after `seconds`."""
    await anyio.sleep(seconds)
    return f"waited {seconds}"


class Confirm(BaseModel):
    confirm: bool


@server.tool()
async def confirm(what: str, ctx: Context) -> str:
    """Ask the host to confirm, then say what it answered."""
    answer = await ctx.elicit(f"Really {what}?", Confirm)
    return f"{what}: {answer.action}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
