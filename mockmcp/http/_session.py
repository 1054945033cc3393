"""One live session at replay's HTTP endpoint: its engine, its requests' streams, its GET stream (what belongs to
no request, held back while none is open), and resumption with Last-Event-ID."""

from __future__ import annotations

import collections
import itertools
from typing import Any

from mockmcp._wire import jsonrpc, protocol
from mockmcp.cassette.model import GET_STREAM
from mockmcp.engine.actions import Action, Cut, Exit, Note, Send, Wake
from mockmcp.engine.replay import Replay
from mockmcp.http._stream import SSE_FIELDS, Drop, End, Event, Later, Open, Respond, Shared, Stream
from mockmcp.http._stream_state import ENDED
from mockmcp.http._streamable import Answer

__all__ = ["Backlog", "LiveSession", "TURN", "make_room"]

TURN = 0.005  # seconds between two messages for different streams of a session, so the host takes them in order
PACED = "paced"  # the `Later` token's job when it is the host's turn, not an engine's wake
AT_THE_CAP = (
    "mockmcp: {} GET streams are open, the most this server keeps open at once: the one of session {}, quiet for "
    "longest, was ended (the most follows the limit of open files: raise it with `ulimit -n` before starting the "
    "replay)"
)
REROUTED = (
    "mockmcp: {} was recorded on the GET stream; the host has no GET stream open, so it went on the stream of its "
    "request {!r} (and so do the request's next ones)"
)
DROPPED = (
    "mockmcp: session {}: {} message(s) for its GET stream were dropped, the oldest first, while none was open "
    "(at most {} messages and {} bytes wait for it)"
)


class Backlog:
    """What waits for a GET stream while none is open: past the bounds, the oldest go (and are counted)."""

    def __init__(self, events: int, size: int) -> None:
        self.events, self.size = events, size
        self.waiting: collections.deque[bytes] = collections.deque()
        self.bytes = 0
        self.dropped = 0

    def hold(self, data: bytes) -> None:
        self.waiting.append(data)
        self.bytes += len(data)
        while len(self.waiting) > self.events or (self.bytes > self.size and len(self.waiting) > 1):
            self.bytes -= len(self.waiting.popleft())
            self.dropped += 1

    def take(self) -> tuple[list[bytes], int]:
        taken = (list(self.waiting), self.dropped)
        self.waiting, self.bytes, self.dropped = collections.deque(), 0, 0
        return taken


def make_room(shared: Shared) -> None:
    """Before a GET stream opens: at the cap, the one quiet for longest ends cleanly (an SDK client opens it again)."""
    standing, cap = shared.wire.standing, shared.bounds.streams
    while cap is not None and standing and len(standing) >= cap:
        quiet = next(iter(standing))
        shared.wire.add(Note(AT_THE_CAP.format(len(standing), quiet.session.id)))
        quiet.step("finish")


class LiveSession:
    """One client's session: its engine, its requests' streams, its GET stream and what waits for it."""

    def __init__(self, shared: Shared, session_id: str | None, engine: Replay) -> None:
        self.shared, self.id, self.engine = shared, session_id, engine
        self.streams: dict[Any, Stream] = {}  # by request (its key, else its id); a batch's under each member's id
        self.standalone: Stream | None = None  # its GET stream
        self.backlog = Backlog(shared.bounds.backlog_events, shared.bounds.backlog_bytes)
        self.aliases: dict[str, Any] = {}  # stateless session: our key for a request -> the client's id
        self.batches: list[Stream] = []  # streams of batches still awaiting their array of answers
        self.version: str | None = None  # the revision its initialize asked for
        # Event ids run through the session, as a resumable server's event store numbers them.
        self.ids = (str(n) for n in itertools.count(1)) if shared.framing.event_ids else None
        self.paced: list[Action] | None = None  # what the engine said that waits for the host's turn
        self.steps = 0  # requests, GETs and DELETEs that named it: what makes it not idle
        self.rerouted: Any = None  # the request whose GET-stream messages were last said to go on its own stream
        self.ended = False
        self.perform(engine.start())

    @property
    def extra(self) -> tuple[tuple[str, str], ...]:
        """The headers of every answer in it."""
        return ((protocol.SESSION_HEADER, self.id),) if self.id else ()

    def idle(self) -> bool:
        """Whether nothing of the session is under way: no request being answered, no GET stream open."""
        silent = all(stream.left for stream in [*self.streams.values(), *self.batches])
        return silent and not self.standalone_open()

    def standalone_open(self) -> bool:
        """Whether the GET stream is there to take a message (a client that dropped it has not)."""
        stream = self.standalone
        if stream is not None and stream.left:
            stream.step("finish")
        return stream is not None and stream.state in ("open", "quiet")

    def request(self, conn: Any, message: Any, body: bytes, key: Any) -> None:
        """A request (`key`: the engine's name for it, else its id): its answer, or the stream it goes on."""
        stream = Stream(self.shared, conn, self, (self.extra, self.shared.framing.priming))
        self.streams[message["id"] if key is None else key] = stream
        self.perform(self.engine.receive(body, message, key))
        stream.settle(alone=not self.shared.framing.sse)

    def batch(self, conn: Any, batch: list[Any], body: bytes) -> None:
        """A 2025-03-26 batch: 202 when it holds no request, else its answers as one array."""
        ids = {m["id"] for m in batch if jsonrpc.classify(m).kind == jsonrpc.REQUEST}
        stream = Stream(self.shared, conn, self, (self.extra, self.shared.framing.priming))
        stream.batch = ids | {None}  # None: what answers an invalid member (its id unreadable)
        self.batches.append(stream)
        for request_id in ids:
            self.streams[request_id] = stream
        self.perform(self.engine.receive(body, batch))
        for message in batch:
            self.notified(message)
        if not ids and stream.state == "gathering":  # notifications and responses only (none of them invalid)
            self.batches.remove(stream)
            self.shared.wire.add(Respond(conn, Answer(202, headers=self.extra)))
            stream.step("answered")
            return
        stream.settle(alone=not (self.shared.framing.sse and ids))

    def notify(self, conn: Any, message: Any, body: bytes) -> None:
        """A notification, or the host's answer to a server request: to the engine, and 202."""
        self.perform(self.engine.receive(body, message))
        self.notified(message)
        self.shared.wire.add(Respond(conn, Answer(202, headers=self.extra)))

    def notified(self, message: Any) -> None:
        """A cancelled request's stream ends without a reply (the engine will never send one)."""
        if isinstance(message, dict) and message.get("method") == protocol.CANCELLED:
            request = protocol.cancelled_request(message.get("params"))  # another requestId: ignored, as the SDK does
            if request is not None:
                self.cancelled(request)

    def cancelled(self, request: Any) -> None:
        """The request (by its key, else its id) was cancelled: its stream ends, or its batch's when none is left."""
        stream = self.streams.pop(request, None)
        if stream is None:
            return
        if stream.batch:
            stream.batch.discard(request)
            if stream.batch - {None}:
                return
            self.batches.remove(stream)
        stream.step("finish")

    def perform(self, actions: list[Action]) -> None:
        """Carry out what the engine said. A message for another stream than the one before waits `TURN` s (and what
        follows it): the host reads each stream on its own, and would see them out of order."""
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
                    self.shared.wire.add(Later(TURN, (self, PACED)))
                    return
                last = (where,)
                self._route(action)
            elif isinstance(action, Wake):
                self.shared.wire.add(Later(action.after, (self, action.job)))
            elif isinstance(action, Note):
                self.shared.wire.add(action)
            elif isinstance(action, Exit):
                self.end(abort=True)
            elif isinstance(action, Cut):
                self._cut(action.request)

    def _cut(self, request: Any) -> None:
        """The request's answer breaks off (`drop: cut`): its stream's connection is cut (a batch's: all its answers);
        the session goes on."""
        stream = self.streams.pop(request, None)
        self.aliases.pop(request, None)
        if stream is None:
            return  # the client left it already (a cancel ended it)
        if stream in self.batches:
            self._unbatch(stream)
        stream.step("cut")

    def _route(self, send: Send) -> None:
        if send.stream == GET_STREAM and send.request is not None:
            if self.standalone_open():  # (a stateless session, whose ids are aliased, has no GET stream)
                self._unsolicited(send.data)
                return
            if self.rerouted != send.request:  # said once for a request's run of them, not for each
                self.rerouted = send.request
                request, what = self.aliases.get(send.request, send.request), send.method or "a raw line"
                self.shared.wire.add(Note(REROUTED.format(what, request)))
        stream = self.streams.get(send.request) if send.request is not None else None
        if stream is None and send.batch:
            stream = self._batch_of(send.batch)
            if stream is not None:
                stream.send(send.data, reply=True)
            return  # (None: the batch's one stream broke off, `drop: cut` of a member: its array goes nowhere)
        if stream is None:
            self._unsolicited(send.data)
            return
        if send.final:
            self.aliases.pop(send.request, None)
            del self.streams[send.request]
            stream.status = self.shared.framing.status_for(send.code)
        stream.send(send.data, reply=send.final)

    def _unsolicited(self, data: bytes) -> None:
        """A message for the GET stream: on it, or held until one opens."""
        if self.standalone_open():
            assert self.standalone is not None
            self.standalone.send(data)
        else:
            self.backlog.hold(data)

    def _batch_of(self, answered: tuple[Any, ...]) -> Stream | None:
        """The open batch an array of answers belongs to (by the ids it answers), now ended."""
        for stream in self.batches:
            if not stream.batch.isdisjoint(answered):
                self._unbatch(stream)
                return stream
        return None

    def _unbatch(self, stream: Stream) -> None:
        """A batch's stream is done with: none of its members' answers go on it now."""
        self.batches.remove(stream)
        for request_id in stream.batch:
            self.streams.pop(request_id, None)

    def open_get(self, conn: Any, frames: list[bytes] | None = None) -> None:
        """Open the GET stream on conn: the frames given (resumed ones), then what waited for it."""
        make_room(self.shared)
        head = (((protocol.SESSION_HEADER, self.id or ""),), False)
        stream = self.standalone = Stream(self.shared, conn, self, head, get=True)
        stream.settle(alone=False)
        if frames:  # encoded before: written as they are
            stream.step("resent", b"".join(frames))
        waiting, dropped = self.backlog.take()
        if dropped:
            bounds = self.shared.bounds
            self.shared.wire.add(Note(DROPPED.format(self.id, dropped, bounds.backlog_events, bounds.backlog_bytes)))
        for data in waiting:
            self._unsolicited(data)  # (on it, unless its client reads nothing: then they wait again)

    def resume(self, conn: Any, last: str) -> None:
        """A GET with Last-Event-ID: what its stream sent after that event, then the rest as it comes."""
        stream, frames = self.shared.resumable.after(self, last)
        if stream is not None and stream.get and stream.state in ENDED and not self.standalone_open():
            self.open_get(conn, frames)  # the GET stream again: what it missed, then the rest as it comes
            return
        wire = self.shared.wire
        if stream is not None and stream.get and stream.state == "lost":
            make_room(self.shared)  # it counts among the open GET streams again
        wire.add(Open(conn, (*SSE_FIELDS, (protocol.SESSION_HEADER, self.id or ""))))
        if stream is not None and stream.state not in ENDED and self.shared.framing.priming:
            frames.append(stream.numbered(None))
        if frames:
            wire.add(Event(conn, b"".join(frames)))
        if stream is not None and stream.state not in ENDED:
            stream.step("resume", conn)
        else:
            # A stream that broke off stays broken (its client tries again a few times, as with a server that died).
            wire.add(Drop(conn) if stream is not None and stream.state == "broken" else End(conn, close=True))

    def end(self, abort: bool = False) -> None:
        """End it (DELETE, the `exit` knob, idle, or shutdown): close its streams and forget its events."""
        if self.ended:
            return
        self.ended = True
        self.perform(self.engine.close())
        for stream in [*self.streams.values(), *([self.standalone] if self.standalone else [])]:
            if abort and stream.state not in ENDED:  # what the server said before it died goes out first, then the cut
                stream.step("cut")
            else:
                stream.step("finish")
        self.shared.resumable.forget(self)
