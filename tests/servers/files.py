"""A filesystem-like MCP server (the official SDK's MCPServer) that speaks in absolute paths, as the official
filesystem server does: it serves the files under the folder given as its argument, lists them by their
absolute paths, and reads a file only by its absolute path under that folder.

    python tests/servers/files.py ROOT
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ROOT = Path(sys.argv[1]).resolve()

server = MCPServer("files", instructions=f"The files under {ROOT}.")


@server.tool()
def list_files() -> list[str]:
    """The absolute path of every file under the root."""
    return sorted(str(path) for path in ROOT.rglob("*") if path.is_file())


@server.tool()
def read_text_file(path: str) -> str:
    """A file's text, by its absolute path under the root."""
    wanted = Path(path)
    if not wanted.is_absolute() or not wanted.resolve().is_relative_to(ROOT) or not wanted.is_file():
        raise ToolError(f"access denied or no such file: {path} (the root is {ROOT})")
    return wanted.read_text()


if __name__ == "__main__":
    server.run("stdio")
