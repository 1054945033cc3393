"""Answers keep the order the recording gave them: a fast call that came behind a slow one is answered first.

Engine tests with literal JSON-RPC and recorded times (`at`, `took`):
- the slow call's reply waits until the fast request, sent before the recording answered the slow one,
  has come, and then goes after the fast one's answer (the server's recorded order);
- a host that does not ask the fast one gets the slow reply after the time the server took (a `Wake`),
  with a note; a `delay` on the fast one delays only it;
- requests that came in the other order wait for each other at most as long as the server took;
  those that did not overlap are answered as they come; `--timing` keeps the order too;
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
from conftest import ROOT, SDK_PYTHON, child_env, served
from mcp import StdioServerParameters
from sdk_host import connect, text_of
from test_causal_sdk import Tap, calling, transport, wait_for_save

from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Note, Replay, Send, Wake

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


def wakes(actions: list[Any]) -> list[Wake]:
    return [action for action in actions if isinstance(action, Wake)]


def test_the_slow_reply_waits_for_the_fast_one_the_recording_answered_first() -> None:
    replay = engine()
    first = replay.receive(call("a", 1))
    [wake] = wakes(first)
    assert replies(first) == [] and wake.after == 1.0  # at most as long as its server took
    assert replies(replay.receive(call("b", 0))) == [("b", "fast"), ("a", "slow")]
    assert replay.holds(wake.job) is False and replay.wake(wake.job) == []  # the hold's timer does nothing now
    assert replies(replay.receive(call("c", 2))) == [("c", "later")]


def test_a_host_that_never_asks_the_fast_one_gets_the_slow_reply_after_the_servers_time() -> None:
    replay = engine()
    [wake] = wakes(replay.receive(call("a", 1)))
    actions = replay.wake(wake.job)
    assert replies(actions) == [("a", "slow")]
    [note] = [a.text for a in actions if isinstance(a, Note)]
    assert "interactions[0] goes on after the 1s its server took" in note
    assert "had sent interactions[1] (tools/call) first" in note
    # an answer given out of the recorded order (a stateful server's state after a call not made): in the report
    assert replay.report.reordered == [note] and "out of order: interactions[0]" in replay.report.summary()
    # a later request: the fast one was skipped; its answer waits once, as long as its server took, and from
    # then on the skipped request counts as come
    [wait] = wakes(replay.receive(call("c", 2)))
    assert wait.after == 0.01 and replies(replay.wake(wait.job)) == [("c", "later")]
    assert replies(replay.receive(call("c2", 2))) == [("c2", "later")]


def test_at_the_hosts_eof_a_held_reply_goes_at_once() -> None:
    replay = engine()
    [wake] = wakes(replay.receive(call("a", 1)))
    assert replies(replay.close()) == [("a", "slow")]
    assert replay.holds(wake.job) is False  # nothing left for the shell to wait for


def test_a_delay_on_the_fast_one_delays_only_it() -> None:
    """The slow reply needed the fast request to have come, not its answer: a `delay` on the fast one (the
    knob's "other requests are answered meanwhile") lets the slow reply go when the fast request comes."""
    replay = Replay(loads(OVERTAKEN.replace("  took: 0.05", "  took: 0.05\n  delay: 5")), Matcher.build())
    replay.receive(call("a", 1))
    after_b = replay.receive(call("b", 0))
    assert replies(after_b) == [("a", "slow")]
    assert [w.after for w in wakes(after_b)] == [5]
    assert replies(replay.receive(cancel("b"))) == []  # cancelled behind its delay: never answered


def test_requests_in_the_other_order_wait_for_each_other_at_most_the_servers_time() -> None:
    replay = engine()
    first = replay.receive(call("b", 0))  # the recording's host had sent a before b was answered
    assert replies(first) == [] and [w.after for w in wakes(first)] == [0.05]
    assert replies(replay.receive(call("a", 1))) == [("b", "fast"), ("a", "slow")]
    assert replies(replay.receive(call("c", 2))) == [("c", "later")]


def test_requests_that_did_not_overlap_are_answered_as_they_come() -> None:
    replay = engine()
    replay.receive(call("a", 1))
    replay.receive(call("b", 0))
    assert replies(replay.receive(call("c", 2))) == [("c", "later")]
    assert replies(replay.receive(call("c2", 2))) == [("c2", "later")]  # a repeat waits for nothing


def test_recorded_timing_keeps_the_order_by_the_clock_too() -> None:
    replay = engine(timing=1.0)
    [slow] = wakes(replay.receive(call("a", 1)))
    assert slow.after == 1.0
    [fast] = wakes(replay.receive(call("b", 0)))  # its own 0.05 s first
    assert fast.after == pytest.approx(0.05)
    assert replies(replay.wake(fast.job)) == [("b", "fast")]
    assert replies(replay.wake(slow.job)) == [("a", "slow")]


# --- the SDK host, through record and replay --------------------------------------------------------------

SLEEPY = [*SDK_PYTHON, str(ROOT / "tests" / "servers" / "sleepy.py")]
pytestmark = pytest.mark.anyio


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


async def answered_order(server: StdioServerParameters | str) -> list[str]:
    """A slow call, then a fast one as soon as the slow one is sent: the order their answers reach the host.
    (Over HTTP each goes on a POST of its own, which may reach the server first: replay keeps the recorded
    order either way.)"""
    order: list[str] = []
    tap = Tap(transport(server))
    with anyio.fail_after(30):
        async with connect(tap, "legacy") as client:

            async def call(seconds: float) -> None:
                order.append(text_of(await client.call_tool("wait", {"seconds": seconds})))

            async with anyio.create_task_group() as group:
                group.start_soon(call, 0.6)
                await tap.passed("out", calling("wait")).wait()
                group.start_soon(call, 0)
    return order


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SDK host's session with tests/servers/sleepy.py, recorded once for the module's replays. Through the
    recorder, which passes each line on as it comes, the host sees the real server's order: the fast answer first."""
    out = tmp_path_factory.mktemp("order") / "sleepy.yaml"

    async def record() -> list[str]:
        recorder = params(sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--", *SLEEPY)
        order = await answered_order(recorder)
        await wait_for_save(out)
        return order

    assert anyio.run(record) == ["waited 0.0", "waited 0.6"]
    return out


# Both replays read the one recording: one worker runs them and makes it (`--dist loadgroup`, pyproject.toml).
shared = pytest.mark.xdist_group("order")


@pytest.mark.slow
@shared
async def test_the_host_sees_the_recorded_order_of_overlapping_answers(recorded: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    replay = params(sys.executable, "-m", "mockmcp", "replay", str(recorded), "--report", str(report))
    assert await answered_order(replay) == ["waited 0.0", "waited 0.6"]
    summary = json.loads(report.read_text())
    assert summary["misses"] == [] and summary["unplayed"] == []


@shared
async def test_over_http_too(recorded: Path, tmp_path: Path) -> None:
    """The same cassette served over Streamable HTTP: each answer on its own POST, in the recorded order."""
    with served(recorded, tmp_path) as server:
        order = await answered_order(server.url)
        report = server.stop()
    assert order == ["waited 0.0", "waited 0.6"]
    assert report["misses"] == [] and report["unplayed"] == []
