"""A small MCP server built with the official SDK, used to record mockmcp's example cassettes.

It exercises what a host meets in real servers: a plain tool, a tool error, progress and log
notifications, elicitation, sampling, roots, resources, prompts and a large result. Its answers
are deterministic so that recording it twice gives the same cassette (apart from timings).

Run it with ``python examples/notes_server.py`` (stdio), or ``python examples/notes_server.py --http PORT``
(Streamable HTTP at http://127.0.0.1:PORT/mcp; with port 0 the system picks a free port, which the server
logs on stderr: ``Uvicorn running on http://127.0.0.1:PORT``).
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

# The example logs through the handshake-era logging capability on purpose; keep stderr quiet about it.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

FILES = {"notes.txt": "remember to buy milk", "todo.md": "# Todo\n\n- write tests\n- ship it\n"}

server = MCPServer("notes", instructions="A notebook of small text files.")


@server.tool()
def read_file(path: str) -> str:
    """Read a note by its file name."""
    if path not in FILES:
        # A failure of the tool's work: the SDK answers with a result that has isError: true.
        raise ToolError(f"no such file: {path}")
    return FILES[path]


@server.tool()
async def count_slowly(n: int, ctx: Context) -> str:
    """Count to n, reporting progress and logging each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        await ctx.info(f"counted {i}")
    return f"counted to {n}"


@server.tool()
def big(size: int) -> str:
    """Return size bytes of text (for testing large messages)."""
    return ("0123456789abcdef" * (size // 16 + 1))[:size]


class Confirm(BaseModel):
    confirm: bool


def _ask(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@server.tool()
def delete_file(path: str, answer: Annotated[Confirm, Resolve(_ask)]) -> str:
    """Delete a note after asking the user."""
    return f"deleted {path}" if answer.confirm else f"kept {path}"


def _summary(path: str) -> Sample:
    text = FILES.get(path, "")
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))
    return Sample([message], max_tokens=50)


@server.tool()
def summarize(path: str, summary: Annotated[CreateMessageResult, Resolve(_summary)]) -> str:
    """Summarize a note with the host's model (sampling)."""
    content = summary.content
    return content.text if isinstance(content, TextContent) else str(content)


def _roots() -> ListRoots:
    return ListRoots()


@server.tool()
def list_roots(roots: Annotated[ListRootsResult, Resolve(_roots)]) -> str:
    """Name the host's roots."""
    return ", ".join(str(root.uri) for root in roots.roots) or "no roots"


@server.resource("notes://{name}")
def note(name: str) -> str:
    """A note as a resource."""
    return FILES.get(name, "")


@server.prompt()
def review(path: str) -> str:
    """Ask for a review of a note."""
    return f"Please review this note:\n\n{FILES.get(path, '')}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
