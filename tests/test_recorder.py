"""The pure recorder: observed lines in, a cassette out, whatever the host and the server send."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette import store as cassette
from mockmcp.cassette import validation
from mockmcp.record._recorder import CLIENT, SERVER, Recorder, silent


def record(*lines: tuple[str, Any]) -> cassette.Cassette:
    recorder = Recorder({})
    for at, (direction, message) in enumerate(lines):
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        recorder.feed(direction, data, float(at))
    return recorder.cassette()


def req(rid: Any, method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})}


def res(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def note(method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})}


def test_a_batch_is_recorded_as_its_messages() -> None:
    made = record(
        (CLIENT, [req(1, "tools/list"), req(2, "prompts/list"), note("notifications/initialized")]),
        (SERVER, [res(1, {"tools": []}), res(2, {"prompts": []})]),
    )
    assert [(i.kind, i.method, i.response) for i in made.interactions] == [
        ("request", "tools/list", {"result": {"tools": []}}),
        ("request", "prompts/list", {"result": {"prompts": []}}),
        ("notification", "notifications/initialized", None),
    ]


def test_server_messages_keep_the_order_they_came_in() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "count", "_meta": {"progressToken": "p"}})),
        (SERVER, note("notifications/progress", {"progressToken": "p", "progress": 1})),
        (SERVER, note("notifications/message", {"level": "info", "data": "one"})),
        (SERVER, note("notifications/progress", {"progressToken": "p", "progress": 2})),
        (SERVER, res(1, {"content": []})),
    )
    [call] = made.interactions
    assert [item.message["method"] for item in call.server] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
    ]


def test_a_cancelled_request_does_not_draw_later_messages() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "slow"})),
        (CLIENT, note("notifications/cancelled", {"requestId": 1})),
        (SERVER, note("notifications/tools/list_changed")),
    )
    assert [i.kind for i in made.interactions] == ["request", "notification"]
    assert made.interactions[1].server[0].message["method"] == "notifications/tools/list_changed"
    assert made.interactions[0].server == ()


def test_a_late_answer_to_a_cancelled_request_is_that_request_s_response() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "slow"})),
        (CLIENT, note("notifications/cancelled", {"requestId": 1, "reason": "timeout"})),
        (SERVER, {"jsonrpc": "2.0", "id": 1, "error": {"code": 0, "message": "Request cancelled"}}),
    )
    call, cancel = made.interactions
    assert call.response == {"error": {"code": 0, "message": "Request cancelled"}}
    assert call.took == 2.0  # when it came, so --timing recorded sends it as late
    assert (cancel.kind, cancel.message, cancel.server) == (
        "notification",
        {"method": "notifications/cancelled", "params": {"requestId": 1, "reason": "timeout"}},
        (),
    )
    assert "raw" not in cassette.dump(made).split("\n", 1)[1]  # (after the schema comment, which names a URL)


def test_a_late_answer_goes_to_its_own_request_not_to_the_one_in_flight() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "slow"})),
        (CLIENT, note("notifications/cancelled", {"requestId": 1})),
        (CLIENT, req(2, "tools/list")),
        (SERVER, note("notifications/message", {"level": "info", "data": "listing"})),
        (SERVER, res(1, {"content": [{"type": "text", "text": "too late"}]})),
        (SERVER, res(2, {"tools": []})),
    )
    slow, _cancel, listing = made.interactions
    assert slow.response == {"result": {"content": [{"type": "text", "text": "too late"}]}}
    assert slow.server == ()
    assert listing.response == {"result": {"tools": []}}
    assert [item.message["method"] for item in listing.server] == ["notifications/message"]


def test_an_answer_to_a_reused_id_belongs_to_the_newer_request() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "slow"})),
        (CLIENT, note("notifications/cancelled", {"requestId": 1})),
        (CLIENT, req(1, "tools/list")),
        (SERVER, res(1, {"tools": []})),
    )
    slow, _cancel, listing = made.interactions
    assert slow.response is None
    assert listing.response == {"result": {"tools": []}}


def test_odd_tokens_and_text_that_yaml_cannot_hold_do_not_break_the_recording() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "x", "_meta": {"progressToken": {"t": 1}}})),
        (SERVER, note("notifications/progress", {"progressToken": {"t": 1}, "progress": 1})),
        (SERVER, b"warning: \xff\xfe bad bytes"),
        (SERVER, b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"cut emoji \\ud83d"}]}}'),
    )
    text = cassette.dump(made)  # must be writable
    again = cassette.loads(text)
    call = again.interactions[0]
    assert call.response == {"result": {"content": [{"type": "text", "text": "cut emoji \ufffd"}]}}
    assert call.server[1].message == "warning: \ufffd\ufffd bad bytes"


def test_replies_no_cassette_can_hold_are_kept_so_the_session_can_always_be_saved(tmp_path: Any) -> None:
    bad_error = {"code": "E_ODD", "message": "odd"}
    recorder = Recorder({})
    lines = [
        (CLIENT, req(1, "tools/call", {"name": "x"})),
        (SERVER, {"jsonrpc": "2.0", "id": 1, "error": bad_error}),
        (SERVER, req("s1", "roots/list")),
        (CLIENT, {"jsonrpc": "2.0", "id": "s1", "error": {"message": "no code"}}),
    ]
    for at, (direction, message) in enumerate(lines):
        recorder.feed(direction, json.dumps(message).encode(), float(at))
    made = recorder.cassette()
    # The server's reply is replayed as the line it was, under the caller's id.
    assert made.interactions[0].response is None
    assert json.loads(made.interactions[0].raw_response.replace("{{id}}", "5")) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": bad_error,
    }
    # The host's answer is not in the cassette, and the recorder says so (the CLI reports skipped lines).
    assert recorder.skipped == [json.dumps(lines[3][1])]
    cassette.save(made, str(tmp_path / "c.yaml"))  # saving validates: this must not raise
    assert cassette.load(str(tmp_path / "c.yaml")).interactions[0].raw_response == made.interactions[0].raw_response


def test_what_comes_on_a_request_s_stream_belongs_to_that_request() -> None:
    """Two calls in flight over HTTP, each asking the host something on its own POST stream; the
    second is answered first. Without the stream, both questions would go to the first answered."""
    recorder = Recorder({})
    lines: list[tuple[str, Any, Any]] = [
        (CLIENT, req(1, "tools/call", {"name": "summarize"}), None),
        (CLIENT, req(2, "tools/call", {"name": "delete_file"}), None),
        (SERVER, req(0, "sampling/createMessage", {"messages": []}), 1),
        (SERVER, req(1, "elicitation/create", {"message": "Delete?"}), 2),
        (SERVER, note("notifications/message", {"level": "info", "data": "unsolicited"}), None),  # the GET stream
        (CLIENT, res(1, {"action": "accept", "content": {"confirm": True}}), None),
        (SERVER, res(2, {"content": []}), 2),
        (CLIENT, res(0, {"role": "assistant", "content": {"type": "text", "text": "s"}, "model": "m"}), None),
        (SERVER, res(1, {"content": []}), 1),
    ]
    for at, (direction, message, stream) in enumerate(lines):
        recorder.feed(direction, json.dumps(message).encode(), float(at), stream)
    first, second = recorder.cassette().interactions
    assert [(i.kind, i.message["method"], i.response is not None) for i in first.server] == [
        ("request", "sampling/createMessage", True)
    ]
    assert [(i.kind, i.message["method"], i.response is not None) for i in second.server] == [
        ("request", "elicitation/create", True),
        ("notification", "notifications/message", False),  # rule 4: no stream named, the next answered
    ]


def test_what_comes_on_the_get_stream_is_filed_by_the_other_rules_and_marked_so() -> None:
    """Over Streamable HTTP a server may ask or log on the session's GET stream while a call waits:
    filed under the call (the next answered, or by its progress token) and marked `stream: get`,
    so replay sends it there again; on a notification's or an unprompted interaction it is not."""
    recorder = Recorder({})
    lines: list[tuple[str, Any, Any, bool]] = [
        (CLIENT, note("notifications/initialized"), None, False),
        (SERVER, req(0, "roots/list"), None, True),  # rule 5: every message of its own goes on the GET stream
        (CLIENT, res(0, {"roots": []}), None, False),
        (CLIENT, req(1, "tools/call", {"name": "confirm", "_meta": {"progressToken": "t"}}), None, False),
        (SERVER, note("notifications/message", {"level": "info", "data": "on its stream"}), 1, False),
        (SERVER, note("notifications/progress", {"progressToken": "t", "progress": 1}), None, True),  # rule 1
        (SERVER, req(1, "elicitation/create", {"message": "Sure?"}), None, True),  # rule 4
        (CLIENT, res(1, {"action": "accept", "content": {}}), None, False),
        (SERVER, res(1, {"content": []}), 1, False),
        (SERVER, note("notifications/tools/list_changed"), None, True),  # rule 6
    ]
    for at, (direction, message, stream, get) in enumerate(lines):
        recorder.feed(direction, json.dumps(message).encode(), float(at), stream, get)
    made = recorder.cassette()
    assert [[(item.message["method"], item.stream) for item in i.server] for i in made.interactions] == [
        [("roots/list", None)],
        [("notifications/message", None), ("notifications/progress", "get"), ("elicitation/create", "get")],
        [("notifications/tools/list_changed", None)],
    ]
    data = made.to_data()
    assert [item.get("stream") for item in data["interactions"][1]["server"]] == [None, "get", "get"]
    assert validation.from_data(data).interactions == made.interactions  # and it loads back the same


def filed(made: cassette.Cassette) -> list[tuple[str | None, list[str]]]:
    """Each interaction's client method (None: unprompted) and the methods (or raw lines) of its server items."""
    return [
        (i.method, [s.message["method"] if isinstance(s.message, dict) else s.message for s in i.server])
        for i in made.interactions
    ]


UPDATED = note("notifications/resources/updated", {"uri": "file:///notes.txt"})


def test_a_message_is_never_filed_under_a_request_sent_after_it_came() -> None:
    """Rule 4: a call in flight, a notification naming nothing, then a faster call sent and answered
    first. The faster call cannot have caused it: it waits for the call that was in flight."""
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "watch"})),
        (SERVER, UPDATED),
        (CLIENT, req(2, "tools/call", {"name": "poke"})),
        (SERVER, res(2, {"content": []})),
        (SERVER, res(1, {"content": []})),
    )
    assert filed(made) == [("tools/call", ["notifications/resources/updated"]), ("tools/call", [])]
    assert made.interactions[0].server[0].at == 1.0  # and it keeps its time


def test_a_message_sent_while_nothing_is_in_flight_stays_unprompted_at_its_time() -> None:
    made = record(
        (CLIENT, req(1, "resources/subscribe", {"uri": "file:///notes.txt"})),
        (SERVER, res(1, {})),
        (SERVER, UPDATED),
        (CLIENT, req(2, "tools/call", {"name": "poke"})),
        (SERVER, res(2, {"content": []})),
    )
    assert filed(made) == [
        ("resources/subscribe", []),
        (None, ["notifications/resources/updated"]),
        ("tools/call", []),
    ]
    assert (made.interactions[1].at, made.interactions[1].server[0].at) == (2.0, 2.0)


def test_a_question_the_host_has_not_answered_stays_with_the_call_that_waits_for_it() -> None:
    """Over stdio nothing names the call a server request is for. Two calls in flight, the server asks
    the host, answers the other call before the host answers: that call did not wait for the answer,
    so the question is the slow call's, and replay cannot send its result before its question."""
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "delete_file"})),
        (CLIENT, req(2, "tools/call", {"name": "poke"})),
        (SERVER, req(0, "elicitation/create", {"message": "Delete?"})),
        (SERVER, res(2, {"content": []})),
        (CLIENT, res(0, {"action": "accept", "content": {"confirm": True}})),
        (SERVER, res(1, {"content": []})),
    )
    assert filed(made) == [("tools/call", ["elicitation/create"]), ("tools/call", [])]
    question = made.interactions[0].server[0]
    assert (question.at, question.took, question.response) == (
        2.0,
        2.0,
        {"result": {"action": "accept", "content": {"confirm": True}}},
    )


def test_a_question_the_host_answered_goes_to_the_call_answered_next() -> None:
    """The same two calls, the host answering before either: nothing tells them apart but the order
    of the answers (rule 4 as it was)."""
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "summarize"})),
        (CLIENT, req(2, "tools/call", {"name": "poke"})),
        (SERVER, req(0, "sampling/createMessage", {"messages": []})),
        (CLIENT, res(0, {"role": "assistant", "content": {"type": "text", "text": "s"}, "model": "m"})),
        (SERVER, res(2, {"content": []})),
        (SERVER, res(1, {"content": []})),
    )
    assert filed(made) == [("tools/call", []), ("tools/call", ["sampling/createMessage"])]


def test_a_message_whose_requests_were_all_cancelled_is_unprompted_at_the_place_it_came() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "slow"})),
        (SERVER, note("notifications/message", {"level": "info", "data": "working"})),
        (CLIENT, note("notifications/cancelled", {"requestId": 1})),
        (CLIENT, req(2, "tools/list")),
        (SERVER, res(2, {"tools": []})),
    )
    assert filed(made) == [
        ("tools/call", []),
        (None, ["notifications/message"]),
        ("notifications/cancelled", []),
        ("tools/list", []),
    ]
    assert made.interactions[1].at == 1.0


def test_a_question_no_call_waited_for_is_unprompted_at_the_place_it_came() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "poke"})),
        (SERVER, req(0, "roots/list")),
        (SERVER, res(1, {"content": []})),
        (CLIENT, res(0, {"roots": []})),
        (CLIENT, req(2, "tools/list")),
        (SERVER, res(2, {"tools": []})),
    )
    assert filed(made) == [("tools/call", []), (None, ["roots/list"]), ("tools/list", [])]
    assert made.interactions[1].server[0].took == 2.0


def test_at_the_end_an_undecided_message_goes_to_the_oldest_of_the_requests_it_came_during() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "slow"})),
        (CLIENT, req(2, "tools/call", {"name": "slower"})),
        (SERVER, UPDATED),
        (CLIENT, req(3, "tools/call", {"name": "never"})),
        (SERVER, res(1, {"content": []})),  # 1 takes it
        (SERVER, note("notifications/message", {"level": "info", "data": "late"})),
    )
    assert filed(made) == [
        ("tools/call", ["notifications/resources/updated"]),
        ("tools/call", ["notifications/message"]),  # the oldest in flight when it came, not 3's
        ("tools/call", []),
    ]


def test_a_request_turned_away_leaves_what_came_after_it_in_place() -> None:
    recorder = Recorder({})
    recorder.feed(CLIENT, json.dumps(req(1, "tools/call", {"name": "slow"})).encode(), 0.0)
    recorder.feed(CLIENT, json.dumps(req(2, "tools/list")).encode(), 1.0)
    recorder.feed(SERVER, json.dumps(UPDATED).encode(), 2.0, get=True)
    recorder.refused(2)
    recorder.feed(SERVER, json.dumps(res(1, {"content": []})).encode(), 3.0)
    assert filed(recorder.cassette()) == [("tools/call", ["notifications/resources/updated"])]
    recorder = Recorder({})
    recorder.feed(CLIENT, json.dumps(req(2, "tools/list")).encode(), 1.0)
    recorder.feed(SERVER, json.dumps(UPDATED).encode(), 2.0, get=True)
    recorder.refused(2)
    assert filed(recorder.cassette()) == [(None, ["notifications/resources/updated"])]


def test_an_event_sent_again_on_a_resumed_stream_is_recorded_once_where_it_first_came() -> None:
    """A server that keeps its events sends them again, under the same ids, to a client that comes back
    with Last-Event-ID (server-everything sends every stream's): the same messages, recorded once."""
    recorder = Recorder({})
    lines: list[tuple[str, Any, Any, bool, str | None]] = [
        (CLIENT, req(1, "resources/subscribe", {"uri": "file:///notes.txt"}), None, False, None),
        (SERVER, res(1, {}), 1, False, "e1"),
        (SERVER, UPDATED, None, True, "e2"),
        (CLIENT, req(2, "tools/call", {"name": "poke"}), None, False, None),
        (SERVER, res(1, {}), None, True, "e1"),  # the GET stream resumed: everything after its first event
        (SERVER, UPDATED, None, True, "e2"),
        (SERVER, res(2, {"content": []}), 2, False, "e3"),
    ]
    for at, (direction, message, stream, get, event) in enumerate(lines):
        recorder.feed(direction, json.dumps(message).encode(), float(at), stream, get, event)
    assert filed(recorder.cassette()) == [
        ("resources/subscribe", []),
        (None, ["notifications/resources/updated"]),
        ("tools/call", []),
    ]


def test_the_time_of_the_host_s_answer_is_kept_and_loads_back() -> None:
    made = record(
        (CLIENT, req(1, "tools/call", {"name": "confirm"})),
        (SERVER, req(0, "elicitation/create", {"message": "Sure?"})),
        (CLIENT, res(0, {"action": "decline"})),
        (SERVER, res(1, {"content": []})),
    )
    data = made.to_data()
    assert data["interactions"][0]["server"] == [
        {
            "at": 1.0,
            "request": {"id": 0, "method": "elicitation/create", "params": {"message": "Sure?"}},
            "response": {"result": {"action": "decline"}},
            "took": 1.0,
        }
    ]
    assert validation.from_data(data).interactions == made.interactions


def test_what_is_awaited_is_the_requests_in_flight_but_a_cancelled_one_and_a_listen() -> None:
    recorder = Recorder()
    feeds = [
        (CLIENT, req(1, "tools/call", {"name": "a"})),
        (CLIENT, req(2, "tools/call", {"name": "b"})),
        (CLIENT, req(3, "subscriptions/listen", {})),  # answered only when its stream ends
        (CLIENT, req(4, "tools/call", {"name": "c"})),
        (CLIENT, note("notifications/cancelled", {"requestId": 2})),
        (SERVER, res(4, {"content": []})),
    ]
    for n, (direction, message) in enumerate(feeds):
        recorder.feed(direction, json.dumps(message).encode(), float(n))
    assert recorder.awaited() == {1}


# What the server did to a request's answer, as the HTTP proxy journals it: each row's steps are fed in
# order, one second apart ("cut" marks the server breaking the answer of request 1 off), then what the
# cassette keeps of request 1: its `drop`, its `took` (the seconds to its cut, or to its reply), and the
# methods of its server items.
CUT_ROWS = {
    "cut after a message on its stream: `drop: cut`, when, and what came before it": (
        [
            (CLIENT, req(1, "tools/call", {"name": "halfway"}), None),
            (SERVER, note("notifications/message", {"level": "info", "data": "halfway"}), 1),
            "cut",
        ],
        ("cut", 2.0, ["notifications/message"]),
    ),
    "cut before anything": ([(CLIENT, req(1, "tools/call", {"name": "x"}), None), "cut"], ("cut", 1.0, [])),
    "unanswered and never cut: the host left first, `drop: true`": (
        [(CLIENT, req(1, "tools/call", {"name": "x"}), None)],
        (True, None, []),
    ),
    "cut, then answered on a stream the client resumed: the answer is kept, no cut": (
        [
            (CLIENT, req(1, "tools/call", {"name": "x"}), None),
            "cut",
            (SERVER, res(1, {"content": []}), None),
        ],
        (False, 2.0, []),
    ),
    "answered, then its stream broke: the answer is kept, no cut": (
        [
            (CLIENT, req(1, "tools/call", {"name": "x"}), None),
            (SERVER, res(1, {"content": []}), 1),
            "cut",
        ],
        (False, 1.0, []),
    ),
    "cut, then cancelled by the host at its timeout, as the TypeScript SDK client does: the cut is kept": (
        [
            (CLIENT, req(1, "tools/call", {"name": "halfway"}), None),
            (SERVER, note("notifications/message", {"level": "info", "data": "halfway"}), 1),
            "cut",
            (CLIENT, note("notifications/cancelled", {"requestId": 1}), None),
        ],
        ("cut", 2.0, ["notifications/message"]),
    ),
    "cancelled by the host, then cut: the cancel says why it has no answer": (
        [
            (CLIENT, req(1, "tools/call", {"name": "x"}), None),
            (CLIENT, note("notifications/cancelled", {"requestId": 1}), None),
            "cut",
        ],
        (False, None, []),
    ),
}


@pytest.mark.parametrize("name", list(CUT_ROWS))
def test_an_answer_the_server_broke_off_is_kept_with_drop_cut_unless_it_was_answered(name: str) -> None:
    steps, kept = CUT_ROWS[name]
    recorder = Recorder({})
    for at, step in enumerate(steps):
        if step == "cut":
            recorder.cut(1, float(at))
        else:
            direction, message, stream = step
            recorder.feed(direction, json.dumps(message).encode(), float(at), stream)
    made = recorder.cassette()
    call = made.interactions[0]
    assert (call.drop, call.took, [item.message["method"] for item in call.server]) == kept
    assert validation.from_data(made.to_data()).interactions == made.interactions  # and it loads back the same


def test_a_cut_request_is_not_awaited_any_more() -> None:
    recorder = Recorder()
    recorder.feed(CLIENT, json.dumps(req(1, "tools/call", {"name": "a"})).encode(), 0.0)
    recorder.feed(CLIENT, json.dumps(req(2, "tools/call", {"name": "b"})).encode(), 0.0)
    recorder.cut(1, 1.0)
    assert recorder.awaited() == {2}


@pytest.mark.parametrize("answered_one", [True, False], ids=["another answered", "none answered"])
def test_a_request_the_server_never_got_to_answer_is_answered_by_a_stand_in_that_says_so(answered_one: bool) -> None:
    recorder = Recorder()
    recorder.feed(CLIENT, json.dumps(req(1, "tools/call", {"name": "a"})).encode(), 0.0)
    recorder.feed(CLIENT, json.dumps(req(2, "tools/call", {"name": "b"})).encode(), 0.5)
    if answered_one:
        recorder.feed(SERVER, json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}).encode(), 0.7)
    else:
        recorder.unreached(1, 0.7, 504, "Gateway Timeout")
    recorder.unreached(2, 1.5, 502, "Bad Gateway: connection refused")
    recorder.unreached(9, 1.6, 502, "a request never sent")  # no such request: nothing
    made = recorder.cassette()
    call = made.interactions[1]
    assert call.response is not None and call.took == 1.0 and not call.drop
    error = call.response["error"]
    assert (error["code"], error["data"]) == (-32098, {"status": 502})
    assert "tools/call request (id 2 when recorded)" in error["message"] and "the host got HTTP 502" in error["message"]
    assert "Bad Gateway: connection refused" in error["message"] and "by hand" in error["message"]
    # Stand-ins alone are no answer of the server's: such a recording is as silent as one with none.
    assert silent(made.interactions) == (0 if answered_one else 2)
