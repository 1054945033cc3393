"""langchain-mcp-adapters (mcp 1.x): MultiServerMCPClient in its default mode, a server process per call."""

import asyncio
import json
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient

WHEN = sys.argv[1] if len(sys.argv) > 1 else "12:00"


async def main() -> None:
    client = MultiServerMCPClient({"time": {"command": "time-server", "args": [], "transport": "stdio"}})
    tools = {tool.name: tool for tool in await client.get_tools()}
    arguments = {"source_timezone": "Europe/London", "time": WHEN, "target_timezone": "Asia/Tokyo"}
    result = await tools["convert_time"].ainvoke(arguments)
    text = result if isinstance(result, str) else [part.get("text") for part in result]
    print(json.dumps({"tools": sorted(tools), "result": text}))


asyncio.run(main())
