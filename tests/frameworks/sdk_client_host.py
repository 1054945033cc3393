"""The SDK's own host, on either line: Client (2.x) or ClientSession over stdio_client (1.x)."""

import json
import sys

import anyio
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

WHEN = sys.argv[1] if len(sys.argv) > 1 else "12:00"
TIME = StdioServerParameters(command="time-server", args=[])
ARGUMENTS = {"source_timezone": "Europe/London", "time": WHEN, "target_timezone": "Asia/Tokyo"}


async def main() -> None:
    try:
        from mcp import Client  # 2.x
    except ImportError:
        from mcp import ClientSession  # 1.x

        async with stdio_client(TIME) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool("convert_time", ARGUMENTS)
    else:
        async with Client(TIME) as client:
            tools = await client.list_tools()
            result = await client.call_tool("convert_time", ARGUMENTS)
    names = sorted(tool.name for tool in tools.tools)
    print(
        json.dumps(
            {
                "tools": names,
                "error": getattr(result, "is_error", getattr(result, "isError", None)),
                "text": result.content[0].text,
            }
        )
    )


anyio.run(main)
