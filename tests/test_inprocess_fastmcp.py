"""Replay in the host's process under fastmcp's `Client`: `Client(mockmcp.transport(cassette).for_fastmcp())`.

A host written with fastmcp (handlers for sampling, elicitation, roots, progress and logs; a tool
error; a protocol error) plays a whole shipped session in process and over stdio replay (fastmcp's
own StdioTransport), in both eras, and sees the same events in the same order. An answer of the host
that differs from the recording is a mismatch in the report. A client entered again is a new session,
with an engine of its own; nested blocks share one. fastmcp's `Client` runs on asyncio only (it keeps
its session in an asyncio task), so these tests do; the adapter itself, driven without that `Client`,
runs on both of anyio's backends.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from conftest import ROOT, child_env
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import ClientTransport, StdioTransport
from fastmcp.client.transports.base import TransportOptions
from fastmcp.exceptions import ToolError
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import CreateMessageResult, Root, TextContent

import mockmcp

pytestmark = pytest.mark.anyio

SESSIONS = [("legacy", "cassettes/notes-session.yaml"), ("auto", "cassettes/notes-session-2026.yaml")]
NOTES = str(ROOT / "cassettes" / "notes.yaml")
REPLAY = ["-m", "mockmcp", "replay"]

# What the host sees of the notes session, in order, in both eras (sdk_host.full_session's session,
# and a request no recording answers: the protocol error).
EVENTS: list[tuple[Any, ...]] = [
    ("tools", ["read_file", "count_slowly", "big", "delete_file", "summarize", "list_roots"]),
    ("read", "remember to buy milk"),
    ("tool error", "Error executing tool read_file: no such file: nope.txt"),
    ("progress", 1.0, 2.0, "step 1"),
    ("log", "info", "counted 1"),
    ("progress", 2.0, 2.0, "step 2"),
    ("log", "info", "counted 2"),
    ("count", "counted to 2"),
    ("elicitation", "Delete notes.txt?"),
    ("delete", "deleted notes.txt"),
    ("sampling", "Summarize: remember to buy milk"),
    ("summary", "milk"),
    ("roots",),
    ("roots listed", "file:///home/user/notes"),
    ("resource", "remember to buy milk"),
    ("prompt", "Please review this note:\n\nremember to buy milk"),
    ("protocol error", -32099, "mockmcp: no recorded interaction matches: tools/call"),
]


def host(transport: Any, mode: str, events: list[tuple[Any, ...]], confirm: bool = True) -> Client[Any]:
    """fastmcp's Client with handlers that answer as the recording's host did (`confirm=False`: it declines
    the elicitation), each noting in `events` what it was asked."""

    async def sampling(messages: Any, _params: Any, _ctx: Any) -> CreateMessageResult:
        events.append(("sampling", messages[0].content.text))
        answer = TextContent(type="text", text="milk")
        return CreateMessageResult(role="assistant", content=answer, model="example-model")

    async def elicitation(message: str, _type: Any, _params: Any, _ctx: Any) -> Any:
        events.append(("elicitation", message))
        return {"confirm": True} if confirm else ElicitResult(action="decline")

    async def roots(_ctx: Any) -> list[Root]:
        events.append(("roots",))
        return [Root(uri="file:///home/user/notes", name="notes")]  # type: ignore[arg-type]

    async def log(message: Any) -> None:
        events.append(("log", message.level, message.data))

    return Client(
        transport, mode=mode, sampling_handler=sampling, elicitation_handler=elicitation, roots=roots, log_handler=log
    )


def text(result: Any) -> str:
    return str(result.content[0].text)


async def session(client: Client[Any], events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The notes server's whole session, as a fastmcp host uses it; returns the events the host saw."""

    async def progress(value: float, total: float | None, message: str | None) -> None:
        events.append(("progress", value, total, message))

    with anyio.fail_after(30):
        async with client:
            events.append(("tools", [tool.name for tool in await client.list_tools()]))
            events.append(("read", text(await client.call_tool("read_file", {"path": "notes.txt"}))))
            with pytest.raises(ToolError) as failed:  # a result with isError: fastmcp raises it
                await client.call_tool("read_file", {"path": "nope.txt"})
            events.append(("tool error", str(failed.value)))
            counted = await client.call_tool("count_slowly", {"n": 2}, progress_handler=progress)
            events.append(("count", text(counted)))
            events.append(("delete", text(await client.call_tool("delete_file", {"path": "notes.txt"}))))
            events.append(("summary", text(await client.call_tool("summarize", {"path": "notes.txt"}))))
            events.append(("roots listed", text(await client.call_tool("list_roots", {}))))
            events.append(("resource", (await client.read_resource("notes://notes.txt"))[0].text))
            prompt = await client.get_prompt("review", {"path": "notes.txt"})
            events.append(("prompt", prompt.messages[0].content.text))
            with pytest.raises(MCPError) as refused:
                await client.call_tool("read_file", {"path": "elsewhere.txt"})  # never recorded
            events.append(("protocol error", refused.value.error.code, refused.value.error.message))
    return events


@pytest.mark.parametrize(("mode", "cassette"), SESSIONS, ids=["legacy", "auto"])
async def test_a_whole_session_in_process_is_what_a_fastmcp_host_sees_over_stdio(mode: str, cassette: str) -> None:
    stdio = StdioTransport(sys.executable, [*REPLAY, cassette], env=child_env(), cwd=str(ROOT), keep_alive=False)
    over_stdio: list[tuple[Any, ...]] = []
    await session(host(stdio, mode, over_stdio), over_stdio)
    replay = mockmcp.transport(str(ROOT / cassette))
    in_process: list[tuple[Any, ...]] = []
    await session(host(replay.for_fastmcp(), mode, in_process), in_process)
    assert in_process == over_stdio == EVENTS
    assert replay.report is not None and replay.report.missed == 1 and not replay.report.mismatches


async def test_a_host_answer_that_differs_is_a_mismatch() -> None:
    replay = mockmcp.transport(str(ROOT / "cassettes" / "notes-session.yaml"))
    events: list[tuple[Any, ...]] = []
    with anyio.fail_after(30):
        async with host(replay.for_fastmcp(), "legacy", events, confirm=False) as client:
            await client.call_tool("delete_file", {"path": "notes.txt"})
    assert events == [("elicitation", "Delete notes.txt?")]
    assert replay.report is not None and [m.method for m in replay.report.mismatches] == ["elicitation/create"]


async def test_a_client_entered_again_is_a_new_session_and_nested_blocks_share_one() -> None:
    replay = mockmcp.transport(NOTES)
    client = Client(replay.for_fastmcp(), mode="legacy")
    reports = []
    with anyio.fail_after(30):
        for _ in range(2):
            async with client:
                async with client:  # fastmcp counts its blocks: one connection, one session
                    await client.call_tool("read_file", {"path": "notes.txt"})
                await client.call_tool("read_file", {"path": "notes.txt"})  # the same session still
            reports.append(replay.report)
    first, second = reports
    assert first is not None and second is not None and first is not second
    # An engine per session: the second session's handshake is no repeat, its reads count afresh.
    assert (first.plays, first.repeats, first.missed) == (second.plays, second.repeats, 0)


async def test_a_fastmcp_config_launches_replay_as_its_server() -> None:
    """fastmcp's `mcpServers` configuration, with `mockmcp replay` as the server's command."""
    server = {"command": sys.executable, "args": [*REPLAY, NOTES], "env": child_env(), "keep_alive": False}
    with anyio.fail_after(30):
        async with Client({"mcpServers": {"notes": server}}, mode="legacy") as client:
            assert text(await client.call_tool("read_file", {"path": "notes.txt"})) == "remember to buy milk"


class Marked(ClientSession):
    """A session class of the connecting client's own (fastmcp passes its own in `transport_options`)."""


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_the_adapter_opens_a_session_per_connection_on_either_backend(anyio_backend: str) -> None:
    replay = mockmcp.transport(NOTES)
    adapter = replay.for_fastmcp()
    assert isinstance(adapter, ClientTransport)
    with anyio.fail_after(30):
        for _ in range(2):
            async with adapter.connect_session(transport_options=TransportOptions(session_class=Marked)) as opened:
                assert type(opened) is Marked
                await opened.initialize()
                assert text(await opened.call_tool("read_file", {"path": "notes.txt"})) == "remember to buy milk"
            assert replay.report is not None and replay.report.missed == 0 and not replay.report.repeats


def test_without_fastmcp_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fastmcp.client.transports.base", None)  # as if fastmcp were absent
    monkeypatch.delitem(sys.modules, "mockmcp.inprocess._fastmcp", raising=False)  # imported before, or not
    with pytest.raises(ImportError, match=r"^for_fastmcp\(\) adapts .* fastmcp's Client: install it \(pip install"):
        mockmcp.transport(NOTES).for_fastmcp()
