"""HTTP/1.1 on one event loop: h11 over non-blocking sockets, a selector, a timer heap. No threads, no locks.

`LoopServer.handle(connection, request, body)` gets each whole request and answers it at once or later. Writes
never block: a connection whose client reads slowly is not read meanwhile. Limits: 413 over `MAX_BODY`, 400 for
malformed HTTP, closed when silent for `IDLE_TIMEOUT`, 408 when not whole within `REQUEST_TIMEOUT`, requests not
yet whole bounded together by `held_budget`; out of descriptors, accepting pauses, serving never stops.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import os
import selectors
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, NamedTuple

import h11

from mockmcp.http._streamable import LOOPBACK
from mockmcp.options import BOUNDS
from mockmcp.stdio.spool import Spool
from mockmcp.stdio.toolkit import LONGEST_WAIT, Signals

__all__ = [
    "Connection",
    "HELD_BUDGET",
    "IDLE_TIMEOUT",
    "LoopServer",
    "MAX_BODY",
    "MAX_HEAD",
    "PAUSE_READING",
    "REQUEST_TIMEOUT",
    "Request",
    "Response",
    "no_delay",
    "reason_of",
    "response_of",
    "rewatch",
]

MAX_HEAD = 64 << 10  # bytes a head may have while incomplete (h11 answers a request's with 431 beyond)
MAX_BODY = BOUNDS.kept_bytes  # bytes a request body may have (413 beyond), the most of one message kept
IDLE_TIMEOUT = 60.0  # seconds a connection may wait between bytes of a request, or between requests
REQUEST_TIMEOUT = 60.0  # seconds a request (head and body) may take to arrive whole, from its first byte
# accept() failing for want of a descriptor or memory: wait and try again, never stop serving.
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
TOO_LARGE = f"Content Too Large: a request body may have at most {MAX_BODY} bytes"
WILDCARD = frozenset({"0.0.0.0", "::", ""})

PAUSE_READING = 1 << 20  # bytes waiting to be written beyond which a connection is not read
# Bytes of requests not yet whole all connections may hold; beyond it, one holding more than HELD_ALONE is not
# read until others finish, except the one whose request began first, so that one always goes on.
HELD_BUDGET = 128 << 20
HELD_ALONE = 64 << 10


class Request(NamedTuple):
    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]  # (lowercase name, value), in order, as h11 gives them
    fields: dict[str, str]  # lowercase name -> value (latin-1; a repeated header's values joined by ", ")


class Response(NamedTuple):
    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]  # (lowercase name, value), in order
    fields: dict[str, str]  # lowercase name -> value (latin-1; a repeated header keeps its last)


def request_of(event: h11.Request) -> Request:
    headers = _headers(event)
    fields: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        fields[key] = f"{fields[key]}, {text}" if key in fields else text
    return Request(event.method, event.target, headers, fields)


def response_of(event: h11.Response) -> Response:
    headers = _headers(event)
    fields = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}
    return Response(event.status_code, bytes(event.reason), headers, fields)


def _headers(event: h11.Request | h11.Response) -> list[tuple[bytes, bytes]]:
    # What iterating the event's headers gives (names lowercase), in a third of the time: it runs per request.
    return [(name.lower(), value) for name, value in event.headers.raw_items()]


def own_addresses() -> set[str]:
    """The names and addresses this machine answers to (for a server bound to every interface)."""
    names = {socket.gethostname(), socket.getfqdn()}
    found = set(names)
    for name in names:
        try:
            found |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
        except OSError:
            pass
    try:  # the address of the interface the default route uses (a UDP connect sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            found.add(probe.getsockname()[0])
    except OSError:
        pass
    return {name.lower() for name in found if name}


def no_delay(sock: socket.socket) -> None:
    """Send each write at once (no Nagle): every write here is a whole message or SSE event."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def reason_of(status: int) -> bytes:
    """The usual reason phrase of an HTTP status ("OK", "Bad Gateway"), empty for a status without one."""
    try:
        return HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


def rewatch(
    selector: selectors.BaseSelector, sock: socket.socket, old: int, new: int, ready: Callable[[int], None]
) -> int:
    """Watch sock for the events of `new` (0: not at all) instead of `old`; returns `new`."""
    if new != old:
        if not old:
            selector.register(sock, new, ready)
        elif not new:
            selector.unregister(sock)
        else:
            selector.modify(sock, new, ready)
    return new


@dataclass(slots=True)
class Reading:
    """The request a connection is reading, as the server's clocks and budget see it."""

    began: float | None = None  # when its first byte came
    held: int = 0  # bytes received and not yet handed over as a request (the server's budget)
    waited: float = 0.0  # seconds it waited for budget, before it was read again
    starved_since: float | None = None  # since when it waits for budget (None: it does not)


class Connection:
    """One client connection: h11's state for it, the request being read, what waits to be written."""

    def __init__(self, server: LoopServer, sock: socket.socket) -> None:
        self.server, self.sock = server, sock
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        self.out = bytearray()
        self.broken = False  # closed (by either side): whatever is sent now is dropped
        self.last = time.monotonic()
        self.finishing = False  # a last answer of the connection's own is going out, then it closes
        self.ended = False  # the client shut its side: nothing more is read, what it sent is still answered
        self.head = False  # the request being answered is a HEAD: its answer's body is not sent
        self.smuggled = False  # it came with both Content-Length and Transfer-Encoding: answered, then closed
        self.reading = Reading()  # the request being read, as the clocks and the server's budget see it
        self.request: Request | None = None  # the request whose body is being read
        self.body = bytearray()
        self.interest = 0
        self.waiting: Callable[[], None] | None = None  # run once when what is queued has gone out, or never can
        self.watch()

    def send(self, *events: Any) -> None:
        """Queue the events' bytes and write what the socket takes now (one write for them all); h11's
        LocalProtocolError, a bug of ours, goes to the loop, which reports it."""
        conn = self.conn
        if self.head:  # the answer to HEAD says what a GET's would be, its length included, without the body
            events = tuple(event for event in events if not isinstance(event, h11.Data))
        if self.smuggled:  # and h11 closes the connection once the answer is out
            events = tuple(_closing(event) if isinstance(event, h11.Response) else event for event in events)
        data = b"".join([conn.send(event) or b"" for event in events])
        if self.broken:
            return
        self.out += data
        self._write()
        if not self.broken and conn.our_state is h11.DONE:
            if conn.their_state is h11.DONE and not conn.trailing_data[0] and not self.ended:
                conn.start_next_cycle()  # nothing pipelined: ready for the next request at once
            else:  # a pipelined request is read on the loop's next turn, not inside this answer
                self.server.call_later(0.0, self._next_cycle)

    def respond(
        self, status: int, body: bytes = b"", content_type: str = "application/json", headers: Iterable[Any] = ()
    ) -> None:
        fields = [("content-type", content_type), ("content-length", str(len(body))), *headers]
        self.send_whole(status, fields, body)

    def send_whole(self, status: int, fields: list[Any], body: bytes, reason: bytes | None = None) -> None:
        """A whole response in one write; without a reason phrase, the status's usual one (the TypeScript SDK shows
        it in its errors)."""
        head = h11.Response(status_code=status, headers=fields, reason=reason_of(status) if reason is None else reason)
        self.send(head, h11.Data(data=body), h11.EndOfMessage())

    def _write(self) -> None:
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return
            del self.out[:sent]
        if not self.out:
            self._drained()
        if self.out or not (self.finishing or self.conn.our_state is h11.MUST_CLOSE):
            self.watch()
        else:
            self.close()  # the answer said (or h11 made it say) Connection: close, and it is out

    def watch(self) -> None:
        """Read unless too much waits to be written; watch for writability while anything does."""
        if self.broken:
            return
        # A client that sends faster than it reads is read no further until it catches up.
        waiting = len(self.conn.trailing_data[0])
        held = waiting + len(self.body)
        if held != self.reading.held:
            self.server.hold(self, held)
        budget = self.server.budget
        starved = held > HELD_ALONE and budget.held > budget.limit and self is not self.server.eldest()
        if starved:
            budget.starved.add(self)
            if self.reading.starved_since is None:
                self.reading.starved_since = time.monotonic()
        paused = self.finishing or self.ended or starved or max(len(self.out), waiting) >= PAUSE_READING
        interest = (selectors.EVENT_WRITE if self.out else 0) | (0 if paused else selectors.EVENT_READ)
        self.interest = rewatch(self.server.selector, self.sock, self.interest, interest, self._ready)

    def close_when_sent(self) -> None:
        """Close once what is queued has gone out, reading nothing more meanwhile."""
        self.finishing = True
        if self.out:
            self.watch()
        else:
            self.close()

    def close(self) -> None:
        """Close, or drop mid-message as a server that dies does."""
        if self.broken:
            return
        self.interest = rewatch(self.server.selector, self.sock, self.interest, 0, self._ready)
        self.broken = True
        self.server.connections.discard(self)
        self.server.budget.starved.discard(self)
        self.server.hold(self, 0)
        self.sock.close()
        self.out.clear()  # nothing more can go out; what refers to the connection holds no buffer
        self.body = bytearray()
        self._drained()
        self.server.closed(self)

    def _drained(self) -> None:
        waiting, self.waiting = self.waiting, None
        if waiting is not None:
            waiting()

    def _ready(self, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self._write()
        if mask & selectors.EVENT_READ and not self.broken:
            try:
                data = self.sock.recv(1 << 16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            self.last = time.monotonic()
            if data and self.reading.began is None and self.idle_since() is not None:
                self.reading.began, self.reading.waited = self.last, 0.0  # a request begins
            conn = self.conn
            # (trailing_data copies h11's buffer: looked at only when the input ended, never per read)
            gone = conn.their_state in (h11.IDLE, h11.DONE, h11.MUST_CLOSE, h11.CLOSED)
            if not data and gone and not conn.trailing_data[0]:
                self.close()  # the client has gone: nothing half-sent to complain about
                return
            # The end of input after requests pipelined: each is still answered, then ConnectionClosed.
            if not data:
                self.ended = True
            if conn.their_state is not h11.ERROR:
                conn.receive_data(data)
            self._process()
            self.watch()

    def _next_cycle(self) -> None:
        if self.broken:
            return
        conn = self.conn
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
            if self.reading.began is None and conn.trailing_data[0]:  # a request pipelined behind the last answer
                self.reading.began, self.reading.waited = time.monotonic(), 0.0
            self._process()
            self.watch()
        elif conn.our_state is h11.MUST_CLOSE and not self.out:
            self.close()

    def _process(self) -> None:
        conn = self.conn
        try:
            while not self.broken:
                event = conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    if conn.they_are_waiting_for_100_continue:
                        self.send(h11.InformationalResponse(status_code=100, headers=[]))
                    return
                if isinstance(event, h11.Request):
                    self.request, self.body = request_of(event), bytearray()
                    self.head = event.method == b"HEAD"
                    # Both framings: the chunks are the body (RFC 9112 6.1), but a peer on the way may have read
                    # it by its length, so nothing more is read from the connection.
                    fields = self.request.fields
                    self.smuggled = "content-length" in fields and "transfer-encoding" in fields
                    if int(fields.get("content-length") or 0) > MAX_BODY:
                        self._unreadable(413, TOO_LARGE)
                        return
                elif isinstance(event, h11.Data):
                    self.body += event.data
                    if len(self.body) > MAX_BODY:
                        self._unreadable(413, TOO_LARGE)
                        return
                elif isinstance(event, h11.EndOfMessage) and self.request is not None:
                    request, body = self.request, bytes(self.body)
                    self.request, self.body, self.reading.began = None, bytearray(), None
                    self.server.handle(self, request, body)
                    return  # the next request waits for this answer to end (_next_cycle)
                elif isinstance(event, h11.ConnectionClosed):
                    self.close_when_sent()
                    return
        except h11.RemoteProtocolError as exc:
            if conn.our_state is h11.SEND_RESPONSE and self.request is None:
                # Bytes after a request handed over and not yet answered (after `Connection: close`): nothing
                # more is read, its answer still goes, then close.
                self.ended = self.finishing = True
                return
            self._unreadable(exc.error_status_hint, f"Bad Request: {exc}")

    def _unreadable(self, status: int, text: str) -> None:
        """Answer a request that cannot be read with an error status, then close, if an answer can still go."""
        self.request, self.body = None, bytearray()
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.respond(status, text.encode(), "text/plain", [("connection", "close")])
        if not self.out:
            self.close()

    def expire(self) -> None:
        """A request not whole in time: 408 (503 while it waits for the server's budget), then close."""
        if self.out or self.broken:  # an answer of ours is still going out: nothing more can be said
            self.close()
            return
        self.finishing = True
        if self in self.server.budget.starved:
            self._unreadable(503, "Service Unavailable: too many large requests are arriving at once; try again")
        else:
            self._unreadable(408, f"Request Timeout: a request must arrive whole within {REQUEST_TIMEOUT:g} s")

    def overdue(self, now: float) -> bool:
        """Whether the request being read took over REQUEST_TIMEOUT from its first byte, plus the time it waited
        for the server's budget (at most as long again: none may hold its budget for ever)."""
        reading = self.reading
        if reading.began is None:
            return False
        waited = reading.waited + (now - reading.starved_since if reading.starved_since is not None else 0.0)
        return now - reading.began > REQUEST_TIMEOUT + min(waited, REQUEST_TIMEOUT)

    def idle_since(self) -> float | None:
        """When this connection last made progress, if it waits for a request (None while answering one)."""
        conn = self.conn
        if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE) and conn.their_state is not h11.DONE:
            return self.last
        return None


def _closing(response: h11.Response) -> h11.Response:
    headers = [(name, value) for name, value in response.headers.raw_items() if name.lower() != b"connection"]
    return h11.Response(
        status_code=response.status_code, headers=[*headers, (b"connection", b"close")], reason=response.reason
    )


_BUSY_TEXT = b"Service Unavailable: too many connections; try again soon"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)


@dataclass(slots=True)
class Budget:
    """What requests not yet whole hold, all connections together, against the most they may hold (`limit`)."""

    limit: int
    held: int = 0
    starved: set[Connection] = field(default_factory=set)  # connections not read for want of budget


class LoopServer:
    """A listening socket, its connections and timers, served on one event loop until stopped."""

    path = "/"

    def __init__(
        self, listen: tuple[str, int], allow_hosts: Iterable[str] = (), held_budget: int = HELD_BUDGET
    ) -> None:
        family = socket.AF_INET6 if ":" in listen[0] else socket.AF_INET
        self.socket = socket.create_server(listen, family=family, backlog=128)
        self.host, self.port = listen[0], self.socket.getsockname()[1]
        # The Host and Origin names requests may carry: loopback, the bound host (or all the machine's), those allowed.
        own = own_addresses() if self.host in WILDCARD else set()
        self.allowed = LOOPBACK | {self.host.lower(), *own, *(name.lower() for name in allow_hosts)}
        self.socket.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.connections: set[Connection] = set()
        self.timers: list[tuple[float, int, Callable[..., None], tuple[Any, ...]]] = []
        self.sequence = 0
        self.budget = Budget(held_budget)
        self.stopping = False
        self._wakeup = Signals()  # its descriptor wakes the loop: a signal, or stop_accepting() from a thread
        self.notes = Spool(sys.stderr)  # what the server says: never a write the loop waits on
        self._reserve: int | None = None
        self._refusing = False  # connections are being told 503 for want of descriptors (`_refuse_one`)

    @property
    def origin(self) -> str:
        """Where a client reaches the server (loopback when bound to every interface)."""
        host = self.host if self.host not in WILDCARD else ("::1" if ":" in self.host else "127.0.0.1")
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The URL of what it serves (`path`: its endpoint's, in a subclass that has one)."""
        return self.origin + self.path

    def handle(self, connection: Connection, request: Request, body: bytes) -> None:
        raise NotImplementedError

    def hold(self, connection: Connection, held: int) -> None:
        """A connection now holds this many bytes of requests not yet whole; when less, those that waited for
        budget are judged again."""
        less, budget = held < connection.reading.held, self.budget
        budget.held += held - connection.reading.held
        connection.reading.held = held
        if less and budget.starved:
            starved, budget.starved = budget.starved, set()
            now = time.monotonic()
            for waiting in starved:
                waiting.watch()
                if waiting not in budget.starved:  # read again: its idle clock starts afresh (it waited on us)
                    waiting.last = now
                    waiting.reading.waited += now - (waiting.reading.starved_since or now)
                    waiting.reading.starved_since = None

    def eldest(self) -> Connection | None:
        """Of the connections holding more than HELD_ALONE, the one whose request began first."""
        holding = [c for c in self.connections if c.reading.held > HELD_ALONE and c.reading.began is not None]
        return min(holding, key=lambda c: c.reading.began or 0.0, default=None)

    def closed(self, connection: Connection) -> None:
        """A connection has closed, either side having ended it (for a subclass that keeps track)."""

    def call_later(self, after: float, callback: Callable[..., None], *args: Any) -> None:
        self.sequence += 1
        heapq.heappush(self.timers, (time.monotonic() + after, self.sequence, callback, args))

    def stop_accepting(self) -> None:
        """End the loop (safe from any thread; again is harmless)."""
        self.stopping = True
        self._wakeup.wake()

    def serve_forever(self, signals: Signals | None = None) -> None:
        """Serve until `stop_accepting()`, or until a signal when given `signals`; then close the listener."""
        wakers = {signals or self._wakeup, self._wakeup}
        self.selector.register(self.socket, selectors.EVENT_READ, self._accept)
        for waker in wakers:
            self.selector.register(waker.fileno(), selectors.EVENT_READ, lambda _mask, waker=waker: waker.drain())
        self.call_later(IDLE_TIMEOUT / 4, self._sweep)
        with contextlib.suppress(OSError):
            self._reserve = os.open(os.devnull, os.O_RDONLY)
        try:
            while not self.stopping and (signals is None or signals.received is None):
                self.turn()
        finally:
            # Unregistered, so that a descriptor number reused later (the loop may go on: `turn`) is no clash.
            for fd in {self.socket.fileno(), *(waker.fileno() for waker in wakers)}:
                if fd >= 0 and fd in self.selector.get_map():
                    self.selector.unregister(fd)
            self.socket.close()
            if self._reserve is not None:
                os.close(self._reserve)
                self._reserve = None
            self.notes.flush()  # what it said is out before whatever is said next

    def turn(self, longest: float = LONGEST_WAIT) -> None:
        """Wait up to `longest` seconds for a descriptor or the next timer, and run what is due."""
        timeout = min(longest, max(0.0, self.timers[0][0] - time.monotonic())) if self.timers else longest
        for key, mask in self.selector.select(timeout):
            self._run(key.data, mask)
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now and not self.stopping:
            _when, _seq, callback, args = heapq.heappop(self.timers)
            self._run(callback, *args)

    def _run(self, callback: Callable[..., None], *args: Any) -> None:
        """Run one callback. An exception is a bug of ours: reported, the connection it served closed (and those
        h11 refuses to go on with), while every other session goes on."""
        try:
            callback(*args)
        except Exception:
            self.notes.say("mockmcp: internal error (a bug in mockmcp; please report it):\n" + traceback.format_exc())
            serving = [getattr(callback, "__self__", None), *args]
            for connection in [c for c in self.connections if c in serving or c.conn.our_state is h11.ERROR]:
                connection.close()

    def _accept(self, _mask: int) -> None:
        for _ in range(64):  # a burst of connections, then the others' turn
            try:
                sock, _address = self.socket.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno not in OUT_OF_RESOURCES:
                    raise
                if self._refuse_one():
                    continue
                self.notes.say(f"mockmcp: cannot accept a connection: {exc.strerror}; retrying")
                self.selector.unregister(self.socket)  # a connection that ends frees a descriptor
                self.call_later(0.1, self.selector.register, self.socket, selectors.EVENT_READ, self._accept)
                return
            sock.setblocking(False)
            no_delay(sock)
            self.connections.add(Connection(self, sock))
            self._refusing = False

    def _refuse_one(self) -> bool:
        """Out of descriptors: the one kept in reserve takes the waiting connection, tells it 503 at once, and is
        taken again. False when there is no reserve, or no connection was waiting."""
        if self._reserve is None:
            return False
        os.close(self._reserve)
        self._reserve = None
        try:
            sock, _address = self.socket.accept()
        except OSError:
            sock = None
        if sock is not None:
            with sock, contextlib.suppress(OSError):
                sock.setblocking(False)
                sock.send(_BUSY)
            if not self._refusing:  # said once for each stretch of refusals
                self.notes.say("mockmcp: out of file descriptors: new connections get 503 until some close")
            self._refusing = True
        with contextlib.suppress(OSError):
            self._reserve = os.open(os.devnull, os.O_RDONLY)
        return sock is not None

    def _sweep(self) -> None:
        """Close connections idle for too long, and answer 408 to requests not whole in time."""
        now = time.monotonic()
        for connection in list(self.connections):
            if connection in self.budget.starved:  # not read for want of budget: its silence is not its own
                if connection.overdue(now):
                    connection.expire()
                continue
            since = connection.idle_since()
            if since is not None and since < now - IDLE_TIMEOUT:
                connection.close()
            elif since is not None and connection.overdue(now):
                connection.expire()
        self.call_later(IDLE_TIMEOUT / 4, self._sweep)
