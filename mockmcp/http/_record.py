"""The recorder's HTTP shell: a reverse proxy in front of a real Streamable HTTP server (or a legacy HTTP+SSE one:
the target's `endpoint` event names the URL its client POSTs to, which the proxy forwards too), on the one loop.

Each request goes to the target as it came (less hop-by-hop headers and `Accept-Encoding`, so bodies stay
readable), on a kept connection when there is one; its answer comes back as it goes, every message journaled
under its session (`_attribution`). `_exchange` says what an exchange does; this shell does the I/O.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import ssl
import time
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

import h11

from mockmcp._wire import jsonrpc
from mockmcp._wire.protocol import SESSION_HEADER
from mockmcp.engine.redact import Redactor
from mockmcp.errors import UsageError
from mockmcp.http import _exchange as ex
from mockmcp.http._attribution import Attribution
from mockmcp.http._loop import (
    MAX_HEAD,
    PAUSE_READING,
    Connection,
    LoopServer,
    Request,
    Response,
    no_delay,
    response_of,
    rewatch,
)
from mockmcp.http._streamable import error_status_seen, framing_seen, misdirected
from mockmcp.options import BOUNDS, Bounds
from mockmcp.record import CLIENT, Journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.stdio.toolkit import Signals

__all__ = ["Journaling", "ProxyOptions", "RecordingProxy", "journaled"]

# The most one read from the target takes: each piece is one write to the client (64 KiB: half the speed).
_READ = 1 << 18

# Not forwarded either way: they describe one hop, not the message.
_HOP = {
    *b"connection keep-alive transfer-encoding te upgrade proxy-authorization proxy-connection host".split(),
    *b"content-length accept-encoding content-encoding trailer".split(),
}

# How a JSON text of one line starts (a UTF-16 or BOM-led one is parsed and re-encoded).
_OPENING = (b"{", b"[")


def _passed(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers that pass, in order and as often as they came; bytes, as a value may hold obs-text."""
    return [(name, value) for name, value in headers if name not in _HOP]


class _Upstream:
    """A non-blocking connection to the target (TLS for https), pooled while the target keeps it open."""

    def __init__(self, proxy: RecordingProxy) -> None:
        target = proxy.target.parts
        self.proxy = proxy
        self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)  # this connection's exchanges
        self.exchange: _Exchange | None = None
        self.out = bytearray()
        self.connected = self.handshaking = self.paused = self.closed = False
        self.reused = False  # whether it served a request before the one it is sending
        self.heard = False  # whether the target said anything about the current request
        self.eof = False  # the target closed its side of the connection
        self.interest = 0
        port = target.port or (443 if proxy.target.tls else 80)
        # (A name, not an address, is resolved here, blocking the loop briefly: kept connections make it rare.)
        family, kind, proto, _name, address = socket.getaddrinfo(target.hostname, port, type=socket.SOCK_STREAM)[0]
        self.sock: socket.socket = socket.socket(family, kind, proto)
        self.sock.setblocking(False)
        no_delay(self.sock)
        code = self.sock.connect_ex(address)
        if code not in (0, errno.EINPROGRESS):
            self.sock.close()
            raise OSError(code, f"cannot connect to {target.netloc}: {os.strerror(code)}")
        self._watch(selectors.EVENT_WRITE)  # writable once connected (or refused)

    def _watch(self, interest: int) -> None:
        if not self.closed:
            self.interest = rewatch(self.proxy.selector, self.sock, self.interest, interest, self._ready)

    def _refresh(self) -> None:
        """Watch for writability while bytes wait, and for what the target says unless paused."""
        if not self.handshaking:
            self._watch((selectors.EVENT_WRITE if self.out else 0) | (0 if self.paused else selectors.EVENT_READ))

    def _ready(self, _mask: int) -> None:
        if self._guarded(self._step):
            self._refresh()  # (nothing while the handshake waits: it watched what it needs)

    def _step(self) -> None:
        if not self.connected:
            code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, f"cannot connect to {self.proxy.target.parts.netloc}: {os.strerror(code)}")
            self.connected = True
            if self.proxy.target.tls is not None:
                self.sock = self.proxy.target.tls.wrap_socket(
                    self.sock, server_hostname=self.proxy.target.parts.hostname, do_handshake_on_connect=False
                )
                self.handshaking = True
        if self.handshaking:
            try:
                self.sock.do_handshake()  # type: ignore[attr-defined]
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError) as exc:
                self._watch(selectors.EVENT_READ if isinstance(exc, ssl.SSLWantReadError) else selectors.EVENT_WRITE)
                return
            self.handshaking = False
        self._flush()
        self._read()

    def _flush(self) -> None:
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                return
            del self.out[:sent]

    def _read(self) -> None:
        while not self.closed and not self.paused:
            try:
                # A head is read MAX_HEAD at a time: h11 holds it to that limit only while it is incomplete.
                data = self.sock.recv(MAX_HEAD if self.exchange is None or self.exchange.response is None else _READ)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            if self.exchange is None:  # idle in the pool: the target closed it, or says something unasked
                self.close()
                return
            self.heard = self.heard or bool(data)  # an end alone: a kept connection closed meanwhile
            self.eof = not data
            self.conn.receive_data(data)
            self._events()
            # TLS may hold decrypted bytes the descriptor no longer signals.
            if not data or not (isinstance(self.sock, ssl.SSLSocket) and self.sock.pending()):
                return

    def _events(self) -> None:
        exchange, conn = self.exchange, self.conn
        try:
            while self.exchange is not None and not self.paused and not self.closed:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    break
                if isinstance(event, h11.Data):
                    self.exchange.data(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):  # its trailers, if any, dropped
                    exchange, self.exchange = self.exchange, None
                    exchange.end(self)
                elif isinstance(event, h11.Response):
                    self.exchange.head(response_of(event))
                # else a 1xx (100 Continue, 103 Early Hints): the answer follows (h11 refuses a 101 unasked)
        except h11.RemoteProtocolError as exc:  # at the end of the connection: the target broke its answer off
            self.fail(OSError(f"the target broke off the HTTP exchange: {exc}"), broke=self.eof)
        if exchange is not None:
            exchange.flush()  # what one read brought goes to the client in one write

    def send(self, exchange: _Exchange, request: list[h11.Request | h11.Data | h11.EndOfMessage]) -> None:
        """Send the request's h11 events (its head, body and end) in one write, and read its answer."""
        self.exchange, self.heard = exchange, False
        conn = self.conn
        if conn.our_state is h11.DONE:  # a kept connection (`reusable`): its next exchange
            conn.start_next_cycle()
        self.out += b"".join([conn.send(event) or b"" for event in request])
        if not (self.connected and not self.handshaking) or self._guarded(self._flush):
            self._refresh()

    def pause(self) -> None:
        """Read no more from the target until `resume` (its client reads slowly)."""
        self.paused = True
        self._refresh()

    def resume(self) -> None:
        if self.paused and not self.closed:
            self.paused = False
            self._events()  # what h11 holds already
            if self.closed or self.paused or self._guarded(self._read):
                self._refresh()

    def _guarded(self, step: Callable[[], None]) -> bool:
        """Run a step of the socket's I/O; False when the connection failed on it (the exchange told)."""
        try:
            step()
        except OSError as exc:  # ssl.SSLError is one too
            self.fail(exc, broke=True)
            return False
        return True

    def reusable(self) -> bool:
        """Whether the connection outlives the exchange (h11 says), nothing after the answer, the request all sent."""
        conn = self.conn
        done = conn.our_state is h11.DONE and conn.their_state is h11.DONE
        return done and conn.trailing_data == (b"", False) and not self.out

    def fail(self, exc: OSError, broke: bool = False) -> None:
        """The exchange under way cannot go on; `broke`: the connection ended, rather than the target spoke no HTTP."""
        exchange, self.exchange = self.exchange, None
        self.close()
        if exchange is not None:
            exchange.failed(self, exc, broke)

    def close(self) -> None:
        if self.closed:
            return
        self._watch(0)
        self.closed = True
        self.sock.close()
        if self in self.proxy.idle:
            self.proxy.idle.remove(self)


class _Exchange:
    """One request forwarded to the target and its answer passed back: the I/O of what its `Exchange` decides."""

    def __init__(self, proxy: RecordingProxy, client: Connection, asked: ex.Asked, session: int, request: list[Any]):
        self.proxy, self.client, self.session, self.request = proxy, client, session, request
        self.machine = ex.Exchange(asked, proxy.bounds)
        self.upstream: _Upstream | None = None
        self.response: Response | None = None
        self.kept: list[tuple[bytes, bytes]] = []  # the answer's headers, as its client gets them

    def begin(self) -> None:
        proxy = self.proxy
        proxy.answering += self.machine.request.awaited  # (never a GET's)
        proxy.relaying.setdefault(self.client, []).append(self)
        proxy.call_later(proxy.bounds.upstream_timeout, _timer, weakref.ref(self), _late)  # 504 after
        self._send()

    def _send(self) -> None:
        try:
            self.upstream = self.proxy.idle.pop() if self.proxy.idle else _Upstream(self.proxy)
        except OSError as exc:
            self.failed(None, exc)
            return
        self.upstream.send(self, self.request)

    def head(self, response: Response) -> None:
        self.response, proxy = response, self.proxy
        proxy.attribution.answered(self.session, self.machine.request.message, response.fields.get(SESSION_HEADER))
        self.kept = [proxy.through(name, value) for name, value in _passed(response.headers)]
        self.do(self.machine.head(response.status, response.fields, time.monotonic()))

    def on(self, event: str, *args: Any) -> None:
        self.do(self.machine.on(event, *args))

    def data(self, chunk: bytes) -> None:
        self.on("data", chunk, time.monotonic())
        self.proxy.peak = max(self.proxy.peak, self.machine.held() + len(self.client.out))

    def end(self, upstream: _Upstream) -> None:
        """The answer is all read: the connection is pooled before the client sees the end, for its next request."""
        self.proxy.release(upstream)
        self.on("end", time.monotonic())

    def stalled(self) -> None:
        paused = self.upstream is not None and self.upstream.paused
        self.do(self.machine.stalled(time.monotonic(), paused))

    def failed(self, upstream: _Upstream | None, exc: OSError, broke: bool = False) -> None:
        heard = upstream is not None and upstream.heard
        stale = upstream is not None and upstream.reused and not heard
        self.do(self.machine.failed(time.monotonic(), str(exc), str(exc.strerror or exc), heard, broke, stale))

    def flush(self) -> None:
        """What one read brought: to the client in one write, then to the journal."""
        self.do(self.machine.flush())
        if self.client.broken and self.machine.request.get and self.machine.phase != ex.DONE:
            self.on("dropped")

    def announced(self, url: str) -> None:
        """Its legacy SSE stream announced where its client POSTs (a path, resolved at the proxy: the client POSTs it
        here, to be forwarded): a session of its own from now on."""
        self.session = self.proxy.announce(url, self.proxy.target.url)

    def _resume(self) -> None:
        if self.upstream is not None and self.upstream.exchange is self:
            self.machine.resumed(time.monotonic())
            self.upstream.resume()

    def do(self, actions: list[Any]) -> None:
        for action in actions:
            _DO[type(action)](self, *action)

    def _write(self, parts: tuple[Any, ...]) -> None:
        response, client = self.response, self.client
        assert response is not None
        events: list[Any] = []
        for part in parts:
            if isinstance(part, ex.Start):
                framing = [] if part.length is None else [(b"content-length", part.length)]
                events.append(
                    h11.Response(status_code=response.status, headers=[*self.kept, *framing], reason=response.reason)
                )
            else:
                events.append(h11.EndOfMessage() if part is ex.END else h11.Data(data=part))
        client.send(*events)
        if len(client.out) > PAUSE_READING and self.upstream is not None and self.machine.phase != ex.DONE:
            self.upstream.pause()  # a slow client: its answer waits on the target's side, no one else's
            client.waiting = self._resume

    def _whole(self, body: bytes) -> None:
        response = self.response
        assert response is not None
        headers = [*self.kept, (b"content-length", b"%d" % len(body))]
        self.client.send_whole(response.status, headers, body, response.reason)

    def _close(self) -> None:
        if self.upstream is not None:
            self.upstream.exchange = None
            self.upstream.close()

    def _finish(self) -> None:
        proxy, client = self.proxy, self.client
        proxy.answering -= self.machine.request.awaited
        if self.machine.request.get:  # a legacy SSE session's stream ended: no answer comes for it now
            proxy.pending.pop(self.session, None)
        relaying = proxy.relaying.get(client, [])
        if self in relaying:
            relaying.remove(self)
            if not relaying:
                del proxy.relaying[client]


# The actions for the journal and the facts (`x`: its `proxy` a `Journaling`, its `session`, its `machine`), the
# proxy's and interception's alike.
_JOURNALED: dict[type, Callable[..., None]] = {
    ex.Record: lambda x, direction, *rest: x.proxy.record(direction, x.session, *rest),
    ex.Unkept: lambda x, size, stream, at, *rest: x.proxy.journal.unkept(
        x.proxy.elapsed(at), size, x.proxy.bounds.kept_bytes, x.session, stream, *rest
    ),
    ex.Cut: lambda x, request_id, at: x.proxy.journal.cut(request_id, x.proxy.elapsed(at), x.session),
    ex.Unreached: lambda x, request_id, *said: x.proxy.journal.unreached(
        request_id, x.proxy.elapsed(), *said, x.session
    ),
    ex.Refused: lambda x, request_id: x.proxy.journal.refused(request_id, x.session),
    ex.Framing: lambda x, *facts: x.proxy.learn(
        framing_seen(x.machine.request.method, *facts, x.proxy.http.get("framing"))
    ),
    ex.SessionErrors: lambda x, errors: x.proxy.learn(
        {"session_errors": {**x.proxy.http.get("session_errors", {}), **errors}}
    ),
    ex.ErrorStatus: lambda x, *facts: x.proxy.learn(error_status_seen(*facts, x.proxy.http.get("error_status"))),
    ex.Announced: lambda x, url: x.announced(url),  # the exchange's session, from now on: its own (rule 7)
}


def journaled(x: Any, action: Any) -> bool:
    """Do an exchange's action if it is for the journal or the facts (see `_JOURNALED`); whether it was."""
    do = _JOURNALED.get(type(action))
    if do is not None:
        do(x, *action)
    return do is not None


_DO: dict[type, Callable[..., None]] = {
    ex.Write: _Exchange._write,
    ex.Whole: _Exchange._whole,
    ex.Refuse: lambda x, status, text: x.client.respond(status, text.encode(), "text/plain"),
    ex.Abort: lambda x: x.client.close(),
    ex.Close: _Exchange._close,
    ex.Resend: _Exchange._send,
    ex.Wait: lambda x, after: x.proxy.call_later(after, _timer, weakref.ref(x), _Exchange.stalled),
    ex.Finish: _Exchange._finish,
    **_JOURNALED,
    ex.Trouble: lambda x, text: setattr(x.proxy, "trouble", text.replace("{target}", x.proxy.target.url)),
}


class ProxyOptions(NamedTuple):
    """How a recording proxy serves, beside what it records."""

    allow_hosts: tuple[str, ...] = ()  # Host names it answers besides its own address (`_streamable.misdirected`)
    bounds: Bounds = BOUNDS  # upstream_timeout, kept_bytes, whole_bytes, after_gone_bytes


class _Target(NamedTuple):
    """The target's URL, and what every request to it says of it (checked once, as h11 would refuse it)."""

    url: str
    parts: Any  # urlsplit's
    path: bytes
    host: tuple[bytes, bytes]
    origin: bytes
    tls: ssl.SSLContext | None  # for https


class Journaling:
    """How a recording of Streamable HTTP sessions journals (whose session, each message, the target's framing):
    the proxy's, and interception's in the host's process."""

    def __init__(self, journal: Journal, redactor: Redactor, bounds: Bounds) -> None:
        self.journal, self.redactor, self.bounds = journal, redactor, bounds
        self.start = time.monotonic()
        self.attribution = Attribution()  # which session each message belongs to
        self.http: dict[str, Any] = {}  # how the target frames its answers: the cassette's meta.http

    def learn(self, facts: dict[str, Any]) -> None:
        """Note how the target frames its answers; journaled whenever that changes (a later note wins)."""
        changed = {key: value for key, value in facts.items() if self.http.get(key) != value}
        if changed:
            self.http.update(changed)
            self.journal.meta({"http": dict(self.http)})

    def record(
        self, direction: str, session: int, data: bytes, stream: Any = None, get: bool = False, event: str | None = None
    ) -> None:
        """Journal one message (a body or an event's data): a line as it came, JSON over lines as one compact line,
        anything else whole."""
        line = data.strip()
        if not (line[:1] in _OPENING and b"\n" not in line and b"\r" not in line):
            try:
                line = jsonrpc.encode(jsonrpc.parse(data))[:-1]
            except ValueError:
                line = line.replace(b"\r\n", b"\n")
        if line:
            line = self.redactor.line(line) if self.redactor else line
            self.journal.append(direction, self.elapsed(), [line], session, stream, get, event)

    def announce(self, url: str, base: str) -> int:
        """A legacy SSE stream's `endpoint` event (`url`, relative to the stream's URL `base`): the session its
        messages belong to, the stream's too (`Attribution`, rule 7)."""
        parts = urlsplit(urljoin(base, url))
        return self.attribution.announce(parts.path + (f"?{parts.query}" if parts.query else ""))

    def elapsed(self, moment: float | None = None) -> float:
        """A time in the journal: seconds from the recording's start to now, or to the monotonic `moment`."""
        return (time.monotonic() if moment is None else moment) - self.start


class RecordingProxy(Journaling, LoopServer):
    """Forwards an MCP endpoint to a target server and journals every session that passes."""

    def __init__(
        self,
        target: str,
        listen: tuple[str, int],
        journal: Journal,
        redactor: Redactor,
        options: ProxyOptions | None = None,
    ) -> None:
        self.target, options = _target(target), options or ProxyOptions()
        LoopServer.__init__(self, listen, options.allow_hosts)
        Journaling.__init__(self, journal, redactor, options.bounds)
        self.path = self.target.parts.path or "/"
        self.idle: list[_Upstream] = []  # connections to the target that can take the next request
        self.answering = 0  # POSTs (and DELETEs) whose answer is still being read from the target
        self.relaying: dict[Connection, list[_Exchange]] = {}  # the answers being relayed, by client connection
        self.trouble: str | None = None  # the last time the target could not be reached, or did not answer
        self.peak = 0  # the most one exchange held at once of its answer, with what its client had yet to take
        self.pending: dict[int, set[Any]] = {}  # legacy SSE sessions -> the ids of their requests not yet replied

    def through(self, name: bytes, value: bytes) -> tuple[bytes, bytes]:
        """A header of the target's answer as the client gets it: a redirect to the target's origin names the
        proxy's instead, so the client stays on the proxy."""
        origin = self.target.origin
        if name == b"location" and (value == origin or value.startswith(origin + b"/")):
            return name, self.origin.encode("ascii") + value[len(origin) :]
        return name, value

    def finish_answers(self, timeout: float, signals: Signals | None = None) -> int:
        """After the loop stopped accepting: serve the answers still being read (a legacy SSE session's, until its
        stream carries them), for up to timeout seconds or until another signal; returns how many are left
        unfinished."""
        self.stopping = False  # the listener is closed; the loop runs on for what is under way
        deadline = time.monotonic() + timeout
        seen = signals.count if signals is not None else 0
        if signals is not None:
            self.selector.register(signals.fileno(), selectors.EVENT_READ, lambda _mask: signals.drain())
        try:
            while (self.answering or any(self.pending.values())) and (left := deadline - time.monotonic()) > 0:
                if signals is not None and signals.count > seen:
                    break  # asked again to stop: what is under way is left out, the recording still saved
                self.turn(left)
        finally:
            if signals is not None:
                self.selector.unregister(signals.fileno())
        self.stopping = True
        for upstream in list(self.idle):
            upstream.close()
        return self.answering + sum(len(ids) for ids in self.pending.values())

    def record(self, direction: str, session: int, data: bytes, *rest: Any, **named: Any) -> None:
        """Journal a message; a legacy SSE session's reply on its stream is one answer fewer to wait for at a stop."""
        waiting = self.pending.get(session)
        if waiting and direction != CLIENT:
            try:
                reply = jsonrpc.parse(data)
            except ValueError:
                reply = None
            if isinstance(reply, dict) and "method" not in reply:
                waiting.discard(reply.get("id"))
        super().record(direction, session, data, *rest, **named)

    def release(self, upstream: _Upstream) -> None:
        """Keep a connection whose exchange is over for the next request, or close it."""
        if upstream.reusable() and len(self.idle) < 64:
            upstream.reused = True
            self.idle.append(upstream)
            upstream._refresh()  # watched while idle: a target that closes it is noticed
        else:
            upstream.close()

    def closed(self, connection: Connection) -> None:
        for exchange in self.relaying.pop(connection, ()):
            if exchange.machine.request.get:
                exchange.on("dropped")  # a GET stream's client left: closed on the target too
            else:
                exchange.on("left", time.monotonic())
        self.attribution.closed(connection)

    def handle(self, client: Connection, request: Request, body: bytes) -> None:
        headers, target = request.fields, request.target.decode("latin-1")
        legacy = self.attribution.posted(target) if request.method == b"POST" else None  # a legacy SSE message
        refused = misdirected(headers, self.allowed, target, self.path if legacy is None else target.partition("?")[0])
        if refused is not None:
            client.respond(*refused)
            return
        try:
            message = jsonrpc.parse(body) if body.strip() else None
        except ValueError:
            message = None
        session = legacy
        if session is None:
            session = self.attribution.request(client, request.method.decode("latin-1"), headers, message)
        # The fields were read as valid, the target's host and path checked once (__init__): h11 refuses none.
        fields = [self.target.host, *_passed(request.headers)]  # a repeated header passes as often as it came
        length = (b"content-length", b"%d" % len(body))
        path = self.target.path if legacy is None else request.target  # a legacy SSE message: where it was announced
        head = h11.Request(method=request.method, target=path, headers=[*fields, length])
        upstream: list[Any] = [head, h11.Data(data=body), h11.EndOfMessage()]
        _Exchange(self, client, ex.asked(request.method, headers, message), session, upstream).begin()
        if request.method == b"POST":  # journaled while the target works on it (its answer comes on a later turn)
            self.record(CLIENT, session, body)
        if legacy is not None and isinstance(message, dict) and "method" in message and "id" in message:
            self.pending.setdefault(legacy, set()).add(message["id"])  # answered on its session's stream


def _target(target: str) -> _Target:
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--http-target {target!r} is not an http(s) URL", "write e.g. `--http-target http://127.0.0.1:8000/mcp`"
        )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:  # refused as h11 refuses it, once, rather than on every request
        host, origin = (b"host", parts.netloc.encode("ascii")), f"{parts.scheme}://{parts.netloc}".encode("ascii")
        h11.Request(method="GET", target=path.encode("ascii"), headers=[host])
    except (h11.LocalProtocolError, UnicodeEncodeError) as exc:
        raise UsageError(f"--http-target {target!r} cannot be sent: {exc}", "write a plain http(s) URL") from exc
    tls = ssl.create_default_context() if parts.scheme == "https" else None
    return _Target(target, parts, path.encode("ascii"), host, origin, tls)


def _timer(exchange: weakref.ref[_Exchange], what: Callable[[_Exchange], None]) -> None:
    """A timer of an exchange, which may be gone."""
    found = exchange()
    if found is not None:
        what(found)


def _late(exchange: _Exchange) -> None:
    exchange.on("late")
