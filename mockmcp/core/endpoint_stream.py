"""The streams of replay's HTTP endpoint, and the few things they share: what one call writes (`Outbox`),
which streams ride which connection (`Connections`), and the events kept to resume from (`Resumable`).

A `Stream` keeps its state as `stream_state` says and carries out the effects the table names; who sends it
what (the sessions) and when it is resumed is `endpoint_session`'s.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from mockmcp.core import stream_state as ss
from mockmcp.core.actions import Note
from mockmcp.core.streamable import KEEPALIVE_COMMENT, Answer, Framing, priming_event, sse_event
from mockmcp.options import Bounds

__all__ = ["Connections", "Drop", "End", "Event", "Later", "Open", "Out", "Outbox", "Respond", "Resumable", "Stream"]

SSE_FIELDS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
Head = tuple[tuple[tuple[str, str], ...], bool]  # a stream's extra headers, and whether it begins with a priming event


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


class Later(NamedTuple):
    """Call `Endpoint.wake(token)` after `after` seconds."""

    after: float
    token: Any


Out = Respond | Open | Event | End | Drop | Later | Note


class Outbox:
    """What the call in progress returns, and the bytes of its events by connection: the shell writes them only
    once the call returns, so a connection's unread bytes are the shell's buffer and these (`queued`)."""

    def __init__(self) -> None:
        self.out: list[Out] = []
        self.queued_bytes: dict[Any, int] = {}

    def add(self, out: Out) -> None:
        self.out.append(out)
        if isinstance(out, Event):
            self.queued_bytes[out.conn] = self.queued_bytes.get(out.conn, 0) + len(out.data)

    def take(self) -> list[Out]:
        out, self.out, self.queued_bytes = self.out, [], {}
        return out


class Connections:
    """The streams that hold each connection, and the open GET streams, the one quiet for longest first."""

    def __init__(self) -> None:
        self.live: dict[Any, list[Stream]] = {}
        self.standing: collections.OrderedDict[Stream, None] = collections.OrderedDict()

    def place(self, stream: Stream) -> None:
        """Hold its connection while it rides it, and count it among the GET streams while it is open."""
        streams = self.live.setdefault(stream.conn, [])
        if stream.state in ss.RIDING and stream not in streams:
            streams.append(stream)
        elif stream.state not in ss.RIDING and stream in streams:
            streams.remove(stream)
        if not streams:
            del self.live[stream.conn]
        if stream.get and stream.state in (ss.OPEN, ss.QUIET):
            self.standing.setdefault(stream, None)
        else:
            self.standing.pop(stream, None)

    def said(self, stream: Stream) -> None:
        if stream in self.standing:
            self.standing.move_to_end(stream)

    def lose(self, conn: Any, but: Stream | None = None) -> None:
        """conn closed: its streams (but the one cutting it) go nowhere now."""
        for stream in self.live.pop(conn, []):
            if stream is not but:
                stream.step(ss.CLOSE)


class Resumable:
    """The latest SSE events of every session, each with its id and stream, for Last-Event-ID: one budget for the
    server (not one per session), the oldest forgotten first, and a session's forgotten when it ends."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.events: collections.deque[tuple[Any, str, Stream, bytes]] = collections.deque()
        self.size = 0
        self.kept: collections.Counter[Any] = collections.Counter()  # by session

    def add(self, session: Any, event_id: str, stream: Stream, frame: bytes) -> None:
        self.events.append((session, event_id, stream, frame))
        self.size += len(frame)
        self.kept[session] += 1
        while len(self.events) > self.bounds.resumable_events or self.size > self.bounds.resumable_bytes:
            gone, _id, _stream, frame = self.events.popleft()
            self.size -= len(frame)
            self.kept[gone] -= 1

    def after(self, session: Any, event_id: str) -> tuple[Stream | None, list[bytes]]:
        """The stream the session's event was sent on (None: not kept), and its events sent after it."""
        stream: Stream | None = None
        frames: list[bytes] = []
        for sent_by, sent_id, sent_on, frame in self.events:
            if sent_by is not session:
                continue
            if stream is None:
                stream = sent_on if sent_id == event_id else None
            elif sent_on is stream:
                frames.append(frame)
        return stream, frames

    def forget(self, session: Any) -> None:
        """The session ended: nothing can resume its streams now, so its events go."""
        if self.kept.pop(session, 0):
            self.events = collections.deque(event for event in self.events if event[0] is not session)
            self.size = sum(len(event[3]) for event in self.events)


class Shared(NamedTuple):
    """What every stream and session of one endpoint writes to and reads."""

    framing: Framing
    bounds: Bounds
    outbox: Outbox
    conns: Connections
    resumable: Resumable
    unread: Callable[[Any], int]  # bytes written to a connection that its client has not read (the shell's buffer)


class Stream:
    """What one request (or a session's GET stream) is sent: gathered first, then a JSON body or an SSE stream."""

    def __init__(self, shared: Shared, conn: Any, session: Any, head: Head, get: bool = False) -> None:
        self.shared, self.conn, self.session, self.head, self.get = shared, conn, session, head, get
        self.state = ss.GATHERING
        self.gathered: list[bytes] = []
        self.status = 200  # of its reply, if that comes alone as JSON
        self.batch: set[Any] = set()  # the request ids of the batch it answers, if it answers one
        self.beats = 0  # which keep-alive timer is its own (one at a time; an older one is let go)
        shared.conns.place(self)

    @property
    def left(self) -> bool:
        """Its client has left it: it holds up nothing."""
        return self.state in ss.SILENT

    def step(self, event: str, data: bytes = b"") -> None:
        self.state, effects = ss.step(self.state, event)
        for effect in effects:
            getattr(self, "_" + effect)(data)
        self.shared.conns.place(self)

    def send(self, data: bytes, reply: bool = False) -> None:
        """A message for it (`reply`: the last it carries); a GET stream whose client reads nothing is cut."""
        unread = self.shared.unread(self.conn) + self.shared.outbox.queued_bytes.get(self.conn, 0)
        over = self.get and self.state in (ss.OPEN, ss.QUIET) and unread > self.shared.bounds.unread_bytes
        self.step(ss.OVERFLOW if over else ss.REPLY if reply else ss.MESSAGE, data)

    def settle(self, alone: bool) -> None:
        """The call that began it returned: `alone`, a JSON body if what it carries allows."""
        lone = len(self.gathered) == (self.state == ss.WHOLE)
        self.step(ss.SETTLE_ALONE if alone and lone else ss.SETTLE)

    def finish(self) -> None:
        self.step(ss.FINISH)

    def beat(self, beat: int) -> None:
        """Its keep-alive timer `beat` fired (an older one, let go after it was resumed, does nothing)."""
        if beat == self.beats:
            self.step(ss.BEAT)

    def cut(self) -> None:
        self.step(ss.CUT)

    def resume(self, conn: Any) -> None:
        """Carry on on conn, which a client resuming it opened."""
        self.step(ss.RESUME, conn)

    def primed(self) -> bytes:
        """A priming event (the next id, no data), kept like any other event."""
        return self._numbered(None)

    def resend(self, frames: list[bytes]) -> None:
        """Events encoded before (resumed ones), written as they are."""
        if frames:
            self.step(ss.RESENT, b"".join(frames))

    def _said(self, frames: bytes) -> None:
        if frames:
            self.shared.conns.said(self)
            self.shared.outbox.add(Event(self.conn, frames))

    def _numbered(self, data: bytes | None) -> bytes:
        """data as an SSE event, with the session's next id kept to resume from when its events have ids."""
        ids = self.session.ids
        if ids is None:
            assert data is not None
            return sse_event(data)
        event_id = next(ids)
        frame = priming_event(event_id) if data is None else sse_event(data, event_id)
        if self.session.id is not None:  # only a session with an id has a GET stream to resume with
            self.shared.resumable.add(self.session, event_id, self, frame)
        return frame

    # --- the effects (stream_state) ---

    def _gather(self, data: bytes) -> None:
        self.gathered.append(data)

    def _json(self, data: bytes) -> None:
        body = data or self.gathered.pop()
        self.shared.outbox.add(Respond(self.conn, Answer(self.status, body, headers=self.head[0])))

    def _head(self, _data: bytes) -> None:
        headers, priming = self.head
        self.shared.outbox.add(Open(self.conn, (*SSE_FIELDS, *headers)))
        frames = [self.primed()] if priming and self.session.ids is not None else []
        self._said(b"".join(frames + [self._numbered(data) for data in self.gathered]))
        self.gathered.clear()

    def _shown(self, data: bytes) -> None:
        if self.gathered or self.shared.framing.sse:
            self._head(data)

    def _event(self, data: bytes) -> None:
        self._said(self._numbered(data))

    def _frames(self, data: bytes) -> None:
        self._said(data)

    def _end(self, _data: bytes) -> None:
        self.shared.outbox.add(End(self.conn))

    def _drop(self, _data: bytes) -> None:
        self.shared.outbox.add(Drop(self.conn))
        self.shared.conns.lose(self.conn, but=self)

    def _keep(self, data: bytes) -> None:
        self._numbered(data)

    def _spill(self, data: bytes) -> None:
        kept = "resumable with Last-Event-ID" if self.session.ids is not None else "held for its next GET stream"
        self.shared.outbox.add(
            Note(
                f"mockmcp: session {self.session.id}: the client of its GET stream left more than "
                f"{self.shared.bounds.unread_bytes} bytes unread, so the stream was cut; what it is sent now is {kept}"
            )
        )
        self._drop(data)
        if self.session.ids is None:
            self.session.backlog.hold(data)  # for the GET stream the client opens next
        else:
            self._numbered(data)  # the client resuming from its last event gets it

    def _attach(self, conn: Any) -> None:
        self.conn = conn

    def _watch(self, _data: bytes) -> None:
        keepalive = self.shared.bounds.keepalive
        if keepalive is not None:
            self.beats += 1
            self.shared.outbox.add(Later(keepalive, (self.session, ("beat", self, self.beats))))

    def _comment(self, _data: bytes) -> None:
        self.shared.outbox.add(Event(self.conn, KEEPALIVE_COMMENT))


def counted_ids() -> Iterator[str]:
    """Event ids as a resumable server's event store numbers them: through the session, from 1."""
    n = 0
    while True:
        n += 1
        yield str(n)
