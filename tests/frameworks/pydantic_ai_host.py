"""pydantic-ai: an Agent with its TestModel (which calls every tool) and two stdio servers, through MCPToolset."""

import asyncio
import json
import sys

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.test import TestModel

WHEN = sys.argv[1] if len(sys.argv) > 1 else "12:00"
# TestModel writes "a" for every string; the servers need real values, as a real model would give.
VALUES = {"timezone": "Europe/London", "source_timezone": "Europe/London", "target_timezone": "Asia/Tokyo"}
VALUES |= {"time": WHEN, "path": "notes.txt"}


async def real_values(ctx, call_tool, name, args):
    return await call_tool(name, {key: VALUES.get(key, value) for key, value in args.items()})


async def main() -> None:
    # pydantic-ai gives a server 5 s to start and answer the handshake: on a loaded machine a live Python server's
    # start-up alone (its `import mcp`) can take longer, so this host, the same live and on replay, gives it 60.
    time = MCPToolset(StdioTransport(command="time-server", args=[]), process_tool_call=real_values, init_timeout=60)
    notes = MCPToolset(StdioTransport(command="notes-server", args=[]), process_tool_call=real_values, init_timeout=60)
    notes = notes.filtered(lambda ctx, tool: tool.name == "read_file")  # the others ask the host questions
    agent = Agent(TestModel(call_tools="all"), toolsets=[time, notes])
    async with agent:
        result = await agent.run("what time is it in Tokyo, and what do my notes say?")
    returns = sorted(
        (part.tool_name, str(part.content))
        for message in result.all_messages()
        for part in message.parts
        if part.part_kind == "tool-return"
    )
    print(json.dumps({"returns": returns, "output": result.output}))


asyncio.run(main())
