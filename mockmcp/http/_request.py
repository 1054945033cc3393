"""A request and a response as the HTTP shells see them, from what h11 read.

h11 reads and writes HTTP/1.1 on both sides: the requests of the shells' clients (`http_loop`), and
the proxy's exchanges with its target (`http_record`). What it leaves to its caller is kept here:
a message's headers by name, with a repeated request header's values joined (RFC 9110's rule for
list fields, so that of two Origin headers neither goes unchecked), and the size limit of a head.
"""

from __future__ import annotations

from typing import NamedTuple

import h11

__all__ = ["MAX_HEAD", "Request", "Response", "fields_of", "request_of", "response_of"]

MAX_HEAD = 64 << 10  # bytes a head may have while incomplete (h11 answers a request's with 431 beyond)


class Request(NamedTuple):
    """An HTTP request as the handlers see it (`request_of`)."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]  # (lowercase name, value), in order, as h11 gives them
    fields: dict[str, str]  # lowercase name -> value (latin-1; a repeated header's values joined by ", ")


class Response(NamedTuple):
    """The head of a target's answer as the recording proxy sees it (`response_of`)."""

    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]  # (lowercase name, value), in order
    fields: dict[str, str]  # lowercase name -> value (latin-1; a repeated header keeps its last)


def request_of(event: h11.Request) -> Request:
    """The `Request` of a request h11 read."""
    headers = _headers(event)
    return Request(event.method, event.target, headers, fields_of(headers))


def response_of(event: h11.Response) -> Response:
    """The `Response` of an answer's head h11 read."""
    headers = _headers(event)
    fields = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}
    return Response(event.status_code, bytes(event.reason), headers, fields)


def _headers(event: h11.Request | h11.Response) -> list[tuple[bytes, bytes]]:
    # What iterating the event's headers gives (names lowercase), in a third of the time: it runs per request.
    return [(name.lower(), value) for name, value in event.headers.raw_items()]


def fields_of(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Headers by lowercase name, a repeated header's values joined by ", "."""
    fields: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        fields[key] = f"{fields[key]}, {text}" if key in fields else text
    return fields
