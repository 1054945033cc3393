"""The recorder's HTTP shell: a reverse proxy in front of a real Streamable HTTP server.

Theory of operation. Every request to the proxy's endpoint is sent on to the target as it came
(less hop-by-hop headers, and `Accept-Encoding`, so bodies stay readable), on a connection kept
from an earlier request when the target left one open (a new one costs a round trip), after the
same Host/Origin check as replay's (`core.streamable.foreign`); and the answer comes
back as it goes: a JSON body whole, an SSE stream event by event as the server writes it. On the
way, every JSON-RPC message in a POST body, a JSON answer or an SSE event is journaled like the
stdio recorder's lines, redacted first, tagged with the session it belongs to: an `initialize`
starts a session, known afterwards by the `Mcp-Session-Id` the server issues; 2026-07-28
requests, which have no session, share one. Headers are never recorded, so neither is an
`Authorization`. The cassette is built from the journal when the proxy stops.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import SplitResult, urlsplit

import h11

from mockmcp import jsonrpc, protocol
from mockmcp.core.recorder import CLIENT, SERVER
from mockmcp.core.redact import Redactor
from mockmcp.core.streamable import foreign, framing_seen, session_error_seen
from mockmcp.errors import UsageError
from mockmcp.shells.http11 import Http11Server, Writer, headers_of, no_delay
from mockmcp.shells.journal import Journal

__all__ = ["RecordingProxy", "SseEvents"]

# Not forwarded either way: they describe one hop, not the message.
_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "proxy-authorization",
    "proxy-connection",
    "host",
    "content-length",
    "accept-encoding",
    "content-encoding",
    "trailer",
}


class SseEvents:
    """Cuts an SSE byte stream into the data of its events, however the chunks fall.

    Lines may end in CRLF, LF or CR, and a chunk may end between the CR and the LF of one line end.
    Each chunk is scanned once: the cost is linear in the stream, however big an event is. On the
    way it notes whether events carried ids, and whether the first was a priming event (an id alone).
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._after_cr = False  # the last chunk ended in CR: an LF starting this one ends no further line
        self.ids = False
        self.primed: bool | None = None  # None until the first event is whole
        self.count = 0  # events with data

    def feed(self, chunk: bytes) -> list[bytes]:
        """The data of every event this chunk completes (events without data are left out)."""
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        start = max(0, len(self._pending) - 1)  # a blank line may begin in what came before
        self._pending += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        out = []
        while (end := self._pending.find(b"\n\n", start)) >= 0:
            event = bytes(self._pending[:end])
            del self._pending[: end + 2]
            start = 0
            lines = event.split(b"\n")
            data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
            has_id = any(line.startswith(b"id:") for line in lines)
            self.ids = self.ids or has_id
            if self.primed is None:
                self.primed = has_id and not any(data)
            if any(data):
                self.count += 1
                out.append(b"\n".join(data))
        return out


class _Upstream:
    """A connection to the target server, kept for the next request while the target keeps it open."""

    def __init__(self, target: SplitResult) -> None:
        port = target.port or (443 if target.scheme == "https" else 80)
        sock = socket.create_connection((target.hostname or "127.0.0.1", port), timeout=60)
        no_delay(sock)
        if target.scheme == "https":
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=target.hostname)
        self.sock, self.conn, self.target = sock, h11.Connection(h11.CLIENT), target
        self.reused = False  # whether it served a request before the one it is sending

    def stale(self) -> bool:
        """Whether an idle connection has been closed by the target (or has something unasked to say)."""
        try:
            return bool(select.select([self.sock], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def send(self, method: bytes, headers: list[tuple[str, str]], body: bytes, timeout: float) -> None:
        self.sock.settimeout(timeout)  # for the answer's head; a stream then waits as long as it takes
        target = self.target
        path = target.path + (f"?{target.query}" if target.query else "")
        fields = [("host", target.netloc), *headers, ("content-length", str(len(body)))]
        events = (h11.Request(method=method, target=path, headers=fields), h11.Data(data=body), h11.EndOfMessage())
        self.sock.sendall(b"".join(self.conn.send(event) or b"" for event in events))  # one write: see Writer.send

    def _next(self) -> Any:
        try:
            while True:
                event = self.conn.next_event()
                if event is not h11.NEED_DATA:
                    return event
                self.conn.receive_data(self.sock.recv(1 << 16))
        except h11.RemoteProtocolError as exc:
            raise OSError(f"the target broke off the HTTP exchange: {exc}") from None

    def response(self) -> h11.Response:
        event = self._next()
        if not isinstance(event, h11.Response):
            raise OSError(f"the target answered with {type(event).__name__}, not a response")
        self.sock.settimeout(None)
        return event

    def chunks(self) -> Iterator[bytes]:
        while True:
            event = self._next()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            else:
                return

    def reusable(self) -> bool:
        """Whether the exchange ended cleanly both ways with the connection kept open; readies the next one."""
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            return True
        return False

    def close(self) -> None:
        self.sock.close()


class RecordingProxy(Http11Server):
    """Forwards an MCP endpoint to a target server and journals every session that passes."""

    def __init__(
        self,
        target: str,
        listen: tuple[str, int],
        journal: Journal,
        redactor: Redactor,
        allow_hosts: tuple[str, ...] = (),
        timeout: float = 60.0,
    ) -> None:
        self.target = urlsplit(target)
        if self.target.scheme not in ("http", "https") or not self.target.hostname:
            raise UsageError(
                f"--http-target {target!r} is not an http(s) URL",
                "write e.g. `--http-target http://127.0.0.1:8000/mcp`",
            )
        super().__init__(listen, allow_hosts)
        self.journal, self.redactor, self.timeout = journal, redactor, timeout
        self.path = self.target.path or "/"
        self.start = time.monotonic()
        self.lock = threading.Lock()
        self.sessions: dict[str, int] = {}  # Mcp-Session-Id -> session number
        self.sessionless: int | None = None  # where messages without a session id go
        self.count = 0
        self.idle: list[_Upstream] = []  # connections to the target that can take the next request
        self.answering = 0  # POSTs whose answer is still being read from the target
        self.answered = threading.Condition(self.lock)
        self.http: dict[str, Any] = {}  # how the target frames its answers: the cassette's meta.http

    def learn(self, facts: dict[str, Any]) -> None:
        """Note how the target frames its answers; journaled whenever that changes (a later note wins)."""
        with self.lock:
            changed = {key: value for key, value in facts.items() if self.http.get(key) != value}
            if not changed:
                return
            self.http.update(changed)
            known = dict(self.http)
        self.journal.meta({"http": known})

    def finish_answers(self, timeout: float) -> int:
        """Wait up to timeout seconds for the answers still being read (a stop must not lose them to
        a client that stopped reading one); returns how many are left unfinished."""
        with self.answered:
            self.answered.wait_for(lambda: self.answering == 0, timeout)
            return self.answering

    def stop_accepting(self) -> None:
        super().stop_accepting()
        with self.lock:
            idle, self.idle = self.idle, []
        for upstream in idle:
            upstream.close()

    def _exchange(self, method: bytes, headers: list[tuple[str, str]], body: bytes) -> tuple[_Upstream, h11.Response]:
        """Send a request to the target, on an idle connection when there is one; its answer's head."""
        while True:
            with self.lock:
                upstream = self.idle.pop() if self.idle else None
            if upstream is None:
                upstream = _Upstream(self.target)
            elif upstream.stale():
                upstream.close()
                continue
            try:
                upstream.send(method, headers, body, self.timeout)
                return upstream, upstream.response()
            except OSError as exc:
                upstream.close()
                # A kept connection the target closed meanwhile: the request never reached it, try anew.
                if isinstance(exc, TimeoutError) or not upstream.reused:
                    raise

    def _release(self, upstream: _Upstream) -> None:
        """Keep a connection whose exchange is over for the next request, or close it."""
        if upstream.reusable():
            upstream.reused = True
            with self.lock:
                if len(self.idle) < 64:
                    self.idle.append(upstream)
                    return
        upstream.close()

    @property
    def url(self) -> str:
        return self.origin + self.path

    def record(self, direction: str, session: int, data: bytes, stream: Any = None, get: bool = False) -> None:
        """Journal one message (a body or an event's data), as one compact line when it is JSON; stream:
        the id of the request whose POST stream carried it (what comes there belongs to that request);
        get: it came on the session's GET stream."""
        try:
            lines = [jsonrpc.encode(jsonrpc.parse(data))[:-1]]
        except ValueError:
            lines = [line for line in data.strip().split(b"\n") if line.strip()]
        if lines:
            if self.redactor:
                lines = [self.redactor.line(line) for line in lines]
            with self.lock:
                self.journal.append(direction, time.monotonic() - self.start, lines, session, stream, get)

    def _new_session(self) -> int:
        with self.lock:
            self.count += 1
            return self.count - 1

    def _session(self, headers: dict[str, str], message: Any) -> int:
        """Which session a client message belongs to (a new one for `initialize`)."""
        if isinstance(message, dict) and message.get("method") == protocol.INITIALIZE:
            number = self.sessionless = self._new_session()
            return number
        session_id = headers.get("mcp-session-id")
        if session_id is not None and session_id in self.sessions:
            return self.sessions[session_id]
        if self.sessionless is None:
            self.sessionless = self._new_session()
        return self.sessionless

    def handle(self, writer: Writer, request: h11.Request, body: bytes) -> None:
        headers = headers_of(request)
        refused = foreign(headers, self.allowed)  # a page rebinding a name to the proxy reaches no server
        if refused is not None:
            writer.respond(*refused)
            return
        if urlsplit(request.target.decode("latin-1")).path != self.path:
            writer.respond(404, f"Not Found: the MCP endpoint is {self.path}".encode(), "text/plain")
            return
        try:
            message = jsonrpc.parse(body) if body.strip() else None
        except ValueError:
            message = None
        session = self._session(headers, message)
        if request.method == b"POST":
            self.record(CLIENT, session, body)
        forwarded = [(k, v) for k, v in headers.items() if k not in _HOP]
        try:
            upstream, response = self._exchange(request.method, forwarded, body)
        except OSError as exc:
            if isinstance(exc, TimeoutError):
                text = f"Gateway Timeout: the target did not answer within {self.timeout:g} s (--upstream-timeout)"
                writer.respond(504, text.encode(), "text/plain")
            else:
                writer.respond(502, f"Bad Gateway: {exc}".encode(), "text/plain")
            return
        standalone = request.method == b"GET"
        if not standalone:
            with self.lock:
                self.answering += 1
        try:
            tail = self._relay(writer, upstream, response, session, message, headers, request.method)
        except BaseException:
            upstream.close()
            raise
        finally:
            if not standalone:
                with self.answered:
                    self.answering -= 1
                    self.answered.notify_all()
        if tail is None:  # the client went away mid-stream: the target's stream is closed with the connection
            upstream.close()
            return
        # The target's answer is all read: the connection goes back for the next request before the
        # client sees this answer end, so that request finds it.
        self._release(upstream)
        writer.send(*tail)

    def _relay(
        self,
        writer: Writer,
        upstream: _Upstream,
        response: h11.Response,
        session: int,
        message: Any,
        asked: dict[str, str],
        method: bytes,
    ) -> tuple[Any, ...] | None:
        """Pass the target's answer on, journaling its messages, until the target's side is all read;
        returns the events that end the client's answer, or None if the client went away."""
        standalone = method == b"GET"
        headers = headers_of(response)
        if isinstance(message, dict) and message.get("method") == protocol.INITIALIZE and "mcp-session-id" in headers:
            with self.lock:
                self.sessions[headers["mcp-session-id"]] = session
        kept = [(k, v) for k, v in headers.items() if k not in _HOP]
        if headers.get("content-type", "").startswith("text/event-stream"):
            writer.send(h11.Response(status_code=response.status_code, headers=kept))
            events = SseEvents()
            # A request's stream carries what that request causes; the GET stream, and a batch's, name no one.
            owner = message.get("id") if isinstance(message, dict) and "method" in message else None
            for chunk in upstream.chunks():
                for data in events.feed(chunk):
                    self.record(SERVER, session, data, owner, standalone)
                if not writer.broken:
                    writer.send(h11.Data(data=chunk))
                elif standalone:  # the client dropped its GET stream: close the server's too (see `handle`)
                    return None
                # A client that dropped a request's stream (the SDK drops an SSE event over 1 MiB) does
                # not end the exchange: what the server sends on it is read to its end and journaled.
            seen = (events.ids, bool(events.primed), events.count == 1)
            self.learn(framing_seen(method, response.status_code, message, seen, self.http.get("framing")))
            return (h11.EndOfMessage(),)
        body = b"".join(upstream.chunks())
        # A JSON body answers the JSON-RPC message POSTed; a GET's or DELETE's (a 405, a session error)
        # is the HTTP layer's, no message of the session, and would be filed under a request in flight.
        answers = method == b"POST" and message is not None
        if answers and body.strip() and headers.get("content-type", "").startswith("application/json"):
            self.record(SERVER, session, body)
        self.learn(framing_seen(method, response.status_code, message, None, self.http.get("framing")))
        errors = session_error_seen(asked, response.status_code, body)
        if errors:
            self.learn({"session_errors": {**self.http.get("session_errors", {}), **errors}})
        return (
            h11.Response(status_code=response.status_code, headers=[*kept, ("content-length", str(len(body)))]),
            h11.Data(data=body),
            h11.EndOfMessage(),
        )
