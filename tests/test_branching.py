"""Which recording replay follows when the host answers a server request otherwise: `core.branching`, row by row.

Pure, literal JSON-RPC: two recordings asked alike up to a server request when their server
messages agree (notifications by method, requests by method and params, raw lines byte for byte)
and the host's earlier answers agree; the recording followed is one asked alike whose host answered
as the live host did, among the recorded sessions consistent with the live one (the engine's table
at the end); a server request goes out under its recorded id unless that one is still in flight.
tests/test_host_answers.py shows the same through the SDK host.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.model import Interaction, ServerItem
from mockmcp.cassette.store import loads
from mockmcp.engine.branching import Questions, answered_otherwise, asked_alike
from mockmcp.engine.matching import Matcher, canonical
from mockmcp.engine.replay import Replay, Send


def log(data: str, token: Any = None) -> ServerItem:
    params: dict[str, Any] = {"level": "info", "data": data}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return ServerItem("notification", {"jsonrpc": "2.0", "method": "notifications/message", "params": params})


def ask(message: str, answer: dict[str, Any], id: int = 0) -> ServerItem:
    request = {"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {"message": message}}
    return ServerItem("request", request, {"jsonrpc": "2.0", "id": id, "result": answer})


ACCEPT = {"action": "accept", "content": {"confirm": True}}
DECLINE = {"action": "decline"}


@pytest.mark.parametrize(
    ("first", "second", "at", "alike"),
    [
        ((log("a"), ask("sure?", ACCEPT)), (log("a"), ask("sure?", DECLINE)), 1, True),  # they differ in the answer
        ((log("a"), ask("sure?", ACCEPT)), (log("other", token=3), ask("sure?", DECLINE)), 1, True),  # by method
        ((log("a"), ask("sure?", ACCEPT)), (ask("sure?", ACCEPT), log("a")), 1, False),  # kinds differ
        ((ask("sure?", ACCEPT),), (ask("really?", ACCEPT),), 0, False),  # the question differs
        ((ask("sure?", ACCEPT, id=0),), (ask("sure?", DECLINE, id=9),), 0, True),  # ids never count
        ((ask("one", ACCEPT), ask("two", ACCEPT)), (ask("one", DECLINE), ask("two", ACCEPT)), 1, False),  # earlier
        ((ServerItem("raw", "{oops"), ask("s", ACCEPT)), (ServerItem("raw", "{oops"), ask("s", DECLINE)), 1, True),
        ((ServerItem("raw", "{oops"), ask("s", ACCEPT)), (ServerItem("raw", "{opps"), ask("s", ACCEPT)), 1, False),
        ((log("a"),), (log("a"), ask("sure?", ACCEPT)), 1, False),  # one never got that far
    ],
    ids=[
        "same-question",
        "notifications-by-method",
        "another-kind",
        "another-question",
        "ids-never-count",
        "an-earlier-answer-differs",
        "raw-lines-alike",
        "raw-lines-differ",
        "too-short",
    ],
)
def test_two_recordings_asked_alike_up_to_a_server_request(
    first: tuple[ServerItem, ...], second: tuple[ServerItem, ...], at: int, alike: bool
) -> None:
    assert asked_alike(first, second, at) is alike
    assert asked_alike(second, first, at) is alike


def delete(*server: ServerItem, session: int = 0) -> Interaction:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "delete_file"}}
    return Interaction("request", request, server=server, response={"result": {"content": []}}, session=session)


READ = Interaction("request", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read"}})
RECORDED = (
    delete(log("asking"), ask("sure?", ACCEPT)),
    READ,
    delete(log("asking"), ask("sure?", DECLINE), session=1),
    READ._replace(session=1),
    delete(log("asking"), ask("sure?", {"action": "cancel"}), session=2),
)


@pytest.mark.parametrize(
    ("playing", "answer", "recordings", "followed"),
    [
        (0, DECLINE, (0, 2, 4), 2),
        (0, {"action": "cancel"}, (0, 2, 4), 4),
        (2, ACCEPT, (0, 2, 4), 0),
        (0, ACCEPT, (0, 2, 4), None),  # the recording playing is never "another"
        (0, {"action": "maybe"}, (0, 2, 4), None),  # no recording has that answer
        (0, DECLINE, (0, 4), None),  # only the recordings of the same request count
    ],
    ids=["decline", "cancel", "accept", "the-same", "none-has-it", "another-request"],
)
def test_the_recording_followed_is_one_asked_alike_whose_host_answered_as_the_live_one(
    playing: int, answer: dict[str, Any], recordings: tuple[int, ...], followed: int | None
) -> None:
    assert answered_otherwise(RECORDED, recordings, playing, 1, canonical({"result": answer})) == followed


def roots(id: Any) -> ServerItem:
    return ServerItem("request", {"jsonrpc": "2.0", "id": id, "method": "roots/list"})


@pytest.mark.parametrize(
    ("calls", "results"),
    [
        # the recorded id, as the server used it (0 too)
        ([("ask", "j", roots(0)), ("answered", 0), ("answered", 0)], [0, ("j", roots(0)), None]),
        # an id still awaiting an answer is replaced by a fresh one, never one in flight
        ([("ask", "j", roots(1)), ("ask", "k", roots(1)), ("ask", "l", roots(1))], [1, 2, 3]),
        ([("ask", "j", roots(2)), ("ask", "k", roots(1)), ("ask", "l", roots(1))], [2, 1, 3]),
        # an answered id may be used again
        ([("ask", "j", roots(1)), ("answered", 1), ("ask", "k", roots(1))], [1, ("j", roots(1)), 1]),
        # an id that is no valid id is replaced
        ([("ask", "j", roots(None)), ("ask", "k", roots(1.5))], [1, 2]),
        # a string id and the integer of the same digits are two ids
        ([("ask", "j", roots("1")), ("ask", "k", roots(1))], ["1", 1]),
        # withdrawn: its answer is to an id never sent
        ([("ask", "j", roots(4)), ("withdraw", 4), ("answered", 4)], [4, None, None]),
        # the host can answer nothing more: all of them, in the order asked
        (
            [("ask", "j", roots(5)), ("ask", "k", roots(4)), ("abandon",), ("abandon",)],
            [5, 4, [(5, "j", roots(5)), (4, "k", roots(4))], []],
        ),
    ],
    ids=["recorded-id", "in-flight", "fresh-skips-in-flight", "reused", "invalid", "typed", "withdrawn", "abandoned"],
)
def test_the_ids_the_servers_questions_go_out_under(calls: list[tuple[Any, ...]], results: list[Any]) -> None:
    questions = Questions()
    assert [getattr(questions, name)(*args) for name, *args in calls] == results


# --- among recorded sessions: an answer is followed only to a session whose earlier exchanges match -------

COUNTER = "version: 1\ninteractions:\n" + "".join(
    f"""- session: {session}
  request: {{method: tools/list}}
  response:
    result:
      tools:
      - {{name: ask, inputSchema: {{type: object}}}}
      - {{name: status, inputSchema: {{type: object}}, annotations: {{readOnlyHint: true}}}}
- session: {session}
  request: {{method: tools/call, params: {{name: ask}}}}
  server:
  - request: {{id: 0, method: elicitation/create, params: {{message: Go on?}}}}
    response: {{result: {{action: {action}}}}}
  response: {{result: {{content: [{{type: text, text: {action} 1}}]}}}}
- session: {session}
  request: {{method: tools/call, params: {{name: status}}}}
  response: {{result: {{content: [{{type: text, text: {action}s 1}}]}}}}
- session: {session}
  request: {{method: tools/call, params: {{name: ask}}}}
  server:
  - request: {{id: 0, method: elicitation/create, params: {{message: Go on?}}}}
    response: {{result: {{action: {action}}}}}
  response: {{result: {{content: [{{type: text, text: {action} 2}}]}}}}
- session: {session}
  request: {{method: tools/call, params: {{name: status}}}}
  response: {{result: {{content: [{{type: text, text: {action}s 2}}]}}}}
"""
    for session, action in enumerate(["accept", "decline"])
)


def call(engine: Any, rid: int, name: str, answer: str | None = None) -> str:
    """A tools/call in literal JSON-RPC; its server question, if any, answered `answer`. Returns the reply's text."""

    def sent(message: dict[str, Any]) -> list[dict[str, Any]]:
        actions = engine.receive(json.dumps({"jsonrpc": "2.0", **message}).encode())
        return [json.loads(action.data) for action in actions if isinstance(action, Send)]

    [out] = sent({"id": rid, "method": "tools/call", "params": {"name": name}})
    if answer is not None:
        [out] = sent({"id": out["id"], "result": {"action": answer}})
    return str(out["result"]["content"][0]["text"])


@pytest.mark.parametrize(
    ("answers", "said", "mismatches"),
    [
        (["accept", "accept"], ["accept 1", "accepts 1", "accept 2", "accepts 2"], 0),
        (["decline", "decline"], ["decline 1", "declines 1", "decline 2", "declines 2"], 0),  # followed at once
        # The declining session never accepted first, so it says nothing of a decline after an accept: reported,
        # and its count is not passed off as the server's.
        (["accept", "decline"], ["accept 1", "accepts 1", "accept 2", "accepts 2"], 1),
        (["decline", "accept"], ["decline 1", "declines 1", "decline 2", "declines 2"], 1),
        (["cancel", "accept"], ["accept 1", "accepts 1", "accept 2", "accepts 2"], 1),  # reported once
    ],
    ids=["accepting", "declining", "accept-then-decline", "decline-then-accept", "no-such-answer"],
)
def test_a_host_answer_is_followed_only_to_a_session_whose_earlier_exchanges_match(
    answers: list[str], said: list[str], mismatches: int
) -> None:
    engine = Replay(loads(COUNTER), Matcher.build())
    engine.receive(b'{"jsonrpc":"2.0","id":"l","method":"tools/list"}')
    texts = []
    for n, answer in enumerate(answers):
        texts += [call(engine, 2 * n, "ask", answer), call(engine, 2 * n + 1, "status")]
    assert texts == said
    assert len(engine.report.mismatches) == mismatches
    if mismatches:  # the first exchange that differs is the host's answer, with the recording it differs from
        assert engine.report.mismatches[0].method == "elicitation/create"
