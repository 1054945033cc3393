"""Replay over the legacy HTTP+SSE transport (`http/_legacy.py`), sans-IO: literal requests in, what to write out.

Each row is a conversation with one `LegacyEndpoint` beside its `Endpoint`: `GET /sse` opens a session's stream (its
first event names where to POST), POSTs to `/messages/?session_id=...` are answered 202 and their answers come on
that stream; connections closed, timers fired (`WAKE`: the oldest `Later` not yet fired), `shutdown()`; every step's
outputs are checked, as readable tuples.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_endpoint import BASE, COUNT_REPLY, COUNTING, INIT_REPLY, LIST_REPLY, cassette, endpoint_for

from mockmcp.engine.actions import Note
from mockmcp.http._legacy import LegacyEndpoint
from mockmcp.http._stream import SSE_FIELDS, Drop, End, Event, Later, Open, Respond
from mockmcp.http._streamable import KEEPALIVE_COMMENT

JSON = {"host": "127.0.0.1:8000", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "host", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
COUNT = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "count", "arguments": {}}}
SLOW = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}
AT_LAST = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "at last"}]}}
CRASH = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}
WAKE = ("wake",)
S1 = "/messages/?session_id=session-1"
S2 = "/messages/?session_id=session-2"
OPENED = [("open", "s"), ("endpoint", "s", S1)]
ACCEPTED = ("respond", "p", 202, "Accepted")
GONE = ("respond", "p", 404, "Could not find session: open a new one with GET /sse")


def refused(status: int, text: str, conn: str = "p") -> list[Any]:
    return [("respond", conn, status, text)]


def get(conn: str, target: str = "/sse", headers: dict[str, str] | None = None) -> tuple[Any, ...]:
    return ("request", conn, b"GET", target, {"host": "127.0.0.1:8000", **(headers or {})}, b"")


def post(target: str, body: Any, headers: dict[str, str] | None = None) -> tuple[Any, ...]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return ("request", "p", b"POST", target, headers or JSON, data)


def shown(out: Any) -> tuple[Any, ...]:
    """An output as a readable tuple: an event's message decoded from its `data:` line."""
    if isinstance(out, Open):
        assert out.headers == SSE_FIELDS
        return ("open", out.conn)
    if isinstance(out, Event) and out.data == KEEPALIVE_COMMENT:
        return ("comment", out.conn)
    if isinstance(out, Event) and out.data.startswith(b"event: endpoint\n"):
        return ("endpoint", out.conn, out.data.removeprefix(b"event: endpoint\ndata: ").removesuffix(b"\n\n").decode())
    if isinstance(out, Event):
        head, data = out.data.split(b"\n", 1)
        assert head == b"event: message" and data.startswith(b"data: ") and data.endswith(b"\n\n"), out.data
        return ("event", out.conn, json.loads(data[6:-2]))
    if isinstance(out, Respond):
        return ("respond", out.conn, out.answer.status, out.answer.body.decode())
    if isinstance(out, Later):
        return ("later", out.after)
    if isinstance(out, End):
        return ("end", out.conn, out.close)
    if isinstance(out, Drop):
        return ("drop", out.conn)
    assert isinstance(out, Note)
    return ("note", out.text)


def talk(text: str, steps: list[tuple[Any, list[Any]]], **bounds: Any) -> LegacyEndpoint:
    """Play the conversation on a fresh endpoint; each step's outputs must be the ones given."""
    legacy = LegacyEndpoint(endpoint_for(text, **bounds))
    timers: list[Any] = []
    for n, (step, expected) in enumerate(steps):
        if step[0] == "request":
            outs = legacy.request(*step[1:])
        elif step == WAKE:
            outs = legacy.wake(timers.pop(0))
        elif step[0] == "close":
            outs = legacy.closed(step[1])
        else:
            outs = legacy.shutdown()
        timers += [out.token for out in outs if isinstance(out, Later)]
        assert [shown(out) for out in outs] == expected, f"step {n}: {step[:4]}"
    return legacy


OPENING = [
    (get("s"), OPENED),
    (post(S1, INIT), [ACCEPTED, ("event", "s", INIT_REPLY)]),
    (post(S1, {"jsonrpc": "2.0", "method": "notifications/initialized"}), [ACCEPTED]),
]
CONVERSATIONS = [
    (
        "a session's answers all come on its stream, server messages first; a delay waits for its timer",
        [
            *OPENING,
            (post(S1, COUNT), [ACCEPTED, ("event", "s", COUNTING), ("event", "s", COUNT_REPLY)]),
            (post(S1, SLOW), [ACCEPTED, ("later", 2.5)]),
            (WAKE, [("event", "s", AT_LAST)]),
            (("shutdown",), [("end", "s", True)]),
        ],
    ),
    (
        "two sessions at once, each with its own id, stream and play counts",
        [
            *OPENING,
            (get("t"), [("open", "t"), ("endpoint", "t", S2)]),
            (post(S2, INIT), [ACCEPTED, ("event", "t", INIT_REPLY)]),
            (post(S2, LIST), [ACCEPTED, ("event", "t", LIST_REPLY)]),
            (post(S1, LIST), [ACCEPTED, ("event", "s", LIST_REPLY)]),
            (("close", "t"), []),
            (post(S2, LIST), [GONE]),
            (post(S1, LIST), [ACCEPTED, ("event", "s", LIST_REPLY)]),  # played again in session 1 only
        ],
    ),
    (
        "the exit knob ends the session, cutting its stream",
        [
            *OPENING,
            (
                post(S1, CRASH),
                [
                    ACCEPTED,
                    ("note", "mockmcp: interactions[8] ended the session with status 1 (before replying)"),
                    ("drop", "s"),
                ],
            ),
            (post(S1, LIST), [GONE]),
        ],
    ),
    (
        "what its paths refuse, as the SDK's SSE server does, saying what to do",
        [
            (get("s"), OPENED),
            (
                post("/messages/", INIT),
                refused(400, "session_id is required: POST to the URL of the stream's endpoint event"),
            ),
            (
                post(S1, INIT, {"host": "127.0.0.1:8000"}),
                refused(400, "Invalid Content-Type header: send application/json"),
            ),
            (
                post(S1, b"{not json"),
                refused(
                    400,
                    "Could not parse message: Expecting property name "
                    "enclosed in double quotes: line 1 column 2 (char 1); send one JSON-RPC "
                    "message",
                ),
            ),
            (
                post(S1, [INIT]),
                refused(400, "Could not parse message: a batch; the legacy SSE transport takes one message a POST"),
            ),
            (
                post(S1, {"jsonrpc": "2.0", "id": 1}),
                refused(400, 'Could not parse message: neither a request (no "method") nor a response'),
            ),
            (post("/sse", INIT), refused(405, "Method Not Allowed: open the event stream with GET")),
            (get("g", S1), refused(405, "Method Not Allowed: POST messages here", "g")),
            (
                get("h", headers={"host": "evil.example"}),
                refused(421, "Invalid Host header: 'evil.example' (allow it with --allow-host)", "h"),
            ),
            (
                post(S1, INIT, {**JSON, "origin": "https://evil.example"}),
                refused(403, "Invalid Origin header: 'https://evil.example' (allow its host with --allow-host)"),
            ),
            (post(S1, INIT), [ACCEPTED, ("event", "s", INIT_REPLY)]),  # the session took none of them
        ],
    ),
]


@pytest.mark.parametrize(("rule", "steps"), CONVERSATIONS, ids=[rule for rule, _ in CONVERSATIONS])
def test_conversations(rule: str, steps: list[Any]) -> None:
    talk(cassette(BASE), steps)


def test_a_closed_stream_ends_its_session_and_keeps_its_report() -> None:
    legacy = talk(
        cassette(BASE), [*OPENING, (post(S1, LIST), [ACCEPTED, ("event", "s", LIST_REPLY)]), (("close", "s"), [])]
    )
    assert legacy.sessions == {} and legacy.streams == {}
    [report] = legacy.endpoint.finished
    assert report.plays == {0: 1, 1: 1, 2: 1} and not report.repeats


def test_a_quiet_stream_carries_a_keepalive_comment() -> None:
    steps = [
        (get("s"), [*OPENED, ("later", 15.0)]),
        (WAKE, [("comment", "s"), ("later", 15.0)]),  # nothing said since it opened
        (post(S1, INIT), [ACCEPTED, ("event", "s", INIT_REPLY)]),
        (WAKE, [("later", 15.0)]),  # it said something meanwhile
        (WAKE, [("comment", "s"), ("later", 15.0)]),
    ]
    talk(cassette(BASE), steps, keepalive=15.0)


def test_a_stream_whose_client_reads_nothing_is_cut() -> None:
    note = (
        "note",
        "mockmcp: SSE session session-1: its client left more than 1048576 bytes of its event stream unread, so the "
        "stream was cut and the session ended",
    )
    left = {"s": 0}  # what the client of each connection left unread
    legacy = LegacyEndpoint(endpoint_for(cassette(BASE), unread=lambda conn: left[conn]))
    assert [shown(out) for out in legacy.request(*get("s")[1:])] == OPENED
    left["s"] = 1 << 20
    outs = legacy.request(*post(S1, INIT)[1:])
    assert [shown(out) for out in outs] == [ACCEPTED, ("event", "s", INIT_REPLY), note, ("drop", "s")]
    assert legacy.sessions == {} and len(legacy.endpoint.finished) == 1
