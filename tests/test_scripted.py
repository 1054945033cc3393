"""Scripted answers (`answers:`, one a play in turn, the last repeating) and `optional`, through the sans-IO engine
in memory: literal JSON-RPC lines in, what is sent out; and what loading refuses of them, with the place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Action, Cut, Exit, Note, Replay, Send, Wake
from mockmcp.errors import CassetteError

HEAD = "version: 1\ninteractions:\n"
FETCH = "- request: {method: tools/call, params: {name: fetch, arguments: {}}}\n"
TEXT = "{result: {content: [{type: text, text: %s}]}}"
SCRIPT = (
    HEAD
    + FETCH
    + "  answers:\n"
    + "  - response: {error: {code: -32603, message: try again}}\n"  # a protocol error
    + "  - response: {result: {content: [{type: text, text: quota}], isError: true}}\n"  # a tool error
    + "  - {delay: 2, response: %s}\n" % (TEXT % "slow")
    + "  - drop: true\n"  # a hang
    + "  - {drop: cut, server: [{notification: {method: notifications/message, params: {level: info, data: x}}}]}\n"
    + "  - response: %s\n" % (TEXT % "ok")
)


def call(id_: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fetch","arguments":{}}}' % id_


def told(actions: list[Action]) -> list[Any]:
    """What each action says, as compared: a message sent (decoded), a wait, a cut, an exit."""
    out: list[Any] = []
    for action in actions:
        if isinstance(action, Send):
            out.extend(json.loads(line) for line in action.data.splitlines())
        elif isinstance(action, Wake):
            out.append(("wake", action.after))
        elif isinstance(action, Cut):
            out.append("cut")
        elif isinstance(action, Exit):
            out.append(("exit", action.status))
    return out


def text(id_: int, said: str, error: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"content": [{"type": "text", "text": said}]}
    return {"jsonrpc": "2.0", "id": id_, "result": body | ({"isError": True} if error else {})}


def test_each_play_answers_with_its_turn_and_the_last_repeats() -> None:
    engine = Replay(loads(SCRIPT), Matcher.build())
    assert told(engine.receive(call(1))) == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "try again"}}
    ]
    assert told(engine.receive(call(2))) == [text(2, "quota", error=True)]
    slow = engine.receive(call(3))
    assert told(slow) == [("wake", 2.0)]
    [wake] = [action for action in slow if isinstance(action, Wake)]
    assert told(engine.wake(wake.job)) == [text(3, "slow")]
    assert told(engine.receive(call(4))) == []  # a hang: nothing, ever
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    assert told(engine.receive(call(5))) == [log, "cut"]
    assert told(engine.receive(call(6))) == [text(6, "ok")]
    assert told(engine.receive(call(7))) == [text(7, "ok")]  # the last repeats ...
    assert engine.report.repeats == {0: 1}  # ... as a recording's last does: a repeat --strict counts
    assert "the last answer was repeated" in engine.report.summary()


def test_times_any_plays_the_script_then_its_last_for_ever_with_no_repeat() -> None:
    cassette = (
        HEAD + FETCH + "  times: any\n  answers:\n" + f"  - response: {TEXT % 'one'}\n  - response: {TEXT % 'two'}\n"
    )
    engine = Replay(loads(cassette), Matcher.build())
    said = [told(engine.receive(call(n)))[0]["result"]["content"][0]["text"] for n in range(4)]
    assert said == ["one", "two", "two", "two"]
    assert engine.report.repeats == {} and engine.report.strict_ok


def test_a_script_then_the_next_recording_of_the_request() -> None:
    """A scripted interaction plays as many times as it has answers (or `times`, if more) before the next takes over."""
    cassette = HEAD + FETCH + f"  answers:\n  - response: {TEXT % 'a'}\n  - response: {TEXT % 'b'}\n"
    cassette += FETCH + "  response: %s\n" % (TEXT % "c")
    engine = Replay(loads(cassette), Matcher.build())
    said = [told(engine.receive(call(n)))[0]["result"]["content"][0]["text"] for n in range(3)]
    assert said == ["a", "b", "c"] and engine.report.strict_ok


@pytest.mark.parametrize(("optional", "strict"), [(True, True), (False, False)])
def test_an_optional_interaction_may_be_left_unplayed_under_strict(optional: bool, strict: bool) -> None:
    knob = "  optional: true\n" if optional else ""
    cassette = HEAD + FETCH + "  response: %s\n" % (TEXT % "a")
    cassette += "- request: {method: tools/call, params: {name: delete, arguments: {}}}\n" + knob
    cassette += "  response: %s\n" % (TEXT % "gone")
    engine = Replay(loads(cassette), Matcher.build())
    engine.receive(call(1))
    engine.close()
    assert engine.report.strict_ok is strict
    assert engine.report.unplayed == ([] if optional else [1])


@pytest.mark.parametrize(
    ("written", "place", "problem"),
    [
        (
            "  response: {result: {content: []}}\n  answers:\n  - drop: true\n",
            "interactions[0].response",
            "`response` beside `answers`: each scripted answer holds its own",
        ),
        ("  answers: []\n", "interactions[0].answers", "`answers` is empty"),
        ("  answers:\n  - {}\n", "interactions[0].answers[0]", "a request without a `response`"),
        ("  answers:\n  - respons: {result: {}}\n", "interactions[0].answers[0].respons", "unknown key 'respons'"),
        (
            "  answers:\n  - response: {result: {content: [{type: txt, text: a}]}}\n",
            "interactions[0].answers[0].response.result.content[0].type",
            "txt",
        ),
        ("  optional: yes\n  response: {result: {content: []}}\n", "interactions[0].optional", "true or false"),
    ],
    ids=["beside", "empty", "unanswered", "misspelt", "served-typo", "optional-flag"],
)
def test_loading_refuses_a_script_replay_would_serve_wrongly(written: str, place: str, problem: str) -> None:
    with pytest.raises(CassetteError) as caught:
        loads(HEAD + FETCH + written)
    said = caught.value.render()
    assert place in said and problem in said, said


def test_a_script_is_written_back_as_it_was_read() -> None:
    from mockmcp.cassette.store import dump

    cassette = loads(SCRIPT)
    assert loads(dump(cassette)) == cassette
    assert cassette.to_data()["interactions"][0]["answers"][3] == {"drop": True}


CALLS = HEAD + FETCH + f"  response: {TEXT % 'page'}\n"
CLOSED = CALLS.replace("version: 1\n", "version: 1\nmeta: {closed_world: true}\n")
ANY_NAME = CLOSED + "- request: {method: tools/call, params: {name: x}}\n  match: {name: any}\n"
ANY_NAME += "  response: {result: {content: []}}\n"


def named(tool: str, arguments: str = "{}") -> bytes:
    return b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"%s","arguments":%s}}' % (
        tool.encode(),
        arguments.encode(),
    )


@pytest.mark.parametrize(
    ("cassette", "line", "message"),
    [
        (
            CLOSED,
            named("delete"),
            "mockmcp: closed world: no tool 'delete' is answered here; the cassette answers: fetch",
        ),
        (CALLS, named("delete"), "mockmcp: no recorded interaction matches: tools/call"),  # an open world: explained
        (CLOSED, named("fetch", '{"q":1}'), "mockmcp: no recorded interaction matches: tools/call"),  # asked otherwise
        (ANY_NAME, named("delete"), None),  # a rule answers any name: nothing is unknown
    ],
    ids=["closed", "open", "known-tool", "any-name"],
)
def test_a_closed_world_refuses_a_tool_it_does_not_answer_at_once(
    cassette: str, line: bytes, message: str | None
) -> None:
    engine = Replay(loads(cassette), Matcher.build())
    [reply] = told(engine.receive(line))
    if message is None:
        assert "result" in reply and engine.report.missed == 0
        return
    assert reply["error"]["code"] == -32099 and reply["error"]["message"] == message
    assert engine.report.missed == 1  # a miss: it fails --strict and the plugin's verdict
    if "closed world" in message:
        assert reply["error"]["data"] == {"tool": "delete", "answered": ["fetch"]}
        [said] = [action.text for action in engine.receive(line) if isinstance(action, Note)]
        assert "closest recorded" not in said  # not a near miss of `fetch`: how to fix says what a closed world means
        assert "1. if the host should not call this tool, the test found what it is for: fix the host" in said


def test_the_closed_world_option_closes_a_cassette_that_does_not_say_it() -> None:
    from mockmcp.cassette.model import closed

    opened = loads(CALLS)
    assert closed(opened, False) is opened and closed(loads(CLOSED), True).meta == {"closed_world": True}
    engine = Replay(closed(opened, True), Matcher.build())
    assert "closed world" in told(engine.receive(named("delete")))[0]["error"]["message"]
