"""Each hand-edited fault knob, met by the official SDK host through `mockmcp replay`.

The host must react as it would to a real server doing the same: protocol errors arrive as
MCPError with the cassette's code and message, tool errors as results with is_error, a delay slows
one call and not another, a dropped reply ends in the host's timeout, an ended session as a closed
connection, a raw line as whatever the SDK makes of it, and "fail twice, then succeed" in order.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MOCKMCP, ROOT, child_env
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from sdk_host import text_of
from test_causal_sdk import Tap, calling, transport

pytestmark = pytest.mark.anyio

HANDSHAKE = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response:
    result:
      protocolVersion: '2025-11-25'
      capabilities: {tools: {}, logging: {}}
      serverInfo: {name: faults, version: '1'}
- notification: {method: notifications/initialized}
- request: {method: tools/list}
  response:
    result:
      tools:
      - {name: fetch, inputSchema: {type: object}}
      - {name: slow, inputSchema: {type: object}}
      - {name: fast, inputSchema: {type: object}}
"""


def ok(text: str) -> str:
    return f"{{result: {{content: [{{type: text, text: {text}}}], isError: false}}}}"


def call(name: str, knobs: str = "", response: str | None = None) -> str:
    body = f"- request: {{method: tools/call, params: {{name: {name}, arguments: {{}}}}}}\n"
    body += "".join(f"  {line}\n" for line in knobs.strip("\n").splitlines() if line)
    if response is not None:
        body += f"  response: {response}\n"
    return body


def cassette_file(tmp_path: Path, *interactions: str) -> Path:
    path = tmp_path / "faults.yaml"
    path.write_text(HANDSHAKE + "".join(interactions))
    return path


def replaying(path: Path, report: Path | None = None) -> StdioServerParameters:
    args = ["-m", "mockmcp", "replay", str(path), *(["--report", str(report)] if report else [])]
    return StdioServerParameters(command=sys.executable, args=args, env=child_env(), cwd=str(ROOT))


def client(path: Path, report: Path | None = None, **kw: Any) -> Client:
    return Client(replaying(path, report), mode="legacy", **kw)


async def test_protocol_error_arrives_as_mcp_error_with_the_cassettes_code(tmp_path: Path) -> None:
    error = "{error: {code: -32000, message: upstream exploded, data: {retry_after: 5}}}"
    path = cassette_file(tmp_path, call("fetch", response=error))
    with anyio.fail_after(30):
        async with client(path) as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("fetch", {})
    assert (raised.value.error.code, raised.value.error.message) == (-32000, "upstream exploded")
    assert raised.value.error.data == {"retry_after": 5}


async def test_tool_error_arrives_as_a_result_with_is_error(tmp_path: Path) -> None:
    failure = "{result: {content: [{type: text, text: 'quota exceeded'}], isError: true}}"
    path = cassette_file(tmp_path, call("fetch", response=failure))
    with anyio.fail_after(30):
        async with client(path) as host:
            result = await host.call_tool("fetch", {})
    assert result.is_error is True and text_of(result) == "quota exceeded"


async def slow_then_fast(host: Client, tap: Tap) -> dict[str, float]:
    """The tools `slow`, then `fast` as soon as the host has sent `slow` (through `tap`, the host's transport):
    each answer's text, in the order they came back, with the seconds each took from the first call."""
    finished: dict[str, float] = {}
    start = time.monotonic()

    async def one(name: str) -> None:
        result = await host.call_tool(name, {})
        finished[text_of(result)] = time.monotonic() - start

    async with anyio.create_task_group() as group:
        group.start_soon(one, "slow")
        with anyio.fail_after(30):
            await tap.passed("out", calling("slow")).wait()
        group.start_soon(one, "fast")
    return finished


async def test_a_delay_slows_that_call_while_a_concurrent_call_returns_at_once(tmp_path: Path) -> None:
    path = cassette_file(tmp_path, call("slow", "delay: 1", ok("slow")), call("fast", "", ok("fast")))
    tap = Tap(transport(replaying(path)))
    with anyio.fail_after(30):
        async with Client(tap, mode="legacy") as host:
            finished = await slow_then_fast(host, tap)
    # Ordering, not speed: the fast call, sent second, is answered while the slow one still waits.
    assert list(finished) == ["fast", "slow"] and finished["slow"] >= 1


async def test_a_dropped_reply_ends_in_the_hosts_timeout_and_its_cancel_is_accepted(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    path = cassette_file(tmp_path, call("fetch", "drop: true", ok("never sent")), call("fast", "", ok("fast")))
    with anyio.fail_after(30):
        async with client(path, report) as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("fetch", {}, read_timeout_seconds=0.5)
            after = await host.call_tool("fast", {})
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert text_of(after) == "fast"
    summary = json.loads(report.read_text())
    [fault] = summary["faults"]
    assert fault.startswith("interactions[3]: the reply to request ") and fault.endswith(" was dropped")


@pytest.mark.parametrize("when", ["before", "after"])
async def test_an_ended_session_is_a_closed_connection(tmp_path: Path, when: str) -> None:
    path = cassette_file(
        tmp_path, call("fetch", f"exit: {{status: 3, when: {when}}}", ok("last words")), call("fast", "", ok("fast"))
    )
    with anyio.fail_after(30):
        async with client(path) as host:
            # List first: after its first call of a tool the SDK lists tools to validate the result,
            # and that request would meet the closed connection.
            await host.list_tools()
            if when == "before":
                with pytest.raises(MCPError) as raised:
                    await host.call_tool("fetch", {})
                assert raised.value.error.code == CONNECTION_CLOSED
            else:
                assert text_of(await host.call_tool("fetch", {})) == "last words"
            with pytest.raises(MCPError) as closed:
                await host.call_tool("fast", {})
            assert closed.value.error.code == CONNECTION_CLOSED


def test_an_ended_session_exits_with_the_cassettes_status(tmp_path: Path) -> None:
    path = cassette_file(tmp_path, call("fetch", "exit: 3", ok("bye")))
    line = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fetch","arguments":{}}}\n'
    proc = subprocess.run(
        [*MOCKMCP, "replay", str(path)], input=line * 2, capture_output=True, timeout=30, env=child_env()
    )
    assert proc.returncode == 3
    assert [json.loads(x)["id"] for x in proc.stdout.splitlines()] == [9]  # nothing after the exit
    assert b"ended the session with status 3" in proc.stderr


@pytest.mark.parametrize(
    "raw",
    [
        "this is not json",
        '{"jsonrpc":"2.0","id":999,"result":{}}',
        '{"id":{{id}},"result":{"content":[],"isError":false}}',
    ],
    ids=["invalid-json", "wrong-id", "missing-jsonrpc"],
)
async def test_a_raw_reply_is_whatever_the_sdk_makes_of_it_and_replay_goes_on(tmp_path: Path, raw: str) -> None:
    report = tmp_path / "report.json"
    knobs = f"raw_response: '{raw}'"
    path = cassette_file(tmp_path, call("fetch", knobs, ok("never sent")), call("fast", "", ok("fast")))
    with anyio.fail_after(30):
        async with client(path, report) as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("fetch", {}, read_timeout_seconds=0.5)
            after = await host.call_tool("fast", {})
    # The SDK drops each of these lines and never answers the call: it times out.
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert text_of(after) == "fast"
    assert json.loads(report.read_text())["misses"] == []


async def test_a_raw_line_before_the_reply_and_injected_messages(tmp_path: Path) -> None:
    injected = """\
server:
- raw: 'a line that is not JSON'
- notification: {method: notifications/tools/list_changed}
- notification: {method: notifications/message, params: {level: warning, data: disk almost full}}
- notification: {method: notifications/progress, params: {progressToken: 0, progress: 1, total: 3}}
- notification: {method: notifications/progress, params: {progressToken: 0, progress: 2, total: 3}}
- notification: {method: notifications/progress, params: {progressToken: 0, progress: 3, total: 3}}
"""
    path = cassette_file(tmp_path, call("fetch", injected, ok("done")))
    logs: list[Any] = []
    messages: list[Any] = []
    progress: list[float] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def on_message(message: Any) -> None:
        messages.append(message)

    async def on_progress(value: float, total: float | None, _message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(30):
        async with client(path, logging_callback=on_log, message_handler=on_message) as host:
            result = await host.call_tool("fetch", {}, progress_callback=on_progress)
    assert text_of(result) == "done"
    assert logs == ["disk almost full"] and progress == [1, 2, 3]
    assert any("list_changed" in repr(m) or "ToolListChanged" in type(getattr(m, "root", m)).__name__ for m in messages)


async def test_fail_twice_then_succeed(tmp_path: Path) -> None:
    failing = "{error: {code: -32603, message: try again}}"
    path = cassette_file(tmp_path, call("fetch", "times: 2", failing), call("fetch", "after: unmatched", ok("finally")))
    outcomes: list[str] = []
    with anyio.fail_after(30):
        async with client(path) as host:
            for _ in range(4):
                try:
                    outcomes.append(text_of(await host.call_tool("fetch", {})))
                except MCPError as error:
                    outcomes.append(f"{error.error.code} {error.error.message}")
    assert outcomes[:3] == ["-32603 try again", "-32603 try again", "finally"]
    assert outcomes[3].startswith("-32099 mockmcp: no recorded interaction matches")
