"""An SDK server over Streamable HTTP that logs and asks the host on the session's GET stream, not on
the stream of the call that needs the answer, as the SDK's server does with a message sent through
its session without a related request (`ServerSession.send_log_message`, `elicit_form`); and logs
once through the call's context, which rides the call's own stream.

    python tests/servers/get_stream.py --http PORT [--json]    (0: any free port; uvicorn logs the one it took)

With --json it answers each request with one JSON body, as `json_response=True` makes the SDK's
server do: what is related to the call is then dropped, what goes on the GET stream still goes.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("asks-on-get")


@server.tool()
async def confirm(what: str, ctx: Context) -> str:
    """Ask the user to confirm, on the GET stream."""
    await ctx.info(f"{what} needs a confirmation")  # related to the call: on its stream
    await ctx.session.send_log_message("info", f"asking about {what}")  # related to nothing: on the GET stream
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    answer = await ctx.session.elicit_form(f"Really {what}?", schema)
    return f"{what}: {answer.action} {answer.content}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), json_response="--json" in sys.argv)
