"""HTTP/1.1 plumbing shared by the HTTP shells: limits, TCP_NODELAY, the names a machine answers to, and a request
and a response as h11 read them, a repeated request header's values joined (RFC 9110: no Origin goes unchecked).
"""

from __future__ import annotations

import errno
import socket
from http import HTTPStatus
from typing import NamedTuple

import h11

from mockmcp.options import BOUNDS

__all__ = [
    "IDLE_TIMEOUT",
    "MAX_BODY",
    "MAX_HEAD",
    "OUT_OF_RESOURCES",
    "REQUEST_TIMEOUT",
    "Request",
    "Response",
    "TOO_LARGE",
    "WILDCARD",
    "no_delay",
    "own_addresses",
    "reason_of",
    "request_of",
    "response_of",
]

MAX_HEAD = 64 << 10  # bytes a head may have while incomplete (h11 answers a request's with 431 beyond)
MAX_BODY = BOUNDS.kept_bytes  # bytes a request body may have (413 beyond), the most of one message kept
IDLE_TIMEOUT = 60.0  # seconds a connection may wait between bytes of a request, or between requests
REQUEST_TIMEOUT = 60.0  # seconds a request (head and body) may take to arrive whole, from its first byte
# accept() failing for want of a descriptor or memory: wait and try again, never stop serving.
OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
TOO_LARGE = f"Content Too Large: a request body may have at most {MAX_BODY} bytes"
WILDCARD = frozenset({"0.0.0.0", "::", ""})


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
