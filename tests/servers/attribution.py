"""An SDK server whose messages name no request, for the recorder's rule of which request a server
message belongs to (the message comes while one call is in flight; another call is answered first).

    python tests/servers/attribution.py [--http PORT]    (stdio; or Streamable HTTP, 0: any free port,
                                                     which uvicorn logs)

- `watch`: tells the host a resource changed, through the session and naming no request (over HTTP
  it goes on the GET stream), then waits until `poke` has been called, and returns after it;
- `poke`: lets `watch` return;
- `delete`: once `hurry` has begun, asks the host to confirm through the session (naming no request:
  over stdio nothing tells which call a question is for), and returns the answer;
- `hurry`: returns once `delete` has asked, before the host answers (a call answered while another
  call's question waits).
"""

from __future__ import annotations

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("causal")
poked = asyncio.Event()
hurrying = asyncio.Event()
asking = asyncio.Event()


@server.resource("notes://today")
def today() -> str:
    return "buy milk"


@server.tool()
async def watch(ctx: Context) -> str:
    """Say the notes changed, then wait for a poke."""
    await ctx.session.send_resource_updated("notes://today")
    await poked.wait()
    await asyncio.sleep(0.1)  # poke's answer reaches the host first, over HTTP too (each on a stream of its own)
    return "watched"


@server.tool()
async def poke() -> str:
    """Let `watch` return."""
    poked.set()
    return "poked"


@server.tool()
async def delete(ctx: Context) -> str:
    """Ask the host to confirm, once `hurry` is in flight too."""
    await hurrying.wait()
    asking.set()
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    answer = await ctx.session.elicit_form("Delete the notes?", schema)
    return f"delete: {answer.action}"


@server.tool()
async def hurry() -> str:
    """Return while `delete` waits for the host's answer."""
    hurrying.set()
    await asking.wait()
    await asyncio.sleep(0.2)  # the question goes to the host first
    return "hurried"


if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run("stdio")
