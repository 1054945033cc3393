"""openai-agents: its MCPServerStdio driven directly (connect, list_tools, call_tool, cleanup), no model."""

import asyncio
import json
import sys

from agents.mcp import MCPServerStdio

WHEN = sys.argv[1] if len(sys.argv) > 1 else "12:00"


async def main() -> None:
    # Its requests time out after 5 s by default: too short for a live server starting on a loaded machine.
    server = MCPServerStdio(
        params={"command": "time-server", "args": []},
        name="time",
        cache_tools_list=True,
        client_session_timeout_seconds=60,
    )
    await server.connect()
    try:
        tools = await server.list_tools()
        arguments = {"source_timezone": "Europe/London", "time": WHEN, "target_timezone": "Asia/Tokyo"}
        result = await server.call_tool("convert_time", arguments)
    finally:
        await server.cleanup()
    print(
        json.dumps(
            {
                "tools": sorted(t.name for t in tools),
                "error": getattr(result, "is_error", getattr(result, "isError", None)),
                "text": result.content[0].text,
            }
        )
    )


asyncio.run(main())
