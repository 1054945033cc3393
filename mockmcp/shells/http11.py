"""HTTP/1.1 plumbing shared by replay's HTTP server and the recording proxy: h11 over sockets and threads.

`Http11Server` accepts connections, one thread each, reads whole requests with h11 and hands each
to `handle(writer, request, body)`; `Writer` is a connection's outgoing side, which several
threads may use in turn (an SSE stream is written by whichever thread has the next message).
`serve_until_signalled` serves until SIGINT or SIGTERM: the accept loop watches the signal
descriptor of `toolkit.Signals` beside the listening socket, so nothing is raised into it.
"""

from __future__ import annotations

import select
import socket
import threading
from typing import Any

import h11

from mockmcp.shells.toolkit import Signals, wait_readable

__all__ = ["Http11Server", "Writer", "headers_of", "no_delay", "serve_until_signalled"]


def headers_of(event: h11.Request | h11.Response) -> dict[str, str]:
    """An h11 message's headers by lowercase name (a repeated header keeps its last value)."""
    return {name.decode().lower(): value.decode("latin-1") for name, value in event.headers}


def no_delay(sock: socket.socket) -> None:
    """Send each write at once (no Nagle): every write here is a whole message or SSE event."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Writer:
    """One connection's outgoing side; several threads may write an SSE stream, one at a time."""

    def __init__(self, sock: socket.socket, conn: h11.Connection) -> None:
        self.sock, self.conn, self.lock = sock, conn, threading.Lock()
        self.broken = False

    def send(self, *events: Any) -> None:
        with self.lock:
            if self.broken:
                return
            try:
                # One write for all the events (a response's head and body together): separate small
                # writes would each wait for the peer's delayed ACK.
                self.sock.sendall(b"".join(self.conn.send(event) or b"" for event in events))
            except (OSError, h11.LocalProtocolError):
                self.broken = True

    def respond(
        self,
        status: int,
        body: bytes = b"",
        content_type: str = "application/json",
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        fields = [("content-type", content_type), ("content-length", str(len(body))), *(headers or [])]
        self.send(h11.Response(status_code=status, headers=fields), h11.Data(data=body), h11.EndOfMessage())

    def peer_closed(self) -> bool:
        """Whether the client has closed its side (a long-lived stream learns it no other way)."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
            return bool(readable) and self.sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def abort(self) -> None:
        """Drop the connection mid-message, as a server that dies does."""
        with self.lock:
            self.broken = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Http11Server:
    """Accepts connections on a listening socket and serves each on a thread of its own."""

    def __init__(self, listen: tuple[str, int]) -> None:
        family = socket.AF_INET6 if ":" in listen[0] else socket.AF_INET
        self.socket = socket.create_server(listen, family=family)
        self.host, self.port = listen[0], self.socket.getsockname()[1]
        self._stopping = threading.Event()

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

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
            except OSError:
                break
            no_delay(sock)
            threading.Thread(target=self._connection, args=(sock,), daemon=True).start()

    def _connection(self, sock: socket.socket) -> None:
        conn = h11.Connection(h11.SERVER)
        writer = Writer(sock, conn)
        try:
            while not writer.broken:
                request = self._read(sock, conn)
                if request is None:
                    break
                self.handle(writer, *request)
                if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                    conn.start_next_cycle()
                else:
                    break
        except (OSError, h11.RemoteProtocolError):
            pass
        finally:
            sock.close()

    def _read(self, sock: socket.socket, conn: h11.Connection) -> tuple[h11.Request, bytes] | None:
        request, body = None, b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(sock.recv(1 << 16))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage) and request is not None:
                return request, body
            else:
                return None


def serve_until_signalled(server: Http11Server) -> int:
    """Serve until SIGINT or SIGTERM, then stop accepting connections; returns the signal's number."""
    with Signals() as signals:
        try:
            server.serve_forever(signals)
        finally:
            server.stop_accepting()
    return signals.received or 0
