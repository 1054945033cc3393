"""Replay over the legacy HTTP+SSE transport (2024-11-05), sans-IO, beside the Streamable HTTP `Endpoint` whose
cassette, shared recordings, session ids, wire and finished reports it uses.

`GET /sse` opens a session's one event stream; its first event (`endpoint`) names where the client POSTs its
messages (`/messages/?session_id=...`). Each POST gets 202, and everything the session's engine sends goes on that
stream, in order. The session lives as long as its stream: the client closing it ends the session, as the MCP
Python SDK's SSE server ends it. Refusals are that server's (status and words), with how to do better.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from mockmcp._wire import jsonrpc
from mockmcp.engine.actions import Action, Exit, Note, Send, Wake
from mockmcp.http._endpoint import Endpoint
from mockmcp.http._stream import SSE_FIELDS, Drop, End, Event, Later, Open, Out, Respond
from mockmcp.http._streamable import KEEPALIVE_COMMENT, Answer, misdirected, sse_event

__all__ = ["LegacyEndpoint", "MESSAGE_PATH", "SSE_PATH", "SseSession", "endpoint_event"]

SSE_PATH = "/sse"  # where a client opens a session's event stream (the SDK's default)
MESSAGE_PATH = "/messages/"  # where it POSTs its messages, the session named in the query
BEAT = "beat"  # a `Later` token's job: the session's keep-alive timer
UNREAD = (
    "mockmcp: SSE session {}: its client left more than {} bytes of its event stream unread, so the stream was cut "
    "and the session ended"
)


def endpoint_event(url: str) -> bytes:
    """The first event of a legacy SSE stream: where to POST the session's messages."""
    return b"event: endpoint\ndata: " + url.encode() + b"\n\n"


def _text(status: int, text: str, allow: str | None = None) -> Answer:
    return Answer(status, text.encode(), "text/plain", (("allow", allow),) if allow else ())


class SseSession:
    """One client's legacy SSE session: its engine, and the connection its event stream rides."""

    def __init__(self, session_id: str, conn: Any, engine: Any) -> None:
        self.id, self.conn, self.engine = session_id, conn, engine
        self.said = 0  # events written on its stream
        self.heard = 0  # `said` when the keep-alive timer last fired: unchanged, the stream was quiet
        self.ending = False  # it is being ended: nothing ends it again
        self.ended = False  # nothing more goes on its stream


class LegacyEndpoint:
    """The legacy SSE paths of a replay, served with the cassette of `endpoint`."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.wire = endpoint.wire
        self.sessions: dict[str, SseSession] = {}  # by session id
        self.streams: dict[Any, SseSession] = {}  # by the connection its event stream rides

    @staticmethod
    def serves(target: str) -> bool:
        """Whether a request target is one of the legacy SSE paths."""
        try:
            return urlsplit(target).path in (SSE_PATH, MESSAGE_PATH)
        except ValueError:
            return False

    @staticmethod
    def owns(token: Any) -> bool:
        """Whether a `Later` token is one of its sessions'."""
        return isinstance(token, tuple) and isinstance(token[0], SseSession)

    def request(self, conn: Any, method: bytes, target: str, headers: dict[str, str], body: bytes) -> list[Out]:
        """A whole HTTP request for a legacy SSE path on conn (headers by lowercase name); what to write, in order."""
        path = urlsplit(target).path
        refused = misdirected(headers, self.endpoint.allowed, target, path)
        if refused is not None:
            self.wire.add(Respond(conn, refused))
        elif path == SSE_PATH and method != b"GET":
            self.wire.add(Respond(conn, _text(405, "Method Not Allowed: open the event stream with GET", "GET")))
        elif path == SSE_PATH:
            self._open(conn)
        elif method != b"POST":
            self.wire.add(Respond(conn, _text(405, "Method Not Allowed: POST messages here", "POST")))
        else:
            self._post(conn, target, headers, body)
        return self.wire.take()

    def wake(self, token: Any) -> list[Out]:
        """A `Later` timer of one of its sessions fired."""
        session, job = token
        if not session.ended and job == BEAT:
            if session.said == session.heard:
                self.wire.add(Event(session.conn, KEEPALIVE_COMMENT))
            session.heard = session.said
            self._beat(session)
        elif not session.ended:
            self._perform(session, session.engine.wake(job))
        return self.wire.take()

    def closed(self, conn: Any) -> list[Out]:
        """conn has closed: when a session's stream rode it, the session ends."""
        session = self.streams.get(conn)
        if session is not None:
            self._end(session, gone=True)
        return self.wire.take()

    def shutdown(self) -> list[Out]:
        """End every live session (their reports go to the endpoint's `finished`)."""
        for session in list(self.sessions.values()):
            self._end(session)
        return self.wire.take()

    def _open(self, conn: Any) -> None:
        """GET /sse: a new session, its stream opened with the endpoint event, then what the recording sent first."""
        session = SseSession(self.endpoint.new_id(), conn, self.endpoint.engine())
        self.sessions[session.id] = session
        self.streams[conn] = session
        self.wire.add(Open(conn, SSE_FIELDS))
        self.wire.add(Event(conn, endpoint_event(f"{MESSAGE_PATH}?session_id={session.id}")))
        self._perform(session, session.engine.start())
        self._beat(session)

    def _post(self, conn: Any, target: str, headers: dict[str, str], body: bytes) -> None:
        """POST /messages/?session_id=...: one JSON-RPC message for the session's engine, answered 202."""
        named = parse_qs(urlsplit(target).query).get("session_id")
        session = self.sessions.get(named[0]) if named else None
        if not named:
            refusal = _text(400, "session_id is required: POST to the URL of the stream's endpoint event")
        elif session is None:
            refusal = _text(404, "Could not find session: open a new one with GET " + SSE_PATH)
        elif not headers.get("content-type", "").lower().startswith("application/json"):
            refusal = _text(400, "Invalid Content-Type header: send application/json")
        else:
            refusal, message = _message(body)
            if refusal is None:
                self.wire.add(Respond(conn, _text(202, "Accepted")))
                self._perform(session, session.engine.receive(body, message))
                return
        self.wire.add(Respond(conn, refusal))

    def _perform(self, session: SseSession, actions: list[Action]) -> None:
        """Carry out what the engine said: every message on the session's one stream, in order. A cut answer
        (`drop: cut`) is no reply, as over stdio; the `exit` knob ends the session, cutting its stream."""
        bounds, conn = self.endpoint.shared.bounds, session.conn
        for action in actions:
            if isinstance(action, Send) and not session.ended:
                for line in action.data.splitlines():
                    self.wire.add(Event(conn, sse_event(line)))
                    session.said += 1
            elif isinstance(action, Wake):
                self.wire.add(Later(action.after, (session, action.job)))
            elif isinstance(action, Note):
                self.wire.add(action)
            elif isinstance(action, Exit):
                self._end(session, cut=True)
        unread = self.endpoint.shared.unread(conn) + self.wire.queued.get(conn, 0)
        if not session.ending and unread > bounds.unread_bytes:
            self.wire.add(Note(UNREAD.format(session.id, bounds.unread_bytes)))
            self._end(session, cut=True)

    def _beat(self, session: SseSession) -> None:
        keepalive = self.endpoint.shared.bounds.keepalive
        if keepalive is not None:
            self.wire.add(Later(keepalive, (session, BEAT)))

    def _end(self, session: SseSession, cut: bool = False, gone: bool = False) -> None:
        """End a session (its client left: `gone`; the `exit` knob or an unread stream: `cut`; else shutdown),
        its report kept."""
        if session.ending:
            return
        session.ending, session.ended = True, gone  # what the engine says as it closes goes on a stream still there
        self._perform(session, session.engine.close())
        session.ended = True
        del self.sessions[session.id]
        del self.streams[session.conn]
        if not gone:
            self.wire.add(Drop(session.conn) if cut else End(session.conn, close=True))
        self.endpoint.keep(session.engine.report)


def _message(body: bytes) -> tuple[Answer | None, Any]:
    """The one JSON-RPC message a POST carries, or the 400 refusing it (a batch too: the legacy transport has none)."""
    try:
        message = jsonrpc.parse(body)
    except ValueError as exc:
        return _text(400, f"Could not parse message: {exc}; send one JSON-RPC message"), None
    if isinstance(message, list):
        return _text(400, "Could not parse message: a batch; the legacy SSE transport takes one message a POST"), None
    found = jsonrpc.classify(message)
    if found.kind == jsonrpc.INVALID:
        return _text(400, f"Could not parse message: {found.problem}"), None
    return None, message
