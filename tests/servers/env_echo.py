"""A stdio server that tells what its environment holds: `getenv(name)` answers the variable's value.

It stands for a server given an API key in its config's `env`, which some answer puts in front of the
host (an error message quoting the key, a whoami tool), so a recording must keep the value out.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("env-echo")


@server.tool()
def getenv(name: str) -> str:
    """The value of the environment variable `name` (empty when unset)."""
    return f"{name} is {os.environ.get(name, '')}"


if __name__ == "__main__":
    server.run("stdio")
