"""A stateful SDK server in the manner of the reference `server-memory`: a graph of named entities
kept in a JSON file, so that it outlives the process (as a host that starts one server per call needs).

    python tests/servers/memory_graph.py FILE    (stdio; FILE is created when missing)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("memory")
STORE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("memory.json")


def _entities() -> list[str]:
    return json.loads(STORE.read_text()) if STORE.exists() else []


@server.tool()
def create_entities(names: list[str]) -> str:
    """Add entities to the graph."""
    STORE.write_text(json.dumps(sorted({*_entities(), *names})))
    return f"created {', '.join(names)}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_graph() -> str:
    """The whole graph."""
    return json.dumps({"entities": _entities()})


if __name__ == "__main__":
    server.run()
