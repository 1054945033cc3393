"""Stateful servers recorded several times with `record --record-mode new_episodes`, replayed: never a wrong answer.

The servers are real SDK servers (tests/servers/), recorded through `mockmcp record` by the SDK host.
The enumeration drives the sans-IO engine with literal JSON-RPC (3^5 live sessions in a few seconds)
and holds each answer against the real server's, asked the same in memory by the SDK's Client: replay
either says what the server says, or has reported a mismatch by then. The other tests replay to the
SDK host through `mockmcp replay`, as a host's suite does.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, SDK_PYTHON, child_env
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult
from test_causal_sdk import wait_for_save

from mockmcp.cassette.store import load
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay, Send, Wake

sys.path.insert(0, str(ROOT / "tests" / "servers"))
from elicit_counter import build  # a test server, beside the tests

pytestmark = pytest.mark.anyio
# The tests that read the shared cassette run on one worker, which records it once (`--dist loadgroup`,
# pyproject.toml); the module's other tests go wherever there is room.
shared = pytest.mark.xdist_group("sessions")
MOCKMCP = [sys.executable, "-m", "mockmcp"]
ANSWERS = ("accept", "decline", "cancel")


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


def elicited(action: str) -> ElicitResult:
    return ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)


async def host_session(server: Any, answers: tuple[str, ...], statuses: int = 1) -> list[str]:
    """The SDK host: lists the tools, then for each answer `ask` (answering the server's question so) and
    `status` (`statuses` times)."""
    current = [""]

    async def elicit(_ctx: Any, _params: Any) -> ElicitResult:
        return elicited(current[0])

    said = []
    with anyio.fail_after(30):
        async with Client(server, mode="legacy", elicitation_callback=elicit) as client:
            await client.list_tools()
            for answer in answers:
                current[0] = answer
                said.append((await client.call_tool("ask", {})).content[0].text)
                for _ in range(statuses):
                    said.append((await client.call_tool("status", {})).content[0].text)
    return said


async def record(cassette: Path, host: Any, *server: str) -> Any:
    """One recording session of `server` (`--record-mode new_episodes`) driven by `host(params)`; waits for its save."""
    said = await host(params(*MOCKMCP, "record", "-o", str(cassette), "--record-mode", "new_episodes", "--", *server))
    await wait_for_save(cassette)
    return said


def replayed(engine: Replay, answers: tuple[str, ...], statuses: int = 1) -> list[tuple[str, int]]:
    """The live session of `host_session` in literal JSON-RPC: each answer's text, with the mismatches by then."""
    ids = itertools.count(1)

    def sent(line: dict[str, Any]) -> list[dict[str, Any]]:
        actions = engine.receive(json.dumps({"jsonrpc": "2.0", **line}).encode())
        while wakes := [action for action in actions if isinstance(action, Wake)]:  # the time passes, as in a shell
            actions = [action for action in actions if not isinstance(action, Wake)]
            actions += [action for wake in wakes for action in engine.wake(wake.job)]
        return [json.loads(action.data) for action in actions if isinstance(action, Send)]

    capabilities = {"elicitation": {"form": {}, "url": {}}}
    sent(
        {
            "id": next(ids),
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities},
        }
    )
    sent({"method": "notifications/initialized"})
    sent({"id": next(ids), "method": "tools/list"})
    said = []
    for answer in answers:
        [question] = sent({"id": next(ids), "method": "tools/call", "params": {"name": "ask", "arguments": {}}})
        body = elicited(answer).model_dump(mode="json", by_alias=True, exclude_none=True)
        [reply] = sent({"id": question["id"], "result": body})
        said.append((reply["result"]["content"][0]["text"], len(engine.report.mismatches)))
        for _ in range(statuses):
            [reply] = sent({"id": next(ids), "method": "tools/call", "params": {"name": "status", "arguments": {}}})
            said.append((reply["result"]["content"][0]["text"], len(engine.report.mismatches)))
    return said


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The elicitation counter recorded three times with `--record-mode new_episodes`: the host always accepting, always
    declining, always cancelling, five times each."""
    cassette = tmp_path_factory.mktemp("counter") / "counter.yaml"
    server = [*SDK_PYTHON, str(ROOT / "tests" / "servers" / "elicit_counter.py")]

    async def recorded() -> None:
        for answer in ANSWERS:
            await record(cassette, lambda p, a=answer: host_session(p, (a,) * 5), *server)

    anyio.run(recorded)
    return cassette


@pytest.mark.slow
@shared
async def test_every_sequence_of_host_answers_gets_the_real_servers_answer_or_a_mismatch(counter: Path) -> None:
    """Each of the 243 sequences: every answer replay gives before it reports a mismatch is the real server's,
    and the first answer given with a mismatch reported differs from the real server's (the report was due).

    The real server's answers after a sequence's first k host answers do not depend on what follows, so a
    real session is run once per prefix that matters (about 30, not 243: the suite's time is shared)."""
    recorded = load(str(counter))
    assert len({interaction.session for interaction in recorded.interactions}) == 3
    real: dict[tuple[str, ...], list[str]] = {}  # what the real server said, by the host's answers so far

    async def truth(answers: tuple[str, ...]) -> list[str]:
        if answers not in real:
            said = await host_session(build(), answers)
            real.update((answers[:k], said[: 2 * k]) for k in range(len(answers) + 1))
        return real[answers]

    exact = flagged = 0
    for answers in itertools.product(ANSWERS, repeat=5):
        replay = replayed(Replay(recorded, Matcher.build()), answers)
        first = next((n for n, (_, mismatches) in enumerate(replay) if mismatches), len(replay))
        steps = min(len(answers), first // 2 + 1)  # the host answers up to the first answer reported
        seen = await truth(answers[:steps])
        assert [said for said, _ in replay[:first]] == seen[:first], answers
        if first < len(replay):
            assert replay[first][0] != seen[first], (answers, first, replay[first])
        exact += first == len(replay)
        flagged += first < len(replay)
        assert (first == len(replay)) is (len(set(answers)) == 1)  # a recorded session is played whole, unflagged
    assert (exact, flagged) == (3, 240)
    assert len(real) < 60


@pytest.mark.slow
@shared
async def test_the_issues_answers_are_a_mismatch_and_a_status_asked_again_repeats_its_state(counter: Path) -> None:
    """The issue's host: accept, status, decline, status twice. The decline follows no recording (the
    declining one never accepted first), so it is reported, and no recording's counts are passed off as
    the server's; a status asked twice in one state gets that state twice (`status` is read-only)."""
    twice = replayed(Replay(load(str(counter)), Matcher.build()), ("accept",), statuses=3)
    assert twice == [("accept number 1", 0)] + [("last accept; accepts 1, declines 0, cancels 0", 0)] * 3
    engine = Replay(load(str(counter)), Matcher.build())
    said = replayed(engine, ("accept", "decline"), statuses=2)
    real = await host_session(build(), ("accept", "decline"), statuses=2)
    assert [text for text, _ in said[:3]] == real[:3] and [n for _, n in said] == [0, 0, 0, 1, 1, 1]
    [mismatch] = engine.report.mismatches
    assert mismatch.method == "elicitation/create"
    assert 'recorded "accept", the host\'s "decline"' in mismatch.differences[0]


# --- a stateful server whose state outlives the process (as the reference memory server's file does) ---

MEMORY = [*SDK_PYTHON, str(ROOT / "tests" / "servers" / "memory_graph.py")]
READ = ("read_graph", {})
ADD = ("create_entities", {"names": ["milk"]})
EMPTY, MILK = '{"entities": []}', '{"entities": ["milk"]}'


async def memory_host(server: Any, *calls: tuple[str, dict[str, Any]]) -> list[str]:
    """The SDK host: lists the tools, then makes these calls; returns their texts."""
    with anyio.fail_after(30):
        async with Client(server, mode="legacy") as client:
            await client.list_tools()
            return [(await client.call_tool(name, arguments)).content[0].text for name, arguments in calls]


@pytest.mark.slow
async def test_a_later_session_that_writes_is_replayed_with_what_it_wrote(tmp_path: Path) -> None:
    """The issue's first failure: replayed, the session that added an entity reads it back, under --strict."""
    cassette, store = tmp_path / "memory.yaml", str(tmp_path / "memory.json")
    assert await record(cassette, lambda p: memory_host(p, READ), *MEMORY, store) == [EMPTY]
    assert await record(cassette, lambda p: memory_host(p, ADD, READ), *MEMORY, store) == ["created milk", MILK]
    report = tmp_path / "report.json"
    replay = params(*MOCKMCP, "replay", str(cassette), "--strict", "--report", str(report))
    assert await memory_host(replay, ADD, READ) == ["created milk", MILK]
    summary = json.loads(report.read_text())
    assert summary["strict_ok"] and summary["unplayed"] == [], summary
    # The first session's host, replayed, still reads the empty graph.
    assert await memory_host(params(*MOCKMCP, "replay", str(cassette), "--strict"), READ) == [EMPTY]


@pytest.mark.slow
async def test_one_process_per_call_meets_the_recorded_sessions_in_turn_with_a_state_file(tmp_path: Path) -> None:
    cassette, store = tmp_path / "memory.yaml", str(tmp_path / "memory.json")
    assert await record(cassette, lambda p: memory_host(p, READ, ADD), *MEMORY, store) == [EMPTY, "created milk"]
    assert await record(cassette, lambda p: memory_host(p, READ), *MEMORY, store) == [MILK]
    state = tmp_path / "state.json"
    replay = params(*MOCKMCP, "replay", str(cassette), "--strict", "--state", str(state))
    assert await memory_host(replay, READ, ADD) == [EMPTY, "created milk"]
    assert await memory_host(replay, READ) == [MILK]
    assert json.loads(state.read_text()) == {"cassette": str(cassette), "taken": [0, 1]}
    # Without it, every process starts from the first recorded session (a host that reads once per process
    # and another that keeps one process are told apart by nothing else).
    assert await memory_host(params(*MOCKMCP, "replay", str(cassette)), READ) == [EMPTY]
