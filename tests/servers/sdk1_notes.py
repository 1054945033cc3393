"""A notes server on the MCP Python SDK's 1.x line (`mcp.server.fastmcp.FastMCP`), over stdio.

tests/sdk1_host.py records a session with it in a 1.x environment (tests/test_sdk1.py).
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

FILES = {"notes.txt": "remember to buy milk"}

server = FastMCP("notes", instructions="A notebook of small text files.")


@server.tool()
def read_file(path: str) -> str:
    """Read a note by its file name."""
    if path not in FILES:
        raise ValueError(f"no such file: {path}")
    return FILES[path]


if __name__ == "__main__":
    server.run("stdio")
