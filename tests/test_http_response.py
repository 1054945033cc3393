"""The recording proxy's side of HTTP toward its target, without h11 (`shells/http_request.py`): the
request it writes is one h11 reads as sent; the answer is read as h11 reads it, whatever way its
bytes are split, and what it cannot read exactly is refused (the proxy's 502). In memory against h11
itself, then through the proxy against a target that writes the bytes of each row."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import h11
import pytest
from test_http_hosts import post, running

from mockmcp.shells.http_request import (
    END,
    MAX_HEAD,
    NEED_DATA,
    BadResponse,
    Response,
    ResponseReader,
    request_bytes,
)

BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'
SSE = b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'

# (answer bytes, the method asked, whether the connection can take the next request)
GOOD: dict[str, tuple[bytes, bytes, bool]] = {
    "a JSON body by Content-Length": (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(BODY), BODY),
        b"POST",
        True,
    ),
    "the SDK's SSE stream, chunked": (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: abc\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(SSE), SSE),
        b"POST",
        True,
    ),
    "chunk extensions and trailers": (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        b'5;name=value\r\nhello\r\n6;a="b c"\r\n world\r\n0;last\r\nX-Trailer: 1\r\nX-Other: two\r\n\r\n',
        b"POST",
        True,
    ),
    "uppercase hex chunk sizes": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1A\r\n" + b"z" * 26 + b"\r\n0\r\n\r\n",
        b"POST",
        True,
    ),
    "a body until the connection closes": (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it",
        b"POST",
        False,
    ),
    "Connection: close": (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", b"POST", False),
    "Connection: close among tokens": (
        b"HTTP/1.1 200 OK\r\nConnection: foo, Close\r\nContent-Length: 2\r\n\r\n{}",
        b"POST",
        False,
    ),
    "HTTP/1.0": (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", b"POST", False),
    "a 202 without a body": (b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n", b"POST", True),
    "a 204": (b"HTTP/1.1 204 No Content\r\n\r\n", b"DELETE", True),
    "an answer to HEAD": (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", b"HEAD", True),
    "100 Continue first": (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"POST",
        True,
    ),
    "no reason phrase": (b"HTTP/1.1 404 \r\ncontent-length: 0\r\n\r\n", b"GET", True),
    "no space after the status": (b"HTTP/1.1 405\r\ncontent-length: 0\r\n\r\n", b"GET", True),
    "an obs-fold, unfolded": (
        b"HTTP/1.1 200 OK\r\nX-A: one\r\n \t two\r\n\tthree\r\nContent-Length: 0\r\n\r\n",
        b"GET",
        True,
    ),
    "bare LF line ends in the head": (b"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", b"POST", True),
    "obs-text, an empty value and spaces": (
        b"HTTP/1.1 200 OK\r\nX-A: caf\xe9\r\nX-Empty:\r\nX-B:  one  two \t\r\nContent-Length: 0\r\n\r\n",
        b"GET",
        True,
    ),
}

# Answers the proxy cannot pass on whole: each a 502 (h11 refused every one of them too).
BAD: dict[str, bytes] = {
    "not HTTP": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "HTTP/2 in the status line": b"HTTP/2 200 OK\r\n\r\n",
    "a status of two digits": b"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",
    "an obs-fold first": b"HTTP/1.1 200 OK\r\n two\r\nContent-Length: 0\r\n\r\n",
    "a space before the colon": b"HTTP/1.1 200 OK\r\nX-A : 1\r\nContent-Length: 0\r\n\r\n",
    "a NUL in a value": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n",
    "gzip transfer-coding": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "two different Content-Length": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
    "a signed Content-Length": b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}",
    "a chunk size that is not hex": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n",
    "a chunk not ended by CR LF": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiXX0\r\n\r\n",
    "a malformed trailer": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon here\r\n\r\n",
    "a switch of protocols": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
    "closed before the head ended": b"HTTP/1.1 200 OK\r\nContent-Len",
    "closed before the body ended": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
    "closed inside a chunked body": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    "a head over the limit": b"HTTP/1.1 200 OK\r\nX-A: " + b"a" * MAX_HEAD + b"\r\n\r\n",
}


def _read(pieces: list[bytes], method: bytes) -> tuple[list[Any], bool]:
    """Every event the reader gives for the pieces fed one by one, then the connection closed
    (bodies joined into one bytes event), and whether the connection could be kept."""
    reader = ResponseReader(method)
    events: list[Any] = []
    for piece in [*(piece for piece in pieces if piece), b""]:  # an empty feed: the connection closed
        reader.feed(piece)
        while (event := reader.next_event()) not in (NEED_DATA, END):
            if isinstance(event, bytes) and events and isinstance(events[-1], bytes):
                events[-1] += event
            else:
                events.append(event)
        if event is END:
            events.append(END)
            return events, reader.keep
    raise AssertionError("the reader never gave END, nor refused the answer")


def _h11_reads(data: bytes, method: bytes) -> tuple[Response, bytes, bool]:
    """What h11's client side makes of the same bytes: the head, the body, whether it keeps the connection."""
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
    conn.send(h11.Request(method=method, target="/", headers=[("host", "x"), ("content-length", "0")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(data)
    conn.receive_data(b"")
    head, body = None, b""
    while not isinstance(event := conn.next_event(), h11.EndOfMessage):
        if isinstance(event, h11.Response):
            headers = list(event.headers)
            fields = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}
            head = Response(event.status_code, bytes(event.reason), headers, fields)
        elif isinstance(event, h11.Data):
            body += event.data
    assert head is not None
    return head, body, conn.their_state is h11.DONE


@pytest.mark.parametrize("name", list(GOOD))
def test_an_answer_reads_as_h11_reads_it_however_its_bytes_are_split(name: str) -> None:
    data, method, keep = GOOD[name]
    head, body, h11_keep = _h11_reads(data, method)
    expected = [head, *([body] if body else []), END]
    assert keep == (h11_keep and name != "a body until the connection closes")  # h11: DONE, then CLOSED
    for cut in range(len(data) + 1):
        assert _read([data[:cut], data[cut:]], method) == (expected, keep), cut
    assert _read([data[i : i + 1] for i in range(len(data))], method) == (expected, keep)


def test_bytes_after_the_answer_mean_the_connection_is_not_reused() -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n"
    assert _read([data], b"POST")[1] is False


def test_a_chunked_body_comes_piece_by_piece_as_it_arrives() -> None:
    """An SSE event is passed on when its bytes come, not when the stream ends."""
    reader = ResponseReader(b"POST")
    reader.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nfirst")
    assert isinstance(reader.next_event(), Response)
    assert reader.next_event() == b"first"
    assert reader.next_event() is NEED_DATA
    reader.feed(b" event here\r\n")
    assert reader.next_event() == b" event here"
    assert reader.next_event() is NEED_DATA


@pytest.mark.parametrize("name", list(BAD))
def test_an_answer_it_cannot_read_exactly_is_refused_as_h11_refuses_it(name: str) -> None:
    data = BAD[name]
    if name != "a head over the limit":  # h11 limits only a head still incomplete
        with pytest.raises(h11.RemoteProtocolError):
            _h11_reads(data, b"POST")
    for cut in range(0, len(data) + 1, max(1, len(data) // 200)):
        with pytest.raises(BadResponse):
            _read([data[:cut], data[cut:]], b"POST")


def test_the_request_written_in_one_piece_reads_as_sent() -> None:
    fields = [("host", "127.0.0.1:9"), ("content-type", "application/json"), ("mcp-session-id", "abc")]
    data = request_bytes(b"POST", b"/mcp?x=1", fields, BODY)
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    request = conn.next_event()
    assert isinstance(request, h11.Request)
    assert (request.method, request.target) == (b"POST", b"/mcp?x=1")
    sent = [(name.encode(), value.encode()) for name, value in fields] + [(b"content-length", b"%d" % len(BODY))]
    assert list(request.headers) == sent
    data_event = conn.next_event()
    assert isinstance(data_event, h11.Data) and data_event.data == BODY
    assert isinstance(conn.next_event(), h11.EndOfMessage)
    assert request_bytes(b"GET", b"/mcp", [("host", "x")], b"").endswith(b"content-length: 0\r\n\r\n")


class _CannedTarget:
    """A target that answers every request with the same bytes, and closes the connection after."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with sock:
                sock.settimeout(10)
                asked = b""
                try:
                    while b"\r\n\r\n" not in asked or not asked.endswith(b"}"):  # the INIT body ends in }
                        chunk = sock.recv(1 << 16)
                        if not chunk:
                            break
                        asked += chunk
                    sock.sendall(self.answer)
                except OSError:
                    pass


@pytest.mark.parametrize(
    ("name", "status", "text"),
    [
        ("chunk extensions and trailers", 200, "hello world"),
        ("a body until the connection closes", 200, "all of it"),
        ("a malformed trailer", 502, "Bad Gateway: the target broke off the HTTP exchange: a malformed trailer"),
        ("gzip transfer-coding", 502, "Bad Gateway: the target broke off the HTTP exchange: a Transfer-Encoding"),
        ("closed before the body ended", 502, "the connection closed in the middle of the answer"),
    ],
)
def test_through_the_proxy_what_it_reads_comes_back_and_what_it_cannot_is_a_502(
    name: str, status: int, text: str, tmp_path: Path
) -> None:
    target = _CannedTarget(GOOD[name][0] if name in GOOD else BAD[name])
    try:
        out = tmp_path / "out.yaml"
        with running("record", "-o", str(out), "--http-target", f"http://127.0.0.1:{target.port}/mcp") as url:
            answer = post(url)
        assert answer[0] == status
        assert text in answer[1]
    finally:
        target.listener.close()
