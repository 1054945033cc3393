"""The common HTTP/1.1 request read without h11 (`shells/http_request.py`): whatever it takes, it reads
as h11 does, whatever else it leaves to h11; the response it writes is h11's, byte for byte. In
memory against h11 itself, then on the loop's connection with every split of the bytes."""

from __future__ import annotations

import contextlib
import selectors
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import h11
import pytest

from mockmcp.shells import http_loop
from mockmcp.shells.http11 import IDLE_TIMEOUT, MAX_BODY, REQUEST_TIMEOUT, headers_of
from mockmcp.shells.http_loop import Connection, LoopServer, Request
from mockmcp.shells.http_request import MAX_HEAD, NEED_DATA, UNCOMMON, Outgoing, parse, request_of

SDK_POST = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
    b"User-Agent: python-httpx/0.28.1\r\naccept: application/json, text/event-stream\r\n"
    b"content-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\n"
    b"mcp-name: read_file\r\nContent-Length: 47\r\n\r\n"
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call"}\n'
)

# Requests of the common shape: read here, exactly as h11 reads them.
COMMON = {
    "the SDK's POST": SDK_POST,
    "a GET without a body": b"GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
    "a DELETE with Content-Length 0": b"DELETE /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
    "spaces and tabs around a value": b"POST /a?b=c HTTP/1.1\r\nHost:x\r\nX-A: \t one  two \t\r\n"
    b"Content-Length: 2\r\n\r\n{}",
    "an empty value": b"GET / HTTP/1.1\r\nHost: x\r\nX-Empty:\r\n\r\n",
    "obs-text in a value": b"GET / HTTP/1.1\r\nHost: x\r\nX-Latin: caf\xe9\r\n\r\n",
    "a repeated header": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\n\r\n",
    "keep-alive in any case": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n",
    "another method": b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz",
}

# Anything else goes to h11, which answers it as it always has (see test_http_sockets.py).
UNCOMMON_REQUESTS = {
    "HTTP/1.0": b"GET / HTTP/1.0\r\nHost: x\r\n\r\n",
    "a chunked body": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    "Expect: 100-continue": b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
    "Connection: close": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    "a second Connection, close": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n",
    "Connection: upgrade": b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
    "an obs-fold": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n",
    "a bare LF": b"GET / HTTP/1.1\nHost: x\n\n",
    "a bare LF inside": b"GET / HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n",
    "a bare CR": b"GET / HTTP/1.1\r\nHost: x\rX-A: 1\r\n\r\n",
    "two Content-Length": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
    "a Content-Length list": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}",
    "a signed Content-Length": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}",
    "no Host": b"GET / HTTP/1.1\r\nX-A: 1\r\n\r\n",
    "two Hosts": b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
    "HEAD": b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n",
    "a space before the colon": b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    "a NUL in a value": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
    "a leading empty line": b"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "a lowercase version": b"GET / http/1.1\r\nHost: x\r\n\r\n",
    "a space in the target": b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
    "a body over the limit": f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode(),
    "a head over the limit": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * MAX_HEAD + b"\r\n\r\n",
    "not HTTP": b"this is not HTTP\r\n\r\n",
}


def _h11_reads(data: bytes) -> tuple[Request, bytes]:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    conn.receive_data(data)
    request, body = None, b""
    while (event := conn.next_event()) is not h11.NEED_DATA:
        if isinstance(event, h11.Request):
            request = request_of(event)
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
    assert request is not None
    return request, body


@pytest.mark.parametrize("data", COMMON.values(), ids=COMMON.keys())
def test_a_common_request_is_read_as_h11_reads_it(data: bytes) -> None:
    found = parse(data, MAX_BODY)
    assert not isinstance(found, str)
    request, start, length = found
    assert (request, data[start : start + length]) == _h11_reads(data)
    assert start + length == len(data)
    assert headers_of(request) == request.fields


@pytest.mark.parametrize("data", COMMON.values(), ids=COMMON.keys())
def test_a_head_cut_anywhere_needs_more_data(data: bytes) -> None:
    end = data.index(b"\r\n\r\n") + 4
    for cut in range(end):
        assert parse(data[:cut], MAX_BODY) == NEED_DATA, cut


@pytest.mark.parametrize("data", UNCOMMON_REQUESTS.values(), ids=UNCOMMON_REQUESTS.keys())
def test_anything_else_is_left_to_h11(data: bytes) -> None:
    assert parse(data, MAX_BODY) == UNCOMMON


def test_a_head_that_never_ends_is_left_to_h11_at_the_limit() -> None:
    assert parse(b"GET / HTTP/1.1\r\nX-A: " + b"a" * MAX_HEAD, MAX_BODY) == UNCOMMON


def _h11_writes(events: list[Any], request: bytes = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n") -> bytes:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(request)
    while not isinstance(conn.next_event(), h11.EndOfMessage):
        pass
    return b"".join(conn.send(event) or b"" for event in events)


SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("mcp-session-id", "ab")]
RESPONSES = {
    "an SSE stream": [
        h11.Response(status_code=200, headers=SSE),
        h11.Data(data=b"event: message\ndata: {}\n\n"),
        h11.Data(data=b""),
        h11.Data(data=b"id: 2\ndata: \n\n"),
        h11.EndOfMessage(),
    ],
    "a counted body in pieces": [
        h11.Response(status_code=404, headers=[("content-length", "5")]),
        h11.Data(data=b"he"),
        h11.Data(data=b"llo"),
        h11.EndOfMessage(),
    ],
    "Connection: close": [h11.Response(status_code=200, headers=[("Connection", "close")]), h11.EndOfMessage()],
    "204 without a body": [h11.Response(status_code=204, headers=[]), h11.EndOfMessage()],
    "a reason phrase": [h11.Response(status_code=200, headers=[], reason=b"OK"), h11.EndOfMessage()],
    "a Transfer-Encoding of the caller's": [
        h11.Response(status_code=200, headers=[("transfer-encoding", "chunked"), ("content-length", "9")]),
        h11.Data(data=b"x"),
        h11.EndOfMessage(),
    ],
}


@pytest.mark.parametrize("events", RESPONSES.values(), ids=RESPONSES.keys())
def test_a_response_is_written_as_h11_writes_it(events: list[Any]) -> None:
    outgoing = Outgoing()
    assert b"".join(outgoing.event(event) for event in events) == _h11_writes(events)
    assert outgoing.done


@pytest.mark.parametrize("headers", [(), (("mcp-session-id", "0f"), ("connection", "close"))])
def test_a_whole_response_is_written_as_h11_writes_it(headers: tuple[tuple[str, str], ...]) -> None:
    fields = [("content-type", "application/json"), ("content-length", "2"), *headers]
    events = [h11.Response(status_code=202, headers=fields), h11.Data(data=b"{}"), h11.EndOfMessage()]
    outgoing = Outgoing()
    assert outgoing.whole(202, fields, b"{}") == _h11_writes(events)
    assert outgoing.closing == bool(headers)


MISTAKES = {
    "a second response": [h11.Response(status_code=200, headers=[]), h11.Response(status_code=200, headers=[])],
    "data before the response": [h11.Data(data=b"x")],
    "data after the end": [h11.Response(status_code=200, headers=[]), h11.EndOfMessage(), h11.Data(data=b"x")],
    "too much data": [h11.Response(status_code=200, headers=[("content-length", "1")]), h11.Data(data=b"xy")],
    "too little data": [h11.Response(status_code=200, headers=[("content-length", "3")]), h11.EndOfMessage()],
}


@pytest.mark.parametrize("events", MISTAKES.values(), ids=MISTAKES.keys())
def test_what_h11_refuses_to_send_is_refused(events: list[Any]) -> None:
    outgoing = Outgoing()
    with pytest.raises(h11.LocalProtocolError):
        for event in events:
            outgoing.event(event)
    with pytest.raises(h11.LocalProtocolError):
        _h11_writes(events)


def test_a_header_h11_would_refuse_to_send_is_refused() -> None:
    with pytest.raises(h11.LocalProtocolError):
        Outgoing().whole(200, [("content-length", "0"), ("x-a", "one\r\nx-injected: two")], b"")


# --- on the loop's connection -----------------------------------------------------------------------


class _Echo(LoopServer):
    """Answers each request with what it read: method, target, headers and body."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0))
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


PIPELINED = COMMON["the SDK's POST"] + UNCOMMON_REQUESTS["a chunked body"] + COMMON["another method"]


@pytest.mark.parametrize(
    "data",
    [COMMON["the SDK's POST"], UNCOMMON_REQUESTS["a chunked body"], PIPELINED],
    ids=["common", "uncommon (h11)", "pipelined, h11 between"],
)
def test_however_the_bytes_are_split_the_same_requests_are_read_and_answered(data: bytes) -> None:
    with _connection() as (server, connection, peer):
        peer.sendall(data)
        _pump(server, connection)
        whole, answers = server.seen, _read_all(peer)
    assert len(whole) == data.count(b" HTTP/1.1\r\n")
    for cut in range(1, len(data)):
        with _connection() as (server, connection, peer):
            peer.sendall(data[:cut])
            _pump(server, connection)
            peer.sendall(data[cut:])
            _pump(server, connection)
            _pump(server, connection)  # a request pipelined behind an answer h11 gave
            assert (server.seen, _read_all(peer)) == (whole, answers), cut


def test_a_request_cut_short_by_the_client_is_answered_400_as_h11_does() -> None:
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
    ids=["idle", "half a head", "half a body", "half a chunked body (h11)", "being answered"],
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
    ids=["idle", "half a head", "half a body", "half a chunked body (h11)", "being answered", "pipelined behind"],
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
        assert (connection.began is not None) is expired  # the first byte of a request still coming starts its clock
        if expired:
            connection.began = time.monotonic() - REQUEST_TIMEOUT - 1  # it began long ago; a byte came just now
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
        began = connection.began
        assert began is not None
        peer.sendall(SDK_POST[10:-5])
        _pump(server, connection)
        assert connection.began == began  # more bytes do not reset it, as they reset the idle clock
        peer.sendall(SDK_POST[-5:])
        _pump(server, connection)
        assert connection.began is None and len(server.seen) == 1


def test_requests_not_yet_whole_share_one_budget_and_big_ones_wait_when_it_is_spent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """However many connections send large bodies slowly, what they hold together stays bounded."""
    monkeypatch.setattr(http_loop, "HELD_BUDGET", 300_000)
    server = _Echo()
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
                before = (connection.held, len(server.seen))
                connection._ready(selectors.EVENT_READ)
                if (connection.held, len(server.seen)) == before:
                    break

        feed(0, head + b"a" * 200_000)
        assert server.held == connections[0].held > 200_000
        feed(1, head + b"b" * 120_000)  # the budget is spent now: this one, holding much, is not read
        assert server.held > 300_000 and not connections[1].interest & selectors.EVENT_READ
        feed(0, b"a" * 1000)  # the request that began first goes on, so one always can finish
        assert connections[0].interest & selectors.EVENT_READ and server.starved == {connections[1]}
        stale = time.monotonic() - IDLE_TIMEOUT - REQUEST_TIMEOUT
        connections[1].last = connections[1].began = stale  # it has waited long: on us, not on its client
        server._sweep()
        assert not connections[1].broken
        small = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
        feed(2, small)  # a small request still gets through: only the big ones wait
        assert [body for _request, body in server.seen] == [b"{}"]
        connections[0].close()  # one of the big ones goes: the others are read again, their clocks afresh
        assert server.held == connections[1].held and connections[1].interest & selectors.EVENT_READ
        assert connections[1].last > stale and connections[1].began is not None and connections[1].began > stale
        feed(1, b"b" * (size - 120_000))
        assert [len(body) for _request, body in server.seen] == [2, size] and server.held == 0
    finally:
        for ours, peer in pairs:
            ours.close()
            peer.close()
        server.socket.close()


def test_a_repeated_header_s_values_are_joined_in_fields_whichever_parser_reads_it() -> None:
    head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nOrigin: http://127.0.0.1\r\nOrigin: https://evil.example\r\n"
    common = parse(head + b"Content-Length: 2\r\n\r\n{}", MAX_BODY)
    assert not isinstance(common, str)
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(head + b"Transfer-Encoding: chunked\r\n\r\n")
    event = connection.next_event()
    assert isinstance(event, h11.Request)
    for request in (common[0], request_of(event)):
        assert request.fields["origin"] == "http://127.0.0.1, https://evil.example"
        assert [value for name, value in request.headers if name == b"origin"] == [
            b"http://127.0.0.1",
            b"https://evil.example",
        ]
