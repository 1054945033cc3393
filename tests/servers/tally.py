"""A stateful MCP server (official SDK): `add` a word to a list kept in memory, `read` the list so far.

The same `read` is answered otherwise as the list grows, as a memory or notes server answers its
reads: what `mockmcp record --mode new` must keep every occurrence of.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

WORDS: list[str] = []
server = MCPServer("tally")


@server.tool()
def add(word: str) -> str:
    """Add a word to the list."""
    WORDS.append(word)
    return f"added {word}"


@server.tool()
def read() -> str:
    """The words added so far, in order."""
    return ", ".join(WORDS) or "(empty)"


if __name__ == "__main__":
    server.run()
