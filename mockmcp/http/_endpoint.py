"""Replay's Streamable HTTP endpoint, sans-IO: each whole request with its connection (an opaque key), each connection
closed and each timer fired in; what to write (`Out`) out, in order. Here: admission, which session a request
belongs to, GET and DELETE; the sessions (`_session`) and their streams (`_stream`) do the rest."""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable
from typing import Any, NamedTuple

from mockmcp._wire import jsonrpc, protocol
from mockmcp.cassette.model import NOTIFICATION, SERVER, Cassette
from mockmcp.engine.actions import Note
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.replay import Replay
from mockmcp.engine.report import Report
from mockmcp.engine.selection import Recordings
from mockmcp.http._session import PACED, LiveSession
from mockmcp.http._stream import Later, Out, Respond, Resumable, Shared, Wire
from mockmcp.http._streamable import Answer, Framing, admit, batch_refusal, error_body, session_error
from mockmcp.options import BOUNDS, Bounds

__all__ = ["Endpoint", "Hooks", "SessionParts"]

IDLE = "idle"  # (IDLE, n): the `Later` token's job that ends the session if it did nothing since its n-th step


class SessionParts(NamedTuple):
    """What is served: the cassette, and what each live session's engine matches, redacts and times it by."""

    cassette: Cassette
    matcher: Matcher
    redactor: Redactor | None = None
    timing: float = 0.0


class Hooks(NamedTuple):
    """What the shell tells the endpoint, and its randomness (fixed in tests)."""

    unread: Callable[[Any], int] = lambda conn: 0  # bytes written to conn that its client has not read yet
    new_id: Callable[[], str] = lambda: secrets.token_hex(16)  # a session id
    alias_prefix: str | None = None  # the random part of the stateless session's aliases (None: random)
    clock: Callable[[], float] | None = None  # the wall clock each session's report is timed by (None: untimed)


HOOKS = Hooks()


class Endpoint:
    """A cassette served at one Streamable HTTP endpoint (`allowed`: the Host and Origin names requests may carry)."""

    def __init__(
        self,
        serving: SessionParts,
        allowed: frozenset[str],
        bounds: Bounds = BOUNDS,
        path: str = "/mcp",
        hooks: Hooks = HOOKS,
    ) -> None:
        cassette = serving.cassette
        framing = Framing.of(cassette.meta)
        self.serving, self.allowed, self.path, self.new_id = serving, allowed, path, hooks.new_id
        self.clock = hooks.clock
        self.wire = Wire()  # what the call in progress writes
        self.shared = Shared(framing, bounds, self.wire, Resumable(bounds), hooks.unread)
        self.recordings = Recordings(cassette, serving.matcher)  # shared by every session's engine
        self.sessions: dict[str, LiveSession] = {}
        self.stateless: LiveSession | None = None
        # The stateless session's aliases: a random part no recorded message holds, then a count.
        self.aliases = (f"mockmcp-{hooks.alias_prefix or secrets.token_hex(8)}-{n}" for n in itertools.count(1))
        # The reports of the sessions that ended, in order; past `bounds.finished`, folded into one (`Report.combine`).
        self.finished: list[Report] = []
        self.watched: set[LiveSession] = set()  # sessions a timer will look at to see whether they stayed idle
        unsolicited = any(
            i.kind == SERVER or (i.kind == NOTIFICATION and i.server) or any(s.stream for s in i.server)
            for i in cassette.interactions
        )
        # A server recorded answering GET is offered as it was; without the fact, when there is something to send.
        self.get_stream = unsolicited if framing.get_stream is None else framing.get_stream
        # A handshake-era server recorded turning a request without a session away turns every such one away.
        eras = protocol.session_eras((i.message, i.response) for i in cassette.interactions)
        self.sessions_only = "missing" in (framing.session_errors or {}) and protocol.STATELESS not in eras

    def request(self, conn: Any, method: bytes, target: str, headers: dict[str, str], body: bytes) -> list[Out]:
        """A whole HTTP request on conn (headers by lowercase name); what to write, in order."""
        admitted = admit(method, target, headers, body, self.allowed, self.path)
        if isinstance(admitted, Answer):
            self.wire.add(Respond(conn, admitted))
        elif method == b"GET":
            self._get(conn, headers)
        elif method == b"DELETE":
            self._delete(conn, headers)
        else:
            session = self._session(conn, headers, admitted)
            if session is not None:
                self.touch(session)
                self._post(conn, session, admitted, body, headers)
                self._settled(session)
        return self.wire.take()

    def wake(self, token: Any) -> list[Out]:
        """A `Later` timer fired."""
        session, job = token
        if session.ended:
            return self.wire.take()
        if isinstance(job, tuple) and job[0] == IDLE:
            self._idle_check(session, job[1])
        elif isinstance(job, tuple):
            job[1].beat(job[2])
        elif job is PACED:
            paced, session.paced = session.paced or [], None
            session.perform(paced)
        else:
            session.perform(session.engine.wake(job))
        self._settled(session)
        return self.wire.take()

    def closed(self, conn: Any) -> list[Out]:
        """conn has closed: its streams go nowhere now. A 2026-07-28 client cancels a request so (that revision
        has no client notifications over HTTP); in the handshake era a disconnect is no cancellation."""
        streams = list(self.wire.live.get(conn, []))
        self.wire.lose(conn)
        session = self.stateless
        if streams and session is not None and not session.ended:  # most connections close with no stream live
            for key, stream in list(session.streams.items()):
                if stream in streams:
                    params = {"requestId": session.aliases.get(key, key)}  # as the client would name it
                    cancel = {"jsonrpc": "2.0", "method": protocol.CANCELLED, "params": params}
                    session.perform(session.engine.receive(jsonrpc.encode(cancel), cancel, key))
                    session.cancelled(key)
                    session.aliases.pop(key, None)
            self._settled(session)
        return self.wire.take()

    def shutdown(self) -> list[Out]:
        """End every live session (their reports go to `finished`, in the order they ended)."""
        for session in [*self.sessions.values(), *([self.stateless] if self.stateless else [])]:
            self.end(session)
        return self.wire.take()

    def touch(self, session: LiveSession) -> None:
        """The session was named by a request: not idle."""
        session.steps += 1
        self._watch(session)

    def _watch(self, session: LiveSession) -> None:
        """One timer at a time watches whether a session with an id stays idle (see `_idle_check`)."""
        idle = self.shared.bounds.session_idle
        if idle is not None and session.id is not None and session not in self.watched:
            self.watched.add(session)
            self.wire.add(Later(idle, (session, (IDLE, session.steps))))

    def _idle_check(self, session: LiveSession, steps: int) -> None:
        """The watch timer fired: a session that did nothing since, with nothing under way, ends as a DELETE ends it;
        else the watch begins again."""
        self.watched.discard(session)
        if session.steps == steps and session.idle():
            idle = self.shared.bounds.session_idle
            self.wire.add(Note(f"mockmcp: session {session.id} was idle for {idle:g} s: ended"))
            self.end(session)
            return
        self._watch(session)

    def end(self, session: LiveSession) -> None:
        """End a live session (DELETE, idle, or shutdown): close its streams, keep its report."""
        session.end()
        self._settled(session)

    def _settled(self, session: LiveSession) -> None:
        """After the session acted: once it has ended (whoever ended it), it leaves, its report kept."""
        if not session.ended or session not in (self.stateless, self.sessions.get(session.id or "")):
            return
        if session.id is not None:
            del self.sessions[session.id]
        else:
            self.stateless = None
        self.watched.discard(session)
        self.keep(session.engine.report)

    def keep(self, report: Report) -> None:
        """A live session ended: its report is kept, in order; past `bounds.finished`, the kept ones folded into one."""
        self.finished.append(report)
        if len(self.finished) > self.shared.bounds.finished:
            self.finished = [Report.combine(self.serving.cassette, self.finished)]

    def engine(self) -> Replay:
        """A new live session's engine (fresh play counts) over the recordings every session shares, indexed once."""
        cassette, matcher, redactor, timing = self.serving
        engine = Replay(cassette, matcher, redactor, timing, self.recordings)
        if self.clock is not None:
            engine.report.timed(self.clock)
        return engine

    def _new_session(self, session_id: str | None) -> LiveSession:
        return LiveSession(self.shared, session_id, self.engine())

    def _session(self, conn: Any, headers: dict[str, str], message: Any) -> LiveSession | None:
        """The live session a message belongs to; answers the HTTP error itself when there is none."""
        session_id = headers.get(protocol.SESSION_HEADER)
        if isinstance(message, dict) and message.get("method") == protocol.INITIALIZE and "id" in message:
            session = self._new_session(self.new_id())
            assert session.id is not None
            params = message.get("params")
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            session.version = version if isinstance(version, str) else None
            self.sessions[session.id] = session
            return session
        if session_id is not None:
            found = self.sessions.get(session_id)
            if found is None:
                self.wire.add(Respond(conn, session_error(self.shared.framing, "unknown")))
            return found
        if protocol.speaks_stateless(message, headers.get("mcp-protocol-version")) and not self.sessions_only:
            if self.stateless is None:
                self.stateless = self._new_session(None)
            return self.stateless
        self.wire.add(Respond(conn, session_error(self.shared.framing, "missing")))
        return None

    def _post(self, conn: Any, session: LiveSession, message: Any, body: bytes, headers: dict[str, str]) -> None:
        """A POST's message (or a 2025-03-26 batch) for the live session."""
        refused = batch_refusal(headers, session.version) if isinstance(message, list) else None
        if refused is not None:
            self.wire.add(Respond(conn, refused))
        elif session.ended:
            self.wire.add(Respond(conn, session_error(self.shared.framing, "unknown")))
        elif isinstance(message, list):
            session.batch(conn, message, body)
        elif not (isinstance(message, dict) and "method" in message and jsonrpc.is_valid_id(message.get("id"))):
            session.notify(conn, message, body)
        elif session.id is None:
            # Clients of the shared stateless session may use one id at once: the engine knows each by a key.
            key = next(self.aliases)
            session.aliases[key] = message["id"]
            session.request(conn, message, body, key)
        else:
            session.request(conn, message, body, None)

    def _get(self, conn: Any, headers: dict[str, str]) -> None:
        framing = self.shared.framing
        if "text/event-stream" not in headers.get("accept", ""):
            self.wire.add(Respond(conn, Answer(406, b"Not Acceptable: accept text/event-stream", "text/plain")))
            return
        # A server whose events had ids kept them to resume from, unless it was seen refusing GET.
        resuming = "last-event-id" in headers and framing.event_ids and framing.get_stream is not False
        if not self.get_stream and not resuming:
            text = "Method Not Allowed: the recorded server offered no GET stream"
            if framing.get_stream is None:
                text = "Method Not Allowed: this cassette has no unsolicited server messages"
            body = error_body(text)
            self.wire.add(Respond(conn, Answer(405, body, headers=(("allow", "POST, DELETE"),))))
            return
        session = self._named(conn, headers)
        if session is None:
            return
        self.touch(session)
        if resuming and session.ids is not None:
            session.resume(conn, headers["last-event-id"])
        elif session.standalone_open():
            self.wire.add(
                Respond(conn, Answer(409, b"Conflict: this session's GET stream is already open", "text/plain"))
            )
        else:
            session.open_get(conn)

    def _named(self, conn: Any, headers: dict[str, str]) -> LiveSession | None:
        """The live session a GET or DELETE names; else its session error (a missing id, or an unknown one)."""
        session = self.sessions.get(headers.get(protocol.SESSION_HEADER, ""))
        if session is None:
            missing = "missing" if protocol.SESSION_HEADER not in headers else "unknown"
            self.wire.add(Respond(conn, session_error(self.shared.framing, missing)))
        return session

    def _delete(self, conn: Any, headers: dict[str, str]) -> None:
        session = self._named(conn, headers)
        if session is not None:
            self.end(session)
            self.wire.add(Respond(conn, Answer(200)))
