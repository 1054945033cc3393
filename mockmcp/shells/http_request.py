"""The common HTTP/1.1 request, read without h11, and the bytes of the response to it.

Theory of operation. Nearly every request an MCP client sends has one shape: HTTP/1.1, one Host, a
body of Content-Length bytes (or none), the connection kept alive. h11 reads it correctly, but its
state machine, header normalisation and event objects were most of what a replayed call cost (a
profile of `benchmarks/bench_http.py`). `parse` reads exactly that shape and nothing else: any
other version, a Transfer-Encoding, an Expect, a Connection other than keep-alive, an Upgrade, an
obs-fold, a bare CR or LF, a repeated Host or Content-Length, a character h11 would refuse, a head
or body over the limit, is `UNCOMMON`, and the event loop hands those bytes to h11, which answers
as it always did (400, 413, 431, 100 Continue, chunked bodies). So a request taken here is one h11
takes the same way, and one h11 refuses never gets this far.

`Outgoing` writes the response to such a request as h11 would write it (the same bytes: status
line with the reason given (none by default), the given headers, Content-Length or chunked framing, `Connection: close`
honoured), and refuses what h11 refuses (a second response, data beyond the declared length) with
h11's `LocalProtocolError`, a bug of ours.

The other way round, for the recording proxy's connections to its target: `request_bytes` writes a
request (request line, headers, Content-Length, body) in one piece, and `ResponseReader` reads the
answer, fed as the bytes come: its head, its body by Content-Length, by chunked transfer-coding
(chunk extensions and trailers read and dropped) or until the connection closes, and then whether
the connection can take the next request. What it cannot read exactly (another HTTP version than
1.x, a Transfer-Encoding other than chunked, a Content-Length beside it, a head over
`MAX_HEAD`, a connection closed mid-answer) is `BadResponse`, which the proxy answers with a 502.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import h11

__all__ = [
    "BadResponse",
    "END",
    "MAX_HEAD",
    "NEED_DATA",
    "Outgoing",
    "Request",
    "Response",
    "ResponseReader",
    "UNCOMMON",
    "fields_of",
    "parse",
    "request_bytes",
    "request_of",
]

MAX_HEAD = 64 << 10  # bytes a request's line and headers may have (h11 answers 431 beyond)
NEED_DATA = "need data"  # the head is not whole yet
UNCOMMON = "uncommon"  # not the common shape: h11's to read

# RFC 9110 tokens, and h11's own field value and request target (visible characters, obs-text in values).
_TOKEN = rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+"
_LINE = re.compile(rb"(" + _TOKEN + rb") ([\x21-\x7e]+) HTTP/1\.1")
_FIELDS = re.compile(rb"(?:" + _TOKEN + rb":[ \t]*(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?[ \t]*\r\n)*")
_VALUE = re.compile(r"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_DIGITS = re.compile(r"[0-9]{1,10}")
# Headers that make a request anything but the common shape.
_UNCOMMON = frozenset({b"transfer-encoding", b"expect", b"upgrade"})


class Request(NamedTuple):
    """An HTTP request as the handlers see it, read by `parse` or by h11 (`request_of`)."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]  # (lowercase name, value), in order, as h11 gives them
    fields: dict[str, str]  # lowercase name -> value (latin-1; a repeated header's values joined by ", ")


def request_of(event: h11.Request) -> Request:
    """The `Request` of a request h11 read."""
    headers = list(event.headers)
    return Request(event.method, event.target, headers, fields_of(headers))


def fields_of(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Headers by lowercase name, a repeated header's values joined by ", " (as `parse` reads them)."""
    fields: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        fields[key] = f"{fields[key]}, {text}" if key in fields else text
    return fields


def parse(buffer: bytes | bytearray, max_body: int) -> tuple[Request, int, int] | str:
    """Read the head of the request at the start of buffer.

    Returns (the request, where its body starts, the body's length), or NEED_DATA while the head is
    not whole, or UNCOMMON for anything but the common shape (h11 then reads the same bytes).
    """
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        # h11 also ends a head at a blank line of a bare LF; such a head, or one too long, is its to judge
        return UNCOMMON if b"\n\n" in buffer or len(buffer) > MAX_HEAD else NEED_DATA
    if end > MAX_HEAD:
        return UNCOMMON
    head = bytes(buffer[: end + 2])  # each line with its CR LF
    first = head.find(b"\r\n")
    line = _LINE.fullmatch(head, 0, first)
    # One match checks every header line (an obs-fold, a bare CR or LF, a stray character fail it).
    if line is None or line[1] in (b"HEAD", b"CONNECT") or not _FIELDS.fullmatch(head, first + 2):
        return UNCOMMON
    headers: list[tuple[bytes, bytes]] = []
    fields: dict[str, str] = {}
    closing = False
    for raw in head[first + 2 : -2].split(b"\r\n") if end > first else ():  # one pass: this runs per request
        name, _colon, value = raw.partition(b":")
        name, value = name.lower(), value.strip(b" \t")
        headers.append((name, value))
        key, text = name.decode("latin-1"), value.decode("latin-1")
        fields[key] = f"{fields[key]}, {text}" if key in fields else text
        closing = closing or (name == b"connection" and value.lower() != b"keep-alive")
    names = [name for name, _value in headers]
    if names.count(b"host") != 1 or not _UNCOMMON.isdisjoint(names):
        return UNCOMMON
    length = fields.get("content-length", "0")
    if names.count(b"content-length") > 1 or not _DIGITS.fullmatch(length) or closing:
        return UNCOMMON
    if int(length) > max_body:
        return UNCOMMON
    return Request(line[1], line[2], headers, fields), end + 4, int(length)


def _checked(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers to send, refused as h11 refuses them (a bug of ours, such as a CR LF in a value)."""
    for name, value in fields:
        if not (_NAME.fullmatch(name) and _VALUE.fullmatch(value)):
            raise h11.LocalProtocolError(f"illegal header to send: {name!r}: {value!r}")
    return fields


class Outgoing:
    """The response to one request `parse` read: h11's bytes, without h11."""

    __slots__ = ("closing", "done", "remaining", "started")

    def __init__(self) -> None:
        self.started = False  # the head is out
        self.done = False  # the whole response is out
        self.remaining: int | None = None  # bytes the body still owes; None: chunked
        self.closing = False  # the response said Connection: close

    def whole(self, status: int, fields: list[tuple[str, str]], body: bytes, reason: bytes = b"") -> bytes:
        """A whole response: its head (fields has its Content-Length) and body."""
        self._start(_checked(fields))
        self.done = True
        return _head(status, reason, fields) + body

    def event(self, event: Any) -> bytes:
        """The bytes of one h11 event of the response."""
        if isinstance(event, h11.InformationalResponse):
            if self.started:
                raise h11.LocalProtocolError("an informational response after the response began")
            return _head(event.status_code, event.reason, _fields(event))
        if isinstance(event, h11.Response):
            fields = _fields(event)
            self._start(fields)
            names = [name.lower() for name, _ in fields]
            if event.status_code in (204, 304):
                self.remaining = 0
            elif "content-length" in names and "transfer-encoding" not in names:
                self.remaining = int(fields[names.index("content-length")][1])
            else:  # a body of unknown length, framed as h11 frames it: its own Transfer-Encoding, last
                fields = [f for f in fields if f[0].lower() not in ("content-length", "transfer-encoding")]
                fields.append(("Transfer-Encoding", "chunked"))
            return _head(event.status_code, event.reason, fields)
        if not self.started or self.done:
            when = "after" if self.done else "before"
            raise h11.LocalProtocolError(f"can't send {type(event).__name__} {when} a response")
        if isinstance(event, h11.Data):
            return self._data(bytes(event.data))
        if isinstance(event, h11.EndOfMessage):
            if self.remaining:
                raise h11.LocalProtocolError("Too little data for declared Content-Length")
            self.done = True
            return b"0\r\n\r\n" if self.remaining is None else b""
        raise h11.LocalProtocolError(f"can't send {type(event).__name__} in a response")

    def _start(self, fields: list[tuple[str, str]]) -> None:
        if self.started:
            raise h11.LocalProtocolError("a second response to the same request")
        self.started = True
        for name, value in fields:
            if name.lower() == "connection" and "close" in (token.strip() for token in value.lower().split(",")):
                self.closing = True

    def _data(self, data: bytes) -> bytes:
        if self.remaining is not None:
            self.remaining -= len(data)
            if self.remaining < 0:
                raise h11.LocalProtocolError("Too much data for declared Content-Length")
            return data
        return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


def _fields(event: h11.Response | h11.InformationalResponse) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in event.headers.raw_items()]


def _head(status: int, reason: bytes, fields: list[tuple[str, str]]) -> bytes:
    """A status line and headers, as h11 writes them."""
    head = "".join(f"{name}: {value}\r\n" for name, value in fields)
    return b"HTTP/1.1 %d %s\r\n" % (status, reason) + head.encode("latin-1") + b"\r\n"


# --- the client side: a request to a server, and its answer --------------------------------------

END = "end"  # the answer is whole
_VCHARS = rb"[\x21-\x7e\x80-\xff]+"
_STATUS = re.compile(rb"HTTP/1\.([0-9]) ([0-9]{3})(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?")
_FIELD = re.compile(rb"(" + _TOKEN + rb"):[ \t]*(" + _VCHARS + rb"(?:[ \t]+" + _VCHARS + rb")*)?[ \t]*")
_CHUNK = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?")
_HEAD_END = re.compile(rb"\n\r?\n")


class Response(NamedTuple):
    """The head of a server's answer, read by `ResponseReader`."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]  # (lowercase name, value), in order
    fields: dict[str, str]  # lowercase name -> value (latin-1; a repeated header keeps its last)


class BadResponse(ValueError):
    """An answer that is not HTTP/1.1 as `ResponseReader` reads it, or one cut off."""


def request_bytes(method: bytes, target: bytes, fields: list[tuple[str, str]], body: bytes) -> bytes:
    """A whole request in one piece: its line, the fields (already valid, Host first), Content-Length, the body."""
    head = "".join(f"{name}: {value}\r\n" for name, value in fields)
    return b"%s %s HTTP/1.1\r\n%scontent-length: %d\r\n\r\n%s" % (
        method,
        target,
        head.encode("latin-1"),
        len(body),
        body,
    )


class ResponseReader:
    """The answer to one request, read from bytes fed as they come (`feed`; an empty feed: the
    connection closed). `next_event` gives a `Response` (the head), then the body as `bytes`
    pieces, then `END`; `NEED_DATA` while more must come first; raises `BadResponse`. After `END`,
    `keep` says whether the connection can carry the next request."""

    __slots__ = ("buffer", "closed", "head_only", "keep", "remaining", "state")

    def __init__(self, method: bytes = b"GET") -> None:
        self.buffer = bytearray()
        self.closed = False  # the connection closed: nothing more will come
        self.head_only = method == b"HEAD"
        self.state = "head"  # head, length, chunk, data, crlf, trailers, close, done
        self.remaining = 0  # bytes of the body (length) or of the chunk (data) still to come
        self.keep = False

    def feed(self, data: bytes) -> None:
        if data:
            self.buffer += data
        else:
            self.closed = True

    def next_event(self) -> Response | bytes | str:
        while True:
            state, buffer = self.state, self.buffer
            if state in ("length", "data", "close"):
                if not buffer:
                    if state == "close" and self.closed:
                        return self._end(False)
                    return self._need()
                size = len(buffer) if state == "close" else min(self.remaining, len(buffer))
                piece = bytes(buffer[:size])
                del buffer[:size]
                self.remaining -= size
                if not self.remaining and state != "close":
                    if state == "length":
                        self.state = "done"
                        self.keep = self.keep and not buffer
                    else:
                        self.state = "crlf"
                return piece
            if state == "done":
                return END
            if state == "head":
                head = self._head()
                if head is not None:
                    return head
            elif state == "chunk":
                end = buffer.find(b"\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD:
                        raise BadResponse("a chunk header too long")
                    return self._need()
                chunk = _CHUNK.fullmatch(buffer, 0, end)
                if chunk is None:
                    raise BadResponse(f"a malformed chunk header {bytes(buffer[:end])[:80]!r}")
                self.remaining = int(chunk[1], 16)  # before the buffer changes under the match
                del buffer[: end + 2]
                self.state = "data" if self.remaining else "trailers"
            elif state == "crlf":
                if len(buffer) < 2:
                    return self._need()
                if buffer[:2] != b"\r\n":
                    raise BadResponse("a chunk not followed by CR LF")
                del buffer[:2]
                self.state = "chunk"
            else:  # trailers: fields until an empty line, dropped
                if buffer[:2] == b"\r\n":
                    del buffer[:2]
                    return self._end(self.keep and not buffer)
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD:
                        raise BadResponse("trailers too long")
                    return self._need()
                for line in bytes(buffer[:end]).split(b"\r\n"):
                    if not _FIELD.fullmatch(line):
                        raise BadResponse(f"a malformed trailer {line[:80]!r}")
                del buffer[: end + 4]
                return self._end(self.keep and not buffer)

    def _need(self) -> str:
        if self.closed:
            where = "before an answer" if self.state == "head" else "in the middle of the answer"
            raise BadResponse(f"the connection closed {where}")
        return NEED_DATA

    def _end(self, keep: bool) -> str:
        self.state, self.keep = "done", keep
        return END

    def _head(self) -> Response | str | None:
        """The head when it is whole, else NEED_DATA (None: an informational 1xx head, skipped)."""
        buffer = self.buffer
        found = _HEAD_END.search(buffer)
        if found is None:
            if len(buffer) > MAX_HEAD:
                raise BadResponse(f"a head over {MAX_HEAD} bytes")
            return self._need()
        if found.start() > MAX_HEAD:
            raise BadResponse(f"a head over {MAX_HEAD} bytes")
        lines = bytes(buffer[: found.start()]).split(b"\n")
        del buffer[: found.end()]
        lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        status = _STATUS.fullmatch(lines[0])
        if status is None:
            raise BadResponse(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        headers: list[tuple[bytes, bytes]] = []
        for line in lines[1:]:
            if line[:1] in (b" ", b"\t") and headers:  # an obs-fold: unfolded, as h11 does
                field = _FIELD.fullmatch(b"x:" + line)
                if field is not None:
                    name, value = headers.pop()
                    headers.append((name, b" ".join(part for part in (value, field[2]) if part)))
                    continue
            field = _FIELD.fullmatch(line)
            if field is None:
                raise BadResponse(f"a malformed header line {line[:80]!r}")
            headers.append((field[1].lower(), field[2] or b""))
        code = int(status[2])
        if code < 200:
            if code == 101:
                raise BadResponse("a switch of protocols (101) the proxy did not ask for")
            return None  # 100 Continue, 103 Early Hints: the answer follows
        fields = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}
        self.keep = status[1] == b"1" and not _has_close(headers)
        names = [name for name, _value in headers]
        if self.head_only or code in (204, 304):
            self.state = "done"
            self.keep = self.keep and not buffer
        elif b"transfer-encoding" in names:
            codings = [value.strip(b" \t").lower() for name, value in headers if name == b"transfer-encoding"]
            if codings != [b"chunked"] or b"content-length" in names:
                raise BadResponse(f"a Transfer-Encoding it cannot read: {b', '.join(codings)!r}")
            self.state = "chunk"
        elif b"content-length" in names:
            lengths = {value for name, value in headers if name == b"content-length"}
            if len(lengths) != 1 or not re.fullmatch(rb"[0-9]{1,18}", next(iter(lengths))):
                raise BadResponse(f"a bad Content-Length: {sorted(lengths)!r}")
            self.remaining = int(next(iter(lengths)))
            self.state = "length" if self.remaining else "done"
            if not self.remaining:
                self.keep = self.keep and not buffer
        else:
            self.state, self.keep = "close", False
        return Response(code, status[3] or b"", headers, fields)


def _has_close(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(
        name == b"connection" and b"close" in (token.strip(b" \t").lower() for token in value.split(b","))
        for name, value in headers
    )
