"""What the recording proxy makes of its target's answers: each one it can read whole comes back to
the client (status, reason and body), whatever its framing; one it cannot read is a 502; one whose
connection ends after its head and before its end was broken off, and the client's connection is cut
as the target's was. One proxy in front of a target that answers each request with the bytes of the
row the request names."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import serve_each_connection
from test_http_hosts import running

from mockmcp.http._loop import MAX_HEAD

BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'
SSE = b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'

# The target's answer, the method the client asks with, and what the client gets: status, reason, body.
READ: dict[str, tuple[bytes, str, tuple[int, str, bytes]]] = {
    "a JSON body by Content-Length": (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(BODY), BODY),
        "POST",
        (200, "OK", BODY),
    ),
    "the SDK's SSE stream, chunked": (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: abc\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(SSE), SSE),
        "POST",
        (200, "OK", SSE),
    ),
    "chunk extensions and trailers": (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        b'5;name=value\r\nhello\r\n6;a="b c"\r\n world\r\n0;last\r\nX-Trailer: 1\r\nX-Other: two\r\n\r\n',
        "POST",
        (200, "OK", b"hello world"),
    ),
    "uppercase hex chunk sizes": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1A\r\n" + b"z" * 26 + b"\r\n0\r\n\r\n",
        "POST",
        (200, "OK", b"z" * 26),
    ),
    "a body until the connection closes": (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it",
        "POST",
        (200, "OK", b"all of it"),
    ),
    "Connection: close among tokens": (
        b"HTTP/1.1 200 Fine\r\nConnection: foo, Close\r\nContent-Length: 2\r\n\r\n{}",
        "POST",
        (200, "Fine", b"{}"),
    ),
    "HTTP/1.0": (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "POST", (200, "OK", b"{}")),
    "a 202 without a body": (b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n", "POST", (202, "Accepted", b"")),
    "a 204": (b"HTTP/1.1 204 No Content\r\n\r\n", "DELETE", (204, "No Content", b"")),
    "an answer to HEAD": (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "HEAD", (200, "OK", b"")),
    "100 Continue first": (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        "POST",
        (200, "OK", b"{}"),
    ),
    "no reason phrase": (b"HTTP/1.1 404 \r\ncontent-length: 0\r\n\r\n", "GET", (404, "", b"")),
    "no space after the status": (b"HTTP/1.1 405\r\ncontent-length: 0\r\n\r\n", "GET", (405, "", b"")),
    "an obs-fold": (
        b"HTTP/1.1 200 OK\r\nX-A: one\r\n \t two\r\nContent-Length: 2\r\n\r\n{}",
        "POST",
        (200, "OK", b"{}"),
    ),
    "bare LF line ends in the head": (b"HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", "POST", (200, "OK", b"{}")),
    "obs-text, an empty value and spaces": (
        b"HTTP/1.1 200 OK\r\nX-A: caf\xe9\r\nX-Empty:\r\nX-B:  one  two \t\r\nContent-Length: 2\r\n\r\n{}",
        "POST",
        (200, "OK", b"{}"),
    ),
}

# Answers the proxy cannot pass on whole: each a 502.
UNREADABLE: dict[str, bytes] = {
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
    "a head over the limit": b"HTTP/1.1 200 OK\r\nX-A: " + b"a" * 2 * MAX_HEAD + b"\r\n\r\n",
}

# Answers the target broke off, its head whole: a body goes to the client whole, so it gets nothing of one,
# only its connection closed (the SSE answers' cuts: test_http_cut.py).
BROKEN_OFF: dict[str, bytes] = {
    "closed before the body ended": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
    "closed inside a chunked body": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
}

ANSWERS = [answer for answer, _method, _seen in READ.values()] + list(UNREADABLE.values()) + list(BROKEN_OFF.values())


class _CannedTarget:
    """Answers each request with the bytes of the row its `x-answer` header names, then closes."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        serve_each_connection(self.listener, self._serve)

    @staticmethod
    def _serve(sock: socket.socket) -> None:
        with sock:
            sock.settimeout(10)
            asked = b""
            try:
                while b"\r\n\r\n" not in asked:
                    chunk = sock.recv(1 << 16)
                    if not chunk:
                        return
                    asked += chunk
                head = asked.split(b"\r\n\r\n")[0].lower()
                row = int(head.split(b"x-answer: ")[1].split(b"\r\n")[0])
                length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(asked) < asked.index(b"\r\n\r\n") + 4 + length:
                    asked += sock.recv(1 << 16)
                sock.sendall(ANSWERS[row])
            except (OSError, IndexError, ValueError):
                pass


# One worker records the module's sessions once for all its tests (`--dist loadgroup`, pyproject.toml).
pytestmark = pytest.mark.xdist_group("upstream")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """The proxy's host and port, in front of a `_CannedTarget`."""
    target = _CannedTarget()
    out = tmp_path_factory.mktemp("upstream") / "out.yaml"
    try:
        with running("record", "-o", str(out), "--http-target", f"http://127.0.0.1:{target.port}/mcp") as url:
            host, port = url.split("/")[2].rsplit(":", 1)
            yield host, int(port)
    finally:
        target.listener.close()


@contextmanager
def _asking(proxy: tuple[str, int]) -> Iterator[http.client.HTTPConnection]:
    connection = http.client.HTTPConnection(*proxy, timeout=20)
    try:
        yield connection
    finally:
        connection.close()


def _ask(proxy: tuple[str, int], row: int, method: str = "POST") -> tuple[int, str, bytes]:
    with _asking(proxy) as connection:
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}' if method == "POST" else None
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        connection.request(method, "/mcp", body=body, headers={**headers, "x-answer": str(row)})
        answer = connection.getresponse()
        return answer.status, answer.reason, answer.read()


@pytest.mark.parametrize("name", list(READ))
def test_an_answer_read_whole_comes_back_as_the_target_gave_it(name: str, proxy: tuple[str, int]) -> None:
    _answer, method, seen = READ[name]
    assert _ask(proxy, list(READ).index(name), method) == seen


@pytest.mark.parametrize("name", list(UNREADABLE))
def test_an_answer_that_cannot_be_read_whole_is_a_502(name: str, proxy: tuple[str, int]) -> None:
    status, _reason, text = _ask(proxy, len(READ) + list(UNREADABLE).index(name))
    assert (status, text.startswith(b"Bad Gateway: ")) == (502, True), text


@pytest.mark.parametrize("name", list(BROKEN_OFF))
def test_an_answer_broken_off_after_its_head_cuts_the_client_s_connection_with_nothing(
    name: str, proxy: tuple[str, int]
) -> None:
    with pytest.raises(http.client.RemoteDisconnected):
        _ask(proxy, len(READ) + len(UNREADABLE) + list(BROKEN_OFF).index(name))


def test_the_502_says_why(proxy: tuple[str, int]) -> None:
    _status, _reason, text = _ask(proxy, len(READ) + list(UNREADABLE).index("a chunk size that is not hex"))
    why = b"Bad Gateway: the target broke off the HTTP exchange: "
    assert text.startswith(why) and len(text) > len(why)  # then what was wrong with it
