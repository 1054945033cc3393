"""HTTP/1.1 plumbing: h11 over sockets and threads for the recording proxy, and what replay's event
loop (`http_loop.py`) shares with it: limits, TCP_NODELAY, the addresses a server bound to every
interface answers to.

`Http11Server` accepts connections, one thread each, reads whole requests with h11 and hands each
to `handle(writer, request, body)`; `Writer` is a connection's outgoing side, which several
threads may use in turn (an SSE stream is written by whichever thread has the next message).
`serve_until_signalled` serves until SIGINT or SIGTERM: the accept loop watches the signal
descriptor of `toolkit.Signals` beside the listening socket, so nothing is raised into it.
"""

from __future__ import annotations

import errno
import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterable
from typing import Any, Protocol

import h11

from mockmcp.core.streamable import LOOPBACK
from mockmcp.shells.http_request import Request
from mockmcp.shells.toolkit import Signals, wait_readable

__all__ = [
    "Http11Server",
    "IDLE_TIMEOUT",
    "Listener",
    "MAX_BODY",
    "OUT_OF_RESOURCES",
    "Responder",
    "TOO_LARGE",
    "Writer",
    "headers_of",
    "no_delay",
    "serve_until_signalled",
]

MAX_BODY = 16 << 20  # bytes a request body may have (413 beyond): an MCP message is far smaller
IDLE_TIMEOUT = 60.0  # seconds a connection may wait between bytes of a request, or between requests
# accept() failing for want of a descriptor or memory: wait and try again, never stop serving.
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
TOO_LARGE = f"Content Too Large: a request body may have at most {MAX_BODY} bytes"
WILDCARD = frozenset({"0.0.0.0", "::", ""})


class _TooLarge(Exception):
    """A request body over MAX_BODY."""


def headers_of(event: h11.Request | h11.Response | Request) -> dict[str, str]:
    """A message's headers by lowercase name (a repeated header keeps its last value); a loop's
    `Request` has them as `fields` already."""
    return {name.decode().lower(): value.decode("latin-1") for name, value in event.headers}


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


class Responder:
    """What both kinds of connection (the proxy's threaded `Writer`, the loop's `Connection`) answer with:
    `respond` sends a whole response through the connection's own `send`."""

    def send(self, *events: Any) -> None:
        raise NotImplementedError

    def respond(
        self,
        status: int,
        body: bytes = b"",
        content_type: str = "application/json",
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        fields = [("content-type", content_type), ("content-length", str(len(body))), *headers]
        self.send_whole(status, fields, body)

    def send_whole(self, status: int, fields: list[tuple[str, str]], body: bytes) -> None:
        """A whole response, its head and body in one write (the loop's connection writes it without h11)."""
        self.send(h11.Response(status_code=status, headers=fields), h11.Data(data=body), h11.EndOfMessage())


class Writer(Responder):
    """One connection's outgoing side; several threads may write an SSE stream, one at a time."""

    def __init__(self, sock: socket.socket, conn: h11.Connection) -> None:
        self.sock, self.conn, self.lock = sock, conn, threading.Lock()
        self.broken = False

    def send(self, *events: Any) -> None:
        with self.lock:
            # One write for all the events (a response's head and body together): separate small
            # writes would each wait for the peer's delayed ACK. h11's LocalProtocolError is a bug of
            # ours, client or no client, and is left to propagate (see Http11Server._connection).
            data = b"".join(self.conn.send(event) or b"" for event in events)
            if self.broken:
                return
            try:
                self.sock.sendall(data)
            except OSError:
                self.broken = True

    def abort(self) -> None:
        """Drop the connection mid-message, as a server that dies does."""
        with self.lock:
            self.broken = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Listener:
    """A listening socket, the Host and Origin names its requests may carry, and its URL's origin."""

    def __init__(self, listen: tuple[str, int], allow_hosts: Iterable[str] = ()) -> None:
        family = socket.AF_INET6 if ":" in listen[0] else socket.AF_INET
        self.socket = socket.create_server(listen, family=family, backlog=128)
        self.host, self.port = listen[0], self.socket.getsockname()[1]
        # The Host and Origin names requests may carry: loopback, the bound host (every address of
        # the machine when bound to all interfaces), and those the user allows.
        own = own_addresses() if self.host in WILDCARD else set()
        self.allowed = LOOPBACK | {self.host.lower(), *own, *(name.lower() for name in allow_hosts)}

    @property
    def origin(self) -> str:
        """Where a client reaches the server (loopback when bound to every interface)."""
        host = self.host if self.host not in WILDCARD else ("::1" if ":" in self.host else "127.0.0.1")
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"


class Http11Server(Listener):
    """Accepts connections on a listening socket and serves each on a thread of its own."""

    def __init__(self, listen: tuple[str, int], allow_hosts: Iterable[str] = ()) -> None:
        super().__init__(listen, allow_hosts)
        self._stopping = threading.Event()

    def handle(self, writer: Writer, request: h11.Request, body: bytes) -> None:
        raise NotImplementedError

    def stop_accepting(self) -> None:
        """Stop the accept loop and close the listening socket (again is harmless)."""
        self._stopping.set()
        self.socket.close()

    def serve_forever(self, signals: Signals | None = None) -> None:
        """Accept connections until `stop_accepting()`, or until a signal when given `signals`."""
        self.socket.settimeout(0.2)
        while not self._stopping.is_set():
            if signals is not None:
                # The 0.2 s is for stop_accepting() from another thread; a signal wakes the wait at once.
                try:
                    ready = wait_readable([self.socket.fileno(), signals.fileno()], 0.2)
                except ValueError:  # the socket was closed meanwhile
                    break
                if signals.received is not None:
                    break
                if self.socket.fileno() not in ready:
                    continue
            try:
                sock, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if exc.errno not in OUT_OF_RESOURCES:
                    break
                print(f"mockmcp: cannot accept a connection: {exc.strerror}; retrying", file=sys.stderr, flush=True)
                time.sleep(0.1)  # a connection that ends frees a descriptor
                continue
            no_delay(sock)
            sock.settimeout(IDLE_TIMEOUT)
            threading.Thread(target=self._connection, args=(sock,), daemon=True).start()

    def _connection(self, sock: socket.socket) -> None:
        conn = h11.Connection(h11.SERVER)
        writer = Writer(sock, conn)
        try:
            while not writer.broken:
                request = self._read(writer)
                if request is None:
                    break
                self.handle(writer, *request)
                if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                    conn.start_next_cycle()
                else:
                    break
        except h11.RemoteProtocolError as exc:
            self._unreadable(writer, exc.error_status_hint, f"Bad Request: {exc}")
        except _TooLarge:
            self._unreadable(writer, 413, TOO_LARGE)
        except h11.LocalProtocolError:
            print("mockmcp: internal error (a bug in mockmcp; please report it):", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
        except OSError:
            pass  # the client went away, or was idle too long
        finally:
            sock.close()

    @staticmethod
    def _unreadable(writer: Writer, status: int, text: str) -> None:
        """Answer a request that cannot be read with an error status, then close, if an answer can still go."""
        if writer.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            headers = [("connection", "close")]
            writer.respond(status, text.encode(), "text/plain", headers)

    def _read(self, writer: Writer) -> tuple[h11.Request, bytes] | None:
        sock, conn = writer.sock, writer.conn
        request, body = None, bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                if conn.they_are_waiting_for_100_continue:
                    writer.send(h11.InformationalResponse(status_code=100, headers=[]))
                conn.receive_data(sock.recv(1 << 16))
            elif isinstance(event, h11.Request):
                request = event
                if int(headers_of(event).get("content-length", "0") or 0) > MAX_BODY:
                    raise _TooLarge
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    raise _TooLarge
            elif isinstance(event, h11.EndOfMessage) and request is not None:
                return request, bytes(body)
            else:
                return None


class _Serving(Protocol):
    def serve_forever(self, signals: Signals | None = None) -> None: ...

    def stop_accepting(self) -> None: ...


def serve_until_signalled(server: _Serving) -> int:
    """Serve until SIGINT or SIGTERM, then stop accepting connections; returns the signal's number."""
    with Signals() as signals:
        try:
            server.serve_forever(signals)
        finally:
            server.stop_accepting()
    return signals.received or 0
