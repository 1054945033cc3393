"""The recording proxy's exchange (`core.exchange`) by conversations in memory: what the shell tells it, with
the time, and exactly what it answers at each step, from the request's forwarding to its end. The same rules
over real sockets: tests/test_http_record*.py, test_http_cut.py, test_http_upstream.py."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from mockmcp._wire.protocol import PROTOCOL_VERSION_KEY
from mockmcp.http import _exchange as exchange
from mockmcp.http._exchange import (
    DONE,
    END,
    EVENTS,
    SENT,
    STREAMED,
    TRANSITIONS,
    WHOLE,
    Abort,
    Announced,
    Close,
    Cut,
    ErrorStatus,
    Exchange,
    Finish,
    Framing,
    Record,
    Refuse,
    Refused,
    Resend,
    SessionErrors,
    Start,
    Trouble,
    Unkept,
    Unreached,
    Wait,
    Whole,
    Write,
    asked,
)
from mockmcp.options import Bounds

# Bounds of a few bytes: a body over 100 streams; a message over 90 is not kept; 200 bytes are read of an answer
# whose client left; the upstream timeout is 5 s.
BOUNDS = Bounds(upstream_timeout=5.0, kept_bytes=90, whole_bytes=100, after_gone_bytes=200)
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}}
STATELESS_CALL = {**CALL, "params": {"name": "t", "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}}
REPLY = b'{"jsonrpc":"2.0","id":2,"result":{}}'  # 36 bytes
LONG = b'{"jsonrpc":"2.0","id":2,"result":{"x":"' + b"y" * 80 + b'"}}'  # 122 bytes: streamed, not kept
NOTE = b'{"jsonrpc":"2.0","method":"n"}'
CANCEL = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n'
JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}
POST, GET = asked(b"POST", {}, CALL), asked(b"GET", {}, None)
STOPPED = "{target} stopped sending an answer for 5 s"
GAVE_UP = "an answer its client had left was still coming from {target} after 5 s or 0 MiB: cut there"
NO_HEAD = (
    [Close(), Trouble("{target} did not answer within 5 s (the host got 504 Gateway Timeout)")]
    + [Refuse(504, "Gateway Timeout: the target did not answer within 5 s (--upstream-timeout)")]
    + [Unreached(2, 504, "Gateway Timeout: the target did not answer within 5 s (--upstream-timeout)"), Finish()]
)


ENDPOINT = b"event: endpoint\r\ndata: /messages/?session_id=ab\r\n\r\n"  # as the SDK's SSE server sends it


def event(data: bytes, event_id: str | None = None) -> bytes:
    return (b"id: %s\n" % event_id.encode() if event_id else b"") + b"data: " + data + b"\n\n"


# A conversation: the request, then each call the shell makes (the machine's method and its arguments) with
# exactly what the machine answers, and the phase it is left in.
Step = tuple[tuple[Any, ...], list[Any]]
CONVERSATIONS: dict[str, tuple[Any, list[Step], str]] = {
    "a JSON body goes whole at its end, its head with it, and is journaled after": (
        POST,
        [
            (("head", 200, JSON, 1.0), [Wait(5.0)]),
            (("data", REPLY, 1.1), []),
            (("flush",), []),
            (("end", 1.2), [Finish(), Whole(REPLY), Record("server", REPLY), Framing(200, CALL, None)]),
        ],
        DONE,
    ),
    "a body longer than whole_bytes goes on as it comes, its head first with the target's length": (
        POST,
        [
            (("head", 200, {**JSON, "content-length": "122"}, 1.0), [Wait(5.0)]),
            (("data", LONG[:30], 1.1), []),
            (("data", LONG[30:], 1.2), []),
            (("flush",), [Write((Start(b"122"), LONG))]),
            (("end", 1.3), [Finish(), Write((END,)), Unkept(122, 2, 1.0, reply=True), Framing(200, CALL, None)]),
        ],
        DONE,
    ),
    "a JSON body over kept_bytes is the reply, journaled as its size where it began": (
        POST,
        [
            (("head", 200, JSON, 1.0), [Wait(5.0)]),
            (("data", LONG, 1.5), []),
            (
                ("end", 1.6),
                [Finish(), Write((Start(None), LONG, END)), Unkept(122, 2, 1.0, reply=True), Framing(200, CALL, None)],
            ),
        ],
        DONE,
    ),
    "a 202 with no body journals nothing": (
        asked(b"POST", {}, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        [
            (("head", 202, {}, 1.0), [Wait(5.0)]),
            (
                ("end", 1.1),
                [Finish(), Whole(b""), Framing(202, {"jsonrpc": "2.0", "method": "notifications/initialized"}, None)],
            ),
        ],
        DONE,
    ),
    "a POST's SSE head waits for its first event, to go in the same write; the reply ends it": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("flush",), []),
            (("data", event(REPLY, "e1"), 1.1), []),
            (("flush",), [Write((Start(), event(REPLY, "e1"))), Record("server", REPLY, 2, False, "e1")]),
            (("end", 1.2), [Finish(), Write((END,)), Framing(200, CALL, (True, False, True))]),
        ],
        DONE,
    ),
    "a request's stream that ends without its reply is kept as cut": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("data", event(NOTE), 1.1), []),
            (
                ("end", 1.2),
                [Finish(), Write((Start(), event(NOTE), END)), Record("server", NOTE, 2), Cut(2, 1.2)]
                + [Framing(200, CALL, (False, False, True))],
            ),
        ],
        DONE,
    ),
    "an event over kept_bytes that ends its stream was the reply": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("data", event(LONG), 1.1), []),
            (("flush",), [Write((Start(), event(LONG)))]),
            (
                ("end", 1.3),
                # (and a cut, which the recorder drops for a request answered: `Recorder.cut`)
                [Finish(), Write((END,)), Unkept(128, 2, 1.1, reply=True), Cut(2, 1.3)]
                + [Framing(200, CALL, (False, False, True))],
            ),
        ],
        DONE,
    ),
    "an event over kept_bytes followed by the reply was not": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("data", event(LONG), 1.1), []),
            (("data", event(REPLY), 1.2), []),
            (
                ("flush",),
                [Write((Start(), event(LONG), event(REPLY))), Unkept(128, 2, 1.2), Record("server", REPLY, 2)],
            ),
        ],
        EVENTS,
    ),
    "no head within the upstream timeout: 504, the request kept answered by it": (
        POST,
        [(("late",), NO_HEAD), (("head", 200, JSON, 9.0), []), (("end", 9.1), [])],
        DONE,
    ),
    "the upstream timeout after the head changes nothing": (
        POST,
        [(("head", 200, SSE, 1.0), []), (("late",), [])],
        EVENTS,
    ),
    "a body that stops coming before any of it went: 504": (
        POST,
        [
            (("head", 200, JSON, 1.0), [Wait(5.0)]),
            (("data", b"{", 2.0), []),
            (("stalled", 6.0, False), [Wait(1.0)]),  # 4 s quiet: the timer waits for the rest
            (
                ("stalled", 7.0, False),
                [Close(), Trouble(STOPPED + " (the host got 504 Gateway Timeout)")]
                + [Refuse(504, "Gateway Timeout: the target stopped sending its answer for 5 s (--upstream-timeout)")]
                + [
                    Unreached(
                        2, 504, "Gateway Timeout: the target stopped sending its answer for 5 s (--upstream-timeout)"
                    )
                ]
                + [Finish()],
            ),
        ],
        DONE,
    ),
    "a body waiting for its slow client is not stalled": (
        POST,
        [(("head", 200, JSON, 1.0), [Wait(5.0)]), (("stalled", 6.0, True), [Wait(5.0)])],
        WHOLE,
    ),
    "a body that stops coming after part of it went: the client's connection cut, the call kept as cut": (
        POST,
        [
            (("head", 200, JSON, 1.0), [Wait(5.0)]),
            (("data", LONG, 1.0), []),
            (("flush",), [Write((Start(None), LONG))]),
            (
                ("stalled", 6.0, False),
                [Close(), Trouble(STOPPED + " (the host's connection was cut)"), Cut(2, 6.0), Finish(), Abort()],
            ),
        ],
        DONE,
    ),
    "a stream may pause: no stall timer for SSE": (
        POST,
        [(("head", 200, SSE, 1.0), []), (("stalled", 60.0, False), [])],
        EVENTS,
    ),
    "the target cannot be reached: 502 saying why": (
        POST,
        [
            (
                ("failed", 1.0, "[Errno 111] refused", "refused", False, False, False),
                [Trouble("could not reach {target}: refused (the host got 502 Bad Gateway)")]
                + [
                    Refuse(502, "Bad Gateway: [Errno 111] refused"),
                    Unreached(2, 502, "Bad Gateway: [Errno 111] refused"),
                ]
                + [Finish()],
            ),
        ],
        DONE,
    ),
    "a kept connection the target had closed: the request is sent anew": (
        POST,
        [(("failed", 1.0, "closed", "closed", False, True, True), [Resend()]), (("head", 200, JSON, 1.1), [Wait(5.0)])],
        WHOLE,
    ),
    "a body broken off: the client sees nothing of it, then its connection cut; the call kept as cut": (
        POST,
        [
            (("head", 200, JSON, 1.0), [Wait(5.0)]),
            (("data", b"{", 1.1), []),
            (
                ("failed", 1.2, "reset", "reset", True, True, False),
                [Trouble("the connection to {target} broke: reset"), Cut(2, 1.2), Finish(), Abort()],
            ),
        ],
        DONE,
    ),
    "a stream broken off: what came goes, then the cut; what its events showed is learnt": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("data", event(NOTE, "7"), 1.1), []),
            (
                ("failed", 1.2, "reset", "reset", True, True, False),
                [Trouble("the connection to {target} broke: reset"), Write((Start(), event(NOTE, "7")))]
                + [Record("server", NOTE, 2, False, "7"), Framing(200, CALL, (True, False, False)), Cut(2, 1.2)]
                + [Finish(), Abort()],
            ),
        ],
        DONE,
    ),
    "a stream whose head went, then something not HTTP: the client's connection cut": (
        GET,
        [
            (("head", 200, SSE, 1.0), [Write((Start(),)), Framing(200, None, (False, False, False))]),
            (
                ("failed", 1.2, "bad chunk", "bad chunk", True, False, False),
                [Trouble("the connection to {target} broke: bad chunk"), Finish(), Abort()],
            ),
        ],
        DONE,
    ),
    "a POST stream whose head still waits, then something not HTTP: 502": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (
                ("failed", 1.2, "bad", "bad", True, False, False),
                [Trouble("the connection to {target} broke: bad")]
                + [Refuse(502, "Bad Gateway: bad"), Unreached(2, 502, "Bad Gateway: bad"), Finish()],
            ),
        ],
        DONE,
    ),
    "a handshake-era client that leaves is no cancel; its answer is read on": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("left", 1.1), []),
            (("data", event(REPLY), 1.2), []),
            (
                ("end", 1.3),
                [
                    Finish(),
                    Write((Start(), event(REPLY), END)),
                    Record("server", REPLY, 2),
                    Framing(200, CALL, (False, False, True)),
                ],
            ),
        ],
        DONE,
    ),
    "a 2026-07-28 client that leaves cancels its request, after what came before": (
        asked(b"POST", {}, STATELESS_CALL),
        [
            (("head", 200, SSE, 1.0), []),
            (("data", event(NOTE), 1.1), []),
            (("left", 1.2), [Write((Start(), event(NOTE))), Record("server", NOTE, 2), Record("client", CANCEL)]),
        ],
        EVENTS,
    ),
    "a stream its client left is read on for after_gone_bytes, then cut where the client left": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("left", 2.0), []),
            (("data", event(NOTE), 2.1), []),
            (
                ("data", event(NOTE) * 5, 2.2),  # 38 + 190 bytes since the client left
                [Write((Start(), event(NOTE))), Record("server", NOTE, 2), Trouble(GAVE_UP), Cut(2, 2.0)]
                + [Close(), Finish()],
            ),
        ],
        DONE,
    ),
    "... or for the upstream timeout, an event over the limit being read said as what was read of it": (
        POST,
        [
            (("head", 200, SSE, 1.0), []),
            (("left", 2.0), []),
            (("data", b"data: " + b"x" * 100, 2.1), []),
            (
                ("data", b"x", 7.5),
                [Write((Start(), b"data: " + b"x" * 100)), Trouble(GAVE_UP)]
                + [Unkept(106, 2, 2.1, read_whole=False), Cut(2, 2.0), Close(), Finish()],
            ),
        ],
        DONE,
    ),
    "the GET stream goes to its client at once, and is closed on the target when the client leaves": (
        GET,
        [
            (("head", 200, SSE, 1.0), [Write((Start(),)), Framing(200, None, (False, False, False))]),
            (("data", event(NOTE), 1.1), []),
            (("flush",), [Write((event(NOTE),)), Record("server", NOTE, None, True)]),
            (("dropped",), [Close(), Finish()]),
            (("end", 1.2), []),
        ],
        DONE,
    ),
    "a legacy SSE stream: its endpoint event announces where to POST, no message; its messages are no GET stream's": (
        GET,
        [
            (("head", 200, SSE, 1.0), [Write((Start(),)), Framing(200, None, (False, False, False))]),
            (("data", ENDPOINT + event(NOTE), 1.1), []),
            (
                ("flush",),
                [Write((ENDPOINT + event(NOTE),)), Announced("/messages/?session_id=ab"), Record("server", NOTE)],
            ),
            (("data", event(REPLY), 1.2), []),
            (("flush",), [Write((event(REPLY),)), Record("server", REPLY)]),
            (("dropped",), [Close(), Finish()]),
        ],
        DONE,
    ),
    "a GET answered 405: the target offers no stream, and the body is the HTTP layer's": (
        GET,
        [
            (("head", 405, {}, 1.0), [Wait(5.0), Framing(405, None, None)]),
            (("end", 1.1), [Finish(), Whole(b""), Framing(405, None, None)]),
        ],
        DONE,
    ),
    "a session error: the request turned away before the session saw it": (
        asked(b"POST", {"mcp-session-id": "s1"}, CALL),
        [
            (("head", 404, JSON, 1.0), [Wait(5.0)]),
            (("data", b'{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"Session not found"}}', 1.1), []),
            (
                ("end", 1.2),
                [Finish(), Whole(b'{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"Session not found"}}')]
                + [Refused(2), Framing(404, CALL, None)]
                + [
                    SessionErrors(
                        {"unknown": {"status": 404, "error": {"code": -32600, "message": "Session not found"}}}
                    )
                ],
            ),
        ],
        DONE,
    ),
    "a request's own error answered with an HTTP error status": (
        POST,
        [
            (("head", 400, JSON, 1.0), [Wait(5.0)]),
            (("data", b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}', 1.1), []),
            (
                ("end", 1.2),
                [Finish(), Whole(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}')]
                + [Record("server", b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}')]
                + [
                    Framing(400, CALL, None),
                    ErrorStatus(400, b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}', CALL),
                ],
            ),
        ],
        DONE,
    ),
    "an exchange over takes nothing more": (
        POST,
        [
            (("head", 200, JSON, 1.0), [Wait(5.0)]),
            (("end", 1.1), [Finish(), Whole(b""), Framing(200, CALL, None)]),
            (("late",), []),
            (("stalled", 9.0, False), []),
            (("failed", 9.0, "x", "x", True, True, False), []),
            (("left", 9.0), []),
            (("dropped",), []),
        ],
        DONE,
    ),
}


@pytest.mark.parametrize("name", list(CONVERSATIONS))
def test_a_conversation(name: str) -> None:
    request, steps, phase = CONVERSATIONS[name]
    machine = Exchange(request, BOUNDS)
    for call, expected in steps:
        assert getattr(machine, call[0], functools.partial(machine.on, call[0]))(*call[1:]) == expected, call
    assert machine.phase == phase


def test_every_step_of_the_table_is_the_machines_and_every_phase_but_done_ends() -> None:
    for (phase, _event), (after, step) in TRANSITIONS.items():
        assert callable(getattr(Exchange, "_" + step, None)), step
        assert after in (SENT, WHOLE, STREAMED, EVENTS, DONE) and phase != DONE
    for phase in (SENT, WHOLE, STREAMED, EVENTS):
        assert TRANSITIONS[(phase, "dropped")] == (DONE, "drop")
        assert (phase, "left") in TRANSITIONS


ASKED = {
    "a call": (b"POST", CALL, exchange.Asked(b"POST", {}, CALL, False, True, 2, (2,))),
    "a batch: its requests, no one's stream": (
        b"POST",
        [CALL, {**CALL, "id": 3}, {"jsonrpc": "2.0", "method": "n"}],
        exchange.Asked(
            b"POST", {}, [CALL, {**CALL, "id": 3}, {"jsonrpc": "2.0", "method": "n"}], False, True, None, (2, 3)
        ),
    ),
    "a listen: its stream ends when its client leaves it": (
        b"POST",
        {"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen"},
        exchange.Asked(
            b"POST", {}, {"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen"}, False, False, 4, (4,)
        ),
    ),
    "the GET stream": (b"GET", None, exchange.Asked(b"GET", {}, None, True, False, None, ())),
}


@pytest.mark.parametrize("name", list(ASKED))
def test_what_an_exchange_needs_of_its_request(name: str) -> None:
    method, message, expected = ASKED[name]
    assert asked(method, {}, message) == expected


def test_what_it_holds_stays_bounded_however_long_the_answer() -> None:
    """A body or an event over kept_bytes is not held: at most kept_bytes and a piece, whatever the length."""
    for fields, framing in ((JSON, b""), (SSE, b"data: ")):
        machine = Exchange(POST, BOUNDS)
        machine.head(200, fields, 0.0)
        machine.on("data", framing, 0.0)
        for _ in range(1000):
            machine.on("data", b"x" * 7, 0.1)
            machine.flush()
            assert machine.held() <= BOUNDS.kept_bytes + 7


def test_an_event_no_row_names_is_refused_rather_than_ignored() -> None:
    with pytest.raises(ValueError, match="an exchange takes no 'ended'"):
        Exchange(POST, BOUNDS).on("ended", 1.0)
