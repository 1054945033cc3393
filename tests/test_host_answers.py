"""The host's answers count: a cassette that recorded the server under several host answers replays each.

Engine tests (literal JSON-RPC): a tools/call whose server asks the host (elicitation) was recorded
twice, the host accepting in one session and declining in the other (as `record --record-mode new_episodes` run
once per answer makes it). A live host that declines gets what the server said then, and the rest
of the session follows the declining recording; one that accepts gets the other; one that answers
neither way is a mismatch (failing --strict) and hears the recording it was playing.
The SDK host does the same through `record --record-mode new_episodes` and `replay --strict`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NOTES_COMMAND, ROOT, child_env
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult
from sdk_host import roots, sampling, text_of
from test_causal_sdk import wait_for_save

from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Note, Replay, Send

BOTH = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: delete_file, arguments: {path: n.txt}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: asking}}
  - request: {id: 0, method: elicitation/create, params: {message: Delete n.txt?}}
    response: {result: {action: accept, content: {confirm: true}}}
  response: {result: {content: [{type: text, text: deleted n.txt}]}}
- request: {id: 2, method: tools/call, params: {name: read_file, arguments: {path: n.txt}}}
  response: {result: {content: [{type: text, text: no such file}]}}
- session: 1
  request: {id: 1, method: tools/call, params: {name: delete_file, arguments: {path: n.txt}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: asking}}
  - request: {id: 0, method: elicitation/create, params: {message: Delete n.txt?}}
    response: {result: {action: decline}}
  response: {result: {content: [{type: text, text: kept n.txt}]}}
- session: 1
  request: {id: 2, method: tools/call, params: {name: read_file, arguments: {path: n.txt}}}
  response: {result: {content: [{type: text, text: remember milk}]}}
"""

DELETE = (
    b'{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"delete_file","arguments":{"path":"n.txt"}}}'
)
READ = b'{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"read_file","arguments":{"path":"n.txt"}}}'


def texts(actions: list[Any]) -> list[str]:
    out = []
    for action in actions:
        if isinstance(action, Send):
            message = json.loads(action.data)
            if "result" in message and "content" in message["result"]:
                out.append(message["result"]["content"][0]["text"])
    return out


def answer(result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}).encode()


@pytest.mark.parametrize(
    ("result", "said", "then"),
    [
        ({"action": "accept", "content": {"confirm": True}}, "deleted n.txt", "no such file"),
        ({"action": "decline"}, "kept n.txt", "remember milk"),
    ],
    ids=["accept", "decline"],
)
def test_each_recorded_answer_gets_what_the_server_said_then(result: dict[str, Any], said: str, then: str) -> None:
    engine = Replay(loads(BOTH), Matcher.build())
    asked = [json.loads(a.data) for a in engine.receive(DELETE) if isinstance(a, Send)]
    assert [m.get("method") for m in asked] == ["notifications/message", "elicitation/create"]
    actions = engine.receive(answer(result))
    assert texts(actions) == [said]
    assert texts(engine.receive(READ)) == [then]  # the rest of the session follows that recording
    assert engine.report.mismatches == []
    followed = [a.text for a in actions if isinstance(a, Note)]
    assert followed == ([] if result["action"] == "accept" else [followed[0]])
    if followed:
        assert "as interactions[2] recorded it" in followed[0]
    assert sum(engine.report.plays.values()) == 2
    assert engine.report.unplayed == []  # the session left stands for the start of the one followed


def test_an_answer_no_recording_has_is_a_mismatch_and_hears_the_recording_it_played() -> None:
    engine = Replay(loads(BOTH), Matcher.build())
    engine.receive(DELETE)
    actions = engine.receive(answer({"action": "cancel"}))
    assert texts(actions) == ["deleted n.txt"]
    [mismatch] = engine.report.mismatches
    assert mismatch.interaction == 0 and 'recorded "accept", the host\'s "cancel"' in mismatch.differences[0]


def test_earlier_answers_must_agree_too() -> None:
    """A recording whose host answered an earlier server request otherwise is not what the server does now."""
    twice = BOTH.replace(
        "  - notification: {method: notifications/message, params: {level: info, data: asking}}\n",
        "  - request: {id: 5, method: roots/list}\n    response: {result: {roots: []}}\n",
        1,
    ).replace(
        "  - notification: {method: notifications/message, params: {level: info, data: asking}}\n",
        "  - request: {id: 5, method: roots/list}\n    response: {result: {roots: [{uri: 'file:///x'}]}}\n",
        1,
    )
    engine = Replay(loads(twice), Matcher.build())
    engine.receive(DELETE)
    engine.receive(b'{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}')
    assert texts(engine.receive(answer({"action": "decline"}))) == ["deleted n.txt"]
    assert len(engine.report.mismatches) == 1


# --- the SDK host: record each answer with --record-mode new_episodes, then replay both under --strict ---

pytestmark = pytest.mark.anyio
NOTES = NOTES_COMMAND


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


async def delete_then_read(server: StdioServerParameters, action: str) -> list[str]:
    async def elicit(_ctx: Any, _params: Any) -> ElicitResult:
        return ElicitResult(action=action, content={"confirm": True} if action == "accept" else None)

    with anyio.fail_after(30):
        async with Client(
            server, mode="legacy", sampling_callback=sampling, elicitation_callback=elicit, list_roots_callback=roots
        ) as client:
            deleted = text_of(await client.call_tool("delete_file", {"path": "notes.txt"}))
            read = text_of(await client.call_tool("read_file", {"path": "notes.txt"}))
    return [deleted, read]


@pytest.mark.slow
async def test_a_cassette_recorded_with_both_answers_replays_each_under_strict(tmp_path: Path) -> None:
    out = tmp_path / "delete.yaml"
    recorder = params(
        sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--record-mode", "new_episodes", "--", *NOTES
    )
    # What the real server says to each answer is what the host heard through the recorder (which
    # forwards the session as it is: see test_record_sdk.py).
    recorded = {}
    for action in ("accept", "decline"):
        recorded[action] = await delete_then_read(recorder, action)
        await wait_for_save(out)
    assert recorded["accept"][0] == "deleted notes.txt" and recorded["decline"][0] != recorded["accept"][0]
    for action in ("decline", "accept"):
        report = tmp_path / f"{action}.json"
        replay = params(sys.executable, "-m", "mockmcp", "replay", str(out), "--strict", "--report", str(report))
        assert await delete_then_read(replay, action) == recorded[action]
        summary = json.loads(report.read_text())
        assert summary["mismatches"] == [] and summary["misses"] == [] and summary["strict_ok"], summary
    # A host that cancels was recorded by neither session: a mismatch, which fails --strict, and the host
    # hears the recording it was being played, the first (the real server would have said otherwise:
    # that is what fails).
    report = tmp_path / "cancel.json"
    replay = params(sys.executable, "-m", "mockmcp", "replay", str(out), "--strict", "--report", str(report))
    assert await delete_then_read(replay, "cancel") == recorded["accept"]
    summary = json.loads(report.read_text())
    assert len(summary["mismatches"]) == 1 and not summary["strict_ok"]
