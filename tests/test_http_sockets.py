"""How the HTTP shells (replay and the recording proxy, both on `http_loop`'s event loop) meet the socket:
whole messages in one write, no Nagle delay, malformed and oversized requests answered, slow and
clumsy clients stalling no one else."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mockmcp.http._loop import MAX_BODY, Connection, LoopServer, Request, reason_of
from mockmcp.http._replay import carry_out
from mockmcp.http._sse import SseEvents
from mockmcp.http._stream import End, Event, Open
from mockmcp.http._streamable import sse_event


class _CountingSocket:
    """A real socket whose writes are counted (the bytes still go to the peer)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.writes = sock, 0

    def sendall(self, data: bytes) -> None:
        self.writes += 1
        self.sock.sendall(data)

    def send(self, data: bytes) -> int:
        self.writes += 1
        return self.sock.send(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def _answer(server: Any, writer: Connection, request: Request, body: bytes) -> None:
    """Answers every request with a small JSON body and notes how the connection was set up and written."""
    if request.target == b"/bug":  # a response after the response: h11 refuses, as it should
        writer.respond(200)
        writer.respond(200)
        return
    if request.target == b"/echo":
        writer.respond(200, body)
        return
    if request.target == b"/stream":  # an SSE stream that ends at once, as a GET stream the endpoint ends
        opened = Open(writer, (("content-type", "text/event-stream"),))
        carry_out([opened, Event(writer, sse_event(b"{}")), End(writer, close=True)], lambda *_: None, print)
        return
    nodelay = writer.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    counting = _CountingSocket(writer.sock)
    writer.sock = counting  # type: ignore[assignment]
    writer.respond(200, b'{"ok":true}')
    writer.sock = counting.sock
    server.seen.append((nodelay, counting.writes))


class _LoopProbe(LoopServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0))
        self.seen: list[tuple[int, int]] = []

    def handle(self, connection: Connection, request: Request, body: bytes) -> None:
        _answer(self, connection, request, body)


def test_a_response_goes_out_in_one_write_on_a_no_delay_socket() -> None:
    with _probe() as server, socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        for _ in range(2):  # the second request reuses the connection
            client.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            reply = b""
            while not reply.endswith(b'{"ok":true}'):
                chunk = client.recv(4096)
                assert chunk, "the server closed the connection"
                reply += chunk
            assert reply.startswith(b"HTTP/1.1 200 OK\r\n")  # with its reason phrase, which a client may show
    assert server.seen == [(1, 1), (1, 1)]  # TCP_NODELAY set; head, body and end in one write


@contextmanager
def _probe() -> Iterator[_LoopProbe]:
    server = _LoopProbe()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop_accepting()
        thread.join(5)


def _exchange(port: int, data: bytes) -> bytes:
    """Send data, read all the server says until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(data)
        reply = b""
        while chunk := client.recv(1 << 16):
            reply += chunk
        return reply


def test_a_get_streams_connection_is_closed_once_its_end_is_out() -> None:
    """No client sends another request on it: kept open, it would hold a descriptor until it idled out."""
    with _probe() as server:
        reply = _exchange(server.port, b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")  # read to the close
    assert reply.startswith(b"HTTP/1.1 200 OK\r\n") and reply.endswith(b"data: {}\n\n\r\n0\r\n\r\n")


def test_malformed_http_gets_400_and_an_oversized_body_413() -> None:
    with _probe() as server:
        garbage = _exchange(server.port, b"this is not HTTP\r\n\r\n")
        assert garbage.startswith(b"HTTP/1.1 400 ") and b"Bad Request" in garbage
        big = _exchange(
            server.port, f"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode()
        )
        assert big.startswith(b"HTTP/1.1 413 ") and str(MAX_BODY).encode() in big


def test_expect_100_continue_is_answered_before_the_body_is_sent() -> None:
    with _probe() as server, socket.create_connection(("127.0.0.1", server.port), timeout=10) as client:
        client.sendall(
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
        )
        assert client.recv(1 << 16).startswith(b"HTTP/1.1 100 ")  # the body is not sent yet
        client.sendall(b"hello")
        reply = b""
        while chunk := client.recv(1 << 16):
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(b"hello")


def test_a_protocol_error_of_our_own_is_reported_not_swallowed(capsys: pytest.CaptureFixture[str]) -> None:
    with _probe() as server:
        reply = _exchange(server.port, b"GET /bug HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 200 ")
    err = capsys.readouterr().err
    assert "internal error" in err and "LocalProtocolError" in err


@pytest.mark.parametrize("data", [b"one line", b"two\nlines", b"crlf\r\nlines\n", b'{"a":"x"}\n'])
def test_an_sse_event_with_several_lines_arrives_whole(data: bytes) -> None:
    expected = data.replace(b"\r\n", b"\n").rstrip(b"\n")
    encoded = sse_event(data)
    assert _data(SseEvents(), encoded) == [expected]
    events = SseEvents()  # however the chunks fall
    assert [e for i in range(len(encoded)) for e in _data(events, encoded[i : i + 1])] == [expected]


def _data(events: SseEvents, chunk: bytes) -> list[bytes | int]:
    """The data of the events the chunk completes."""
    return [data for _id, data in events.events(chunk)]


def _get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := client.recv(1 << 16):
            reply += chunk
        return reply


def test_on_the_loop_idle_half_sent_and_never_reading_clients_cost_no_thread_and_stall_no_one() -> None:
    threads = threading.active_count()
    with _probe() as server:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(100)]
        for sock in idle[:50]:
            sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf")
        greedy = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        request = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n" + b"x" * 65536
        greedy.setblocking(False)
        sent = 0
        try:  # pipelined requests whose answers are never read, until the server stops reading them
            while sent < 64 << 20:
                sent += greedy.send(request)
        except BlockingIOError:
            pass
        assert _get(server.port).startswith(b"HTTP/1.1 200 ")  # another client is answered at once
        assert threading.active_count() == threads + 1  # the loop's own thread, nothing per connection
        for sock in [*idle, greedy]:
            sock.close()


@pytest.mark.parametrize("ending", [b"\r\n", b"\n", b"\r"])
def test_sse_events_with_any_line_ending_however_the_chunks_fall(ending: bytes) -> None:
    stream = (
        b"event: message" + ending + b"data: {}" + ending + ending + b"data: a" + ending + b"data: b" + ending + ending
    )
    for cut in range(len(stream) + 1):  # every place a chunk may end, between CR and LF too
        events = SseEvents()
        assert _data(events, stream[:cut]) + _data(events, stream[cut:]) == [b"{}", b"a\nb"]


@pytest.mark.parametrize(
    ("status", "reason"), [(200, b"OK"), (502, b"Bad Gateway"), (421, b"Misdirected Request"), (599, b"")]
)
def test_a_status_of_our_own_goes_with_its_usual_reason_phrase(status: int, reason: bytes) -> None:
    assert reason_of(status) == reason
