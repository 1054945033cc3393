"""An SDK server over Streamable HTTP that asks the host on the session's GET stream, not on the
stream of the call that needs the answer (as a server does when it asks without a related request).

    python tests/servers/get_stream.py --http PORT    (0: any free port; uvicorn logs the one it took)
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("asks-on-get")


@server.tool()
async def confirm(what: str, ctx: Context) -> str:
    """Ask the user to confirm, on the GET stream."""
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    answer = await ctx.session.elicit_form(f"Really {what}?", schema)
    return f"{what}: {answer.action} {answer.content}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
