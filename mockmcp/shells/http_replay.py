"""The Streamable HTTP shell of replay: one MCP endpoint, the same engine, a live session per client.

Theory of operation. One event loop (`shells/http_loop.py`) serves every connection, speaking
HTTP/1.1 through h11 (sans-IO, like the engine); which requests are taken, and how others are
refused, is `core/streamable.admit`. A POST carries one client message. A notification or a response is fed to its
live session's engine and answered 202. A request is fed to the engine too; what the engine sends
for it (its `Send.request`) is gathered on that request's stream: when the reply is all there is,
it goes back as one JSON body, otherwise as an SSE stream that carries the interaction's server
messages, then the reply, and ends. (Unless the recorded server streamed every answer, an answer
that has nothing to send yet, behind a `delay` or a question on the GET stream, begins only when
it knows which of the two it is.) Messages that belong to no request (unsolicited ones, or those
a client notification causes) go to the session's GET stream, held back until the client opens it.
A request's server message that the recorded server sent on its GET stream (`stream: get`) goes on
the GET stream too when the client has one open, else on the request's own stream, with a note.
Timers (`Wake`) are timers on the loop; nothing runs concurrently, so nothing is locked.

Resumption: when the recorded server gave its events ids (it had an event store), each session
keeps its latest events (`_Sent`), and a GET with `Last-Event-ID` gets the events of that id's
stream that came after it, and then the rest of that stream as it comes (an unknown or forgotten
id: an empty stream that ends), as the SDK's resumable server answers.

Handshake era: `initialize` starts a live session and its `Mcp-Session-Id`; every later message
must carry it (400 without, 404 for an unknown or ended one); DELETE ends it. 2026-07-28 era:
requests carry the protocol version in `_meta` and need no session; they all share one live
session, and their `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must agree with the
body. Every request's `Origin` and `Host` are checked against loopback and the bound host.
"""

from __future__ import annotations

import collections
import itertools
import json
import re
import secrets
import sys
from collections.abc import Iterator
from typing import Any, TextIO

import h11

from mockmcp import jsonrpc, protocol
from mockmcp.cassette.model import GET_STREAM, Cassette
from mockmcp.core.matching import Matcher
from mockmcp.core.redact import Redactor
from mockmcp.core.replay import Action, Exit, Note, Replay, Send, Wake
from mockmcp.core.report import Report
from mockmcp.core.selection import Recordings
from mockmcp.core.streamable import (
    Answer,
    Framing,
    admit,
    batch_refusal,
    error_body,
    modern,
    priming_event,
    session_error,
    sse_event,
    translated,
)
from mockmcp.shells.http_loop import Connection, LoopServer, Request

__all__ = ["HttpReplay"]

# What a session keeps of the events it sent, for a client resuming with Last-Event-ID (the
# newest events, at most this many and this many bytes).
RESUMABLE_EVENTS = 4096
RESUMABLE_BYTES = 16 << 20


class _Sent:
    """A session's latest SSE events, each with its id and stream, for resumption; oldest forgotten first."""

    def __init__(self) -> None:
        self.events: collections.deque[tuple[str, _Stream, bytes]] = collections.deque()
        self.size = 0

    def add(self, event_id: str, stream: _Stream, frame: bytes) -> None:
        self.events.append((event_id, stream, frame))
        self.size += len(frame)
        while len(self.events) > RESUMABLE_EVENTS or self.size > RESUMABLE_BYTES:
            self.size -= len(self.events.popleft()[2])

    def after(self, event_id: str) -> tuple[_Stream | None, list[bytes]]:
        """The stream the event was sent on (None: not kept), and its events sent after it."""
        stream: _Stream | None = None
        frames: list[bytes] = []
        for sent_id, sent_on, frame in self.events:
            if stream is None:
                stream = sent_on if sent_id == event_id else None
            elif sent_on is stream:
                frames.append(frame)
        return stream, frames


class _Stream:
    """What one request (or the GET stream) is sent: gathered first, then a JSON body or an SSE stream."""

    def __init__(self, writer: Connection, ids: Iterator[str] | None = None, sent: _Sent | None = None) -> None:
        self.writer = writer
        self.ids = ids  # where its event ids come from, when the recorded server gave its events ids
        self.sent = sent  # where its events are kept for resumption (with ids)
        self.gathered: list[bytes] = []
        self.batch: set[Any] = set()  # the request ids of the batch it answers, if it answers one
        self.sse = False
        self.done = False
        # (headers, priming) of an answer not begun: a JSON body if the reply comes alone, else a stream
        self.pending: tuple[list[tuple[str, str]], bool] | None = None

    def event(self, data: bytes) -> None:
        if self.pending is not None:  # a message before the reply: the answer is a stream after all
            self.open_sse(*self.pending)
        if self.sse:
            self.writer.send(h11.Data(data=self._encoded(data)))
        else:
            self.gathered.append(data)

    def _encoded(self, data: bytes) -> bytes:
        if self.ids is None:
            return sse_event(data)
        event_id = next(self.ids)
        return self.kept(event_id, sse_event(data, event_id))

    def kept(self, event_id: str, frame: bytes) -> bytes:
        if self.sent is not None:
            self.sent.add(event_id, self, frame)
        return frame

    def open_sse(self, headers: list[tuple[str, str]], priming: bool = False) -> None:
        """Answer with an SSE stream: its head, the priming event, what was gathered (and its end, when
        the reply was among it), in one write."""
        self.pending = None
        fields = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), *headers]
        events: list[Any] = [h11.Response(status_code=200, headers=fields)]
        if priming and self.ids is not None:
            event_id = next(self.ids)
            events.append(h11.Data(data=self.kept(event_id, priming_event(event_id))))
        events += [h11.Data(data=self._encoded(data)) for data in self.gathered]
        self.gathered.clear()
        if self.done:
            events.append(h11.EndOfMessage())
        self.writer.send(*events)
        self.sse = True

    def reply_alone(self, data: bytes, status: int = 200) -> None:
        """The reply, the only message of a pending answer: one JSON body (with the recorded server's status)."""
        assert self.pending is not None
        self.writer.respond(status, data, headers=self.pending[0])
        self.pending, self.done = None, True

    def finish(self) -> None:
        if self.pending is not None:  # ended without a reply (cancelled, the session ended): an empty stream
            self.open_sse(*self.pending)
        if self.sse and not self.done:
            self.writer.send(h11.EndOfMessage())
        self.done = True


class _LiveSession:
    """One client's session: its engine, its open streams, and what waits for its GET stream."""

    def __init__(self, server: HttpReplay, session_id: str | None) -> None:
        self.server, self.id = server, session_id
        self.engine = Replay(server.cassette, server.matcher, server.redactor, server.timing, server.recordings)
        self.streams: dict[Any, _Stream] = {}
        self.standalone: _Stream | None = None
        self.backlog: list[bytes] = []
        self.aliases: dict[str, Any] = {}  # stateless session: our unique request id -> the client's
        self.batches: list[_Stream] = []  # streams of batches still awaiting their array of answers
        self.version: str | None = None  # the revision its initialize asked for
        # Event ids run through the session, as a resumable server's event store numbers them.
        self.ids = (str(n) for n in itertools.count(1)) if server.framing.event_ids else None
        self.sent = _Sent() if self.ids is not None else None
        self.ended = False
        self.perform(self.engine.start())

    def perform(self, actions: list[Action]) -> None:
        """Carry out what the engine said."""
        for action in actions:
            if isinstance(action, Send):
                self._route(action)
            elif isinstance(action, Wake):
                self.server.call_later(action.after, self._wake, action.job)
            elif isinstance(action, Note):
                self.server.note(self._shown(action.text) if self.aliases else action.text)
            elif isinstance(action, Exit):
                self.server.end(self, abort=True)

    def _shown(self, text: str) -> str:
        """A note as the user knows the request: by the id its client gave it, never an alias."""
        return re.sub(
            rf"'mockmcp-{self.server.alias_prefix}-\d+'",
            lambda found: repr(self.aliases.get(found[0][1:-1], found[0][1:-1])),
            text,
        )

    def _route(self, send: Send) -> None:
        if send.stream == GET_STREAM and send.request is not None:
            if self.standalone_open():
                assert self.standalone is not None
                self.standalone.event(send.data)  # a stateless session, whose ids are aliased, has no GET stream
                return
            self.server.note(
                f"mockmcp: {_what(send.data)} was recorded on the GET stream; the host has no GET stream "
                f"open, so it went on the stream of its request {self.aliases.get(send.request, send.request)!r}"
            )
        stream = self.streams.get(send.request) if send.request is not None else None
        if stream is None and send.request is None and self.batches and send.data.startswith(b"["):
            stream = self._batch_of(send.data)
            if stream is not None and stream.pending is not None:  # the array alone: one JSON body
                stream.reply_alone(send.data)
                return
            if stream is not None:
                stream.event(send.data)
                stream.finish()
                return
        if stream is None:
            if self.standalone_open():
                assert self.standalone is not None
                self.standalone.event(send.data)
            else:
                self.backlog.append(send.data)
            return
        data = send.data
        if send.request in self.aliases:  # every message of the stream, not only the reply
            data = translated(data, send.request, self.aliases[send.request])
            if send.final:
                del self.aliases[send.request]
        if send.final and stream.pending is not None:
            del self.streams[send.request]
            stream.reply_alone(data, self.server.framing.status_of(data))
            return
        stream.event(data)
        if send.final:
            del self.streams[send.request]
            stream.finish()

    def resume(self, writer: Connection, last: str) -> None:
        """A GET with Last-Event-ID: what its stream sent after that event, then the rest as it comes."""
        assert self.sent is not None
        stream, frames = self.sent.after(last)
        fields = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
        events: list[Any] = [h11.Response(status_code=200, headers=[*fields, ("mcp-session-id", self.id or "")])]
        events += [h11.Data(data=frame) for frame in frames]
        if stream is None or stream.done:
            writer.send(*events, h11.EndOfMessage())
            return
        if self.server.framing.priming:
            assert self.ids is not None
            event_id = next(self.ids)
            events.append(h11.Data(data=stream.kept(event_id, priming_event(event_id))))
        if not stream.writer.broken:
            stream.writer.abort()  # the client has left it; one connection carries a stream
        stream.writer, stream.sse, stream.pending = writer, True, None
        writer.send(*events)

    def _batch_of(self, data: bytes) -> _Stream | None:
        """The open batch an array of answers belongs to (by the ids it answers), now ended."""
        try:
            answered = {r.get("id") for r in jsonrpc.parse(data) if isinstance(r, dict)}
        except (ValueError, TypeError, AttributeError):
            return None
        for stream in self.batches:
            if stream.batch & answered:
                self.batches.remove(stream)
                for request_id in stream.batch:
                    self.streams.pop(request_id, None)
                return stream
        return None

    def standalone_open(self) -> bool:
        """Whether the GET stream is there to take a message (a client that dropped it has not)."""
        stream = self.standalone
        if stream is not None and stream.writer.broken:
            stream.finish()
        return stream is not None and not stream.done

    def _wake(self, job: int) -> None:
        if not self.ended:
            self.perform(self.engine.wake(job))


class HttpReplay(LoopServer):
    """A cassette served at one Streamable HTTP endpoint; `serve_forever` until `shutdown`."""

    def __init__(
        self,
        cassette: Cassette,
        matcher: Matcher,
        redactor: Redactor | None,
        timing: float,
        listen: tuple[str, int],
        path: str = "/mcp",
        stderr: TextIO = sys.stderr,
        allow_hosts: tuple[str, ...] = (),
    ) -> None:
        self.cassette, self.matcher, self.redactor, self.timing = cassette, matcher, redactor, timing
        self.recordings = Recordings(cassette, matcher)
        self.path, self.stderr = path, stderr
        self.sessions: dict[str, _LiveSession] = {}
        self.stateless: _LiveSession | None = None
        # The stateless session's aliases: a random part no recorded message holds, then a count.
        self.alias_prefix, self.alias_count = secrets.token_hex(8), itertools.count(1)
        self.finished: list[Report] = []
        super().__init__(listen, allow_hosts)
        self.framing = Framing.of(cassette.meta)
        unsolicited = any(
            i.kind == "server" or (i.kind == "notification" and i.server) or any(s.stream for s in i.server)
            for i in cassette.interactions
        )
        # A server recorded answering GET is offered as it was; without the fact, when there is something to send.
        self.get_stream = unsolicited if self.framing.get_stream is None else self.framing.get_stream
        # A server of the handshake era alone, recorded turning a request without a session away (an
        # auto host's server/discover probe), turns every such request away here too.
        eras = protocol.session_eras((i.message, i.response) for i in cassette.interactions)
        recorded = self.framing.session_errors or {}
        self.sessions_only = "missing" in recorded and protocol.STATELESS not in eras

    @property
    def url(self) -> str:
        return self.origin + self.path

    def note(self, text: str) -> None:
        print(text, file=self.stderr, flush=True)

    def shutdown(self) -> list[Report]:
        """Stop serving, end every live session; returns the report of each, in the order they ended."""
        self.stop_accepting()
        for session in [*self.sessions.values(), *([self.stateless] if self.stateless else [])]:
            self.end(session)
        return self.finished

    def end(self, session: _LiveSession, abort: bool = False) -> None:
        """End a live session (DELETE, the `exit` knob, or shutdown): close its streams, keep its report."""
        if session.ended:
            return
        session.ended = True
        session.perform(session.engine.close())
        for stream in [*session.streams.values(), *([session.standalone] if session.standalone else [])]:
            if abort:
                stream.writer.abort()
            stream.finish()
        if session.id is not None:
            self.sessions.pop(session.id, None)
        elif self.stateless is session:
            self.stateless = None
        self.finished.append(session.engine.report)

    def closed(self, connection: Connection) -> None:
        """A 2026-07-28 client cancels a request by closing its response stream (that revision has no
        client notifications over HTTP); in the handshake era a disconnect is not a cancellation."""
        session = self.stateless
        if session is None or session.ended:
            return
        for request_id, stream in list(session.streams.items()):
            if stream.writer is connection and not stream.done:
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
                session.perform(session.engine.receive(json.dumps(cancel).encode(), cancel))
                self._after_notification(session, cancel)
                session.aliases.pop(request_id, None)

    # --- HTTP -----------------------------------------------------------------------------------

    def handle(self, writer: Connection, request: Request, body: bytes) -> None:
        headers = request.fields
        admitted = admit(request.method, request.target.decode("latin-1"), headers, body, self.allowed, self.path)
        if isinstance(admitted, Answer):
            writer.respond(*admitted)
        elif request.method == b"GET":
            self._get(writer, headers)
        elif request.method == b"DELETE":
            self._delete(writer, headers)
        else:
            session = self._session(writer, headers, admitted)
            if session is None:
                return
            if isinstance(admitted, list):
                self._deliver_batch(writer, session, admitted, body, headers)
            else:
                self._deliver(writer, session, admitted, body)

    def _session(self, writer: Connection, headers: dict[str, str], message: Any) -> _LiveSession | None:
        """The live session a message belongs to; answers the HTTP error itself when there is none."""
        session_id = headers.get("mcp-session-id")
        if isinstance(message, dict) and message.get("method") == protocol.INITIALIZE and "id" in message:
            session = _LiveSession(self, secrets.token_hex(16))
            assert session.id is not None
            params = message.get("params")
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            session.version = version if isinstance(version, str) else None
            self.sessions[session.id] = session
            return session
        if session_id is not None:
            found = self.sessions.get(session_id)
            if found is None:
                writer.respond(*session_error(self.framing, "unknown"))
            return found
        if modern(headers, message) and not self.sessions_only:
            if self.stateless is None:
                self.stateless = _LiveSession(self, None)
            return self.stateless
        writer.respond(*session_error(self.framing, "missing"))
        return None

    def _deliver(self, writer: Connection, session: _LiveSession, message: Any, body: bytes) -> None:
        is_request = isinstance(message, dict) and "method" in message and jsonrpc.is_valid_id(message.get("id"))
        extra = [("mcp-session-id", session.id)] if session.id else []
        if session.ended:
            writer.respond(*session_error(self.framing, "unknown"))
            return
        stream = _Stream(writer, session.ids, session.sent)
        if is_request:
            if session.id is None:
                # Clients of the shared stateless session choose ids on their own, and two may
                # both use 1 at once: the engine sees a unique id, the client gets its own back.
                alias = f"mockmcp-{self.alias_prefix}-{next(self.alias_count)}"
                session.aliases[alias] = message["id"]
                message = {**message, "id": alias}
            session.streams[message["id"]] = stream
        session.perform(session.engine.receive(body, message))
        if not is_request:
            self._after_notification(session, message)
            writer.respond(202, headers=extra)
            return
        if stream.done and len(stream.gathered) == 1 and not self.framing.sse:
            writer.respond(self.framing.status_of(stream.gathered[0]), stream.gathered[0], headers=extra)
            return
        # the rest comes as the engine sends it (its timers are on the loop)
        if not self.framing.sse and not stream.gathered and not stream.done:
            # Nothing for this request's own stream yet (a delay; or what it sent went on the GET stream): a
            # server that answers a lone reply with JSON begins its answer only when it knows which it is.
            stream.pending = (extra, self.framing.priming)
            return
        stream.open_sse(extra, self.framing.priming)

    def _deliver_batch(
        self, writer: Connection, session: _LiveSession, batch: list[Any], body: bytes, headers: dict[str, str]
    ) -> None:
        """A 2025-03-26 batch: 202 when it holds no request, else its answers as one array (JSON, or
        the last event of an SSE stream that carries the server's messages for its requests first)."""
        refused = batch_refusal(headers, session.version)
        if refused is not None:
            writer.respond(*refused)
            return
        if session.ended:
            writer.respond(*session_error(self.framing, "unknown"))
            return
        extra = [("mcp-session-id", session.id)] if session.id else []
        ids = {m["id"] for m in batch if jsonrpc.classify(m).kind == jsonrpc.REQUEST}
        stream = _Stream(writer, session.ids, session.sent)
        stream.batch = ids | {None}  # None: what answers an invalid member (its id unreadable)
        session.batches.append(stream)
        for request_id in ids:
            session.streams[request_id] = stream
        session.perform(session.engine.receive(body, batch))
        for message in batch:
            self._after_notification(session, message)
        if stream.done and len(stream.gathered) == 1 and not (self.framing.sse and ids):
            writer.respond(200, stream.gathered[0], headers=extra)
        elif not ids:  # notifications and responses only (none of them invalid)
            session.batches.remove(stream)
            writer.respond(202, headers=extra)
        elif not self.framing.sse and not stream.gathered and not stream.done:
            stream.pending = (extra, self.framing.priming)  # as for one request: JSON unless a message comes first
        else:
            stream.open_sse(extra, self.framing.priming)

    def _after_notification(self, session: _LiveSession, message: Any) -> None:
        """A cancelled request's stream ends without a reply (the engine will never send one)."""
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            params = message.get("params") or {}
            stream = session.streams.pop(params.get("requestId"), None) if isinstance(params, dict) else None
            if stream is not None:
                stream.finish()

    def _get(self, writer: Connection, headers: dict[str, str]) -> None:
        if "text/event-stream" not in headers.get("accept", ""):
            writer.respond(406, b"Not Acceptable: accept text/event-stream", "text/plain")
            return
        session = self.sessions.get(headers.get("mcp-session-id", ""))
        if not self.get_stream:
            text = "Method Not Allowed: the recorded server offered no GET stream"
            if self.framing.get_stream is None:
                text = "Method Not Allowed: this cassette has no unsolicited server messages"
            writer.respond(405, error_body(None, jsonrpc.INVALID_REQUEST, text), headers=[("allow", "POST, DELETE")])
            return
        if session is None:
            writer.respond(*session_error(self.framing, "missing" if "mcp-session-id" not in headers else "unknown"))
            return
        if "last-event-id" in headers and session.ids is not None:
            session.resume(writer, headers["last-event-id"])
            return
        if session.standalone_open():
            writer.respond(409, b"Conflict: this session's GET stream is already open", "text/plain")
            return
        stream = session.standalone = _Stream(writer, session.ids, session.sent)
        stream.open_sse([("mcp-session-id", session.id or "")])
        for data in session.backlog:
            stream.event(data)
        session.backlog.clear()

    def _delete(self, writer: Connection, headers: dict[str, str]) -> None:
        session = self.sessions.get(headers.get("mcp-session-id", ""))
        if session is None:
            writer.respond(*session_error(self.framing, "missing" if "mcp-session-id" not in headers else "unknown"))
            return
        self.end(session)
        writer.respond(200)


def _what(data: bytes) -> str:
    """A server message in a note: its method, or that it is a raw line."""
    try:
        method = jsonrpc.parse(data).get("method")
    except (ValueError, AttributeError):
        method = None
    return method if isinstance(method, str) else "a raw line"
