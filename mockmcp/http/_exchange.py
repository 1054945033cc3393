"""The recording proxy's exchange (one request forwarded to the target, and its answer) as a state machine.

Sans-IO: the shell (`_record`) tells an `Exchange` what happened and when, and does what it answers, in order.
`TRANSITIONS` is the whole of it; a (phase, event) pair it lacks changes nothing (a timer of a phase left behind).
It holds at most `kept_bytes` of a body or SSE event; a message over that reaches the client and is journaled as
its size (`Unkept`); an event over it on a request's stream is the reply when the stream ends without another.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, NamedTuple

from mockmcp._wire import jsonrpc, protocol
from mockmcp.http._sse import SseEvents
from mockmcp.http._streamable import request_ids, session_error_seen
from mockmcp.options import Bounds
from mockmcp.record import CLIENT, SERVER

__all__ = ["DONE", "END", "EVENTS", "Exchange", "SENT", "STREAMED", "TRANSITIONS", "WHOLE", "asked"]

# The phases.
SENT = "sent"  # the request is with the target, its answer's head not yet back
WHOLE = "whole"  # a body, gathered to go to the client in one write, its head with it
STREAMED = "streamed"  # a body longer than that (or than what is kept), passing as it comes, its head first
EVENTS = "events"  # an SSE stream, passing as it comes, journaled event by event
DONE = "done"

# (phase, event) -> (next phase, the step that says what to do). The shell calls `head`, `stalled`, `failed`, and
# `on` the others; `grown` and `gave up` follow from a piece of data.
TRANSITIONS: dict[tuple[str, str], tuple[str, str]] = {
    (SENT, "head: a body"): (WHOLE, "gather"),
    (SENT, "head: a stream"): (EVENTS, "relay"),
    (SENT, "stale"): (SENT, "resend"),  # a kept connection the target had closed: the request never reached it
    (SENT, "late"): (DONE, "time_out"),  # no head within the upstream timeout: 504
    (SENT, "failed"): (DONE, "fail"),  # no answer could be read: 502
    (SENT, "left"): (SENT, "leave"),
    (SENT, "dropped"): (DONE, "drop"),
    (WHOLE, "data"): (WHOLE, "gathered"),
    (WHOLE, "grown"): (STREAMED, "stream"),  # past whole_bytes or kept_bytes: the head goes, the rest as it comes
    (WHOLE, "end"): (DONE, "answer_whole"),
    (WHOLE, "stalled"): (DONE, "time_out"),  # nothing of it went to the client yet: 504
    (WHOLE, "failed"): (DONE, "fail"),  # the target said something that is not HTTP: 502
    (WHOLE, "broke"): (DONE, "break_off"),  # its connection ended: the client's is cut, it sees nothing
    (WHOLE, "left"): (WHOLE, "leave"),
    (WHOLE, "dropped"): (DONE, "drop"),
    (STREAMED, "data"): (STREAMED, "passed"),
    (STREAMED, "end"): (DONE, "answer_streamed"),
    (STREAMED, "stalled"): (DONE, "stall_cut"),  # part of it went: no status can be said, the client is cut
    (STREAMED, "failed"): (DONE, "fail"),
    (STREAMED, "broke"): (DONE, "break_off"),
    (STREAMED, "left"): (STREAMED, "leave"),
    (STREAMED, "dropped"): (DONE, "drop"),
    (EVENTS, "data"): (EVENTS, "relayed"),
    (EVENTS, "end"): (DONE, "stream_ended"),
    (EVENTS, "failed"): (DONE, "fail"),  # 502 while the head waits for the first event; else cut
    (EVENTS, "broke"): (DONE, "break_off"),
    (EVENTS, "left"): (EVENTS, "leave"),  # a POST's client left: read on, for the cassette
    (EVENTS, "gave up"): (DONE, "give_up"),  # ... until after_gone_bytes or the upstream timeout
    (EVENTS, "dropped"): (DONE, "drop"),  # the GET stream's client left: closed on the target too
}
_EVENTS = {event for _phase, event in TRANSITIONS}


# --- what the shell does, in the order given ----------------------------------------------------------------
# To the client: in one write, a Start (the target's head; `length`: its Content-Length), pieces (bytes) and END;
# a body whole; the proxy's own text/plain answer; the connection cut mid-answer.
Start = namedtuple("Start", "length", defaults=(None,))
END = "end"
Write = namedtuple("Write", "parts")
Whole = namedtuple("Whole", "body")
Refuse = namedtuple("Refuse", "status text")
Abort = namedtuple("Abort", "")
# To the target: close the connection; send the request again on a new one; call `stalled` after `after` s.
Close = namedtuple("Close", "")
Resend = namedtuple("Resend", "")
Wait = namedtuple("Wait", "after")
# The exchange is over: a stop no longer waits for it.
Finish = namedtuple("Finish", "")
# To the journal (monotonic times): a message (`stream`: the id of the request whose stream carried it; `get`:
# on the GET stream; `event`: its SSE id); a message over kept_bytes as its size (`read_whole` False: not read to
# its end); a request's answer broken off; a request the proxy answered itself (502, 504); one the target turned
# away as its session's error.
Record = namedtuple("Record", "direction data stream get event", defaults=(None, False, None))
Unkept = namedtuple("Unkept", "size stream at get reply read_whole", defaults=(False, False, True))
Cut = namedtuple("Cut", "request_id at")
Unreached = namedtuple("Unreached", "request_id status text")
Refused = namedtuple("Refused", "request_id")
# A legacy HTTP+SSE stream's `endpoint` event: the URL (as sent) its client POSTs the session's messages to.
Announced = namedtuple("Announced", "url")
# What the target showed of itself (`_streamable`'s *_seen), and what went wrong with it ("{target}": its URL).
Framing = namedtuple("Framing", "status message events")
SessionErrors = namedtuple("SessionErrors", "errors")
ErrorStatus = namedtuple("ErrorStatus", "status body message")
Trouble = namedtuple("Trouble", "text")

Action = Any  # one of the above
Part = Any  # a Start, bytes, or END


class Asked(NamedTuple):
    method: bytes
    headers: dict[str, str]
    message: Any  # the JSON-RPC message POSTed (None: none, or not JSON)
    get: bool  # the GET stream: the client's to hold open; no answer a stop waits for
    awaited: bool  # a stop waits for its answer (not a GET's, nor a 2026-07-28 listen's)
    owner: Any  # the id of the request whose stream this is (None: a GET's, a batch's)
    ids: tuple[Any, ...]  # the ids of the requests it carried (a batch's: all of them)


def asked(method: bytes, headers: dict[str, str], message: Any) -> Asked:
    get, named = method == b"GET", isinstance(message, dict) and "method" in message
    listen = named and message.get("method") == protocol.LISTEN
    ids = tuple(request_ids(message))
    return Asked(method, headers, message, get, not get and not listen, message.get("id") if named else None, ids)


class Exchange:
    """One request's exchange with the target; each event returns what the shell should do, in order."""

    def __init__(self, request: Asked, bounds: Bounds) -> None:
        self.request, self.bounds, self.phase = request, bounds, SENT
        self.answer: tuple[int, bool, bytes | None] = (0, False, None)  # its status, JSON or not, its length
        self.events: SseEvents | None = None
        self.body = bytearray()  # what came of a body, while it is at most kept_bytes
        self.size = 0  # the length of the body so far
        self.outgoing: list[Part] = []  # for the client, written together at the next `flush`
        self.unjournaled: list[tuple[str | None, bytes | int]] = []  # SSE events (id, data), journaled at `flush`
        self.started = False  # the client has been written the answer's head
        self.replied = False  # the stream carried the reply to its request
        self.unsure: tuple[int, float] | None = None  # an event over the limit on its stream: its size, when
        self.began = 0.0  # when the message being read began: one not kept is filed then, so replay answers at once
        self.last_byte = 0.0  # when the last byte of a body came (a stream may pause; a body must keep coming)
        self.gone: tuple[float, int] | None = None  # when the client left, and the bytes read since

    def on(self, event: str, *args: Any) -> list[Action]:
        """An event of the table (those the shell calls by name: data, end, late, left, dropped); what to do."""
        if event not in _EVENTS:
            raise ValueError(f"an exchange takes no {event!r}")
        row = TRANSITIONS.get((self.phase, event))
        if row is None:
            return []
        self.phase, step = row
        return getattr(self, "_" + step)(*args)  # type: ignore[no-any-return]

    def head(self, status: int, fields: dict[str, str], now: float) -> list[Action]:
        """The answer's head came (`fields`: its headers by lowercase name)."""
        kind = fields.get("content-type", "")
        length = fields.get("content-length") if "transfer-encoding" not in fields else None
        length_bytes = None if length is None else length.encode("latin-1")
        self.answer, self.began = (status, kind.startswith("application/json"), length_bytes), now
        return self.on("head: a stream" if kind.startswith("text/event-stream") else "head: a body", now)

    def stalled(self, now: float, paused: bool) -> list[Action]:
        """A body's timer (`Wait`); `paused`: the target is not read for a slow client, so that time is not its."""
        if (self.phase, "stalled") not in TRANSITIONS:
            return []
        if paused:
            self.last_byte = now
        quiet = now - self.last_byte
        if quiet < self.bounds.upstream_timeout:
            return [Wait(self.bounds.upstream_timeout - quiet)]
        return self.on("stalled", now)

    def failed(self, now: float, error: str, why: str, heard: bool, broke: bool, stale: bool) -> list[Action]:
        """The answer cannot be read further: `heard`, the target had said something of it; `broke`, its
        connection ended (else it spoke no HTTP); `stale`, a kept connection it had closed."""
        if self.phase == DONE:
            return []
        if stale:
            return self.on("stale")
        trouble = f"the connection to {{target}} broke: {why}" if heard else f"could not reach {{target}}: {why}"
        trouble += "" if heard else " (the host got 502 Bad Gateway)"
        return [Trouble(trouble), *self.on("broke" if broke and self.phase != SENT else "failed", now, error)]

    def resumed(self, now: float) -> None:
        """The target is read again (a slow client caught up): a body's quiet starts now."""
        self.last_byte = now

    def held(self) -> int:
        """The bytes of the answer it holds for the journal: a body, or the SSE event being read."""
        return len(self.body) + (self.events.held() if self.events is not None else 0)

    def flush(self) -> list[Action]:
        """What waits: the client's bytes in one write, then the journal's messages (the client first)."""
        return self._flush(self.phase == DONE)

    def _gather(self, now: float) -> list[Action]:
        self.last_byte = now
        out: list[Action] = [Wait(self.bounds.upstream_timeout)]
        if self.request.get:  # whether the target offers a GET stream (it answered with none)
            out.append(Framing(self.answer[0], None, None))
        return out

    def _relay(self, now: float) -> list[Action]:
        self.events = SseEvents(self.bounds.kept_bytes)
        self.outgoing.append(Start())
        if not self.request.get:  # a POST's head waits for its first event, to go in the same write
            return []
        return [*self._flush(False), Framing(self.answer[0], None, (False, False, False))]

    def _resend(self) -> list[Action]:
        return [Resend()]

    def _gathered(self, chunk: bytes, now: float) -> list[Action]:
        self.last_byte = now
        self.size += len(chunk)
        self.body += chunk
        if self.size > min(self.bounds.whole_bytes, self.bounds.kept_bytes):
            return self.on("grown")
        return []

    def _stream(self) -> list[Action]:
        self.outgoing += [Start(self.answer[2]), bytes(self.body)]
        if self.size > self.bounds.kept_bytes:
            self.body = bytearray()  # too long for the cassette: not kept
        return []

    def _passed(self, chunk: bytes, now: float) -> list[Action]:
        self.last_byte = now
        self.size += len(chunk)
        self.outgoing.append(chunk)
        if self.size <= self.bounds.kept_bytes:
            self.body += chunk
        elif self.body:
            self.body = bytearray()
        return []

    def _relayed(self, chunk: bytes, now: float) -> list[Action]:
        assert self.events is not None
        if self.gone is not None:  # the client left: the rest is read for the cassette, not without end
            self.gone = (self.gone[0], self.gone[1] + len(chunk))
            if self.gone[1] > self.bounds.after_gone_bytes or now - self.gone[0] > self.bounds.upstream_timeout:
                return self.on("gave up", now)
        self.outgoing.append(chunk)
        if self.events.between():
            self.began = now
        self.unjournaled += self.events.events(chunk)
        return []

    def _answer_whole(self, now: float) -> list[Action]:
        body = bytes(self.body)
        return [Finish(), Whole(body), *_answered(self, body)]

    def _answer_streamed(self, now: float) -> list[Action]:
        body = bytes(self.body)  # empty when longer than kept_bytes
        self.outgoing.append(END)
        return [Finish(), *self._flush(True), *_answered(self, body)]

    def _stream_ended(self, now: float) -> list[Action]:
        assert self.events is not None
        seen = (self.events.ids, bool(self.events.primed), self.events.count == 1)
        self.outgoing.append(END)
        out = [Finish(), *self._flush(True)]
        if self.request.awaited and self.gone is None:
            # Ended without its reply: the host gives up on the call as on a cut ("SSE stream ended without a
            # response"), where replay of a `drop: true` would hold the stream open for ever.
            out += self._cut_unreplied(now)
        return [*out, Framing(self.answer[0], self.request.message, seen)]

    def _time_out(self, *_now: float) -> list[Action]:
        timeout = self.bounds.upstream_timeout
        if self.answer[0]:  # its head came, then its body stopped
            said, text = f"stopped sending an answer for {timeout:g} s", f"stopped sending its answer for {timeout:g} s"
        else:
            said = text = f"did not answer within {timeout:g} s"
        text = f"Gateway Timeout: the target {text} (--upstream-timeout)"
        return [Close(), Trouble(f"{{target}} {said} (the host got 504 Gateway Timeout)"), *self._refuse(504, text)]

    def _stall_cut(self, now: float) -> list[Action]:
        said = f"stopped sending an answer for {self.bounds.upstream_timeout:g} s (the host's connection was cut)"
        # Finished before the cut: a client whose answer is cut is no cancel of its request (`leave`).
        return [Close(), Trouble("{target} " + said), *self._cut_unreplied(now), Finish(), Abort()]

    def _fail(self, now: float, error: str) -> list[Action]:
        if not self.started:
            self.outgoing.clear()
            return self._refuse(502, f"Bad Gateway: {error}")
        return [Finish(), Abort()]  # the answer cannot be whole: the client sees it break

    def _break_off(self, now: float, error: str) -> list[Action]:
        """The client's connection is cut as the target's was (after what came of a stream), the cut journaled."""
        out: list[Action] = []
        if self.outgoing:  # an SSE head still waiting for its first event goes: the client sees the stream begin
            out.append(Write(tuple(self.outgoing)))
            self.outgoing = []
        out += self._journal(False)
        if self.unsure is not None:  # an event over the limit before the cut: not the reply, which never came
            out.append(self._unsure(reply=False))
        if self.events is not None:  # what its events showed (ids, priming) holds all the same
            out.append(
                Framing(self.answer[0], self.request.message, (self.events.ids, bool(self.events.primed), False))
            )
        return [*out, *self._cut_unreplied(now), Finish(), Abort()]

    def _give_up(self, now: float) -> list[Action]:
        assert self.events is not None and self.gone is not None
        bounds = self.bounds
        out = self._flush(False)
        said = f"after {bounds.upstream_timeout:g} s or {bounds.after_gone_bytes >> 20} MiB: cut there"
        out.append(Trouble(f"an answer its client had left was still coming from {{target}} {said}"))
        skipped = self.events.skipping()
        if skipped is not None:  # an event over the limit was being read: said, as any other
            out.append(Unkept(skipped, self.request.owner, self.began, self.request.get, False, False))
        if self.request.awaited:  # cut where its client left, as the host went on from there
            out += self._cut_unreplied(self.gone[0])
        return [*out, *self._drop()]

    def _leave(self, now: float) -> list[Action]:
        """A 2026-07-28 client cancels a request so (no cancel over HTTP): journaled as that cancel; the answer
        is still read to its end."""
        if self.gone is None:
            self.gone = (now, 0)
        message, owner = self.request.message, self.request.owner
        if self.replied or owner is None or not isinstance(message, dict):
            return []
        if protocol.params_era(message.get("params")) != protocol.STATELESS:
            return []  # in the handshake era a disconnect is not a cancellation
        cancel = {"jsonrpc": "2.0", "method": protocol.CANCELLED, "params": {"requestId": owner}}
        return [*self._flush(False), Record(CLIENT, jsonrpc.encode(cancel))]  # what came before it first

    def _drop(self) -> list[Action]:
        out: list[Action] = [Close()]
        if self.unsure is not None:  # an event over the limit, and no end of its stream to say it was the reply
            out.append(self._unsure(reply=False))
        return [*out, Finish()]

    def _flush(self, ended: bool) -> list[Action]:
        out: list[Action] = []
        # A POST stream's head alone waits for its first event, to go in the same write.
        if self.outgoing and (self.started or self.request.get or len(self.outgoing) > 1):
            out.append(Write(tuple(self.outgoing)))
            self.outgoing, self.started = [], True
        return [*out, *self._journal(ended)]

    def _journal(self, ended: bool) -> list[Action]:
        """The SSE events read: each journaled; one over the limit as its size, held while it may be the reply."""
        out: list[Action] = []
        owner, get = self.request.owner, self.request.get
        if self.events is not None and self.events.announced:  # (the first event of a legacy SSE stream)
            out += [Announced(url) for url in self.events.announced]
            self.events.announced.clear()
        if self.events is not None and self.events.legacy:  # a legacy SSE session's one stream carries it all
            get = False
        for event_id, data in self.unjournaled:
            if self.unsure is not None:  # an event after it: the one over the limit was not the reply
                out.append(self._unsure(reply=False))
            if isinstance(data, int):  # an event over the limit: its size
                if owner is not None and self.request.awaited and not self.replied:  # (a listen's: notifications)
                    self.unsure = (data, self.began)  # the reply, if the stream ends with it
                else:
                    out.append(Unkept(data, owner, self.began, get))
                continue
            if not self.replied and owner is not None and b'"id"' in data:
                self.replied = _replies_to(data, owner)
            out.append(Record(SERVER, data, owner, get, event_id))
        self.unjournaled.clear()
        if ended and self.unsure is not None:  # the stream ended with it: it was the reply
            out.append(self._unsure(reply=True))
        return out

    def _unsure(self, reply: bool) -> Unkept:
        assert self.unsure is not None
        (size, at), self.unsure = self.unsure, None
        return Unkept(size, self.request.owner, at, reply=reply)

    def _refuse(self, status: int, text: str) -> list[Action]:
        """The proxy answers itself: each request it carried is kept answered by that error (`Recorder.unreached`),
        where one kept unanswered would hold a replaying host for ever."""
        ids = self.request.ids if self.request.method == b"POST" else ()
        return [Refuse(status, text), *[Unreached(request_id, status, text) for request_id in ids], Finish()]

    def _cut_unreplied(self, at: float) -> list[Action]:
        """A cut for each request this answer was the answer of and did not reply to."""
        return [] if self.replied else [Cut(request_id, at) for request_id in self.request.ids]


def _answered(x: Exchange, body: bytes) -> list[Action]:
    """What a body tells the journal: the reply to the message POSTed, or its session's error."""
    request, (status, json, _length) = x.request, x.answer
    message = request.message
    # A GET's or DELETE's JSON body (a 405, a session error) is the HTTP layer's, no message of the session.
    answers = request.method == b"POST" and message is not None
    errors = session_error_seen(request.headers, status, body, message if answers else None)
    out: list[Action] = []
    if errors and answers and isinstance(message, dict) and "id" in message:
        out.append(Refused(message["id"]))  # turned away before the session saw it: the shape replay answers
    elif answers and json and x.size > x.bounds.kept_bytes:
        out += [Unkept(x.size, request_id, x.began, reply=True) for request_id in request.ids]
    elif answers and json and body.strip():
        out.append(Record(SERVER, body))
    out.append(Framing(status, message, None))
    if errors:
        out.append(SessionErrors(errors))
    elif answers and status >= 400:
        out.append(ErrorStatus(status, body, message))
    return out


def _replies_to(data: bytes, request_id: Any) -> bool:
    """Whether an SSE event's data is the reply to that request."""
    try:
        message = jsonrpc.parse(data)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and message.get("id") == request_id
