"""How the HTTP shells meet the socket: whole messages in one write, no Nagle delay (issue: 44 ms per call)."""

from __future__ import annotations

import socket
import threading
from typing import Any

import h11

from mockmcp.shells.http11 import Http11Server, Writer


class _CountingSocket:
    """A real socket whose writes are counted (the bytes still go to the peer)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.writes = sock, 0

    def sendall(self, data: bytes) -> None:
        self.writes += 1
        self.sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class _Probe(Http11Server):
    """Answers every request with a small JSON body and notes how the connection was set up and written."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0))
        self.seen: list[tuple[int, int]] = []

    def handle(self, writer: Writer, request: h11.Request, body: bytes) -> None:
        nodelay = writer.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        counting = _CountingSocket(writer.sock)
        writer.sock = counting  # type: ignore[assignment]
        writer.respond(200, b'{"ok":true}')
        self.seen.append((nodelay, counting.writes))


def test_a_response_goes_out_in_one_write_on_a_no_delay_socket() -> None:
    server = _Probe()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
            for _ in range(2):  # the second request reuses the connection
                client.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                reply = b""
                while not reply.endswith(b'{"ok":true}'):
                    chunk = client.recv(4096)
                    assert chunk, "the server closed the connection"
                    reply += chunk
                assert reply.startswith(b"HTTP/1.1 200 ")
    finally:
        server.stop_accepting()
        thread.join(5)
    assert server.seen == [(1, 1), (1, 1)]  # TCP_NODELAY set; head, body and end in one write
