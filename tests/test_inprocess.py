"""Replay in the host's process: `mockmcp.transport(cassette)` under the MCP SDK's `Client`.

The same host (examples/sdk_host.py: sampling, elicitation, roots, progress, a tool error) plays a
whole shipped session in process and over stdio replay, in both eras, and sees the same things; the
report is the engine's, and `strict=True` fails a session `--strict` fails, naming why. Delays, the
recorded pace, a dropped reply and a host's cancel are timers and scopes on the host's own loop. Each
test runs on both of anyio's backends, asyncio and trio.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from conftest import ROOT, child_env
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT
from sdk_host import connect, full_session, text_of
from test_causal_sdk import Tap
from test_faults_sdk import slow_then_fast

import mockmcp

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """In process, replay runs on the host's own event loop, whichever of anyio's backends it is. (The
    other tests of the suite stay on asyncio: tests/conftest.py's fixture.)"""
    return str(request.param)


SESSIONS = [("legacy", "cassettes/notes-session.yaml"), ("auto", "cassettes/notes-session-2026.yaml")]


async def session(server: Any, mode: str) -> dict[str, Any]:
    with anyio.fail_after(30):
        async with connect(server, mode) as client:
            return await full_session(client)


@pytest.mark.parametrize(("mode", "cassette"), SESSIONS, ids=["legacy", "auto"])
async def test_a_whole_session_in_process_is_what_the_host_sees_over_stdio(mode: str, cassette: str) -> None:
    replay = StdioServerParameters(
        command=sys.executable, args=["-m", "mockmcp", "replay", cassette], env=child_env(), cwd=str(ROOT)
    )
    over_stdio = await session(replay, mode)
    in_process = mockmcp.transport(str(ROOT / cassette))
    assert await session(in_process, mode) == over_stdio
    assert over_stdio["progress"] and over_stdio["missing"][0] is True  # progress and a tool error came
    assert in_process.report is not None and in_process.report.strict_ok


async def test_strict_fails_at_close_with_the_reason_and_the_report_says_what_missed() -> None:
    replay = mockmcp.transport(str(ROOT / "cassettes" / "notes-session.yaml"), strict=True)
    with pytest.raises(mockmcp.StrictFailure, match="1 miss"):
        async with connect(replay, "legacy") as client:
            with pytest.raises(MCPError, match="no recorded interaction matches: tools/call"):
                await client.call_tool("read_file", {"path": "elsewhere.txt"})  # answered -32099, as over stdio
    assert replay.report is not None and replay.report.missed == 1


@pytest.mark.parametrize("number", [float("nan"), float("-inf")])
async def test_nan_or_infinity_in_process_is_answered_as_the_sdk_writes_it_never_silence(number: float) -> None:
    # The SDK writes NaN and Infinity as null on every transport (pydantic's JSON), so in process the engine sees
    # the line a server would: here a miss, answered at once. Raw lines holding NaN are -32700 (test_hostile.py).
    replay = mockmcp.transport(str(ROOT / "cassettes" / "notes-session.yaml"))
    with anyio.fail_after(10):
        async with connect(replay, "legacy") as client:
            with pytest.raises(MCPError, match="no recorded interaction matches: tools/call") as caught:
                await client.call_tool("read_file", {"path": number})
    assert caught.value.error.data["differences"] == [
        'arguments.path: recorded "notes.txt" (string), incoming null (null)'
    ]


async def test_a_host_answer_that_differs_is_a_mismatch() -> None:
    from mcp.types import ElicitResult

    async def decline(_ctx: Any, _params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    replay = mockmcp.transport(str(ROOT / "cassettes" / "notes-session.yaml"))
    async with Client(replay, mode="legacy", elicitation_callback=decline) as client:
        await client.call_tool("delete_file", {"path": "notes.txt"})
    assert replay.report is not None and [m.method for m in replay.report.mismatches] == ["elicitation/create"]


async def test_a_transport_plays_one_session_at_a_time_and_a_new_one_when_entered_again() -> None:
    replay = mockmcp.transport(ROOT / "cassettes" / "notes.yaml")  # a path, named in the message as given
    async with replay:
        with pytest.raises(
            mockmcp.UsageError, match=r"notes\.yaml'\) is already in a session; it plays one at a time\n.*of its own"
        ):
            async with replay:
                pass
    for _ in range(2):
        with anyio.fail_after(30):
            async with Client(replay, mode="legacy") as host:
                assert text_of(await host.call_tool("read_file", {"path": "notes.txt"})) == "remember to buy milk"
        assert replay.report is not None and replay.report.missed == 0 and not replay.report.repeats


FAULTS = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: faults, version: '1'}}
- notification: {method: notifications/initialized}
- request: {method: tools/list}
  response:
    result:
      tools:
      - {name: slow, inputSchema: {type: object}}
      - {name: fast, inputSchema: {type: object}}
      - {name: hangs, inputSchema: {type: object}}
      - {name: paced, inputSchema: {type: object}}
- request: {method: tools/call, params: {name: slow, arguments: {}}}
  delay: 0.5
  response: {result: {content: [{type: text, text: slow}]}}
- request: {method: tools/call, params: {name: fast, arguments: {}}}
  response: {result: {content: [{type: text, text: fast}]}}
- request: {method: tools/call, params: {name: hangs, arguments: {}}}
  drop: true
  response: {result: {content: [{type: text, text: never sent}]}}
- at: 0.0
  request: {method: tools/call, params: {name: paced, arguments: {}}}
  response: {result: {content: [{type: text, text: paced}]}}
  took: 0.4
"""


def faults(tmp_path: Path, **options: Any) -> Any:
    path = tmp_path / "faults.yaml"
    path.write_text(FAULTS)
    return mockmcp.transport(str(path), **options)


async def test_a_delay_is_a_timer_on_the_hosts_loop_and_holds_up_no_other_call(tmp_path: Path) -> None:
    tap = Tap(faults(tmp_path))
    with anyio.fail_after(30):
        async with Client(tap, mode="legacy") as host:
            finished = await slow_then_fast(host, tap)
    # Ordering, not speed: the fast call, sent second, is answered while the slow one still waits.
    assert list(finished) == ["fast", "slow"] and finished["slow"] >= 0.5


async def test_a_dropped_reply_ends_in_the_hosts_timeout_and_a_cancelled_call_in_the_hosts_scope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = faults(tmp_path)
    with anyio.fail_after(30):
        async with Client(replay, mode="legacy") as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("hangs", {}, read_timeout_seconds=0.3)
            with anyio.move_on_after(0.1) as scope:  # the host gives up on the slow call itself
                await host.call_tool("slow", {})
            assert text_of(await host.call_tool("fast", {})) == "fast"  # the session goes on
            # Time that must pass, not a wait for something: past the slow call's delay (0.5 s), its timer
            # fires and finds nothing to send.
            await anyio.sleep(0.6)
            assert text_of(await host.call_tool("fast", {})) == "fast"
            with anyio.move_on_after(0.1):
                await host.call_tool("slow", {})  # and the block is left with its timer pending
    assert raised.value.error.code == REQUEST_TIMEOUT and scope.cancelled_caught
    # Each slow call's cancel reached the engine (the dropped reply's is accepted quietly, as over stdio).
    assert capsys.readouterr().err.count("the host cancelled request") == 2
    assert replay.report is not None and replay.report.missed == 0
    assert [fault.endswith("was dropped") for fault in replay.report.faults] == [True]


BREAKS_OFF = """\
- request: {method: tools/call, params: {name: breaks, arguments: {}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: halfway}}
  drop: cut
"""


async def test_an_answer_that_breaks_off_in_process_is_no_reply_after_what_came_before_it(tmp_path: Path) -> None:
    """In process, as over stdio, every request shares one stream, which one answer cannot break: the host
    gets what came before the cut, then its call times out, and the session goes on."""
    path = tmp_path / "breaks.yaml"
    path.write_text(FAULTS + BREAKS_OFF)
    replay = mockmcp.transport(str(path))
    logs: list[Any] = []
    with anyio.fail_after(30):
        async with connect(replay, "legacy", logs=logs) as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("breaks", {}, read_timeout_seconds=0.3)
            assert text_of(await host.call_tool("fast", {})) == "fast"
    assert raised.value.error.code == REQUEST_TIMEOUT and logs == ["halfway"]
    assert replay.report is not None and ["broke off before its reply" in f for f in replay.report.faults] == [True]


async def test_the_recorded_pace_waits_on_the_hosts_loop(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with Client(faults(tmp_path, timing=1.0), mode="legacy") as host:
            start = time.monotonic()
            assert text_of(await host.call_tool("paced", {})) == "paced"
    assert time.monotonic() - start >= 0.4  # took: 0.4, at the recorded pace


async def test_a_client_session_of_the_hosts_own_takes_the_streams() -> None:
    from mcp import ClientSession

    replay = mockmcp.transport(ROOT / "cassettes" / "notes-session.yaml")
    with anyio.fail_after(30):
        async with replay as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            result = await client.call_tool("read_file", {"path": "notes.txt"})
    assert result.content[0].text == "remember to buy milk"
    assert replay.report is not None and replay.report.missed == 0


async def test_a_message_the_recording_had_apart_is_taken_after_the_tasks_the_host_started_for_the_one_before() -> None:
    """A fast call's progress, then its answer and the slow call's (each recorded apart): a host that handles the
    progress in a task of its own (as the SDK does) that awaits a few times has handled it before it takes the
    answers, which come in the recorded order."""
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter
    from test_replay_engine import TWO_CALLS_APART

    def message(text: bytes) -> Any:
        return SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False))

    seen: list[Any] = []

    async def handle(method: str) -> None:
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        seen.append(method)

    fast = b'{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fast","_meta":{"progressToken":"p"}}}'
    replay = mockmcp.transport(mockmcp.loads(TWO_CALLS_APART.replace("TOOK", "0.6")))
    async with replay as (reads, writes), anyio.create_task_group() as group:
        await writes.send(message(b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}'))
        await writes.send(message(fast))
        for _ in range(3):
            said = (await reads.receive()).message
            if hasattr(said, "method"):
                group.start_soon(handle, said.method)
            else:
                seen.append(said.id)
    assert seen == ["notifications/progress", "b", "a"]


APART = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}, logging: {}}, serverInfo: {name: s, version: '1'}}
- notification: {method: notifications/initialized}
- request: {method: tools/list}
  response: {result: {tools: [{name: slow, inputSchema: {type: object}}, {name: fast, inputSchema: {type: object}}]}}
- at: 1.0
  request: {method: tools/call, params: {name: slow, arguments: {}}}
  response: {result: {content: [{type: text, text: slow}]}}
  took: 0.4
- at: 1.1
  request: {method: tools/call, params: {name: fast, arguments: {}, _meta: {progressToken: 2}}}
  server:
  - at: 1.3
    notification: {method: notifications/progress, params: {progressToken: 2, progress: 1}}
  - at: 1.35
    notification: {method: notifications/message, params: {level: info, data: logged}}
  response: {result: {content: [{type: text, text: fast}]}}
  took: 0.5
"""


async def test_a_host_whose_handlers_await_sees_a_calls_progress_before_the_other_calls_result_recorded_after() -> None:
    """The SDK's Client runs each notification's handler in a task of its own; handlers that await a few times (as
    one that hands what it got on would) still finish before the next message the recording had apart comes."""
    seen: list[str] = []

    async def handler(what: str) -> None:
        for _ in range(4):  # without the host's turn, the other call's result comes between (asyncio, 4 or more)
            await anyio.lowlevel.checkpoint()
        seen.append(what)

    async def progress(_value: float, _total: float | None, _message: str | None) -> None:
        await handler("progress")

    async def log(_params: Any) -> None:
        await handler("log")

    async def call(host: Client, name: str, **options: Any) -> None:
        seen.append(text_of(await host.call_tool(name, {}, **options)))

    replay = mockmcp.transport(mockmcp.loads(APART))
    with anyio.fail_after(30):
        async with Client(replay, mode="legacy", logging_callback=log) as host, anyio.create_task_group() as group:
            group.start_soon(call, host, "slow")
            group.start_soon(functools.partial(call, host, "fast", progress_callback=progress))
    assert seen == ["progress", "log", "slow", "fast"]
    assert replay.report is not None and replay.report.missed == 0
