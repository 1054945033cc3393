"""strands-agents (mcp 1.x): its MCPClient, which runs the session on a thread of its own, no model."""

import json
import sys

from mcp import StdioServerParameters, stdio_client
from strands.tools.mcp import MCPClient

WHEN = sys.argv[1] if len(sys.argv) > 1 else "12:00"

client = MCPClient(lambda: stdio_client(StdioServerParameters(command="time-server", args=[])))
with client:
    tools = client.list_tools_sync()
    arguments = {"source_timezone": "Europe/London", "time": WHEN, "target_timezone": "Asia/Tokyo"}
    result = client.call_tool_sync("call-1", "convert_time", arguments)
names = sorted(tool.tool_name for tool in tools)
print(json.dumps({"tools": names, "status": result["status"], "content": [c.get("text") for c in result["content"]]}))
