"""Replay's Streamable HTTP endpoint, sans-IO: HTTP requests in, what to write out.

Theory of operation. The shell (`shells/http_replay.py`) hands over each whole request with the
connection it came on (`request(conn, method, target, headers, body)`), each connection that
closed (`closed(conn)`) and each timer that fired (`wake(token)`); every call returns what to do,
in order: `Respond` (a whole answer), `Open` (an SSE stream's head), `Event` (encoded SSE events
on an open stream), `End` (the stream's end), `Drop` (cut the connection mid-message, as a server
that dies does), `Later` (call `wake(token)` after that long) and `Note` (a line for stderr). A
connection is an opaque key (the shell's own object; a string in the tests); nothing here touches
a socket, a clock or a thread, so every rule is a row of a table test (tests/test_endpoint.py).

Admission (Host/Origin, path, method, headers, the body) is `streamable.admit`. A POST carries one
client message (or, in a 2025-03-26 session, a batch). A notification or a response goes to its
live session's engine and is answered 202. A request goes to the engine too; what the engine sends
for it (its `Send.request`) is gathered on that request's stream: when the reply is all there is,
it goes back as one JSON body, otherwise as an SSE stream that carries the interaction's server
messages, then the reply, and ends. Unless the recorded server streamed every answer, an answer
that has nothing to send yet (behind a `delay`, or a question on the GET stream) begins only when
it knows which of the two it is. Messages that belong to no request (unsolicited ones, or those a
client notification causes) go to the session's GET stream, held back until the client opens it.
A request's server message that the recorded server sent on its GET stream (`stream: get`) goes on
the GET stream too when the client has one open, else on the request's own stream, with a note.
A request whose answer broke off in the recording (`drop: cut`, the engine's `Cut`) has its stream's
connection cut after what that stream carried before (an answer not begun, as a lone JSON reply would
be: cut with nothing), as the recorded server's was; the session and its other streams go on.

Handshake era: `initialize` starts a live session and its `Mcp-Session-Id`; every later message
must carry it (400 without, 404 for an unknown or ended one, or as the recorded server answered);
DELETE ends it. A disconnect is not a cancellation there. 2026-07-28 era: requests carry the
protocol version in `_meta` and need no session; they all share one live session, whose clients
choose their ids on their own, so the endpoint gives the engine a unique key (an alias) for each
request, by which the engine's `Send`s name it, while the messages carry the client's own id;
closing a request's stream cancels the request.

The engine's `Send`s say all the endpoint needs (the request, the method, the error code, a batch's
ids), so nothing here reads back or rewrites what the engine wrote.

Resumption: when the recorded server gave its events ids (it had an event store), the server keeps
the latest events of its sessions (`_Sent`), and a GET with `Last-Event-ID` gets the events of that
id's stream that came after it, and then the rest of that stream as it comes (an unknown or
forgotten id: an empty stream that ends), as the SDK's resumable server answers; resuming the GET
stream after it ended opens it again; a stream that broke off (`drop: cut`) breaks off again. What
is kept is one budget for the whole server (`RESUMABLE_EVENTS`, `RESUMABLE_BYTES`), the oldest
forgotten first, and a session's events go when it ends: a thousand idle sessions cost no more
than one.

Bounds. Nothing a client leaves open grows without end:
- GET streams stay open with nothing to answer, each holding a connection: at most `streams` are
  open at once (the shell derives it from its descriptor limit, leaving room for requests). At the
  cap, opening another ends the one that has sent nothing for longest, cleanly (its end, so an SDK
  client opens it again later), never a request's stream that is answering.
- Every SSE stream that has sent nothing for `keepalive` seconds carries a comment (as the SDK
  server's sse-starlette pings every 15 s), so proxies keep it and a client that vanished shows up
  as a failed write, which closes its connection. A stream is not ended for being quiet: a GET
  stream waits for notifications whenever they come, and the SDK server keeps it open too.
- A GET stream whose client has left more than `UNREAD_BYTES` unread (the shell's write buffer,
  `unread(conn)`, and what this call has queued for it, which the shell writes only once the call
  returns: one interaction may send many messages at once) is cut, with a note, instead of its
  buffer growing by every event; its events
  stay resumable (with event ids), else wait for the next GET stream like any message with none open.
- What waits for a GET stream while none is open is at most `BACKLOG_EVENTS` messages and
  `BACKLOG_BYTES` (the newest message always kept), the oldest dropped and counted.
- A session with an id that does nothing for `session_idle` seconds ends, as a DELETE ends it. A
  request being answered or an open GET stream holds it, as in the SDK server (its transport counts
  an open GET stream as a request in flight); the cap on GET streams bounds how many sessions that
  can hold, and a stream ended at the cap, or whose client vanished, leaves its session to expire.
  A live session holds only what it did (its engine shares everything the size of the cassette), and
  the reports of ended sessions are folded into one past `FINISHED` of them.
"""

from __future__ import annotations

import collections
import itertools
import secrets
from collections.abc import Callable
from typing import Any, NamedTuple

from mockmcp import jsonrpc, protocol
from mockmcp.cassette.model import GET_STREAM, NOTIFICATION, SERVER, Cassette
from mockmcp.core.matching import Matcher
from mockmcp.core.redact import Redactor
from mockmcp.core.replay import Action, Cut, Exit, Note, Replay, Send, Wake
from mockmcp.core.report import Report
from mockmcp.core.selection import Recordings
from mockmcp.core.streamable import (
    KEEPALIVE_COMMENT,
    Answer,
    Framing,
    admit,
    batch_refusal,
    error_body,
    modern,
    priming_event,
    session_error,
    sse_event,
)

__all__ = [
    "Drop",
    "End",
    "Endpoint",
    "Event",
    "KEEPALIVE",
    "Later",
    "Note",
    "Open",
    "Out",
    "RESUMABLE_BYTES",
    "RESUMABLE_EVENTS",
    "Respond",
    "UNREAD_BYTES",
]

# What the server keeps of the events its sessions sent, for a client resuming with Last-Event-ID: the
# newest events of all sessions together, at most this many and this many bytes.
RESUMABLE_EVENTS = 4096
RESUMABLE_BYTES = 16 << 20
# What a session keeps for its GET stream while none is open (the oldest let go first, and counted).
BACKLOG_EVENTS = 1024
BACKLOG_BYTES = 1 << 20
FINISHED = 64  # reports of ended sessions kept apart (see `Endpoint.finished`)
KEEPALIVE = 15.0  # seconds an SSE stream may send nothing before it carries a keep-alive comment
UNREAD_BYTES = 1 << 20  # bytes a GET stream's client may leave unread before the stream is cut
SSE_FIELDS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))


class Respond(NamedTuple):
    """Answer the request on conn with this whole answer."""

    conn: Any
    answer: Answer


class Open(NamedTuple):
    """Answer the request on conn with an SSE stream: 200 and these headers; its events follow."""

    conn: Any
    headers: tuple[tuple[str, str], ...]


class Event(NamedTuple):
    """Write these bytes (whole SSE events) on the stream open on conn."""

    conn: Any
    data: bytes


class End(NamedTuple):
    """The stream open on conn is whole."""

    conn: Any


class Drop(NamedTuple):
    """Cut conn mid-message, as a server that dies does."""

    conn: Any


TURN = 0.005
"""Seconds between two messages for different streams of a session, so the host takes them in that order."""
_PACED = "paced"  # the `Later` token's job when it is the host's turn, not an engine's wake
_IDLE = "idle"  # (_IDLE, n): the `Later` token's job that ends the session if it did nothing since its n-th step
_BEAT = "beat"  # (_BEAT, stream, beat, said): the `Later` token's job that keeps a quiet stream alive


class Later(NamedTuple):
    """Call `Endpoint.wake(token)` after `after` seconds."""

    after: float
    token: Any


Out = Respond | Open | Event | End | Drop | Later | Note


class _Sent:
    """The latest SSE events of every session, each with its id and stream, for resumption: one budget for the
    server (not one per session), the oldest forgotten first, and a session's forgotten when it ends."""

    def __init__(self) -> None:
        self.events: collections.deque[tuple[_LiveSession, str, _Stream, bytes]] = collections.deque()
        self.size = 0

    def add(self, session: _LiveSession, event_id: str, stream: _Stream, frame: bytes) -> None:
        self.events.append((session, event_id, stream, frame))
        self.size += len(frame)
        session.kept += 1
        while len(self.events) > RESUMABLE_EVENTS or self.size > RESUMABLE_BYTES:
            gone, _id, _stream, frame = self.events.popleft()
            self.size -= len(frame)
            gone.kept -= 1

    def after(self, session: _LiveSession, event_id: str) -> tuple[_Stream | None, list[bytes]]:
        """The stream the session's event was sent on (None: not kept), and its events sent after it."""
        stream: _Stream | None = None
        frames: list[bytes] = []
        for sent_by, sent_id, sent_on, frame in self.events:
            if sent_by is not session:
                continue
            if stream is None:
                stream = sent_on if sent_id == event_id else None
            elif sent_on is stream:
                frames.append(frame)
        return stream, frames

    def forget(self, session: _LiveSession) -> None:
        """The session ended: nothing can resume its streams now, so its events go."""
        if session.kept:
            self.events = collections.deque(event for event in self.events if event[0] is not session)
            self.size = sum(len(event[3]) for event in self.events)
            session.kept = 0


class _Stream:
    """What one request (or the GET stream) is sent: gathered first, then a JSON body or an SSE stream."""

    def __init__(self, endpoint: Endpoint, conn: Any, session: _LiveSession) -> None:
        self.endpoint, self.conn, self.session = endpoint, conn, session
        self.ids = session.ids  # where its event ids come from, when the recorded server gave its events ids
        self.gathered: list[bytes] = []
        self.code: int | None = None  # its reply's error code (for the status of a lone reply)
        self.batch: set[Any] = set()  # the request ids of the batch it answers, if it answers one
        self.sse = False
        self.done = False
        self.lost = False  # its connection has closed: what it is sent now goes nowhere
        self.get = False  # it is its session's GET stream (counted among the server's `standing` streams)
        self.said = 0  # events it has sent (keep-alive comments aside): what tells a quiet stream
        self.beat = 0  # which keep-alive timer is its own (one at a time; an older one is let go)
        self.broken = False  # its answer broke off (`cut`): a client resuming it sees it break again
        # (headers, priming) of an answer not begun: a JSON body if the reply comes alone, else a stream
        self.pending: tuple[tuple[tuple[str, str], ...], bool] | None = None
        endpoint.live.setdefault(conn, []).append(self)

    def _emit(self, action: Out) -> None:
        if self.lost:
            return
        if isinstance(action, Event):
            self.said += 1
            if self.get and self in self.endpoint.standing:  # the streams in the order they last said something
                self.endpoint.standing.move_to_end(self)
        self.endpoint.out.append(action)

    def event(self, data: bytes) -> None:
        if self.pending is not None:  # a message before the reply: the answer is a stream after all
            self.open_sse(*self.pending)
        if (
            self.get
            and not self.done
            and self.endpoint.unread(self.conn) + self.endpoint.queued(self.conn) > UNREAD_BYTES
        ):
            self.endpoint.cut_unread(self)
            if self.ids is None:
                self.session.hold(data)  # for the GET stream the client opens next
            else:
                self._encoded(data)  # numbered and kept: the client resuming from its last event gets it
            return
        if self.sse:
            self._emit(Event(self.conn, self._encoded(data)))
        else:
            self.gathered.append(data)

    def _encoded(self, data: bytes) -> bytes:
        if self.ids is None:
            return sse_event(data)
        event_id = next(self.ids)
        return self.kept(event_id, sse_event(data, event_id))

    def kept(self, event_id: str, frame: bytes) -> bytes:
        session = self.session
        if session.sent is not None:
            session.sent.add(session, event_id, self, frame)
        return frame

    def primed(self) -> bytes:
        """A priming event (the next id, no data), kept like any other event."""
        assert self.ids is not None
        event_id = next(self.ids)
        return self.kept(event_id, priming_event(event_id))

    def open_sse(self, headers: tuple[tuple[str, str], ...], priming: bool = False) -> None:
        """Answer with an SSE stream: its head, the priming event, what was gathered (and its end, when
        the reply was among it)."""
        self.pending = None
        self._emit(Open(self.conn, (*SSE_FIELDS, *headers)))
        frames = [self.primed()] if priming and self.ids is not None else []
        frames += [self._encoded(data) for data in self.gathered]
        self.gathered.clear()
        if frames:
            self._emit(Event(self.conn, b"".join(frames)))
        self.sse = True
        if self.done:  # the reply was among what was gathered
            self._emit(End(self.conn))
        else:
            self.endpoint.keep_alive(self)

    def reply_alone(self, data: bytes, status: int = 200) -> None:
        """The reply, the only message of a pending answer: one JSON body (with the recorded server's status)."""
        assert self.pending is not None
        self._emit(Respond(self.conn, Answer(status, data, headers=self.pending[0])))
        self.pending = None
        self._ended()

    def cut(self, opening: tuple[tuple[tuple[str, str], ...], bool]) -> None:
        """Break the answer off, as a server that dies does: what was gathered for it goes out first, as a
        stream (`opening`: the headers and priming of one not begun), then its connection is cut. A server
        that streams every answer has begun its stream by then, gathered or not; one that answers a lone
        reply as JSON has sent nothing yet."""
        self.broken = True
        if not self.lost:
            if not self.sse and (self.gathered or self.endpoint.framing.sse):
                self.open_sse(*(self.pending or opening))
            self.endpoint.out.append(Drop(self.conn))
            self.endpoint.lose(self.conn)
        self.finish()

    def finish(self) -> None:
        if self.pending is not None:  # ended without a reply (cancelled, the session ended): an empty stream
            self.open_sse(*self.pending)
        self._ended()

    def _ended(self) -> None:
        """All it carries is out: its stream ends (if it is one), and it leaves its connection's list."""
        if self.done:
            return
        if self.sse:
            self._emit(End(self.conn))
        self.done = True
        self.endpoint.standing.pop(self, None)
        streams = self.endpoint.live.get(self.conn)
        if streams is not None and self in streams:
            streams.remove(self)
            if not streams:
                del self.endpoint.live[self.conn]


class _LiveSession:
    """One client's session: its engine, its open streams, and what waits for its GET stream."""

    def __init__(self, endpoint: Endpoint, session_id: str | None) -> None:
        self.endpoint, self.id = endpoint, session_id
        self.engine = Replay(
            endpoint.cassette, endpoint.matcher, endpoint.redactor, endpoint.timing, endpoint.recordings
        )
        self.streams: dict[Any, _Stream] = {}
        self.standalone: _Stream | None = None
        self.backlog: collections.deque[bytes] = collections.deque()
        self.backlog_size = 0  # its bytes
        self.aliases: dict[str, Any] = {}  # stateless session: our key for a request -> the client's id
        self.batches: list[_Stream] = []  # streams of batches still awaiting their array of answers
        self.version: str | None = None  # the revision its initialize asked for
        # Event ids run through the session, as a resumable server's event store numbers them.
        self.ids = (str(n) for n in itertools.count(1)) if endpoint.framing.event_ids else None
        # Only a session with an id has a GET stream, so only it can be resumed; the store is the server's.
        self.sent = endpoint.sent if self.ids is not None and session_id is not None else None
        self.kept = 0  # how many of its events the store holds
        self.ended = False
        self.extra: tuple[tuple[str, str], ...] = ((protocol.SESSION_HEADER, session_id),) if session_id else ()
        self.paced: list[Action] | None = None  # what the engine said that waits for the host's turn (`perform`)
        self.steps = 0  # requests, GETs and DELETEs that named it: what makes it not idle
        self.watched = False  # a timer will see whether it stayed idle (`Endpoint.touch`)
        self.rerouted: Any = None  # the request whose GET-stream messages were last said to go on its own stream
        self.dropped = 0  # what its GET stream was not given, the backlog being full (said when it opens)
        self.perform(self.engine.start())

    def idle(self) -> bool:
        """Whether nothing of the session is under way: no request being answered, no GET stream open."""
        return (
            all(s.lost for s in self.streams.values())
            and all(s.lost for s in self.batches)
            and not self.standalone_open()
        )

    def hold(self, data: bytes) -> None:
        """Keep a message for the GET stream not open yet; past BACKLOG_EVENTS or BACKLOG_BYTES, the oldest go."""
        self.backlog.append(data)
        self.backlog_size += len(data)
        while len(self.backlog) > BACKLOG_EVENTS or (self.backlog_size > BACKLOG_BYTES and len(self.backlog) > 1):
            self.backlog_size -= len(self.backlog.popleft())
            self.dropped += 1

    def perform(self, actions: list[Action]) -> None:
        """Carry out what the engine said. A message for another stream than the one before it waits `TURN`
        seconds (and what follows it with it): the host reads each stream on its own, and would otherwise
        see a fast call's answer after the next progress of a slow call that the server sent after it."""
        if self.paced is not None:
            self.paced.extend(actions)  # in order, behind what waits already
            return
        last = None
        for n, action in enumerate(actions):
            if isinstance(action, Send):
                # the stream it goes on: its request's, or the GET stream (a batch's members: one stream)
                on_get = action.request is None or (action.stream == GET_STREAM and self.standalone_open())
                where = None if on_get else action.request
                if last is not None and where != last[0] and not action.batch:
                    self.paced = list(actions[n:])
                    self.endpoint.out.append(Later(TURN, (self, _PACED)))
                    return
                last = (where,)
                self._route(action)
            elif isinstance(action, Wake):
                self.endpoint.out.append(Later(action.after, (self, action.job)))
            elif isinstance(action, Note):
                self.endpoint.out.append(action)
            elif isinstance(action, Exit):
                self.endpoint.end(self, abort=True)
            elif isinstance(action, Cut):
                self._cut(action.request)

    def _cut(self, request: Any) -> None:
        """The request's answer breaks off (`drop: cut`): its stream's connection is cut after what it was sent,
        and only it; the session goes on. A batch's members share one stream: all their answers break off."""
        stream = self.streams.pop(request, None)
        self.aliases.pop(request, None)
        if stream is None:
            return  # the client left it already (a cancel ended it)
        if stream in self.batches:
            self.batches.remove(stream)
            for member in stream.batch:
                self.streams.pop(member, None)
        stream.cut((self.extra, self.endpoint.framing.priming))

    def _route(self, send: Send) -> None:
        if send.stream == GET_STREAM and send.request is not None:
            if self.standalone_open():
                assert self.standalone is not None
                self.standalone.event(send.data)  # a stateless session, whose ids are aliased, has no GET stream
                return
            if self.rerouted != send.request:  # said once for a request's run of them, not for each
                self.rerouted = send.request
                request, what = self.aliases.get(send.request, send.request), send.method or "a raw line"
                self.endpoint.out.append(
                    Note(
                        f"mockmcp: {what} was recorded on the GET stream; the host has no GET stream open, so it "
                        f"went on the stream of its request {request!r} (and so do the request's next ones)"
                    )
                )
        stream = self.streams.get(send.request) if send.request is not None else None
        if stream is None and send.batch and self.batches:
            stream = self._batch_of(send.batch)
            if stream is not None and stream.pending is not None:  # the array alone: one JSON body
                stream.reply_alone(send.data)
                return
            if stream is not None:
                stream.event(send.data)
                stream.finish()
                return
        if stream is None and send.batch:
            return  # the batch's one stream broke off (`drop: cut` of a member): its array goes nowhere
        if stream is None:
            if self.standalone_open():
                assert self.standalone is not None
                self.standalone.event(send.data)
            else:
                self.hold(send.data)
            return
        if send.final:
            self.aliases.pop(send.request, None)
            stream.code = send.code
            if stream.pending is not None:
                del self.streams[send.request]
                stream.reply_alone(send.data, self.endpoint.framing.status_for(send.code))
                return
        stream.event(send.data)
        if send.final:
            del self.streams[send.request]
            stream.finish()

    def _batch_of(self, answered: tuple[Any, ...]) -> _Stream | None:
        """The open batch an array of answers belongs to (by the ids it answers), now ended."""
        for stream in self.batches:
            if not stream.batch.isdisjoint(answered):
                self.batches.remove(stream)
                for request_id in stream.batch:
                    self.streams.pop(request_id, None)
                return stream
        return None

    def standalone_open(self) -> bool:
        """Whether the GET stream is there to take a message (a client that dropped it has not)."""
        stream = self.standalone
        if stream is not None and stream.lost:
            stream.finish()
        return stream is not None and not stream.done

    def resume(self, conn: Any, last: str) -> None:
        """A GET with Last-Event-ID: what its stream sent after that event, then the rest as it comes."""
        assert self.sent is not None
        stream, frames = self.sent.after(self, last)
        endpoint = self.endpoint
        if stream is not None and stream.get and stream.done and not self.standalone_open():
            endpoint.open_get(conn, self, frames)  # the GET stream again: what it missed, then the rest as it comes
            return
        out = endpoint.out
        if stream is not None and stream.get and not stream.done and stream.lost:
            endpoint.make_room()  # it counts among the open GET streams again
        out.append(Open(conn, (*SSE_FIELDS, (protocol.SESSION_HEADER, self.id or ""))))
        if stream is None or stream.done:
            out += [Event(conn, b"".join(frames))] if frames else []
            # A stream that broke off stays broken: the rest of it is the cut (a client that resumed it
            # tries again a few times, then gives up, as it does with a server that died).
            out.append(Drop(conn) if stream is not None and stream.broken else End(conn))
            return
        if self.endpoint.framing.priming:
            frames.append(stream.primed())
        if frames:
            out.append(Event(conn, b"".join(frames)))
        if not stream.lost:
            out.append(Drop(stream.conn))  # the client has left it; one connection carries a stream
            endpoint.lose(stream.conn)
        endpoint.live.setdefault(conn, []).append(stream)
        stream.conn, stream.sse, stream.pending, stream.lost = conn, True, None, False
        if stream.get:
            endpoint.standing[stream] = None
        endpoint.keep_alive(stream)


class Endpoint:
    """A cassette served at one Streamable HTTP endpoint, sans-IO: see the module's docstring.

    `allowed`: the Host and Origin names requests may carry. `new_id` makes session ids and
    `alias_prefix` is the random part of the stateless session's aliases (both fixed in tests).
    `session_idle`, `streams` and `keepalive` are the bounds of the module's docstring (None: none);
    `unread(conn)` says how many bytes written to conn its client has not read yet (the shell's buffer).
    """

    def __init__(
        self,
        cassette: Cassette,
        matcher: Matcher,
        redactor: Redactor | None,
        timing: float,
        allowed: frozenset[str],
        path: str = "/mcp",
        new_id: Callable[[], str] = lambda: secrets.token_hex(16),
        alias_prefix: str | None = None,
        session_idle: float | None = protocol.SESSION_IDLE,
        streams: int | None = None,
        keepalive: float | None = KEEPALIVE,
        unread: Callable[[Any], int] = lambda conn: 0,
    ) -> None:
        self.cassette, self.matcher, self.redactor, self.timing = cassette, matcher, redactor, timing
        self.session_idle = session_idle  # None: sessions live until DELETE or shutdown
        self.streams, self.keepalive, self.unread = streams, keepalive, unread
        # The open GET streams, the one that has said nothing for longest first (`make_room`).
        self.standing: collections.OrderedDict[_Stream, None] = collections.OrderedDict()
        self.sent = _Sent()  # the events kept for resumption, all sessions' together
        self.allowed, self.path, self.new_id = allowed, path, new_id
        self.recordings = Recordings(cassette, matcher)
        self.sessions: dict[str, _LiveSession] = {}
        self.stateless: _LiveSession | None = None
        # The stateless session's aliases: a random part no recorded message holds, then a count.
        self.alias_prefix = alias_prefix or secrets.token_hex(8)
        self.alias_count = itertools.count(1)
        # The reports of the sessions that ended, in the order they ended; past FINISHED of them, folded into one
        # (`Report.combine`, what the shells make of them at the end anyway), so that ended sessions cost nothing.
        self.finished: list[Report] = []
        self.live: dict[Any, list[_Stream]] = {}  # the streams not yet ended, by their connection
        self.out: list[Out] = []  # what the call in progress returns
        # Of `out` so far (`queued`): how many outputs are counted, and the bytes of their events by connection.
        self.counted = 0
        self.queued_bytes: dict[Any, int] = {}
        self.framing = Framing.of(cassette.meta)
        unsolicited = any(
            i.kind == SERVER or (i.kind == NOTIFICATION and i.server) or any(s.stream for s in i.server)
            for i in cassette.interactions
        )
        # A server recorded answering GET is offered as it was; without the fact, when there is something to send.
        self.get_stream = unsolicited if self.framing.get_stream is None else self.framing.get_stream
        # A server of the handshake era alone, recorded turning a request without a session away (an
        # auto host's server/discover probe), turns every such request away here too.
        eras = protocol.session_eras((i.message, i.response) for i in cassette.interactions)
        recorded = self.framing.session_errors or {}
        self.sessions_only = "missing" in recorded and protocol.STATELESS not in eras

    def _done(self) -> list[Out]:
        out, self.out = self.out, []
        self.counted, self.queued_bytes = 0, {}
        return out

    def queued(self, conn: Any) -> int:
        """Bytes of the events the call in progress has for conn: the shell's buffer (`unread`) holds them only once
        the call returns. Counted as `out` grows (it only grows until `_done`), so a burst costs its length once."""
        while self.counted < len(self.out):
            out = self.out[self.counted]
            self.counted += 1
            if isinstance(out, Event):
                self.queued_bytes[out.conn] = self.queued_bytes.get(out.conn, 0) + len(out.data)
        return self.queued_bytes.get(conn, 0)

    # --- what comes in ----------------------------------------------------------------------------

    def request(self, conn: Any, method: bytes, target: str, headers: dict[str, str], body: bytes) -> list[Out]:
        """A whole HTTP request on conn (headers by lowercase name); what to write, in order."""
        admitted = admit(method, target, headers, body, self.allowed, self.path)
        if isinstance(admitted, Answer):
            self.out.append(Respond(conn, admitted))
        elif method == b"GET":
            self._get(conn, headers)
        elif method == b"DELETE":
            self._delete(conn, headers)
        else:
            session = self._session(conn, headers, admitted)
            if session is not None:
                self.touch(session)
            if session is not None and isinstance(admitted, list):
                self._deliver_batch(conn, session, admitted, body, headers)
            elif session is not None:
                self._deliver(conn, session, admitted, body)
        return self._done()

    def wake(self, token: Any) -> list[Out]:
        """A `Later` timer fired."""
        session, job = token
        if session.ended:
            return self._done()
        if isinstance(job, tuple) and job[0] == _IDLE:
            self._idle_check(session, job[1])
        elif isinstance(job, tuple) and job[0] == _BEAT:
            self._beat(*job[1:])
        elif job is _PACED:
            paced, session.paced = session.paced or [], None
            session.perform(paced)
        else:
            session.perform(session.engine.wake(job))
        return self._done()

    def closed(self, conn: Any) -> list[Out]:
        """conn has closed, either side having ended it: its streams go nowhere now. A 2026-07-28
        client cancels a request by closing its stream (that revision has no client notifications
        over HTTP); in the handshake era a disconnect is not a cancellation."""
        session = self.stateless
        streams = self.lose(conn)
        if streams and session is not None and not session.ended:  # most connections close with no stream live
            for key, stream in list(session.streams.items()):
                if stream in streams:
                    params = {"requestId": session.aliases.get(key, key)}  # as the client would name it
                    cancel = {"jsonrpc": "2.0", "method": protocol.CANCELLED, "params": params}
                    session.perform(session.engine.receive(jsonrpc.encode(cancel), cancel, key))
                    self._cancelled(session, key)
                    session.aliases.pop(key, None)
        return self._done()

    def shutdown(self) -> list[Out]:
        """End every live session (their reports go to `finished`, in the order they ended)."""
        for session in [*self.sessions.values(), *([self.stateless] if self.stateless else [])]:
            self.end(session)
        return self._done()

    # --- the rules ----------------------------------------------------------------------------------

    def touch(self, session: _LiveSession) -> None:
        """The session was named by a request: not idle."""
        session.steps += 1
        self._watch(session)

    def _watch(self, session: _LiveSession) -> None:
        """One timer at a time watches whether a session with an id stays idle (see `_idle_check`)."""
        if self.session_idle is not None and session.id is not None and not session.watched:
            session.watched = True
            self.out.append(Later(self.session_idle, (session, (_IDLE, session.steps))))

    def _idle_check(self, session: _LiveSession, steps: int) -> None:
        """The watch timer fired: a session that did nothing since, and has nothing under way, ends (as a DELETE
        ends it, its report kept); else the watch begins again (so it ends within twice the limit of its last step)."""
        session.watched = False
        if session.steps == steps and session.idle():
            self.out.append(Note(f"mockmcp: session {session.id} was idle for {self.session_idle:g} s: ended"))
            self.end(session)
            return
        self._watch(session)

    def lose(self, conn: Any) -> list[_Stream]:
        """The streams on conn, from now on going nowhere."""
        streams = self.live.pop(conn, [])
        for stream in streams:
            stream.lost = True
            self.standing.pop(stream, None)
        return streams

    def keep_alive(self, stream: _Stream) -> None:
        """Watch an open SSE stream: each `keepalive` seconds in which it said nothing, a comment (`_beat`)."""
        if self.keepalive is not None:
            stream.beat += 1
            self.out.append(Later(self.keepalive, (stream.session, (_BEAT, stream, stream.beat, stream.said))))

    def _beat(self, stream: _Stream, beat: int, said: int) -> None:
        """A stream's keep-alive timer fired: a comment if it said nothing since the last, and the next timer;
        nothing more once it has ended, lost its connection, or has a newer timer (it was resumed)."""
        if stream.done or stream.lost or stream.beat != beat:
            return
        if stream.said == said:  # a comment does not count as saying something: a GET stream stays as quiet
            self.out.append(Event(stream.conn, KEEPALIVE_COMMENT))
        self.keep_alive(stream)

    def make_room(self) -> None:
        """Before a GET stream opens: at the cap, the one that has said nothing for longest ends, cleanly (an SDK
        client opens it again a second later, and its session is then as any other: it expires when idle)."""
        while self.streams is not None and len(self.standing) >= self.streams and self.standing:
            quiet = next(iter(self.standing))
            self.out.append(
                Note(
                    f"mockmcp: {len(self.standing)} GET streams are open, the most this server keeps open at once: "
                    f"the one of session {quiet.session.id}, quiet for longest, was ended (the most follows the "
                    "limit of open files: raise it with `ulimit -n` before starting the replay)"
                )
            )
            quiet.finish()

    def cut_unread(self, stream: _Stream) -> None:
        """A GET stream's client has left more than UNREAD_BYTES unread: its connection is cut (what waits in its
        buffer is let go), instead of the buffer growing by every event."""
        kept = "resumable with Last-Event-ID" if stream.ids is not None else "held for its next GET stream"
        self.out.append(
            Note(
                f"mockmcp: session {stream.session.id}: the client of its GET stream left more than {UNREAD_BYTES} "
                f"bytes unread, so the stream was cut; what it is sent now is {kept}"
            )
        )
        self.out.append(Drop(stream.conn))
        self.lose(stream.conn)
        stream.finish()

    def end(self, session: _LiveSession, abort: bool = False) -> None:
        """End a live session (DELETE, the `exit` knob, or shutdown): close its streams, keep its report."""
        if session.ended:
            return
        session.ended = True
        session.perform(session.engine.close())
        for stream in [*session.streams.values(), *([session.standalone] if session.standalone else [])]:
            if abort and not stream.done:  # what the server said before it died goes out first, then the cut
                stream.cut((session.extra, self.framing.priming))
            else:
                stream.finish()
        self.sent.forget(session)
        if session.id is not None:
            self.sessions.pop(session.id, None)
        elif self.stateless is session:
            self.stateless = None
        self.finished.append(session.engine.report)
        if len(self.finished) > FINISHED:
            self.finished = [Report.combine(self.cassette, self.finished)]

    def _session(self, conn: Any, headers: dict[str, str], message: Any) -> _LiveSession | None:
        """The live session a message belongs to; answers the HTTP error itself when there is none."""
        session_id = headers.get(protocol.SESSION_HEADER)
        if isinstance(message, dict) and message.get("method") == protocol.INITIALIZE and "id" in message:
            session = _LiveSession(self, self.new_id())
            assert session.id is not None
            params = message.get("params")
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            session.version = version if isinstance(version, str) else None
            self.sessions[session.id] = session
            return session
        if session_id is not None:
            found = self.sessions.get(session_id)
            if found is None:
                self.out.append(Respond(conn, session_error(self.framing, "unknown")))
            return found
        if modern(headers, message) and not self.sessions_only:
            if self.stateless is None:
                self.stateless = _LiveSession(self, None)
            return self.stateless
        self.out.append(Respond(conn, session_error(self.framing, "missing")))
        return None

    def _deliver(self, conn: Any, session: _LiveSession, message: Any, body: bytes) -> None:
        is_request = isinstance(message, dict) and "method" in message and jsonrpc.is_valid_id(message.get("id"))
        if session.ended:
            self.out.append(Respond(conn, session_error(self.framing, "unknown")))
            return
        if not is_request:
            session.perform(session.engine.receive(body, message))
            self._after_notification(session, message)
            self.out.append(Respond(conn, Answer(202, headers=session.extra)))
            return
        stream = _Stream(self, conn, session)
        key = None
        if session.id is None:
            # Clients of the shared stateless session choose ids on their own, and two may both use 1
            # at once: the engine knows each request by a unique key, and answers with the client's id.
            key = f"mockmcp-{self.alias_prefix}-{next(self.alias_count)}"
            session.aliases[key] = message["id"]
        session.streams[message["id"] if key is None else key] = stream
        session.perform(session.engine.receive(body, message, key))
        if stream.lost:
            return  # the session died answering it (the exit knob): its connection is cut
        if stream.done and len(stream.gathered) == 1 and not self.framing.sse:
            data = stream.gathered.pop()
            self.out.append(Respond(conn, Answer(self.framing.status_for(stream.code), data, headers=session.extra)))
            return
        # the rest comes as the engine sends it (its timers are the shell's)
        if not self.framing.sse and not stream.gathered and not stream.done:
            # Nothing for this request's own stream yet (a delay; or what it sent went on the GET stream): a
            # server that answers a lone reply with JSON begins its answer only when it knows which it is.
            stream.pending = (session.extra, self.framing.priming)
            return
        stream.open_sse(session.extra, self.framing.priming)

    def _deliver_batch(
        self, conn: Any, session: _LiveSession, batch: list[Any], body: bytes, headers: dict[str, str]
    ) -> None:
        """A 2025-03-26 batch: 202 when it holds no request, else its answers as one array (JSON, or
        the last event of an SSE stream that carries the server's messages for its requests first)."""
        refused = batch_refusal(headers, session.version)
        if refused is not None:
            self.out.append(Respond(conn, refused))
            return
        if session.ended:
            self.out.append(Respond(conn, session_error(self.framing, "unknown")))
            return
        ids = {m["id"] for m in batch if jsonrpc.classify(m).kind == jsonrpc.REQUEST}
        stream = _Stream(self, conn, session)
        stream.batch = ids | {None}  # None: what answers an invalid member (its id unreadable)
        session.batches.append(stream)
        for request_id in ids:
            session.streams[request_id] = stream
        session.perform(session.engine.receive(body, batch))
        if stream.lost:
            return  # the session died answering it (the exit knob): its connection is cut
        for message in batch:
            self._after_notification(session, message)
        if stream.done and len(stream.gathered) == 1 and not (self.framing.sse and ids):
            self.out.append(Respond(conn, Answer(200, stream.gathered.pop(), headers=session.extra)))
            stream._ended()
        elif not ids:  # notifications and responses only (none of them invalid)
            session.batches.remove(stream)
            self.out.append(Respond(conn, Answer(202, headers=session.extra)))
            stream._ended()
        elif not self.framing.sse and not stream.gathered and not stream.done:
            # as for one request: JSON unless a message comes first
            stream.pending = (session.extra, self.framing.priming)
        else:
            stream.open_sse(session.extra, self.framing.priming)

    def _after_notification(self, session: _LiveSession, message: Any) -> None:
        """A cancelled request's stream ends without a reply (the engine will never send one); a
        batch's stream waits on for its other requests' answers, and ends when none is left."""
        if isinstance(message, dict) and message.get("method") == protocol.CANCELLED:
            params = message.get("params") or {}
            self._cancelled(session, params.get("requestId") if isinstance(params, dict) else None)

    def _cancelled(self, session: _LiveSession, request: Any) -> None:
        """The request (by its key, else its id) was cancelled: its stream ends, or its batch's when none is left."""
        stream = session.streams.pop(request, None)
        if stream is None:
            return
        if stream.batch:
            stream.batch.discard(request)
            if stream.batch - {None}:
                return
            session.batches.remove(stream)
        stream.finish()

    def _get(self, conn: Any, headers: dict[str, str]) -> None:
        out = self.out
        if "text/event-stream" not in headers.get("accept", ""):
            out.append(Respond(conn, Answer(406, b"Not Acceptable: accept text/event-stream", "text/plain")))
            return
        session = self.sessions.get(headers.get(protocol.SESSION_HEADER, ""))
        # A server whose events had ids kept them to resume from, unless it was seen refusing GET.
        resuming = "last-event-id" in headers and self.framing.event_ids and self.framing.get_stream is not False
        if not self.get_stream and not resuming:
            text = "Method Not Allowed: the recorded server offered no GET stream"
            if self.framing.get_stream is None:
                text = "Method Not Allowed: this cassette has no unsolicited server messages"
            body = error_body(None, jsonrpc.INVALID_REQUEST, text)
            out.append(Respond(conn, Answer(405, body, headers=(("allow", "POST, DELETE"),))))
            return
        if session is None:
            self._no_session(conn, headers)
            return
        self.touch(session)
        if resuming and session.ids is not None:
            session.resume(conn, headers["last-event-id"])
            return
        if session.standalone_open():
            out.append(Respond(conn, Answer(409, b"Conflict: this session's GET stream is already open", "text/plain")))
            return
        self.open_get(conn, session)

    def open_get(self, conn: Any, session: _LiveSession, frames: list[bytes] | None = None) -> None:
        """Open the session's GET stream on conn: the frames given (resumed ones), then what waited for it."""
        self.make_room()
        stream = session.standalone = _Stream(self, conn, session)
        stream.get = True
        self.standing[stream] = None
        stream.open_sse(((protocol.SESSION_HEADER, session.id or ""),))
        if frames:
            stream._emit(Event(conn, b"".join(frames)))
        if session.dropped:
            self.out.append(
                Note(
                    f"mockmcp: session {session.id}: {session.dropped} message(s) for its GET stream were dropped, "
                    f"the oldest first, while none was open (at most {BACKLOG_EVENTS} messages and {BACKLOG_BYTES} "
                    "bytes wait for it)"
                )
            )
            session.dropped = 0
        waiting, session.backlog, session.backlog_size = session.backlog, collections.deque(), 0
        for data in waiting:
            stream.event(data)

    def _no_session(self, conn: Any, headers: dict[str, str]) -> None:
        """The session error for a GET or DELETE naming no live session: a missing id, or an unknown one."""
        missing = "missing" if protocol.SESSION_HEADER not in headers else "unknown"
        self.out.append(Respond(conn, session_error(self.framing, missing)))

    def _delete(self, conn: Any, headers: dict[str, str]) -> None:
        session = self.sessions.get(headers.get(protocol.SESSION_HEADER, ""))
        if session is None:
            self._no_session(conn, headers)
            return
        self.end(session)
        self.out.append(Respond(conn, Answer(200)))
