"""Answers keep the order the recording gave them: a fast call that came behind a slow one is answered first.

Engine tests with literal JSON-RPC and recorded times (`at`, `took`):
- the slow call's reply waits until the fast one, recorded as answered first, has been answered;
- a host that does not ask the fast one gets the slow reply after the time the server took (a `Wake`),
  with a note; one that cancels the fast one gets it at once;
- requests that came in the other order, did not overlap, or with `--timing` (which keeps the order
  by the recorded times) are answered as they come;
and the SDK host, recording a real server with two calls in flight and replaying them (over stdio
and over Streamable HTTP), sees the answers in the same order every time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, child_env, served
from mcp import StdioServerParameters
from sdk_host import connect, text_of

from mockmcp.cassette.store import loads
from mockmcp.core.matching import Matcher
from mockmcp.core.replay import Note, Replay, Send, Wake

OVERTAKEN = """
version: 1
interactions:
- at: 0.0
  request: {id: 1, method: tools/call, params: {name: wait, arguments: {seconds: 1}}}
  response: {result: {content: [{type: text, text: slow}]}}
  took: 1.0
- at: 0.1
  request: {id: 2, method: tools/call, params: {name: wait, arguments: {seconds: 0}}}
  response: {result: {content: [{type: text, text: fast}]}}
  took: 0.05
- at: 1.5
  request: {id: 3, method: tools/call, params: {name: wait, arguments: {seconds: 2}}}
  response: {result: {content: [{type: text, text: later}]}}
  took: 0.01
"""


def call(id: Any, seconds: float) -> bytes:
    params = {"name": "wait", "arguments": {"seconds": seconds}}
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).encode()


def cancel(id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}).encode()


def replies(actions: list[Any]) -> list[tuple[Any, str]]:
    out = []
    for action in actions:
        if isinstance(action, Send):
            message = json.loads(action.data)
            out.append((message["id"], message["result"]["content"][0]["text"]))
    return out


def engine(timing: float = 0.0) -> Replay:
    return Replay(loads(OVERTAKEN), Matcher.build(), timing=timing)


def test_the_slow_reply_waits_for_the_fast_one_the_recording_answered_first() -> None:
    replay = engine()
    first = replay.receive(call("a", 1))
    assert replies(first) == [] and [a for a in first if isinstance(a, Wake)] == [Wake(1.0, 0)]
    assert replies(replay.receive(call("b", 0))) == [("b", "fast"), ("a", "slow")]
    assert replay.wake(0) == []  # the hold's timer, once the reply went, does nothing
    assert replies(replay.receive(call("c", 2))) == [("c", "later")]


def test_a_host_that_never_asks_the_fast_one_gets_the_slow_reply_after_the_servers_time() -> None:
    replay = engine()
    [wake] = [a for a in replay.receive(call("a", 1)) if isinstance(a, Wake)]
    actions = replay.wake(wake.job)
    assert replies(actions) == [("a", "slow")]
    [note] = [a.text for a in actions if isinstance(a, Note)]
    assert "interactions[0] after the 1.0s its server took" in note and "interactions[1] first" in note


def test_at_the_hosts_eof_a_held_reply_goes_at_once() -> None:
    replay = engine()
    replay.receive(call("a", 1))
    assert replies(replay.close()) == [("a", "slow")]
    assert replay.holds(0) is False  # nothing left for the shell to wait for


def test_cancelling_the_fast_one_lets_the_slow_reply_go() -> None:
    replay = Replay(
        loads(OVERTAKEN.replace("  took: 0.05", "  took: 0.05\n  delay: 5")), Matcher.build()
    )  # the fast one delayed by hand, so it can be cancelled while in flight
    replay.receive(call("a", 1))
    assert replies(replay.receive(call("b", 0))) == []
    assert replies(replay.receive(cancel("b"))) == [("a", "slow")]


def test_requests_in_the_other_order_or_not_overlapping_are_answered_as_they_come() -> None:
    replay = engine()
    assert replies(replay.receive(call("b", 0))) == [("b", "fast")]
    assert replies(replay.receive(call("a", 1))) == [("a", "slow")]  # what the recording answered first, was
    assert replies(replay.receive(call("c", 2))) == [("c", "later")]


def test_recorded_timing_keeps_the_order_by_the_clock_instead() -> None:
    replay = engine(timing=1.0)
    assert [a for a in replay.receive(call("a", 1)) if isinstance(a, Wake)] == [Wake(1.0, 0)]
    assert replies(replay.receive(call("b", 0))) == []  # its own 0.05 s first
    assert replies(replay.wake(1)) == [("b", "fast")]
    assert replies(replay.wake(0)) == [("a", "slow")]


# --- the SDK host, through record and replay --------------------------------------------------------------

SLEEPY = [sys.executable, str(ROOT / "tests" / "servers" / "sleepy.py")]
pytestmark = pytest.mark.anyio


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


async def answered_order(server: StdioServerParameters | str) -> list[str]:
    """A slow call, then a fast one while it is in flight: the order their answers reach the host."""
    order: list[str] = []
    with anyio.fail_after(30):
        async with connect(server, "legacy") as client:

            async def call(seconds: float) -> None:
                order.append(text_of(await client.call_tool("wait", {"seconds": seconds})))

            async with anyio.create_task_group() as group:
                group.start_soon(call, 0.6)
                await anyio.sleep(0.2)
                group.start_soon(call, 0)
    return order


@pytest.mark.slow
async def test_the_host_sees_the_recorded_order_of_overlapping_answers(tmp_path: Path) -> None:
    out, report = tmp_path / "sleepy.yaml", tmp_path / "report.json"
    assert await answered_order(params(*SLEEPY)) == ["waited 0.0", "waited 0.6"]
    assert await answered_order(params(sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--", *SLEEPY)) == [
        "waited 0.0",
        "waited 0.6",
    ]
    with anyio.fail_after(10):  # the recorder saves after the host leaves
        while not out.exists():
            await anyio.sleep(0.02)
    replay = params(sys.executable, "-m", "mockmcp", "replay", str(out), "--report", str(report))
    assert await answered_order(replay) == ["waited 0.0", "waited 0.6"]
    summary = json.loads(report.read_text())
    assert summary["misses"] == [] and summary["unplayed"] == []


async def test_over_http_too(tmp_path: Path) -> None:
    """The same cassette served over Streamable HTTP: each answer on its own POST, in the recorded order."""
    out = tmp_path / "sleepy.yaml"
    recorder = params(sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--", *SLEEPY)
    assert await answered_order(recorder) == ["waited 0.0", "waited 0.6"]
    with anyio.fail_after(10):
        while not out.exists():
            await anyio.sleep(0.02)
    with served(out, tmp_path) as server:
        order = await answered_order(server.url)
        report = server.stop()
    assert order == ["waited 0.0", "waited 0.6"]
    assert report["misses"] == [] and report["unplayed"] == []
