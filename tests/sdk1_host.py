"""A host on the MCP Python SDK's 1.x line (`ClientSession`), run by tests/test_sdk1.py in a 1.x environment.

python tests/sdk1_host.py transport CASSETTE       the session over mockmcp.transport(CASSETTE)
python tests/sdk1_host.py stdio CASSETTE           the session with `mockmcp replay CASSETTE` over stdio_client
python tests/sdk1_host.py record SERVER FOLDER     the session recorded with mockmcp.recording: of [python, SERVER]
                                                   into FOLDER/command.yaml, of SERVER's `server` object (in
                                                   memory) into FOLDER/object.yaml; then each replayed in process
python tests/sdk1_host.py eras CASSETTE NATIVE     the whole notes session (callbacks, progress, logs) over
                                                   mockmcp.transport of CASSETTE under strict, then of NATIVE

Each prints one JSON object: the SDK it ran on ("sdk": mcp's version and the line mockmcp found), and each
session as the host saw it (what initialize, tools/list and tools/call read_file returned, as the SDK's
models dump them) with the replay's report where there was one.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mockmcp
from mockmcp.inprocess._sdk import sdk

TIMEOUT = 30  # seconds for one session


def dumped(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def session(transport: Any) -> dict[str, Any]:
    """initialize, tools/list and tools/call read_file over `transport`, as the host saw them."""
    with anyio.fail_after(TIMEOUT):
        async with transport as (read, write), ClientSession(read, write) as client:
            initialized = await client.initialize()
            tools = await client.list_tools()
            called = await client.call_tool("read_file", {"path": "notes.txt"})
    return {"initialize": dumped(initialized), "tools": dumped(tools), "call": dumped(called)}


CALLS = [
    ("read_file", {"path": "notes.txt"}),
    ("read_file", {"path": "nope.txt"}),
    ("count_slowly", {"n": 2}),
    ("delete_file", {"path": "notes.txt"}),
    ("summarize", {"path": "notes.txt"}),
    ("list_roots", {}),
]


async def notes(transport: Any) -> dict[str, Any]:
    """The notes server's whole session (examples/sdk_host.py's, on the 1.x line): every result as the SDK's
    models dump them, what the server asked the host's callbacks, its logs and the progress of count_slowly."""
    from mcp import types

    asked: list[Any] = []
    logs: list[Any] = []
    progress: list[Any] = []

    async def sampling(_ctx: Any, params: Any) -> Any:
        asked.append(dumped(params))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="milk"), model="example-model"
        )

    async def elicit(_ctx: Any, params: Any) -> Any:
        asked.append(dumped(params))
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def roots(_ctx: Any) -> Any:
        asked.append("roots/list")
        return types.ListRootsResult(roots=[types.Root(uri="file:///home/user/notes", name="notes")])

    async def log(params: Any) -> None:
        logs.append(params.data)

    async def counted(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    callbacks = {"sampling_callback": sampling, "elicitation_callback": elicit, "list_roots_callback": roots}
    results = []
    with anyio.fail_after(TIMEOUT):
        async with transport as (read, write), ClientSession(read, write, logging_callback=log, **callbacks) as client:
            results.append(dumped(await client.initialize()))
            results.append(dumped(await client.list_tools()))
            for name, arguments in CALLS:
                on_progress = counted if name == "count_slowly" else None
                results.append(dumped(await client.call_tool(name, arguments, progress_callback=on_progress)))
            results.append(dumped(await client.read_resource("notes://notes.txt")))
            results.append(dumped(await client.get_prompt("review", {"path": "notes.txt"})))
    return {"results": results, "asked": asked, "logs": logs, "progress": progress}


def report(replay: Any) -> dict[str, Any]:
    assert replay.report is not None
    return {"missed": replay.report.missed, "unplayed": replay.report.unplayed, "strict_ok": replay.report.strict_ok}


async def main(command: str, *args: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"sdk": {"mcp": version("mcp"), "line": sdk().line}}
    log = io.StringIO()  # the replay's summary: stdout carries only the JSON
    if command == "transport":
        replay = mockmcp.transport(args[0], log=log)
        seen["session"] = await session(replay)
        seen["report"] = report(replay)
    elif command == "stdio":
        replay_command = ["-m", "mockmcp", "replay", args[0]]
        server = StdioServerParameters(command=sys.executable, args=replay_command, env=dict(os.environ))
        seen["session"] = await session(stdio_client(server))
    elif command == "record":
        script, folder = Path(args[0]), Path(args[1])
        sys.path.insert(0, str(script.parent))
        served = importlib.import_module(script.stem).server
        for name, real in (("command", [sys.executable, str(script)]), ("object", served)):
            recording = mockmcp.recording(real, folder / f"{name}.yaml", log=log)
            replay = mockmcp.transport(folder / f"{name}.yaml", log=log)
            seen[name] = {"recorded": await session(recording), "was_recorded": recording.recorded}
            seen[name].update(replayed=await session(replay), report=report(replay))
    elif command == "eras":
        for name, path, strict in (("translated", args[0], True), ("native", args[1], False)):
            replay = mockmcp.transport(path, log=log, strict=strict)
            seen[name] = {"session": await notes(replay), "report": report(replay)}
    else:
        raise SystemExit(f"unknown command {command!r}")
    return seen


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, *sys.argv[1:])))
