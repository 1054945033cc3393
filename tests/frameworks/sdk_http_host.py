"""The SDK's own host over Streamable HTTP, on either line, to a server behind a bearer token and a URL key:
`streamable_http_client` with an httpx2 client of its own (2.x), `streamablehttp_client` with headers (1.x)."""

import json
import os
import sys

import anyio
from mcp import ClientSession

PATH = sys.argv[1] if len(sys.argv) > 1 else "notes.txt"
URL, TOKEN = os.environ["GUARD_URL"], os.environ["GUARD_TOKEN"]


async def main() -> None:
    try:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
    except ImportError:  # 1.x: httpx, the client the SDK builds
        from mcp.client.streamable_http import streamablehttp_client

        connection = streamablehttp_client(URL, headers={"Authorization": f"Bearer {TOKEN}"})
    else:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        connection = streamable_http_client(URL, http_client=client)
    async with connection as (read, write, *_rest), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        result = await session.call_tool("read_file", {"path": PATH})
    names = sorted(tool.name for tool in tools.tools)
    error = getattr(result, "is_error", getattr(result, "isError", None))
    print(json.dumps({"tools": names, "error": error, "text": result.content[0].text}))


anyio.run(main)
