"""fastmcp: Client(config) with an mcpServers dict mixing a Python server and an npm one."""

import asyncio
import json
import sys

from fastmcp import Client

WHEN = sys.argv[1] if len(sys.argv) > 1 else "12:00"
CONFIG = {
    "mcpServers": {
        "time": {"command": "time-server", "args": []},
        "everything": {"command": "everything-server", "args": ["stdio"]},
    }
}


async def main() -> None:
    async with Client(CONFIG, timeout=30) as client:
        tools = await client.list_tools()
        arguments = {"source_timezone": "Europe/London", "time": WHEN, "target_timezone": "Asia/Tokyo"}
        converted = await client.call_tool("time_convert_time", arguments)
        echo = await client.call_tool("everything_echo", {"message": "hi"})
    names = sorted(tool.name for tool in tools)
    print(json.dumps({"tools": names, "time": converted.content[0].text, "echo": echo.content[0].text}))


asyncio.run(main())
