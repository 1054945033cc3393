"""The loop's connection (`http/_loop.py`), driven by hand over a socket pair: what it hands the
server of each request and what it answers to one it cannot take, however the bytes are split and
whatever follows them; its clocks (idle, 408) and the budget all connections share."""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from mockmcp.http import _loop as http_loop
from mockmcp.http._loop import IDLE_TIMEOUT, MAX_BODY, MAX_HEAD, REQUEST_TIMEOUT, Connection, LoopServer, Request

SDK_POST = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
    b"User-Agent: python-httpx/0.28.1\r\naccept: application/json, text/event-stream\r\n"
    b"content-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\n"
    b"mcp-name: read_file\r\nContent-Length: 47\r\n\r\n"
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call"}\n'
)
CHUNKED = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
PUT = b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz"


class _Echo(LoopServer):
    """Answers each request with what it read: method, target, headers and body."""

    def __init__(self, held_budget: int = http_loop.HELD_BUDGET) -> None:
        super().__init__(("127.0.0.1", 0), held_budget=held_budget)
        self.seen: list[tuple[Request, bytes]] = []

    def handle(self, connection: Connection, request: Request, body: bytes) -> None:
        self.seen.append((request, body))
        if request.target == b"/hold":  # answered later (an SSE stream open for long)
            return
        connection.respond(200, body, "text/plain", [("x-target", request.target.decode())])


@contextmanager
def _connection() -> Iterator[tuple[_Echo, Connection, socket.socket]]:
    """A loop connection over a socket pair, driven by hand: write to the peer, then `_pump`."""
    server = _Echo()
    ours, peer = socket.socketpair()
    ours.setblocking(False)
    peer.settimeout(5)
    try:
        yield server, Connection(server, ours), peer
    finally:
        peer.close()
        ours.close()
        server.socket.close()


def _pump(server: _Echo, connection: Connection) -> None:
    """What the loop does when the connection is readable, then its due timers (the next request)."""
    connection._ready(selectors.EVENT_READ)
    while server.timers:
        _when, _seq, callback, args = server.timers.pop(0)
        callback(*args)


def _read_all(peer: socket.socket) -> bytes:
    peer.setblocking(False)
    data = b""
    try:
        while chunk := peer.recv(1 << 16):
            data += chunk
    except BlockingIOError:
        pass
    peer.setblocking(True)
    return data


# What the server is handed of each request: method, target, fields (by lowercase name, a repeated
# header's values joined by ", ", spaces around a value dropped) and body.
READ: dict[str, tuple[bytes, tuple[bytes, bytes, dict[str, str], bytes]]] = {
    "the SDK's POST": (
        SDK_POST,
        (
            b"POST",
            b"/mcp",
            {
                "host": "127.0.0.1:8000",
                "accept-encoding": "gzip, deflate",
                "connection": "keep-alive",
                "user-agent": "python-httpx/0.28.1",
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "read_file",
                "content-length": "47",
            },
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call"}\n',
        ),
    ),
    "a GET without a body": (
        b"GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
        (b"GET", b"/mcp", {"host": "x", "accept": "text/event-stream"}, b""),
    ),
    "spaces and tabs around a value": (
        b"POST /a?b=c HTTP/1.1\r\nHost:x\r\nX-A: \t one  two \t\r\nContent-Length: 2\r\n\r\n{}",
        (b"POST", b"/a?b=c", {"host": "x", "x-a": "one  two", "content-length": "2"}, b"{}"),
    ),
    "an empty value, obs-text": (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Empty:\r\nX-Latin: caf\xe9\r\n\r\n",
        (b"GET", b"/", {"host": "x", "x-empty": "", "x-latin": "caf\xe9"}, b""),
    ),
    "a repeated header": (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\n\r\n",
        (b"GET", b"/", {"host": "x", "x-a": "1, 2"}, b""),
    ),
    "a chunked body": (CHUNKED, (b"POST", b"/", {"host": "x", "transfer-encoding": "chunked"}, b"{}")),
    "an obs-fold, unfolded": (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n",
        (b"GET", b"/", {"host": "x", "x-a": "one two"}, b""),
    ),
    "bare LF line ends": (b"GET / HTTP/1.1\nHost: x\n\n", (b"GET", b"/", {"host": "x"}, b"")),
}


@pytest.mark.parametrize("name", list(READ))
def test_what_the_server_is_handed_of_a_request(name: str) -> None:
    data, (method, target, fields, body) = READ[name]
    with _connection() as (server, connection, peer):
        peer.sendall(data)
        _pump(server, connection)
        [(request, read)] = server.seen
        assert (request.method, request.target, request.fields, read) == (method, target, fields, body)
        assert _read_all(peer).startswith(b"HTTP/1.1 200 ") and not connection.broken


# What the connection answers to each request (the status of its first answer), and whether it
# closes after: the handler's 200, or the connection's own refusal.
ANSWERED: dict[str, tuple[bytes, int, bool]] = {
    "Expect: 100-continue, the body sent at once": (
        b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
        200,
        False,
    ),
    "HTTP/1.0": (b"GET / HTTP/1.0\r\nHost: x\r\n\r\n", 200, True),
    "Connection: close": (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200, True),
    "Connection: close beside keep-alive": (
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n",
        200,
        True,
    ),
    "two equal Content-Length": (
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        200,
        False,
    ),
    "two different Content-Length": (
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
        400,
        True,
    ),
    "a signed Content-Length": (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}", 400, True),
    "a Transfer-Encoding other than chunked": (
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
        True,
    ),
    "no Host": (b"GET / HTTP/1.1\r\nX-A: 1\r\n\r\n", 400, True),
    "two Hosts": (b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, True),
    "a space before the colon": (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, True),
    "a NUL in a value": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, True),
    "a bare CR": (b"GET / HTTP/1.1\r\nHost: x\rX-A: 1\r\n\r\n", 400, True),
    "a lowercase version": (b"GET / http/1.1\r\nHost: x\r\n\r\n", 400, True),
    "a space in the target": (b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400, True),
    "not HTTP": (b"this is not HTTP\r\n\r\n", 400, True),
    "a body over the limit": (
        f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode(),
        413,
        True,
    ),
    "a chunked body over the limit": (
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % (MAX_BODY + 1)
        + b"x" * (MAX_BODY + 1),
        413,
        True,
    ),
    # h11 judges a head while it is incomplete: one of 64 KiB and a few bytes may be whole by then.
    "a head over the limit": (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 2 * MAX_HEAD + b"\r\n\r\n", 431, True),
}


@pytest.mark.parametrize("name", list(ANSWERED))
def test_what_the_connection_answers_and_whether_it_closes_after(name: str) -> None:
    data, status, closes = ANSWERED[name]
    with _connection() as (server, connection, peer):
        peer.setblocking(False)
        sent = 0
        with contextlib.suppress(BlockingIOError):
            while sent < len(data) and not connection.broken:  # the connection reads as the bytes come
                sent += peer.send(data[sent : sent + (1 << 16)])
                _pump(server, connection)
        _pump(server, connection)
        answer = _read_all(peer)
        assert answer.startswith(b"HTTP/1.1 %d " % status), answer[:200]
        assert connection.broken is closes
        assert len(server.seen) == (status == 200)


PIPELINED = SDK_POST + CHUNKED + PUT


@pytest.mark.parametrize("data", [SDK_POST, CHUNKED, PIPELINED], ids=["counted", "chunked", "pipelined"])
def test_however_the_bytes_are_split_the_same_requests_are_read_and_answered(data: bytes) -> None:
    with _connection() as (server, connection, peer):
        peer.sendall(data)
        _pump(server, connection)
        whole, answers = server.seen, _read_all(peer)
    assert len(whole) == data.count(b" HTTP/1.1\r\n")
    assert answers.count(b"HTTP/1.1 200 ") == len(whole)
    for cut in range(1, len(data)):
        with _connection() as (server, connection, peer):
            peer.sendall(data[:cut])
            _pump(server, connection)
            peer.sendall(data[cut:])
            _pump(server, connection)
            _pump(server, connection)  # a request pipelined behind an answer
            assert (server.seen, _read_all(peer)) == (whole, answers), cut


@pytest.mark.parametrize("later", [False, True], ids=["answered at once", "the first answered later"])
def test_requests_pipelined_before_the_client_half_closes_are_all_answered_then_it_closes(later: bool) -> None:
    """A client may send all its requests and shut its side for writing: the end of its input comes
    before their answers, and each is still answered (the first perhaps later, as the proxy does)."""
    first = b"POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}" if later else SDK_POST
    with _connection() as (server, connection, peer):
        peer.sendall(first + CHUNKED + PUT)
        peer.shutdown(socket.SHUT_WR)
        connection._ready(selectors.EVENT_READ)
        connection._ready(selectors.EVENT_READ)  # the end of input, read before the loop's timers run
        if later:
            connection.respond(200, b"held", "text/plain")
        for _ in range(3):
            _pump(server, connection)
        answers = _read_all(peer)
        assert [request.method for request, _body in server.seen] == [b"POST", b"POST", b"PUT"]
        assert answers.count(b"HTTP/1.1 200 ") == 3
        assert connection.broken  # nothing more can come: closed once the answers are out


def test_the_answer_to_head_is_the_head_alone_and_the_connection_goes_on() -> None:
    """Replay answers HEAD 405 with a body; h11 refuses to send a body to HEAD, and the connection
    that made it refuse would be left open for ever."""
    with _connection() as (server, connection, peer):
        server.handle = lambda conn, _request, _body: conn.respond(405, b"Method Not Allowed", "text/plain")  # type: ignore[method-assign]
        peer.sendall(b"HEAD /mcp HTTP/1.1\r\nHost: x\r\n\r\n" + PUT)
        _pump(server, connection)
        answers = _read_all(peer)
    assert answers.count(b"HTTP/1.1 405 ") == 2 and not connection.broken
    head, rest = answers.split(b"\r\n\r\n", 1)
    assert b"content-length: 18" in head.lower() and rest.startswith(b"HTTP/1.1 405 ")  # the length, no body


def test_bytes_after_a_last_request_never_take_the_place_of_its_answer() -> None:
    """After `Connection: close` the client may send nothing more; if it does while its request is
    being answered (the proxy waits on the target), that answer still goes, and then the connection closes."""
    with _connection() as (server, connection, peer):
        peer.sendall(b"POST /hold HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
        _pump(server, connection)
        peer.sendall(b"x")
        _pump(server, connection)
        connection.respond(200, b"the answer", "text/plain")
        _pump(server, connection)
        answers = _read_all(peer)
    assert answers.startswith(b"HTTP/1.1 200 ") and answers.endswith(b"the answer") and b" 400 " not in answers
    assert connection.broken


def test_a_request_cut_short_by_the_client_is_answered_400() -> None:
    with _connection() as (server, connection, peer):
        peer.sendall(SDK_POST[:-5])
        _pump(server, connection)
        peer.shutdown(socket.SHUT_WR)
        _pump(server, connection)
        assert _read_all(peer).startswith(b"HTTP/1.1 400 ")
        assert server.seen == [] and connection.broken


@pytest.mark.parametrize(
    ("sent", "closed"),
    [
        (b"", True),
        (b"POST /mcp HTTP/1.1\r\nHo", True),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nhalf", True),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nhalf", True),
        (b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\n", False),
    ],
    ids=["idle", "half a head", "half a body", "half a chunked body", "being answered"],
)
def test_a_connection_idle_or_half_sent_too_long_is_closed_not_one_being_answered(sent: bytes, closed: bool) -> None:
    with _connection() as (server, connection, peer):
        server.connections.add(connection)
        if sent:
            peer.sendall(sent)
            _pump(server, connection)
        connection.last = time.monotonic() - IDLE_TIMEOUT - 1
        server._sweep()
        assert connection.broken is closed


@pytest.mark.parametrize(
    ("sent", "expired"),
    [
        (b"", False),
        (b"POST /mcp HTTP/1.1\r\nHo", True),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nhalf", True),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nhalf", True),
        (b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\n", False),
        (b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\nPOST /mcp HTTP/1.1\r\nHo", False),  # pipelined: its turn is later
    ],
    ids=["idle", "half a head", "half a body", "half a chunked body", "being answered", "pipelined behind"],
)
def test_a_request_trickling_in_past_its_deadline_gets_408_however_recent_its_last_byte(
    sent: bytes, expired: bool
) -> None:
    """The idle rule alone let a client sending a byte a minute hold a connection for ever."""
    with _connection() as (server, connection, peer):
        server.connections.add(connection)
        if sent:
            peer.sendall(sent)
            _pump(server, connection)
        assert (
            connection.reading.began is not None
        ) is expired  # the first byte of a request still coming starts its clock
        if expired:
            connection.reading.began = time.monotonic() - REQUEST_TIMEOUT - 1  # it began long ago; a byte came just now
        server._sweep()
        assert connection.broken is expired
        if expired:
            answer = _read_all(peer)
            assert answer.startswith(b"HTTP/1.1 408 ") and b"connection: close" in answer
            assert answer.endswith(f"within {REQUEST_TIMEOUT:g} s".encode())
            assert server.seen == []


def test_a_request_s_clock_runs_from_its_first_byte_and_stops_when_it_is_whole() -> None:
    with _connection() as (server, connection, peer):
        peer.sendall(SDK_POST[:10])
        _pump(server, connection)
        began = connection.reading.began
        assert began is not None
        peer.sendall(SDK_POST[10:-5])
        _pump(server, connection)
        assert connection.reading.began == began  # more bytes do not reset it, as they reset the idle clock
        peer.sendall(SDK_POST[-5:])
        _pump(server, connection)
        assert connection.reading.began is None and len(server.seen) == 1


def test_a_request_pipelined_behind_an_answer_starts_its_clock_when_that_answer_is_out() -> None:
    with _connection() as (server, connection, peer):
        server.connections.add(connection)
        peer.sendall(b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\nPOST /mcp HTTP/1.1\r\nHo")
        _pump(server, connection)
        assert connection.reading.began is None  # its turn has not come
        connection.respond(200)
        _pump(server, connection)
        assert connection.reading.began is not None
        connection.reading.began = time.monotonic() - REQUEST_TIMEOUT - 1
        server._sweep()
        assert _read_all(peer).endswith(f"within {REQUEST_TIMEOUT:g} s".encode()) and connection.broken


def test_requests_not_yet_whole_share_one_budget_and_big_ones_wait_when_it_is_spent() -> None:
    """However many connections send large bodies slowly, what they hold together stays bounded."""
    server = _Echo(held_budget=300_000)
    pairs = [socket.socketpair() for _ in range(3)]
    try:
        connections = []
        for ours, peer in pairs:
            ours.setblocking(False)
            peer.settimeout(5)
            connections.append(Connection(server, ours))
            server.connections.add(connections[-1])
        size = 400_000
        head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size

        def feed(index: int, data: bytes) -> None:
            """Send data to a connection, the loop reading it as it comes, while the loop reads at all."""
            peer, connection = pairs[index][1], connections[index]
            while data and connection.interest & selectors.EVENT_READ:
                sent = peer.send(data[: 1 << 16])
                data = data[sent:]
                connection._ready(selectors.EVENT_READ)
            if data:  # as much as the socket takes while the connection is not read
                peer.setblocking(False)
                with contextlib.suppress(BlockingIOError):
                    peer.send(data)
                peer.settimeout(5)
            while connection.interest & selectors.EVENT_READ:  # what is still in the socket
                before = (connection.reading.held, len(server.seen))
                connection._ready(selectors.EVENT_READ)
                if (connection.reading.held, len(server.seen)) == before:
                    break

        feed(0, head + b"a" * 200_000)
        assert (
            server.budget.held == connections[0].reading.held >= 200_000
        )  # the body so far (the head is read: a Request)
        feed(1, head + b"b" * 120_000)  # the budget is spent now: this one, holding much, is not read
        assert server.budget.held > 300_000 and not connections[1].interest & selectors.EVENT_READ
        feed(0, b"a" * 1000)  # the request that began first goes on, so one always can finish
        assert connections[0].interest & selectors.EVENT_READ and server.budget.starved == {connections[1]}
        stale = time.monotonic() - IDLE_TIMEOUT - 10
        # It has waited long, on us, not on its client: since its first byte, and for budget since just after.
        connections[1].last = connections[1].reading.began = stale
        connections[1].reading.starved_since = stale + 1
        server._sweep()
        assert not connections[1].broken
        small = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
        feed(2, small)  # a small request still gets through: only the big ones wait
        assert [body for _request, body in server.seen] == [b"{}"]
        connections[0].close()  # one of the big ones goes: the others are read again, their idle clocks afresh
        assert server.budget.held == connections[1].reading.held and connections[1].interest & selectors.EVENT_READ
        assert connections[1].last > stale and connections[1].reading.began == stale  # its deadline is not reset
        assert (
            IDLE_TIMEOUT + 8 < connections[1].reading.waited < IDLE_TIMEOUT + 10
        )  # but counts that wait, up to a limit
        assert not connections[1].overdue(time.monotonic())
        feed(1, b"b" * (size - 120_000))
        assert [len(body) for _request, body in server.seen] == [2, size] and server.budget.held == 0
    finally:
        for ours, peer in pairs:
            ours.close()
            peer.close()
        server.socket.close()


@pytest.mark.parametrize(
    "framing", [b"Content-Length: 2\r\n\r\n{}", b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"]
)
def test_a_repeated_header_s_values_are_joined_in_fields_and_kept_apart_in_headers(framing: bytes) -> None:
    head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nOrigin: http://127.0.0.1\r\nOrigin: https://evil.example\r\n"
    with _connection() as (server, connection, peer):
        peer.sendall(head + framing)
        _pump(server, connection)
        [(request, _body)] = server.seen
    assert request.fields["origin"] == "http://127.0.0.1, https://evil.example"
    origins = [value for name, value in request.headers if name == b"origin"]
    assert origins == [b"http://127.0.0.1", b"https://evil.example"]


def test_an_exception_serving_one_connection_is_reported_and_closes_only_that_one(
    capfd: pytest.CaptureFixture[str],
) -> None:
    class _Broken(_Echo):
        def handle(self, connection: Connection, request: Request, body: bytes) -> None:
            if request.target == b"/boom":
                raise ValueError("a bug of ours")
            super().handle(connection, request, body)

    server = _Broken()
    pairs = [socket.socketpair() for _ in range(2)]
    try:
        connections = []
        for ours, peer in pairs:
            ours.setblocking(False)
            peer.settimeout(5)
            connection = Connection(server, ours)
            server.connections.add(connection)
            connections.append(connection)
        bad, good = (peer for _ours, peer in pairs)
        bad.sendall(b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
        good.sendall(b"GET /fine HTTP/1.1\r\nHost: x\r\n\r\n")
        for connection in connections:
            server._run(connection._ready, selectors.EVENT_READ)  # as the loop runs what the selector says
        assert bad.recv(1) == b""  # closed
        assert good.recv(1 << 16).startswith(b"HTTP/1.1 200")
        assert connections[1] in server.connections and connections[0] not in server.connections
        server.notes.flush()
        said = capfd.readouterr().err
        assert "mockmcp: internal error (a bug in mockmcp; please report it):" in said and "a bug of ours" in said
    finally:
        for ours, peer in pairs:
            ours.close()
            peer.close()
        server.socket.close()


def test_a_request_with_both_content_length_and_transfer_encoding_is_answered_then_the_connection_closes() -> None:
    """RFC 9112 6.1: the chunks are the body, and the connection closes after the answer, since a peer on
    the way may have framed the request by its length (what follows could be a smuggled request)."""
    both = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    with _connection() as (server, connection, peer):
        peer.sendall(both + PUT)
        for _ in range(2):
            _pump(server, connection)
        answers = _read_all(peer)
        assert [(request.method, body) for request, body in server.seen] == [(b"POST", b"{}")]  # the PUT is not read
        assert answers.count(b"HTTP/1.1 200 ") == 1 and b"connection: close\r\n" in answers.lower()
        assert connection.broken


def test_a_request_that_waits_for_budget_past_its_deadline_and_as_long_again_is_refused_503() -> None:
    """Waiting for the shared budget stretches a request's deadline, never without end (requests starved
    for ever held their connections, and the budget, for ever)."""
    with _connection() as (server, connection, peer):
        server.connections.add(connection)
        peer.sendall(SDK_POST[:-5])
        _pump(server, connection)
        now = time.monotonic()
        connection.reading.began, connection.reading.starved_since = (
            now - 2 * REQUEST_TIMEOUT + 5,
            now - REQUEST_TIMEOUT,
        )
        server.budget.starved.add(connection)  # as the budget leaves it unread
        server._sweep()
        assert not connection.broken  # within its deadline, stretched by the wait
        connection.reading.began = now - 2 * REQUEST_TIMEOUT - 1
        server._sweep()
        assert connection.broken and _read_all(peer).startswith(b"HTTP/1.1 503 ")
        assert server.budget.starved == set()
