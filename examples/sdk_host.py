"""A small MCP host built with the official SDK (`pip install mcp`): lists tools, calls some, prints what it sees.

    python examples/sdk_host.py [--mode auto|legacy] [--call NAME JSON_ARGS]... -- SERVER_COMMAND...

Point it at a real server, at `mockmcp record -o CASSETTE -- SERVER...` to record the session, or at
`mockmcp replay CASSETTE` to see the same session again without the server. Sampling, elicitation
and roots requests from the server get fixed answers, so any server can be driven unattended.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent


async def sampling(_ctx: Any, _params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="milk"), model="example-model")


async def elicit(_ctx: Any, _params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"confirm": True})


async def roots(_ctx: Any) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///home/user/notes", name="notes")])


def connect(server: Any, mode: str = "auto", logs: list[Any] | None = None, **options: Any) -> Client:
    """A Client with this host's callbacks, opted in to log messages on 2026-07-28 connections.

    With `logs`, the data of every log message the server sends is appended to it.
    """
    if logs is not None:

        async def log(params: Any) -> None:
            logs.append(params.data)

        options["logging_callback"] = log
    return Client(
        server,
        mode=mode,
        sampling_callback=sampling,
        elicitation_callback=elicit,
        list_roots_callback=roots,
        log_level=None if mode == "legacy" else "info",
        **options,
    )


def text_of(result: Any) -> str:
    return result.content[0].text


async def full_session(client: Client) -> dict[str, Any]:
    """Everything the notes server offers, the way a host would use it; returns what the host saw."""
    seen: dict[str, Any] = {"progress": []}

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((value, total, message))

    seen["tools"] = [tool.name for tool in (await client.list_tools()).tools]
    seen["read"] = text_of(await client.call_tool("read_file", {"path": "notes.txt"}))
    missing = await client.call_tool("read_file", {"path": "nope.txt"})
    seen["missing"] = (missing.is_error, text_of(missing))
    seen["count"] = text_of(await client.call_tool("count_slowly", {"n": 2}, progress_callback=progress))
    seen["delete"] = text_of(await client.call_tool("delete_file", {"path": "notes.txt"}))
    seen["summary"] = text_of(await client.call_tool("summarize", {"path": "notes.txt"}))
    seen["roots"] = text_of(await client.call_tool("list_roots", {}))
    seen["resource"] = (await client.read_resource("notes://notes.txt")).contents[0].text
    prompt = await client.get_prompt("review", {"path": "notes.txt"})
    seen["prompt"] = prompt.messages[0].content.text
    return seen


async def run(mode: str, calls: list[tuple[str, dict[str, Any]]], notes: bool, command: list[str]) -> None:
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with connect(server, mode) as client:
        print(f"connected: protocol {client.protocol_version}")
        if notes:
            for key, value in (await full_session(client)).items():
                print(f"{key}: {value!r}")
            return
        for tool in (await client.list_tools()).tools:
            print(f"tool: {tool.name}: {tool.description or ''}".rstrip(": "))
        for name, arguments in calls:

            async def progress(value: float, total: float | None, message: str | None) -> None:
                print(f"  progress {value}/{total} {message or ''}")

            result = await client.call_tool(name, arguments, progress_callback=progress)
            texts = [block.text for block in result.content if isinstance(block, TextContent)]
            print(
                f"call {name} {json.dumps(arguments)} -> {'tool error: ' if result.is_error else ''}{' '.join(texts)}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mode", default="auto", help="auto (the default: server/discover, falling back to initialize) or legacy"
    )
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON_ARGS"))
    parser.add_argument(
        "--notes-session", action="store_true", help="run the whole session of examples/notes_server.py instead"
    )
    parser.add_argument("command", nargs="+", help="the server command, after --")
    args = parser.parse_args()
    calls = [(name, json.loads(arguments)) for name, arguments in args.call]
    anyio.run(run, args.mode, calls, args.notes_session, args.command)


if __name__ == "__main__":
    sys.exit(main())
