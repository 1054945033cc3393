"""Whole conversations through the sans-IO replay engine, in memory: lines in, messages out.

Each test builds a cassette from YAML text, makes `Replay(cassette, Matcher.build())`, feeds
literal JSON-RPC lines with `engine.receive(line)` and compares what the engine sends (each
`Send` split into lines and decoded with json.loads) with literal expected messages.

Covered:
- ids: the caller's id, string or integer, replaces the recorded one with its JSON type kept;
- repeats: asked three times with two recordings gives answer 1, 2, 2, and `report.repeats` says so;
  requests in another order than recorded each get their own answer;
- progress: notifications/progress go before the response with the live progressToken, and are
  left out when the live request has none, while notifications/message still go;
- server-to-client requests: elicitation/create goes out under its recorded id (0 and string ids
  too; a fresh one, with a note, only when the recorded id is still in flight), the interaction waits for
  the host's answer (other requests are answered meanwhile), then the response follows; an answer
  that differs from the recording is a `report.mismatches` entry and replay goes on;
  `close()` reports a server request the host never answered;
- unsolicited server messages: at `start()`, and right after the interaction they follow is first
  played (also when that interaction is delayed and asked twice);
- ping without a cassette entry: `{}` in the handshake era, -32601 (no miss) for a 2026-07-28 ping,
  unless the cassette recorded one; unknown method (-32601); known method with other params
  (`NO_MATCH`, `error.data.closest` / `.differences`, a Note with the story and how to fix, and
  the `--ignore` path it suggests really makes the request match);
- bad input: invalid JSON, empty batch, batches, invalid requests, notifications, stray and
  malformed responses from the host; after each one a good request is still answered;
- delays: `Wake`, other requests answered meanwhile, `wake()` sends the delayed response;
  `notifications/cancelled` for a delayed request (alone, or inside a batch); a recorded late answer
  to a cancelled request goes only to that request, while the live host has not cancelled it;
- 2026-07-28: subscriptions/listen notifications get the live listen id as subscriptionId, and
  each waits for the client interaction recorded before it (to its end, or only its start when
  that one was still unanswered), in recorded order, untimed ones at once;
  `input_required` then the retried request replay as two ordinary pairs despite other `_meta`;
- what hosts send differently: `arguments: {}` / null, `_meta: {}`, `params: {}` match them left
  out; a lone surrogate (escaped, or raw bytes) matches the recorder's U+FFFD, through the recorder
  and after redaction, and the reply keeps the host's id;
- the report: `unplayed` lists interactions never asked; `plays` counts;
- `drop: cut`: the server messages before it, then `Cut` of the live request instead of a reply (over
  stdio, nothing: no reply), a fault line in the report; `drop: true`: nothing at all;
- client capabilities: a server request the host declared no capability for is withheld (noted,
  counted, failing --strict) and the interaction goes on; a 2026-07-28 `input_required` asking
  what the request did not declare is -32021; capabilities unlike the recording's are noted once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import pytest

from mockmcp._wire import jsonrpc
from mockmcp.cassette.store import dump, loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Action, Cut, Note, Replay, Send, Wake
from mockmcp.engine.report import Report
from mockmcp.record._recorder import CLIENT, SERVER, Recorder

# --- helpers -------------------------------------------------------------------------------------


def engine_for(yaml_text: str) -> Replay:
    return Replay(loads(yaml_text), Matcher.build())


def sent(actions: Iterable[Action]) -> list[Any]:
    """The messages the actions send, one per line, decoded."""
    return [json.loads(line) for action in actions if isinstance(action, Send) for line in action.data.splitlines()]


def notes(actions: Iterable[Action]) -> list[str]:
    return [action.text for action in actions if isinstance(action, Note)]


def run(engine: Replay, lines: Iterable[bytes]) -> list[Any]:
    """Feed the lines in order; return every message sent because of them."""
    out: list[Any] = []
    for line in lines:
        out.extend(sent(engine.receive(line)))
    return out


def result(id_: Any, body: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": body}


def error_of(message: dict[str, Any]) -> tuple[Any, int]:
    """(id, code) of an error response."""
    return message["id"], message["error"]["code"]


# --- cassettes -----------------------------------------------------------------------------------

NOTES = """
version: 1
meta: {server: [python, notes_server.py]}
interactions:
- request:
    id: 1
    method: initialize
    params:
      protocolVersion: '2025-11-25'
      capabilities: {}
      clientInfo: {name: mcp, version: 0.1.0}
  response:
    result:
      protocolVersion: '2025-11-25'
      capabilities: {tools: {}}
      serverInfo: {name: notes, version: 1.0.0}
- notification: {method: notifications/initialized}
- request: {id: 2, method: tools/list}
  response:
    result:
      tools: [{name: read_file, inputSchema: {type: object}}]
- request:
    id: 3
    method: tools/call
    params: {name: read_file, arguments: {path: notes.txt}}
  response:
    result:
      content: [{type: text, text: remember to buy milk}]
      isError: false
- request:
    id: 4
    method: tools/call
    params: {name: read_file, arguments: {path: missing.txt}}
  response:
    result:
      content: [{type: text, text: 'no such file: missing.txt'}]
      isError: true
"""

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "notes", "version": "1.0.0"},
}
LIST_RESULT = {"tools": [{"name": "read_file", "inputSchema": {"type": "object"}}]}
NOTES_RESULT = {"content": [{"type": "text", "text": "remember to buy milk"}], "isError": False}
MISSING_RESULT = {"content": [{"type": "text", "text": "no such file: missing.txt"}], "isError": True}

INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp","version":"0.1.0"}}}'  # noqa: E501 (a literal message, as on the wire)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
TOOLS_LIST = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
READ_NOTES = (
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.txt"}}}'
)
READ_MISSING = (
    b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"missing.txt"}}}'
)


# --- ids -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("live_id", [7, 0, 2, "2", "abc", "server-discover-probe-1"])
def test_the_callers_id_replaces_the_recorded_one(live_id: Any) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": live_id, "method": "tools/list"}).encode()
    out = run(engine_for(NOTES), [line])
    assert out == [result(live_id, LIST_RESULT)]
    assert type(out[0]["id"]) is type(live_id)  # "2" stays a string, 2 an integer


def test_a_whole_session_in_recorded_order() -> None:
    engine = engine_for(NOTES)
    out = run(engine, [INITIALIZE, INITIALIZED, TOOLS_LIST, READ_NOTES, READ_MISSING])
    assert out == [result(1, INIT_RESULT), result(2, LIST_RESULT), result(3, NOTES_RESULT), result(4, MISSING_RESULT)]
    assert engine.report.unplayed == []
    assert engine.report.plays_by_index() == [1, 1, 1, 1, 1]
    assert engine.report.strict_ok


def test_a_session_keeps_counts_only_for_what_it_played_and_its_report_lists_every_interaction() -> None:
    """A live session's report costs what it did, not the cassette's size (HTTP keeps one per live session)."""
    engine = engine_for(NOTES)
    run(engine, [INITIALIZE, READ_NOTES])
    assert dict(engine.report.plays) == {0: 1, 3: 1}  # initialize and read_file notes.txt
    assert engine.report.to_json()["plays"] == [1, 0, 0, 1, 0]
    both = Report.combine(engine.cassette, [engine.report, engine.report])
    assert (dict(both.plays), both.to_json()["plays"]) == ({0: 2, 3: 2}, [2, 0, 0, 2, 0])


# --- repeats and order ---------------------------------------------------------------------------

TWICE = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: roll}}
  response: {result: {content: [{type: text, text: '1'}]}}
- request: {id: 2, method: tools/call, params: {name: roll}}
  response: {result: {content: [{type: text, text: '2'}]}}
"""


def roll(id_: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"roll"}}' % id_


def test_asked_more_often_than_recorded_gives_the_answers_in_order_then_the_last_again() -> None:
    engine = engine_for(TWICE)
    out = run(engine, [roll(10), roll(11), roll(12)])
    assert out == [
        result(10, {"content": [{"type": "text", "text": "1"}]}),
        result(11, {"content": [{"type": "text", "text": "2"}]}),
        result(12, {"content": [{"type": "text", "text": "2"}]}),
    ]
    assert engine.report.repeats == {1: 1}
    assert engine.report.plays_by_index() == [1, 2]
    assert engine.report.to_json()["plays"] == [1, 2]
    assert "interactions[1] tools/call roll: asked 1 more time than recorded; the last answer was repeated" in (
        engine.report.summary()
    )
    # A repeat fails strict: the host asked more than the recording says the server answered.
    assert not engine.report.strict_ok
    assert engine.report.strict_failures() == "1 request asked more often than recorded"


@pytest.mark.parametrize(
    ("recordings", "knobs", "answered", "repeats", "again"),
    [
        (1, "  times: any\n", [1, 1, 1], {}, ""),  # as often as asked: never used up, never a repeat
        (2, "  times: 2\n", [1, 1, 2], {}, ""),
        (2, "", [1, 2, 2], {1: 1}, "the last answer was repeated"),
        (1, "  drop: true\n", [], {0: 2}, "played again, unanswered (`drop`)"),  # no answer to repeat
        (1, "  drop: cut\n", [], {0: 2}, "played again, broken off again (`drop: cut`)"),
    ],
    ids=["any", "two", "once", "dropped", "cut"],
)
def test_times_any_answers_as_often_as_asked_and_a_repeat_says_what_it_played(
    recordings: int, knobs: str, answered: list[int], repeats: dict[int, int], again: str
) -> None:
    cassette = TWICE if recordings == 2 else TWICE.split("- request: {id: 2")[0]
    engine = engine_for(cassette.replace("  response:", knobs + "  response:", 1))
    out = run(engine, [roll(10), roll(11), roll(12)])
    assert [int(message["result"]["content"][0]["text"]) for message in out] == answered
    assert engine.report.repeats == repeats
    assert engine.report.strict_ok is (not repeats)
    summary = engine.report.summary()
    assert (again in summary) if again else ("repeated:" not in summary)


def test_requests_in_another_order_each_get_their_own_answer() -> None:
    engine = engine_for(NOTES)
    out = run(engine, [READ_MISSING, TOOLS_LIST, READ_NOTES, INITIALIZE])
    assert out == [result(4, MISSING_RESULT), result(2, LIST_RESULT), result(3, NOTES_RESULT), result(1, INIT_RESULT)]
    assert engine.report.repeats == {}


# --- progress ------------------------------------------------------------------------------------

COUNT = """
version: 1
interactions:
- request:
    id: 5
    method: tools/call
    params:
      name: count_slowly
      arguments: {n: 2}
      _meta: {progressToken: 5}
  server:
  - notification:
      method: notifications/progress
      params: {progressToken: 5, progress: 1, total: 2, message: step 1}
  - notification:
      method: notifications/message
      params: {level: info, data: counted 1}
  - notification:
      method: notifications/progress
      params: {progressToken: 5, progress: 2, total: 2, message: step 2}
  - notification:
      method: notifications/message
      params: {level: info, data: counted 2}
  response:
    result:
      content: [{type: text, text: counted to 2}]
      isError: false
"""
COUNT_RESULT = {"content": [{"type": "text", "text": "counted to 2"}], "isError": False}


def progress(token: Any, n: int) -> dict[str, Any]:
    params = {"progressToken": token, "progress": n, "total": 2, "message": f"step {n}"}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def log(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": f"counted {n}"}}


@pytest.mark.parametrize("token", ["tok-9", 42, 5])
def test_progress_goes_before_the_response_with_the_live_token(token: Any) -> None:
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 31,
            "method": "tools/call",
            "params": {"name": "count_slowly", "arguments": {"n": 2}, "_meta": {"progressToken": token}},
        }
    ).encode()
    out = run(engine_for(COUNT), [line])
    assert out == [progress(token, 1), log(1), progress(token, 2), log(2), result(31, COUNT_RESULT)]
    assert type(out[0]["params"]["progressToken"]) is type(token)


def test_no_progress_without_a_live_token_but_other_notifications_still_go() -> None:
    line = b'{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"count_slowly","arguments":{"n":2}}}'
    out = run(engine_for(COUNT), [line])
    assert out == [log(1), log(2), result(32, COUNT_RESULT)]


# --- server-to-client requests -------------------------------------------------------------------

DELETE = """
version: 1
interactions:
- request: {id: 2, method: tools/list}
  response: {result: {tools: []}}
- request:
    id: 6
    method: tools/call
    params: {name: delete_file, arguments: {path: notes.txt}}
  server:
  - request:
      id: 77
      method: elicitation/create
      params:
        mode: form
        message: Delete notes.txt?
        requestedSchema:
          type: object
          properties: {confirm: {type: boolean}}
    response:
      result: {action: accept, content: {confirm: true}}
  response:
    result:
      content: [{type: text, text: deleted notes.txt}]
      isError: false
"""
ELICIT_PARAMS = {
    "mode": "form",
    "message": "Delete notes.txt?",
    "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
}
DELETED_RESULT = {"content": [{"type": "text", "text": "deleted notes.txt"}], "isError": False}


def delete(id_: Any) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": id_,
            "method": "tools/call",
            "params": {"name": "delete_file", "arguments": {"path": "notes.txt"}},
        }
    ).encode()


def answer(server_id: Any, body: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": server_id, "result": body}).encode()


def test_a_server_request_waits_for_the_hosts_answer_then_the_response_follows() -> None:
    engine = engine_for(DELETE)
    [ask] = run(engine, [delete("d1")])
    server_id = ask["id"]
    assert ask == {"jsonrpc": "2.0", "id": server_id, "method": "elicitation/create", "params": ELICIT_PARAMS}
    assert jsonrpc.is_valid_id(server_id)

    # waiting: another request is answered at once, and nothing of the tool call goes out
    assert run(engine, [b'{"jsonrpc":"2.0","id":"d2","method":"tools/list"}']) == [result("d2", {"tools": []})]

    out = run(engine, [answer(server_id, {"action": "accept", "content": {"confirm": True}})])
    assert out == [result("d1", DELETED_RESULT)]
    assert engine.report.mismatches == []
    assert engine.close() == []
    assert engine.report.unanswered == []


def test_a_server_request_whose_recorded_id_is_in_flight_gets_a_fresh_one_with_a_note() -> None:
    engine = engine_for(DELETE)
    [first] = run(engine, [delete(1)])
    actions = engine.receive(delete(2))  # a second tool call while the first still waits
    [second] = sent(actions)
    assert first["method"] == second["method"] == "elicitation/create"
    assert first["id"] == 77  # the recorded id
    assert second["id"] != 77
    [text] = notes(actions)
    assert "77" in text and "elicitation/create" in text and "interactions[1]" in text
    # answered out of order, each resumes its own request
    assert run(engine, [answer(second["id"], {"action": "accept", "content": {"confirm": True}})]) == [
        result(2, DELETED_RESULT)
    ]
    assert run(engine, [answer(first["id"], {"action": "accept", "content": {"confirm": True}})]) == [
        result(1, DELETED_RESULT)
    ]


SERVER_IDS = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: ask}}
  server:
  - request: {id: 0, method: roots/list}
    response: {result: {roots: []}}
  - request: {id: "s-1", method: sampling/createMessage, params: {maxTokens: 5, messages: []}}
    response: {result: {role: assistant, content: {type: text, text: hi}, model: m}}
  response: {result: {content: []}}
"""
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


@pytest.mark.parametrize("live_id", [0, 1, "0"])
def test_server_requests_go_out_under_their_recorded_ids_id_0_included(live_id: Any) -> None:
    engine = engine_for(SERVER_IDS)
    ask = json.dumps({"jsonrpc": "2.0", "id": live_id, "method": "tools/call", "params": {"name": "ask"}}).encode()
    actions = engine.receive(ask)
    assert sent(actions) == [{"jsonrpc": "2.0", "id": 0, "method": "roots/list"}]
    assert notes(actions) == []
    [sampling] = run(engine, [answer(0, {"roots": []})])
    assert sampling["id"] == "s-1"
    assert run(engine, [answer("s-1", SAMPLED)]) == [result(live_id, {"content": []})]
    assert engine.report.mismatches == []


def test_a_recorded_server_request_id_is_free_again_once_answered() -> None:
    engine = engine_for(SERVER_IDS)
    ask = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}'
    assert [m["id"] for m in run(engine, [ask, answer(0, {"roots": []})])] == [0, "s-1"]
    again = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}'
    actions = engine.receive(again)  # "s-1" still awaits its answer, 0 does not
    assert [m["id"] for m in sent(actions)] == [0]
    assert notes(actions) == []


def test_a_fresh_server_request_id_is_none_in_flight() -> None:
    engine = engine_for(
        """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: a}}
  server:
  - request: {id: 1, method: roots/list}
  response: {result: {content: []}}
- request: {id: 2, method: tools/call, params: {name: b}}
  server:
  - request: {id: 2, method: roots/list}
  response: {result: {content: []}}
"""
    )
    a = b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"a"}}'
    b = b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"b"}}'
    assert [m["id"] for m in run(engine, [a, b, a])] == [1, 2, 3]  # the third clashes with 1; 2 is taken too


def test_a_different_answer_from_the_host_is_a_mismatch_and_replay_goes_on() -> None:
    engine = engine_for(DELETE)
    [ask] = run(engine, [delete(9)])
    actions = engine.receive(answer(ask["id"], {"action": "decline"}))
    assert sent(actions) == [result(9, DELETED_RESULT)]
    [mismatch] = engine.report.mismatches
    assert mismatch.interaction == 1
    assert mismatch.method == "elicitation/create"
    assert mismatch.differences
    assert any("action" in text for text in mismatch.differences)
    assert any("elicitation/create" in text for text in notes(actions))


@pytest.mark.parametrize(
    ("answer_line", "differs"),
    [
        # the recorded answer, whatever the id and key order
        ('"result":{"content":{"confirm":true},"action":"accept"}', False),
        # what varies between runs in _meta never counts; an emptied _meta is none
        ('"result":{"action":"accept","content":{"confirm":true},"_meta":{"progressToken":7}}', False),
        ('"result":{"action":"accept","content":{"confirm":true},"_meta":{"traceparent":"00-ab-cd-01"}}', False),
        # the user's choice, the form's content, JSON types, other _meta keys, an error instead
        ('"result":{"action":"decline"}', True),
        ('"result":{"action":"accept","content":{"confirm":false}}', True),
        ('"result":{"action":"accept","content":{"confirm":1}}', True),
        ('"result":{"action":"accept","content":{"confirm":true},"_meta":{"com.example/x":1}}', True),
        ('"error":{"code":-32603,"message":"no UI"}', True),
    ],
)
def test_what_counts_as_a_different_answer_from_the_host(answer_line: str, differs: bool) -> None:
    engine = engine_for(DELETE)
    [ask] = run(engine, [delete(4)])
    line = f'{{"jsonrpc":"2.0","id":{json.dumps(ask["id"])},{answer_line}}}'.encode()
    assert sent(engine.receive(line)) == [result(4, DELETED_RESULT)]
    assert bool(engine.report.mismatches) is differs
    run(engine, [b'{"jsonrpc":"2.0","id":5,"method":"tools/list"}'])
    assert engine.report.strict_ok is not differs


def test_a_different_answer_fails_strict_and_the_summary_and_report_say_which() -> None:
    engine = engine_for(DELETE)
    run(engine, [b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'])
    [ask] = run(engine, [delete(2)])
    run(engine, [answer(ask["id"], {"action": "decline"})])
    report = engine.report
    assert not report.strict_ok and report.misses == [] and report.unplayed == []
    assert report.strict_failures() == "1 answer that differed"
    summary = report.summary()
    assert "0 unplayed, 1 answers differed" in summary
    assert "  answer differed: elicitation/create in interactions[1] tools/call delete_file" in summary
    assert '    - result.action: recorded "accept", the host\'s "decline"' in summary
    assert "    - result.content: only in the recording" in summary
    [found] = report.to_json()["mismatches"]
    assert found["interaction"] == 1 and found["method"] == "elicitation/create"
    assert 'result.action: recorded "accept", the host\'s "decline"' in found["differences"]
    assert found["explanation"].startswith("mockmcp: the host answered elicitation/create (from interactions[1])")
    assert report.to_json()["strict_ok"] is False


def test_close_reports_a_server_request_the_host_never_answered() -> None:
    engine = engine_for(DELETE)
    run(engine, [delete(3)])
    closing = engine.close()
    assert sent(closing) == []
    [text] = engine.report.unanswered
    assert "elicitation/create" in text
    assert "interactions[1]" in text
    assert any("elicitation/create" in note for note in notes(closing))


# --- unsolicited server messages -----------------------------------------------------------------

UNSOLICITED = """
version: 1
interactions:
- server:
  - notification: {method: notifications/message, params: {level: info, data: hello}}
- request: {id: 1, method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- server:
  - notification: {method: notifications/tools/list_changed}
- server:
  - notification: {method: notifications/message, params: {level: info, data: after init}}
- request: {id: 2, method: tools/list}
  response: {result: {tools: []}}
"""
HELLO = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}}
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
AFTER_INIT = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after init"}}
INIT_2 = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}


def test_unsolicited_messages_come_at_start_and_after_the_interaction_they_follow() -> None:
    engine = engine_for(UNSOLICITED)
    assert sent(engine.start()) == [HELLO]
    # not yet: they follow initialize, which has not been played
    assert run(engine, [b'{"jsonrpc":"2.0","id":5,"method":"tools/list"}']) == [result(5, {"tools": []})]
    init = b'{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
    assert run(engine, [init]) == [result(6, INIT_2), LIST_CHANGED, AFTER_INIT]
    # only the first play releases them
    init_again = b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
    assert run(engine, [init_again]) == [result(7, INIT_2)]
    assert sent(engine.start()) == []  # start-up messages go once
    assert engine.report.unplayed == []  # server-only interactions are never "unplayed"


DELAYED_ANCHOR = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: slow}}
  delay: 0.5
  response: {result: {content: []}}
- server:
  - notification: {method: notifications/tools/list_changed}
"""


def test_unsolicited_messages_follow_a_delayed_interaction_asked_twice() -> None:
    engine = engine_for(DELAYED_ANCHOR)
    slow = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow"}}'
    [first] = engine.receive(slow % 1)
    [second] = engine.receive(slow % 2)  # the host asks again before the first answer
    assert isinstance(first, Wake) and isinstance(second, Wake)
    assert sent(engine.wake(first.job)) == [result(1, {"content": []}), LIST_CHANGED]
    assert sent(engine.wake(second.job)) == [result(2, {"content": []})]


# --- ping, unknown methods, near misses ----------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":"p1","method":"ping"}',
        b'{"jsonrpc":"2.0","id":"p1","method":"ping","params":{}}',
        b'{"jsonrpc":"2.0","id":"p1","method":"ping","params":{"_meta":{"progressToken":3}}}',
    ],
)
def test_ping_is_answered_without_a_cassette_entry(line: bytes) -> None:
    engine = engine_for(NOTES)
    assert run(engine, [line]) == [result("p1", {})]
    assert engine.report.misses == []


STATELESS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
STATELESS_PING = b'{"jsonrpc":"2.0","id":"p1","method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'  # noqa: E501 (a literal message, as on the wire)


def test_a_2026_ping_is_method_not_found_as_a_2026_server_answers() -> None:
    engine = engine_for(NOTES)
    actions = engine.receive(STATELESS_PING)
    assert sent(actions) == [
        {"jsonrpc": "2.0", "id": "p1", "error": {"code": -32601, "message": "Method not found", "data": "ping"}}
    ]
    [text] = notes(actions)
    assert "2026-07-28" in text and "-32601" in text
    assert engine.report.misses == []  # what a real server answers is no gap in the cassette


def test_a_2026_ping_the_cassette_recorded_plays_as_recorded() -> None:
    engine = engine_for(
        """
version: 1
interactions:
- request:
    id: 4
    method: ping
    params:
      _meta:
        io.modelcontextprotocol/protocolVersion: '2026-07-28'
  response: {result: {}}
"""
    )
    assert run(engine, [STATELESS_PING]) == [result("p1", {})]


def test_an_unknown_method_gets_method_not_found() -> None:
    engine = engine_for(NOTES)
    actions = engine.receive(b'{"jsonrpc":"2.0","id":9,"method":"resources/list"}')
    [response] = sent(actions)
    assert error_of(response) == (9, jsonrpc.METHOD_NOT_FOUND)
    assert "resources/list" in response["error"]["message"]
    [miss] = engine.report.misses
    assert miss.method == "resources/list" and miss.code == jsonrpc.METHOD_NOT_FOUND
    assert notes(actions)


def test_a_known_method_with_other_params_gets_no_match_with_the_closest_interaction() -> None:
    engine = engine_for(NOTES)
    line = b'{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"read_file","arguments":{"path":"other.txt"}}}'  # noqa: E501 (a literal message, as on the wire)
    actions = engine.receive(line)
    [response] = sent(actions)
    assert error_of(response) == ("m", jsonrpc.NO_MATCH)
    data = response["error"]["data"]
    assert data["closest"] == "interactions[3]"
    assert data["differences"] and "arguments.path" in data["differences"][0]
    assert "other.txt" in data["differences"][0]
    [text] = notes(actions)
    assert "interactions[3]" in text
    assert "how to fix" in text
    assert "arguments.path" in text
    [miss] = engine.report.misses
    assert miss.code == jsonrpc.NO_MATCH and miss.request_id == "m"
    assert engine.report.plays[3] == 0  # a near miss plays nothing


TAGGED = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: tag, arguments: {path: a.txt, tags: [x, y]}}}
  response: {result: {content: []}}
"""


@pytest.mark.parametrize(
    "arguments",
    [{"path": "b.txt", "tags": ["x", "y"]}, {"path": "a.txt", "tags": ["x", "z"]}],
    ids=["scalar-leaf", "list-element"],
)
def test_the_ignore_path_a_near_miss_suggests_makes_the_request_match(arguments: dict[str, Any]) -> None:
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "tag", "arguments": arguments}}
    ).encode()
    engine = engine_for(TAGGED)
    [text] = notes(engine.receive(line))
    [miss] = engine.report.misses
    suggested = miss.candidates[0].first_path
    assert f"--ignore '{suggested}'" in text
    # follow the advice
    advised = Replay(loads(TAGGED), Matcher.build((suggested,)))
    assert run(advised, [line]) == [result(2, {"content": []})]


def test_exact_json_types_decide_a_match() -> None:
    engine = engine_for(
        """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: big, arguments: {size: 1}}}
  response: {result: {content: []}}
"""
    )
    line = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"size":1.0}}}'
    [response] = run(engine, [line])
    assert error_of(response) == (2, jsonrpc.NO_MATCH)
    assert "arguments.size" in response["error"]["data"]["differences"][0]


# --- bad input -----------------------------------------------------------------------------------

# (line, expected messages as (id, code) for errors, or the literal response)
BAD_INPUT = [
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":', [(None, -32700)], id="invalid-json"),
    pytest.param(b"\xff\xfe\x00garbage", [(None, -32700)], id="not-utf8"),
    pytest.param(b"[]", [(None, -32600)], id="empty-batch"),
    pytest.param(b'"tools/list"', [(None, -32600)], id="a-string"),
    pytest.param(b"42", [(None, -32600)], id="a-number"),
    pytest.param(b"null", [(None, -32600)], id="null"),
    pytest.param(b'{"id":1}', [(1, -32600)], id="bare-id"),
    pytest.param(b'{"id":"x","method":"tools/list"}', [("x", -32600)], id="no-jsonrpc"),
    pytest.param(b'{"jsonrpc":"2.0","id":1}', [(1, -32600)], id="neither-request-nor-response"),
    pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', [(None, -32600)], id="id-null"),
    pytest.param(b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', [(None, -32600)], id="id-fractional"),
    pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', [(None, -32600)], id="id-boolean"),
    pytest.param(b'{"jsonrpc":"2.0","id":"s","method":5}', [("s", -32600)], id="method-not-string"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"read_file"}', [(3, -32600)], id="params-string"
    ),
    pytest.param(
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"},'
        b'{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.txt"}}}]',
        [[result(1, LIST_RESULT), result("b", NOTES_RESULT)]],
        id="batch-two-requests-one-notification",
    ),
    pytest.param(b"[1]", [[(None, -32600)]], id="batch-of-one-invalid"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"x\\ud800"}', [(1, -32601)], id="lone-surrogate-method"),
    pytest.param(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"},{"id":3}]',
        [[result(1, {}), (2, -32601), (3, -32600)]],
        id="batch-ping-unknown-invalid",
    ),
    pytest.param(b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]', [], id="batch-of-notifications"),
    pytest.param(INITIALIZED, [], id="known-notification"),
    pytest.param(b'{"jsonrpc":"2.0","method":"notifications/unknown","params":{"x":1}}', [], id="unknown-notification"),
    pytest.param(b'{"jsonrpc":"2.0","method":"tools/list"}', [], id="request-method-sent-as-notification"),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}', [], id="cancel-unknown-id"
    ),
    pytest.param(b'{"jsonrpc":"2.0","id":42,"result":{}}', [], id="stray-response"),
    pytest.param(b'{"jsonrpc":"2.0","id":42,"error":{"code":-1,"message":"no"}}', [], id="stray-error-response"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":42,"result":{},"error":{"code":-1,"message":"no"}}', [], id="malformed-response"
    ),
    pytest.param(b'{"jsonrpc":"2.0","result":{}}', [], id="response-without-id"),
    pytest.param(b'{"id":42,"result":{}}', [], id="response-without-jsonrpc"),
]


def brief(message: Any) -> Any:
    """An error response as (id, code); a batch as a sorted list of those (JSON-RPC lets a batch's
    responses come in any order); anything else as it is."""
    if isinstance(message, list):
        return unordered([brief(item) for item in message])
    if isinstance(message, dict) and "error" in message:
        assert message["jsonrpc"] == "2.0"
        assert isinstance(message["error"]["message"], str)
        return error_of(message)
    return message


def unordered(batch: list[Any]) -> list[Any]:
    return sorted(batch, key=lambda item: json.dumps(item, sort_keys=True))


@pytest.mark.parametrize(("line", "expected"), BAD_INPUT)
def test_bad_input_is_answered_per_json_rpc_and_replay_goes_on(line: bytes, expected: list[Any]) -> None:
    engine = engine_for(NOTES)
    actions = engine.receive(line)
    expected = [unordered(item) if isinstance(item, list) else item for item in expected]
    assert [brief(message) for message in sent(actions)] == expected
    if not any(isinstance(action, Send) for action in actions):
        assert not any(isinstance(action, Wake) for action in actions)
    # a good request is still answered
    assert run(engine, [b'{"jsonrpc":"2.0","id":"after","method":"tools/list"}']) == [result("after", LIST_RESULT)]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":42,"result":{}}',
        b'{"jsonrpc":"2.0","id":42,"result":{},"error":{"code":-1,"message":"no"}}',
        b"not json at all",
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
    ],
    ids=["stray-response", "malformed-response", "invalid-json", "invalid-request"],
)
def test_bad_input_leaves_a_note(line: bytes) -> None:
    assert notes(engine_for(NOTES).receive(line))


# --- delays and cancellation ---------------------------------------------------------------------

SLOW = """
version: 1
interactions:
- request: {id: 1, method: tools/list}
  response: {result: {tools: []}}
- request: {id: 2, method: tools/call, params: {name: slow}}
  delay: 0.5
  server:
  - notification: {method: notifications/message, params: {level: info, data: done waiting}}
  response: {result: {content: [{type: text, text: slow answer}]}}
"""
SLOW_CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}'
SLOW_RESULT = {"content": [{"type": "text", "text": "slow answer"}]}
DONE_WAITING = {
    "jsonrpc": "2.0",
    "method": "notifications/message",
    "params": {"level": "info", "data": "done waiting"},
}


def test_a_delay_is_a_wake_and_other_requests_are_answered_meanwhile() -> None:
    engine = engine_for(SLOW)
    actions = engine.receive(SLOW_CALL)
    assert len(actions) == 1
    [wake] = actions
    assert isinstance(wake, Wake)
    assert wake.after == 0.5
    assert actions == [Wake(0.5, wake.job)]

    assert run(engine, [b'{"jsonrpc":"2.0","id":8,"method":"tools/list"}']) == [result(8, {"tools": []})]

    assert sent(engine.wake(wake.job)) == [DONE_WAITING, result(7, SLOW_RESULT)]
    assert engine.wake(wake.job) == []  # the job is over


def test_a_cancelled_delayed_request_is_never_answered() -> None:
    engine = engine_for(SLOW)
    [wake] = engine.receive(SLOW_CALL)
    cancelling = engine.receive(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"timeout"}}'
    )
    assert sent(cancelling) == []
    assert sent(engine.wake(wake.job)) == []
    # still serving
    assert run(engine, [b'{"jsonrpc":"2.0","id":9,"method":"tools/list"}']) == [result(9, {"tools": []})]


def test_a_cancel_names_the_id_with_its_json_type() -> None:
    engine = engine_for(SLOW)
    [wake] = engine.receive(SLOW_CALL)  # id 7, an integer
    engine.receive(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}')
    assert sent(engine.wake(wake.job)) == [DONE_WAITING, result(7, SLOW_RESULT)]


def test_a_batch_with_a_delayed_request_is_answered_as_one_array_after_the_delay() -> None:
    engine = engine_for(SLOW)
    actions = engine.receive(b"[" + SLOW_CALL + b',{"jsonrpc":"2.0","id":8,"method":"tools/list"}]')
    [wake] = actions
    assert isinstance(wake, Wake)
    notification, batch = sent(engine.wake(wake.job))
    assert notification == DONE_WAITING
    assert unordered(batch) == unordered([result(7, SLOW_RESULT), result(8, {"tools": []})])


def test_cancelling_the_delayed_request_of_a_batch_still_answers_the_rest() -> None:
    engine = engine_for(SLOW)
    [wake] = engine.receive(b"[" + SLOW_CALL + b',{"jsonrpc":"2.0","id":8,"method":"tools/list"}]')
    cancelling = engine.receive(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}')
    later = engine.wake(wake.job)
    assert sent(cancelling) + sent(later) == [[result(8, {"tools": []})]]


# As the recorder keeps a server's late answer to a request the host cancelled: the request's own
# response (here the SDK's "Request cancelled"), sent 2 s in, and the cancel as the notification it was.
LATE_ANSWER = """
version: 1
interactions:
- at: 0.0
  request: {id: 1, method: tools/call, params: {name: slow}}
  response: {error: {code: 0, message: Request cancelled}}
  took: 2.0
- at: 1.0
  notification: {method: notifications/cancelled, params: {requestId: 1, reason: timeout}}
- at: 1.5
  request: {id: 2, method: tools/list}
  response: {result: {tools: []}}
  took: 1.0
"""
LATE_CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}'
LATE_CANCEL = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"timeout"}}'
LATE_LIST = b'{"jsonrpc":"2.0","id":8,"method":"tools/list"}'
CANCELLED_ERROR = {"jsonrpc": "2.0", "id": 7, "error": {"code": 0, "message": "Request cancelled"}}


def play_out(engine: Replay, lines: Iterable[bytes]) -> list[Any]:
    """Feed the lines, then carry out every Wake in the order asked; every message sent, in order."""
    out: list[Any] = []
    wakes: list[Wake] = []
    for line in lines:
        actions = engine.receive(line)
        out.extend(sent(actions))
        wakes.extend(action for action in actions if isinstance(action, Wake))
    while wakes:
        actions = engine.wake(wakes.pop(0).job)
        out.extend(sent(actions))
        wakes.extend(action for action in actions if isinstance(action, Wake))
    return out


@pytest.mark.parametrize(
    ("timing", "lines", "expected"),
    [
        # The server answered only after the recorded host's cancel: a host that never cancels never gets that
        # answer, and the next request's answer waits for the cancel only as long as its server took.
        pytest.param(0.0, [LATE_CALL, LATE_LIST], [result(8, {"tools": []})], id="never-cancelled"),
        pytest.param(1.0, [LATE_CALL, LATE_LIST], [result(8, {"tools": []})], id="never-cancelled-timed"),
        # A host that cancels, as the recorded one did, gets the late answer after its cancel, under its own id.
        pytest.param(
            0.0, [LATE_CALL, LATE_CANCEL, LATE_LIST], [CANCELLED_ERROR, result(8, {"tools": []})], id="cancelled"
        ),
        pytest.param(
            1.0, [LATE_CALL, LATE_CANCEL, LATE_LIST], [CANCELLED_ERROR, result(8, {"tools": []})], id="cancelled-timed"
        ),
    ],
)
def test_a_late_answer_goes_only_after_the_host_cancels(timing: float, lines: list[bytes], expected: list[Any]) -> None:
    engine = Replay(loads(LATE_ANSWER), Matcher.build(), timing=timing)
    assert play_out(engine, lines) == expected


def test_a_late_answer_never_sent_is_in_the_report() -> None:
    engine = Replay(loads(LATE_ANSWER), Matcher.build())
    assert sent(engine.receive(LATE_CALL)) == []
    notes = [a.text for a in engine.close() if isinstance(a, Note)]
    assert notes == [
        "mockmcp: interactions[0]: its answer was not sent: the recorded server sent it only after the host "
        "cancelled the request, and this host never did"
    ]
    assert engine.report.unanswered == [notes[0].removeprefix("mockmcp: ")]


def test_a_recorded_late_answer_replays_under_the_live_id_never_as_a_raw_line() -> None:
    recorder = Recorder({})
    for at, (direction, line) in enumerate(
        [
            (CLIENT, b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}'),
            (CLIENT, b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'),
            (CLIENT, b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'),
            (SERVER, b'{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"Request cancelled"}}'),
            (SERVER, b'{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}'),
        ]
    ):
        recorder.feed(direction, line, float(at))
    engine = Replay(loads(dump(recorder.cassette())), Matcher.build())
    assert play_out(engine, [LATE_LIST]) == [result(8, {"tools": []})]
    assert play_out(engine, [LATE_CALL, LATE_CANCEL]) == [CANCELLED_ERROR]


# --- 2026-07-28 ----------------------------------------------------------------------------------

LISTEN = """
version: 1
interactions:
- request:
    id: 4
    method: subscriptions/listen
    params:
      notifications: {resourcesUpdated: ['notes://notes.txt']}
      _meta:
        io.modelcontextprotocol/protocolVersion: '2026-07-28'
        io.modelcontextprotocol/clientInfo: {name: mcp, version: 0.1.0}
  server:
  - notification:
      method: notifications/resources/updated
      params:
        uri: notes://notes.txt
        _meta: {io.modelcontextprotocol/subscriptionId: 4, note: kept}
  - notification:
      method: notifications/tools/list_changed
      params:
        _meta: {io.modelcontextprotocol/subscriptionId: 4}
"""


@pytest.mark.parametrize("listen_id", [11, "listen-1"])
def test_listen_notifications_carry_the_live_listen_id(listen_id: Any) -> None:
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": listen_id,
            "method": "subscriptions/listen",
            "params": {
                "notifications": {"resourcesUpdated": ["notes://notes.txt"]},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "fastmcp", "version": "3"},
                },
            },
        }
    ).encode()
    assert run(engine_for(LISTEN), [line]) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {
                "uri": "notes://notes.txt",
                "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id, "note": "kept"},
            },
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}},
        },
    ]


# A listen recorded with three events: one as it began, one after a write the host then made (answered
# before the event came), one while a slow call was still running.
LISTEN_THEN_CALLS = """
version: 1
interactions:
- at: 0.0
  request: {id: 4, method: subscriptions/listen, params: {notifications: {resourcesUpdated: ['notes://a']}}}
  server:
  - at: 0.1
    notification:
      method: notifications/message
      params: {level: info, data: listening, _meta: {io.modelcontextprotocol/subscriptionId: 4}}
  - at: 2.5
    notification:
      method: notifications/resources/updated
      params: {uri: 'notes://a', _meta: {io.modelcontextprotocol/subscriptionId: 4}}
  - at: 3.5
    notification:
      method: notifications/resources/updated
      params: {uri: 'notes://b', _meta: {io.modelcontextprotocol/subscriptionId: 4}}
- at: 2.0
  request: {id: 5, method: tools/call, params: {name: write, arguments: {uri: 'notes://a'}}}
  response: {result: {content: []}}
  took: 0.2
- at: 3.0
  request: {id: 6, method: tools/call, params: {name: slow_write, arguments: {uri: 'notes://b'}}}
  response: {result: {content: [{type: text, text: slow}]}}
  took: 1.0
"""
LISTEN_LINE = b'{"jsonrpc":"2.0","id":40,"method":"subscriptions/listen","params":{"notifications":{"resourcesUpdated":["notes://a"]}}}'
WRITE_LINE = (
    b'{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"write","arguments":{"uri":"notes://a"}}}'
)
SLOW_WRITE_LINE = (
    b'{"jsonrpc":"2.0","id":60,"method":"tools/call","params":{"name":"slow_write","arguments":{"uri":"notes://b"}}}'
)
CANCEL_LISTEN_LINE = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":40}}'


def listen_event(method: str, **params: Any) -> dict[str, Any]:
    tagged = {**params, "_meta": {"io.modelcontextprotocol/subscriptionId": 40}}
    return {"jsonrpc": "2.0", "method": method, "params": tagged}


LISTENING = listen_event("notifications/message", level="info", data="listening")
UPDATED_A = listen_event("notifications/resources/updated", uri="notes://a")
UPDATED_B = listen_event("notifications/resources/updated", uri="notes://b")
WROTE = result(50, {"content": []})
SLOW_WROTE = result(60, {"content": [{"type": "text", "text": "slow"}]})


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param([LISTEN_LINE], [[LISTENING]], id="only-what-came-as-it-began"),
        pytest.param(
            [LISTEN_LINE, WRITE_LINE, SLOW_WRITE_LINE],
            [[LISTENING], [WROTE, UPDATED_A], [UPDATED_B, SLOW_WROTE]],
            id="each-after-its-cause",  # the slow call's event came before its answer: it goes as the call begins
        ),
        # the recorded host listened before it wrote: the write's answer waits for the listen, then all go in the
        # recorded order
        pytest.param([WRITE_LINE, LISTEN_LINE], [[], [LISTENING, WROTE, UPDATED_A]], id="cause-came-second"),
        pytest.param(
            [LISTEN_LINE, SLOW_WRITE_LINE, WRITE_LINE],
            [[LISTENING], [], [WROTE, UPDATED_A, UPDATED_B, SLOW_WROTE]],
            id="in-recorded-order",  # the slow write's answer waits for the write the recorded host sent first
        ),
        pytest.param(
            [LISTEN_LINE, CANCEL_LISTEN_LINE, WRITE_LINE], [[LISTENING], [], [WROTE]], id="listen-cancelled-meanwhile"
        ),
    ],
)
def test_listen_events_wait_for_what_caused_them(lines: list[bytes], expected: list[list[Any]]) -> None:
    engine = engine_for(LISTEN_THEN_CALLS)
    assert [sent(engine.receive(line)) for line in lines] == expected


def test_a_listen_event_timed_with_its_calls_answer_goes_before_it() -> None:
    """The slow write answered at 3.5 s, the time its event was recorded at (one turn of the recorder read both):
    the event goes as the call begins, before the answer, as the server sent it."""
    tied = LISTEN_THEN_CALLS.replace("took: 1.0", "took: 0.5")
    engine = engine_for(tied)
    assert [sent(engine.receive(line)) for line in (LISTEN_LINE, WRITE_LINE, SLOW_WRITE_LINE)] == [
        [LISTENING],
        [WROTE, UPDATED_A],
        [UPDATED_B, SLOW_WROTE],
    ]


def test_listen_events_without_recorded_times_go_as_the_listen_begins() -> None:
    untimed = re.sub(r"at: [0-9.]+\n\s+", "", LISTEN_THEN_CALLS)
    assert "at:" not in untimed
    assert sent(engine_for(untimed).receive(LISTEN_LINE)) == [LISTENING, UPDATED_A, UPDATED_B]


INPUT_REQUIRED = """
version: 1
interactions:
- request:
    id: 6
    method: tools/call
    params:
      name: delete_file
      arguments: {path: notes.txt}
      _meta:
        io.modelcontextprotocol/protocolVersion: '2026-07-28'
        io.modelcontextprotocol/clientInfo: {name: mcp, version: 0.1.0}
        io.modelcontextprotocol/clientCapabilities: {elicitation: {form: {}}}
  response:
    result:
      resultType: input_required
      inputRequests:
        ask:
          method: elicitation/create
          params: {mode: form, message: Delete notes.txt?}
      requestState: state-1
- request:
    id: 7
    method: tools/call
    params:
      name: delete_file
      arguments: {path: notes.txt}
      inputResponses:
        ask: {action: accept, content: {confirm: true}}
      requestState: state-1
      _meta:
        io.modelcontextprotocol/protocolVersion: '2026-07-28'
        io.modelcontextprotocol/clientInfo: {name: mcp, version: 0.1.0}
        io.modelcontextprotocol/clientCapabilities: {elicitation: {form: {}}}
  response:
    result:
      resultType: complete
      content: [{type: text, text: deleted notes.txt}]
      isError: false
"""


def test_input_required_then_the_retry_replay_as_two_ordinary_pairs() -> None:
    live_meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-09-30",
        "io.modelcontextprotocol/clientInfo": {"name": "inspector", "version": "2.1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
        "progressToken": 20,
    }
    first = {"name": "delete_file", "arguments": {"path": "notes.txt"}, "_meta": live_meta}
    retry = {
        **first,
        "inputResponses": {"ask": {"action": "accept", "content": {"confirm": True}}},
        "requestState": "state-1",
    }
    engine = engine_for(INPUT_REQUIRED)
    out = run(
        engine,
        [
            json.dumps({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": first}).encode(),
            json.dumps({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": retry}).encode(),
        ],
    )
    assert out == [
        result(
            20,
            {
                "resultType": "input_required",
                "inputRequests": {
                    "ask": {"method": "elicitation/create", "params": {"mode": "form", "message": "Delete notes.txt?"}}
                },
                "requestState": "state-1",
            },
        ),
        result(
            21, {"resultType": "complete", "content": [{"type": "text", "text": "deleted notes.txt"}], "isError": False}
        ),
    ]
    assert engine.report.misses == [] and engine.report.unplayed == []


# --- what the host sends differently from the recording -------------------------------------------

PROMPT = """
version: 1
interactions:
- request: {id: 1, method: prompts/get, params: {name: greet}}
  response: {result: {messages: [{role: user, content: {type: text, text: hello}}]}}
- request: {id: 2, method: tools/call, params: {name: now, arguments: {}}}
  response: {result: {content: [{type: text, text: noon}]}}
- request: {id: 3, method: tools/list, params: {cursor: null}}
  response: {result: {tools: []}}
- request: {id: 4, method: tools/call, params: {name: echo, arguments: {text: "cut \ufffd"}}}
  response: {result: {content: [{type: text, text: "cut \ufffd"}]}}
"""
GREETING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}]}
NOON = {"content": [{"type": "text", "text": "noon"}]}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # the SDK sends empty arguments where the recording (fastmcp) left them out, and the other way round
        (b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"greet","arguments":{}}}', GREETING),
        (b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"greet","arguments":null}}', GREETING),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"now"}}', NOON),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"now","_meta":{}}}', NOON),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}', {"tools": []}),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}', {"tools": []}),
    ],
)
def test_optional_params_sent_empty_match_them_left_out(line: bytes, expected: dict[str, Any]) -> None:
    engine = engine_for(PROMPT)
    assert run(engine, [line]) == [result(7, expected)]
    assert engine.report.misses == []


def test_arguments_given_still_count() -> None:
    engine = engine_for(PROMPT)
    line = b'{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"x"}}}'
    [response] = run(engine, [line])
    assert error_of(response) == (7, jsonrpc.NO_MATCH)


@pytest.mark.parametrize(
    "line",
    [
        # a cut emoji: half of a surrogate pair, as a JSON escape and (what json.loads lets through) as bytes
        b'{"jsonrpc":"2.0","id":"\\ud83d","method":"tools/call","params":{"name":"echo","arguments":{"text":"cut \\ud83d"}}}',  # noqa: E501 (a literal message, as on the wire)
        b'{"jsonrpc":"2.0","id":"\\ud83d","method":"tools/call","params":{"name":"echo","arguments":{"text":"cut \\uDE00"}}}',  # noqa: E501 (a literal message, as on the wire)
        b'{"jsonrpc":"2.0","id":"\\ud83d","method":"tools/call","params":{"name":"echo","arguments":{"text":"cut \xed\xa0\xbd"}}}',  # noqa: E501 (a literal message, as on the wire)
    ],
)
def test_a_lone_surrogate_matches_the_recorders_replacement_and_the_reply_keeps_the_id(line: bytes) -> None:
    engine = engine_for(PROMPT)
    [response] = run(engine, [line])
    assert response == result("\ud83d", {"content": [{"type": "text", "text": "cut \ufffd"}]})
    assert engine.report.misses == []


def test_the_recorder_and_replay_replace_a_lone_surrogate_alike() -> None:
    from mockmcp.record._recorder import CLIENT, SERVER, Recorder

    call = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"cut \\ud83d"}}}'
    recorder = Recorder()
    recorder.feed(CLIENT, call, 0.0)
    recorder.feed(SERVER, b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', 0.1)
    engine = Replay(recorder.cassette(), Matcher.build())
    assert run(engine, [call]) == [result(1, {"content": []})]


def test_a_lone_surrogate_is_replaced_after_redaction_too() -> None:
    from mockmcp.engine.redact import Redactor

    cassette = loads(
        """
version: 1
meta: {redact: {patterns: ['sk-[a-z]+']}}
interactions:
- request: {id: 1, method: tools/call, params: {name: echo, arguments: {text: "[REDACTED] \ufffd"}}}
  response: {result: {content: []}}
"""
    )
    engine = Replay(cassette, Matcher.build(), Redactor.from_meta(cassette.meta, {}))
    line = (
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"sk-abc \\ud83d"}}}'
    )
    assert run(engine, [line]) == [result(2, {"content": []})]


# --- smaller behaviours --------------------------------------------------------------------------


def test_raw_server_lines_go_out_byte_for_byte() -> None:
    engine = engine_for(
        """
version: 1
interactions:
- request: {id: 1, method: tools/list}
  server:
  - raw: 'debug: not json {'
  response: {result: {tools: []}}
"""
    )
    actions = engine.receive(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
    data = [action.data for action in actions if isinstance(action, Send)]
    assert data == [b"debug: not json {\n", b'{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}\n']


def test_a_server_item_recorded_on_the_get_stream_is_sent_marked_so() -> None:
    """The engine only marks it (`Send.stream`); the HTTP shell picks the stream, stdio writes it as any other."""
    engine = engine_for(
        """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: confirm}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: here}}
  - notification: {method: notifications/message, params: {level: info, data: there}}
    stream: get
  - request: {id: 0, method: elicitation/create, params: {message: Sure?}}
    response: {result: {action: accept}}
    stream: get
  response: {result: {content: []}}
"""
    )
    actions = engine.receive(b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"confirm"}}')
    assert [(action.request, action.final, action.stream) for action in actions if isinstance(action, Send)] == [
        (9, False, None),
        (9, False, "get"),
        (9, False, "get"),
    ]
    actions = engine.receive(b'{"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}')
    assert [(action.request, action.final, action.stream) for action in actions if isinstance(action, Send)] == [
        (9, True, None)
    ]
    assert sent(actions) == [result(9, {"content": []})] and engine.report.mismatches == []


def test_initialize_with_an_older_protocol_version_is_answered_in_it_with_a_note() -> None:
    engine = engine_for(NOTES)
    line = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"x","version":"9"}}}'  # noqa: E501 (a literal message, as on the wire)
    actions = engine.receive(line)
    assert sent(actions) == [result(1, {**INIT_RESULT, "protocolVersion": "2025-06-18"})]  # as the SDK server
    version, capabilities = notes(actions)  # this host also declares roots, which the recording's did not
    assert "2025-06-18" in version and "2025-11-25" in version
    assert "declares roots, which the recording's host did not" in capabilities


def test_report_unplayed_lists_the_interactions_never_asked() -> None:
    engine = engine_for(NOTES)
    run(engine, [TOOLS_LIST])
    assert engine.report.unplayed == [0, 1, 3, 4]
    assert not engine.report.strict_ok
    run(engine, [INITIALIZE, INITIALIZED])
    assert engine.report.unplayed == [3, 4]
    run(engine, [READ_MISSING])
    assert engine.report.unplayed == [3]
    summary = engine.report.summary()
    assert "unplayed: interactions[3] tools/call read_file" in summary
    assert engine.report.to_json()["unplayed"] == [{"interaction": 3, "method": "tools/call"}]


# --- client capabilities ---------------------------------------------------------------------------

CAPABILITIES = """
version: 1
interactions:
- request:
    id: 1
    method: initialize
    params:
      protocolVersion: '2025-11-25'
      capabilities: {roots: {listChanged: true}, sampling: {}, elicitation: {form: {}}}
      clientInfo: {name: mcp, version: 0.1.0}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: s, version: '1'}}}
- request: {id: 2, method: tools/call, params: {name: ask}}
  server:
  - request: {id: 0, method: roots/list}
    response: {result: {roots: []}}
  - request: {id: 1, method: sampling/createMessage, params: {maxTokens: 5, messages: []}}
    response: {result: {role: assistant, content: {type: text, text: hi}, model: m}}
  - request: {id: 2, method: elicitation/create, params: {mode: url, message: Sign in, url: 'https://x'}}
    response: {result: {action: accept}}
  response: {result: {content: []}}
"""
ASK = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}'


def initialize(capabilities: str) -> bytes:
    return (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        f'"capabilities":{capabilities},"clientInfo":{{"name":"x","version":"1"}}}}}}'
    ).encode()


@pytest.mark.parametrize(
    ("capabilities", "asked", "withheld"),
    [
        # all declared (bare elicitation is form only, so url needs its own)
        (
            '{"roots":{},"sampling":{},"elicitation":{"url":{}}}',
            ["roots/list", "sampling/createMessage", "elicitation/create"],
            [],
        ),
        # nothing declared: nothing asked, the tool call still answered as recorded
        ("{}", [], ["roots", "sampling", "elicitation.url"]),
        ('{"sampling":{},"elicitation":{}}', ["sampling/createMessage"], ["roots", "elicitation.url"]),
        (
            '{"roots":{"listChanged":false},"elicitation":{"form":{},"url":{}}}',
            ["roots/list", "elicitation/create"],
            ["sampling"],
        ),
    ],
)
def test_a_server_request_whose_capability_the_host_did_not_declare_is_withheld(
    capabilities: str, asked: list[str], withheld: list[str]
) -> None:
    engine = engine_for(CAPABILITIES)
    run(engine, [initialize(capabilities)])
    actions = engine.receive(ASK)
    out, said = sent(actions), notes(actions)
    seen: list[str] = []  # answer each server request as recorded; the next one or the reply follows
    while out and "method" in out[-1]:
        request = out[-1]
        seen.append(request["method"])
        body = next(
            item.response["result"]
            for item in engine.cassette.interactions[1].server
            if item.message["method"] == request["method"] and item.response is not None
        )
        actions = engine.receive(answer(request["id"], body))
        out, said = sent(actions), said + notes(actions)
    assert seen == asked
    assert out == [result(5, {"content": []})]
    assert [w.capability for w in engine.report.withheld] == withheld
    assert all(w.interaction == 1 for w in engine.report.withheld)
    assert engine.report.mismatches == [] and engine.report.misses == []
    assert engine.report.strict_ok is not withheld
    assert [text for text in said if "withheld" in text] == [w.render() for w in engine.report.withheld]


def test_withheld_requests_fail_strict_and_the_summary_and_report_say_which() -> None:
    engine = engine_for(CAPABILITIES)
    actions = engine.receive(initialize('{"sampling":{},"elicitation":{"url":{}}}'))
    [note] = notes(actions)
    assert note.startswith("mockmcp: the host does not declare roots, which the recording's host did; ")
    [sampling] = run(engine, [ASK])
    [elicit] = run(engine, [answer(sampling["id"], SAMPLED)])
    assert run(engine, [answer(elicit["id"], {"action": "accept"})]) == [result(5, {"content": []})]
    report = engine.report
    assert report.strict_failures() == "1 server request withheld"
    summary = report.summary()
    assert "  withheld: roots/list in interactions[1] tools/call ask: the host did not declare roots" in summary
    assert "  capabilities: the host does not declare roots, which the recording's host did" in summary
    assert "; declares elicitation otherwise than the recording's host" in summary
    data = report.to_json()
    [found] = data["withheld"]
    assert (found["interaction"], found["method"], found["capability"]) == (1, "roots/list", "roots")
    assert found["explanation"].startswith("mockmcp: withheld roots/list (from interactions[1])")
    assert data["capabilities"] == report.capabilities and len(report.capabilities) == 1
    assert data["strict_ok"] is False


def test_a_host_declaring_more_than_the_recording_is_noted_once_and_not_a_failure() -> None:
    engine = engine_for(NOTES)  # recorded with capabilities: {}
    richer = initialize('{"sampling":{},"elicitation":{}}')
    actions = engine.receive(richer)
    assert sent(actions) == [result(1, INIT_RESULT)]
    [note] = notes(actions)
    assert "the host declares elicitation, sampling, which the recording's host did not" in note
    assert "answers were recorded for the other capabilities" in note
    assert notes(engine.receive(richer)) == []  # the same difference again: noted once
    run(engine, [INITIALIZED, TOOLS_LIST, READ_NOTES, READ_MISSING])
    # No failure for the capabilities: strict fails on the initialize asked twice only.
    assert engine.report.strict_failures() == "1 request asked more often than recorded"
    assert engine.report.withheld == [] and len(engine.report.capabilities) == 1


def test_without_declared_capabilities_server_requests_go_out_as_recorded() -> None:
    """A host that never declared any (no initialize seen) is not second-guessed."""
    engine = engine_for(CAPABILITIES)
    [roots] = run(engine, [ASK])
    assert roots["method"] == "roots/list"
    assert engine.report.withheld == [] and engine.report.capabilities == []


def stateless_call(id_: int, capabilities: dict[str, Any]) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    params = {"name": "delete_file", "arguments": {"path": "notes.txt"}, "_meta": meta}
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}).encode()


def test_a_2026_input_required_asking_an_undeclared_capability_is_answered_32021() -> None:
    engine = engine_for(INPUT_REQUIRED)  # recorded by a host declaring elicitation: {form: {}}
    actions = engine.receive(stateless_call(30, {"sampling": {}}))
    assert sent(actions) == [
        {
            "jsonrpc": "2.0",
            "id": 30,
            "error": {
                "code": -32021,
                "message": "Client did not declare the elicitation.form capability",
                "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
            },
        }
    ]
    capabilities, withheld = notes(actions)
    assert "does not declare elicitation, which the recording's host did" in capabilities
    assert "withheld elicitation/create (from interactions[0])" in withheld and "answered -32021" in withheld
    [found] = engine.report.withheld
    assert (found.interaction, found.method, found.capability) == (0, "elicitation/create", "elicitation.form")
    assert engine.report.plays[0] == 1 and 0 not in engine.report.unplayed
    # declared: the recorded input_required goes out
    [asked] = run(engine, [stateless_call(31, {"elicitation": {"form": {}}})])
    assert asked["result"]["resultType"] == "input_required"


LOG_LATER = """
version: 1
interactions:
- at: 1.0
  request: {id: 1, method: tools/call, params: {name: start_logging}}
  response: {result: {content: []}}
  took: 0.5
- at: 6.5
  server:
  - at: 6.5
    notification: {method: notifications/message, params: {level: info, data: five seconds on}}
"""
START_LOGGING = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"start_logging"}}'


LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "five seconds on"}}


@pytest.mark.parametrize(
    ("timing", "expected"),
    [
        (0.0, [result(4, {"content": []}), LOG]),
        (1.0, [0.5, result(4, {"content": []}), 5.0, LOG]),
        (0.5, [0.25, result(4, {"content": []}), 2.5, LOG]),
    ],
)
def test_an_unsolicited_message_keeps_its_recorded_distance_from_the_answer_before_it_with_timing(
    timing: float, expected: list[Any]
) -> None:
    """A log the server sent 5 s after answering a call comes 5 s after the answer with --timing (scaled),
    at once without; either way after the answer."""
    engine = Replay(loads(LOG_LATER), Matcher.build(), timing=timing)
    seen: list[Any] = []
    actions = engine.receive(START_LOGGING)
    while actions:
        seen.extend(sent(actions))
        wakes = [action for action in actions if isinstance(action, Wake)]
        assert len(wakes) <= 1
        seen.extend(wake.after for wake in wakes)
        actions = engine.wake(wakes[0].job) if wakes else []
    assert seen == expected


# --- an answer that breaks off -------------------------------------------------------------------

BROKEN_OFF = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: halfway, arguments: {}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: halfway}}
  drop: cut
- request: {id: 2, method: tools/call, params: {name: lost, arguments: {}}}
  drop: true
"""
HALFWAY = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"halfway","arguments":{}}}'
LOST = b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"lost","arguments":{}}}'


def test_a_broken_off_answer_sends_what_came_before_it_then_cuts_the_request_and_the_report_says_so() -> None:
    engine = engine_for(BROKEN_OFF)
    actions = engine.receive(HALFWAY)
    kinds = [(type(action).__name__, sent([action]) or [getattr(action, "request", None)]) for action in actions]
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "halfway"}}
    assert kinds == [("Send", [log]), ("Cut", [7])]  # the shell cuts request 7's stream; over stdio, nothing
    assert [action for action in engine.receive(LOST) if isinstance(action, (Send, Cut))] == []
    assert engine.report.faults == [
        "interactions[0]: the answer to request 7 broke off before its reply "
        "(`drop: cut`: over HTTP its stream was cut; over stdio, no reply)",
        "interactions[1]: the reply to request 8 was dropped",
    ]


# A call reporting progress; the recorded host cancelled it at 1.0 s, and its server sent one more progress after
# the cancel (it had not seen it yet), then the cancelled answer.
PROGRESS_PAST_CANCEL = """
version: 1
interactions:
- at: 0.0
  request: {id: 1, method: tools/call, params: {name: slow, _meta: {progressToken: 1}}}
  server:
  - at: 0.1
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 1}}
  - at: 0.5
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 2}}
  - at: 1.05
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 3}}
  response: {error: {code: 0, message: Request cancelled}}
  took: 1.1
- at: 1.0
  notification: {method: notifications/cancelled, params: {requestId: 1}}
"""
PROGRESS_CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}'
PROGRESS_CANCEL = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}'


def progressed(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": n}}


def test_a_message_sent_after_the_cancel_waits_as_long_as_the_server_took_from_the_request() -> None:
    """The progress before the cancel goes at once; the one after it waits for the cancel at most the 1.05 s its
    server took from the request (on the recorded clock), not the 0.55 s from the progress before it, which a
    host that cancels at 0.7 s would see before its cancel."""
    engine = engine_for(PROGRESS_PAST_CANCEL)
    actions = engine.receive(PROGRESS_CALL)
    assert sent(actions) == [progressed(1), progressed(2)]
    assert [action.after for action in actions if isinstance(action, Wake)] == [1.05]
    # A host that cancels within the window gets the rest after its cancel, as the recorded host did.
    assert sent(engine.receive(PROGRESS_CANCEL)) == [progressed(3), {**CANCELLED_ERROR, "id": 7}]


# A slow call, then a fast one with progress, answered while the slow one ran; the slow one answered at `took`.
TWO_CALLS_APART = """
version: 1
interactions:
- at: 0.0
  request: {id: 1, method: tools/call, params: {name: slow}}
  response: {result: {content: []}}
  took: TOOK
- at: 0.1
  request: {id: 2, method: tools/call, params: {name: fast, _meta: {progressToken: 2}}}
  server:
  - at: 0.3
    notification: {method: notifications/progress, params: {progressToken: 2, progress: 1}}
  response: {result: {content: [{type: text, text: fast}]}}
  took: 0.4
"""


@pytest.mark.parametrize(
    ("took", "turns"),
    [
        ("0.6", [("notifications/progress", False), ("b", True), ("a", True)]),  # each apart from the one before
        ("0.5", [("notifications/progress", False), ("b", True), ("a", False)]),  # the two answers read together
    ],
    ids=["apart", "together"],
)
def test_a_message_the_recording_had_apart_from_the_one_before_gives_the_host_a_turn(
    took: str, turns: list[tuple[str, bool]]
) -> None:
    """Every shell gives the host a turn before a `Send` with `turn` (a host that dispatches notifications in tasks
    of their own then sees them in the recorded order); messages recorded together go together."""
    engine = engine_for(TWO_CALLS_APART.replace("TOOK", took))
    slow = engine.receive(b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}')
    assert sent(slow) == []  # its answer waits for the fast call, recorded before it
    fast = b'{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fast","_meta":{"progressToken":"p"}}}'
    said = [(action, json.loads(action.data)) for action in engine.receive(fast) if isinstance(action, Send)]
    assert [(message.get("method", message.get("id")), action.turn) for action, message in said] == turns


# --- a request a job would answer at once, answered without one (`Player.at_once`) -----------------

# Two calls recorded one after the other: asked in the other order, the second's answer waits (a job held) for
# the first, which then may not be answered without a job either; the times mark turns (`Send.turn`).
TIMED_PAIR = """
version: 1
interactions:
- at: 0.0
  request: {id: 1, method: tools/call, params: {name: a}}
  response: {result: {content: []}}
  took: 0.5
- at: 1.0
  request: {id: 2, method: tools/call, params: {name: b}}
  response: {result: {content: []}}
  took: 0.5
"""
# A reply recorded raw, beside one as JSON.
RAW_REPLY = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: a}}
  raw_response: '{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]}}'
- request: {id: 2, method: tools/call, params: {name: b}}
  response: {result: {content: []}}
"""
CALL_A = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}'
CALL_B = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}'
READ_N = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.txt"}}}'
)
SLOW_N = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow"}}'
INIT_N = b'{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
LIST_N = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}'
PING_N = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}'
AT_ONCE = [
    pytest.param(NOTES, [INIT_N % 1, LIST_N % 2, READ_N % 3, READ_N % 3, READ_N % 4, PING_N % 5], 4, id="notes"),
    pytest.param(UNSOLICITED, [LIST_N % 1, INIT_N % 2, LIST_N % 3, INIT_N % 4], 2, id="unsolicited"),
    pytest.param(TIMED_PAIR, [CALL_B, CALL_A, CALL_A, CALL_B, CALL_A], 3, id="held-then-in-order"),
    pytest.param(RAW_REPLY, [CALL_A, CALL_B, CALL_A], 3, id="a-raw-reply"),
    pytest.param(DELAYED_ANCHOR, [SLOW_N % 1, SLOW_N % 2], 0, id="a-delay"),
    pytest.param(SLOW, [SLOW_CALL, LIST_N % 8, LIST_N % 9], 2, id="while-a-job-sleeps"),
    pytest.param(LATE_ANSWER, [LATE_CALL, LATE_LIST, LATE_CANCEL, LATE_LIST], 1, id="a-late-answer"),
    pytest.param(LISTEN_THEN_CALLS, [LISTEN_LINE, SLOW_WRITE_LINE, WRITE_LINE, WRITE_LINE], 1, id="listen-events"),
]  # fmt: skip


@pytest.mark.parametrize(("cassette", "lines", "at_once"), AT_ONCE)
def test_a_request_answered_at_once_gets_what_a_job_would_send(cassette: str, lines: list[bytes], at_once: int) -> None:
    """The same lines to an engine that answers at once what it may, and to one that plays every request as a job:
    the same actions each time (the wakes carried out in the order asked), the same report."""
    fast, jobs = engine_for(cassette), engine_for(cassette)
    jobs.player.prompt = set()  # every request a job
    answered = fast.player.at_once
    took: list[bool] = []  # for each request that may be answered at once, whether it was
    fast.player.at_once = lambda *args: took.append((out := answered(*args)) is not None) or out  # type: ignore[method-assign]
    assert fast.start() == jobs.start()
    wakes: list[int] = []
    for line in lines:
        said = fast.receive(line)
        assert said == jobs.receive(line)
        wakes += [action.job for action in said if isinstance(action, Wake)]
    while wakes:
        said = fast.wake(wakes[0])
        assert said == jobs.wake(wakes.pop(0))
        wakes += [action.job for action in said if isinstance(action, Wake)]
    assert fast.close() == jobs.close()
    assert fast.report.json_text() == jobs.report.json_text()
    assert fast.requests.keys() == jobs.requests.keys()
    assert sum(took) == at_once, took  # so that the comparison holds something
