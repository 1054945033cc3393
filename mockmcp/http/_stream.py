"""The streams of replay's HTTP endpoint (each in the state `_stream_state` gives it, carrying out its effects) and
what they share: what one call writes (`Wire`), and the events kept to resume from (`Resumable`)."""

from __future__ import annotations

import collections
from collections import namedtuple
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from mockmcp.engine.actions import Note
from mockmcp.http._stream_state import RIDING, SILENT, step
from mockmcp.http._streamable import KEEPALIVE_COMMENT, Answer, Framing, priming_event, sse_event
from mockmcp.options import Bounds

if TYPE_CHECKING:
    from mockmcp.http._session import LiveSession

__all__ = ["Drop", "End", "Event", "Later", "Open", "Out", "Respond", "Resumable", "Shared", "Stream", "Wire"]

SSE_FIELDS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
Head = tuple[tuple[tuple[str, str], ...], bool]  # a stream's headers beside SSE_FIELDS; whether it is primed


# What the endpoint asks its shell to do: answer on conn whole; open an SSE stream (200, these headers); write whole
# SSE events on it; end it (`close`: and close conn, a GET's, once the end is out); cut conn mid-message, as a
# server that dies does; call `Endpoint.wake(token)` later.
Respond = namedtuple("Respond", "conn answer")
Open = namedtuple("Open", "conn headers")
Event = namedtuple("Event", "conn data")
End = namedtuple("End", "conn close", defaults=(False,))
Drop = namedtuple("Drop", "conn")
Later = namedtuple("Later", "after token")
Out = Respond | Open | Event | End | Drop | Later | Note


class Wire:
    """What the call in progress writes (`out`; `queued`: its events' bytes by connection), which streams hold each
    connection, and the open GET streams (`standing`), the one quiet for longest first."""

    def __init__(self) -> None:
        self.out: list[Out] = []
        self.queued: dict[Any, int] = {}
        self.live: dict[Any, list[Stream]] = {}
        self.standing: collections.OrderedDict[Stream, None] = collections.OrderedDict()

    def add(self, out: Out) -> None:
        self.out.append(out)
        if isinstance(out, Event):
            self.queued[out.conn] = self.queued.get(out.conn, 0) + len(out.data)

    def take(self) -> list[Out]:
        out, self.out, self.queued = self.out, [], {}
        return out

    def place(self, stream: Stream) -> None:
        """It holds its connection while it rides it, and counts among the GET streams while one is open."""
        streams = self.live.setdefault(stream.conn, [])
        if stream.state in RIDING and stream not in streams:
            streams.append(stream)
        elif stream.state not in RIDING and stream in streams:
            streams.remove(stream)
        if not streams:
            del self.live[stream.conn]
        if stream.get and stream.state in ("open", "quiet"):
            self.standing.setdefault(stream, None)
        else:
            self.standing.pop(stream, None)

    def lose(self, conn: Any, but: Stream | None = None) -> None:
        """conn closed: its streams (but the one cutting it) go nowhere now."""
        for stream in self.live.pop(conn, []):
            if stream is not but:
                stream.step("close")


class Resumable:
    """The latest SSE events of every session, with id and stream, for Last-Event-ID: one budget for the server, the
    oldest forgotten first, a session's when it ends."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.events: collections.deque[tuple[LiveSession, str, Stream, bytes]] = collections.deque()
        self.size = 0
        self.kept: collections.Counter[LiveSession] = collections.Counter()  # by session

    def add(self, session: LiveSession, event_id: str, stream: Stream, frame: bytes) -> None:
        self.events.append((session, event_id, stream, frame))
        self.size += len(frame)
        self.kept[session] += 1
        while len(self.events) > self.bounds.resumable_events or self.size > self.bounds.resumable_bytes:
            gone, _id, _stream, frame = self.events.popleft()
            self.size -= len(frame)
            self.kept[gone] -= 1

    def after(self, session: LiveSession, event_id: str) -> tuple[Stream | None, list[bytes]]:
        """The stream the session's event was sent on (None: not kept), and its events sent after it."""
        stream: Stream | None = None
        frames: list[bytes] = []
        for sent_by, sent_id, sent_on, frame in self.events:
            if sent_by is session and stream is None:
                stream = sent_on if sent_id == event_id else None
            elif sent_by is session and sent_on is stream:
                frames.append(frame)
        return stream, frames

    def forget(self, session: LiveSession) -> None:
        """The session ended: nothing can resume its streams now, so its events go."""
        if self.kept.pop(session, 0):
            self.events = collections.deque(event for event in self.events if event[0] is not session)
            self.size = sum(len(event[3]) for event in self.events)


class Shared(NamedTuple):
    """What every stream and session of one endpoint writes to and reads."""

    framing: Framing
    bounds: Bounds
    wire: Wire
    resumable: Resumable
    unread: Callable[[Any], int]  # bytes written to a connection that its client has not read (the shell's buffer)


class Stream:
    """What one request (or a session's GET stream) is sent: gathered first, then a JSON body or an SSE stream."""

    def __init__(self, shared: Shared, conn: Any, session: LiveSession, head: Head, get: bool = False) -> None:
        self.shared, self.conn, self.session, self.head, self.get = shared, conn, session, head, get
        self.state = "gathering"
        self.gathered: list[bytes] = []
        self.status = 200  # of its reply, if that comes alone as JSON
        self.batch: set[Any] = set()  # the request ids of the batch it answers, if it answers one
        self.beats = 0  # which keep-alive timer is its own (one at a time; an older one is let go)
        self.on_get = get  # it rides a GET's connection (its own, or the one it was resumed on): closed at its end
        shared.wire.place(self)

    @property
    def left(self) -> bool:
        """Its client has left it: it holds nothing up."""
        return self.state in SILENT

    def step(self, event: str, data: Any = b"") -> None:
        """Take the event (`data`: the message, or the connection it is resumed on) as `_stream_state` says."""
        self.state, effects = step(self.state, event)
        for effect in effects:
            self._do(effect, data)
        self.shared.wire.place(self)

    def send(self, data: bytes, reply: bool = False) -> None:
        """A message for it (`reply`: the last it carries); a GET stream whose client reads nothing is cut."""
        unread = self.shared.unread(self.conn) + self.shared.wire.queued.get(self.conn, 0)
        over = self.get and self.state in ("open", "quiet") and unread > self.shared.bounds.unread_bytes
        self.step("overflow" if over else "reply" if reply else "message", data)

    def settle(self, alone: bool) -> None:
        """The call that began it returned: `alone`, a JSON body if what it carries allows."""
        lone = len(self.gathered) == (self.state == "whole")
        self.step("settle-alone" if alone and lone else "settle")

    def beat(self, beat: int) -> None:
        """Its keep-alive timer `beat` fired (an older one, let go when it was resumed, does nothing)."""
        if beat == self.beats:
            self.step("beat")

    def numbered(self, data: bytes | None) -> bytes:
        """data as an SSE event (None: a priming event), with the session's next id kept to resume from."""
        ids = self.session.ids
        if ids is None:
            assert data is not None
            return sse_event(data)
        event_id = next(ids)
        frame = priming_event(event_id) if data is None else sse_event(data, event_id)
        if self.session.id is not None:  # only a session with an id has a GET stream to resume with
            self.shared.resumable.add(self.session, event_id, self, frame)
        return frame

    def _do(self, effect: str, data: Any) -> None:
        add, bounds = self.shared.wire.add, self.shared.bounds
        if effect == "gather":
            self.gathered.append(data)
        elif effect == "json":
            add(Respond(self.conn, Answer(self.status, data or self.gathered.pop(), headers=self.head[0])))
        elif effect == "head" or (effect == "shown" and (self.gathered or self.shared.framing.sse)):
            add(Open(self.conn, (*SSE_FIELDS, *self.head[0])))
            frames = [self.numbered(None)] if self.head[1] and self.session.ids is not None else []
            self._said(b"".join(frames + [self.numbered(message) for message in self.gathered]))
            self.gathered.clear()
        elif effect in ("event", "frames"):
            self._said(self.numbered(data) if effect == "event" else data)
        elif effect == "end":
            add(End(self.conn, self.on_get))
        elif effect in ("drop", "spill"):
            if effect == "spill":
                kept = "resumable with Last-Event-ID" if self.session.ids else "held for its next GET stream"
                text = f"the client of its GET stream left more than {bounds.unread_bytes} bytes unread, so the stream"
                add(Note(f"mockmcp: session {self.session.id}: {text} was cut; what it is sent now is {kept}"))
            add(Drop(self.conn))
            self.shared.wire.lose(self.conn, but=self)
            if effect == "spill" and self.session.ids is None:
                self.session.backlog.hold(data)  # for the GET stream the client opens next
            elif effect == "spill":
                self.numbered(data)  # the client resuming from its last event gets it
        elif effect == "keep":
            self.numbered(data)
        elif effect == "attach":
            self.conn, self.on_get = data, True
        elif effect == "watch" and bounds.keepalive is not None:
            self.beats += 1
            add(Later(bounds.keepalive, (self.session, ("beat", self, self.beats))))
        elif effect == "comment":
            add(Event(self.conn, KEEPALIVE_COMMENT))

    def _said(self, frames: bytes) -> None:
        if frames:
            if self in self.shared.wire.standing:  # the GET streams in the order they last said something
                self.shared.wire.standing.move_to_end(self)
            self.shared.wire.add(Event(self.conn, frames))
