"""The rules of a Streamable HTTP endpoint that need no socket: `admit` gives a request's JSON-RPC message or the
`Answer` refusing it; `Framing` is how the recorded server framed its answers (`meta.http`), which `*_seen` learn.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from mockmcp._wire import jsonrpc, protocol

__all__ = [
    "Answer",
    "Framing",
    "KEEPALIVE_COMMENT",
    "LOOPBACK",
    "admit",
    "batch_refusal",
    "error_body",
    "error_status_seen",
    "framing_seen",
    "misdirected",
    "priming_event",
    "request_ids",
    "session_error",
    "session_error_seen",
    "sse_event",
]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
METHODS = (b"POST", b"GET", b"DELETE")
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # body param mirrored in Mcp-Name
BATCH_REVISION = "2025-03-26"


class Answer(NamedTuple):
    """An HTTP answer as a whole: status, body, content type, extra headers."""

    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


class Framing(NamedTuple):
    """How the recorded server answered over HTTP (`meta.http`); the defaults, for a cassette that does not say,
    are the MCP Python SDK's."""

    sse: bool = False  # every request's answer is an SSE stream, even a lone reply
    event_ids: bool = False
    priming: bool = False  # each request's stream begins with an event holding an id and no data
    get_stream: bool | None = None  # None: offered when the cassette has unsolicited messages
    session_errors: dict[str, Any] | None = None  # "unknown" / "missing": {status, error}
    error_status: dict[int, int] | None = None  # JSON-RPC error code -> the HTTP status of its lone reply

    @classmethod
    def of(cls, meta: dict[str, Any]) -> Framing:
        http = meta.get("http") or {}
        statuses = {pair["code"]: pair["status"] for pair in http.get("error_status") or ()}
        return cls(
            http.get("framing") == "sse",
            bool(http.get("event_ids")),
            bool(http.get("priming")),
            http.get("get_stream"),
            http.get("session_errors"),
            statuses or None,
        )

    def status_for(self, code: int | None) -> int:
        """The HTTP status of a lone JSON reply: the recorded server's for its error code (None: no error), else 200."""
        return (self.error_status or {}).get(code, 200)


def error_status_seen(status: int, body: bytes, message: Any, known: Any) -> dict[str, Any]:
    """A request's own JSON-RPC error answered with an HTTP error status (a 2026-07-28 SDK server answers -32602
    with 400): `meta.http.error_status`, the pairs `known` plus this one; empty when nothing is new."""
    if status < 400 or not isinstance(message, dict) or "id" not in message:
        return {}
    try:
        reply = jsonrpc.parse(body)
    except ValueError:
        return {}
    error = reply.get("error") if isinstance(reply, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if type(code) is not int or reply.get("id") != message["id"] or type(reply.get("id")) is not type(message["id"]):
        return {}
    seen = {"code": code, "status": status}
    if seen in (known or ()):
        return {}
    pairs = [pair for pair in known or () if pair.get("code") != code]
    return {"error_status": sorted([*pairs, seen], key=lambda pair: -pair["code"])}


# The MCP Python SDK's answers to session errors, used when the recording saw none of the server's own.
_SDK_SESSION_ERRORS: dict[str, dict[str, Any]] = {
    "unknown": {"status": 404, "error": {"code": jsonrpc.INVALID_REQUEST, "message": "Session not found"}},
    "missing": {
        "status": 400,
        "error": {"code": jsonrpc.INVALID_REQUEST, "message": "Bad Request: Missing session ID"},
    },
}


def session_error(framing: Framing, name: str) -> Answer:
    """The answer to a request whose session is unknown (or ended), or missing, as the recorded server gave it:
    `"id": null` as JSON-RPC says, left out (the TypeScript SDK's examples) or after the error (its SDK)."""
    answer = (framing.session_errors or {}).get(name) or _SDK_SESSION_ERRORS[name]
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": answer["error"]}
    if answer.get("without_id"):
        del reply["id"]
    elif answer.get("id_last"):
        reply = {"jsonrpc": "2.0", "error": answer["error"], "id": None}
    return Answer(answer["status"], jsonrpc.encode(reply))


def framing_seen(
    method: bytes, status: int, message: Any, events: tuple[bool, bool, bool] | None, known: str | None
) -> dict[str, Any]:
    """What one answer shows of the target's framing (`meta.http`): a request's, its framing (once SSE, always),
    event ids and priming; a GET's, whether it offers a stream. `events`: None for JSON, else whether its events
    had ids, began with a priming event, and carried the reply alone (with messages first, either framing streams)."""
    if method == b"GET":
        return {"get_stream": events is not None} if status in (200, 405) else {}
    if status != 200 or not request_ids(message):
        return {}
    if events is None:
        return {} if known == "sse" else {"framing": "json"}
    ids, primed, lone = events
    facts: dict[str, Any] = {"framing": "sse"} if lone else {}
    if ids:
        facts["event_ids"] = True
    if primed:
        facts["priming"] = True
    return facts


_NO_ID = object()  # a message without an id: nothing an answer's id can equal


def session_error_seen(asked: dict[str, str], status: int, body: bytes, message: Any = None) -> dict[str, Any]:
    """How a server answered a request whose session it does not know (`unknown`: with a session id, 404, or 400
    turning it away about its session) or which named none (`missing`: 400, not under the request's id, saying so
    or answering a request other than initialize, as a handshake-era server answers an auto host's
    server/discover); empty for any other answer (a 2026-07-28 server's 400 under the request's id is its own)."""
    if status not in (400, 404):
        return {}
    try:
        reply = jsonrpc.parse(body)
        error = reply.get("error")
    except (ValueError, AttributeError):
        return {}
    if not (isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"), str)):
        return {}
    asked_id = message.get("id", _NO_ID) if isinstance(message, dict) else _NO_ID
    turned_away = reply.get("id") != asked_id or type(reply.get("id")) is not type(asked_id)
    sessionless_request = asked_id is not _NO_ID and message.get("method") not in (None, protocol.INITIALIZE)
    says_session = b"session" in body.lower()
    if protocol.SESSION_HEADER in asked:  # 404 as the spec says, or 400 about it (the TypeScript SDK's examples)
        name = "unknown" if status == 404 or (turned_away and says_session) else ""
    else:
        missing = says_session or (sessionless_request and error["code"] != protocol.INVALID_HEADER)
        name = "missing" if status == 400 and turned_away and missing else ""
    if not name:
        return {}
    seen: dict[str, Any] = {"status": status, "error": {"code": error["code"], "message": error["message"]}}
    members = list(reply)
    if "id" not in reply:
        seen["without_id"] = True
    elif members.index("id") > members.index("error"):
        seen["id_last"] = True
    return {name: seen}


def request_ids(message: Any) -> list[Any]:
    """The ids of the requests a POST carried (a batch's: all of them)."""
    messages = message if isinstance(message, list) else [message]
    return [m["id"] for m in messages if jsonrpc.classify(m).kind == jsonrpc.REQUEST]


def _hostname(url: str) -> str | None:
    """The host a URL names, or None (none, or text no URL parser takes: an unclosed `[`, say)."""
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def misdirected(headers: dict[str, str], allowed: frozenset[str], target: str, path: str) -> Answer | None:
    """The refusal of a request not for this endpoint, else None: a Host (421) or Origin (403) outside allowed (DNS
    rebinding, cross-site requests), a target that is no URL path (400) or another path (404)."""
    if _hostname("//" + headers.get("host", "")) not in allowed:
        return _text(421, f"Invalid Host header: {headers.get('host')!r} (allow it with --allow-host)")
    origin = headers.get("origin")
    if origin is not None and ("," in origin or _hostname(origin) not in allowed):  # one origin, or none
        return _text(403, f"Invalid Origin header: {origin!r} (allow its host with --allow-host)")
    try:
        found = urlsplit(target).path
    except ValueError:
        return _text(400, f"Bad Request: the request target {target!r} is not a URL path")
    return None if found == path else _text(404, f"Not Found: the MCP endpoint is {path}")


def admit(
    method: bytes, target: str, headers: dict[str, str], body: bytes, allowed: frozenset[str], path: str
) -> Answer | Any | None:
    """The refusal `Answer` for a request the endpoint does not take; else for a POST its message, else None."""
    refused = misdirected(headers, allowed, target, path)
    if refused is not None:
        return refused
    if method not in METHODS:
        return Answer(405, b"Method Not Allowed", "text/plain", (("allow", "GET, POST, DELETE"),))
    if method != b"POST":
        return None
    accept = headers.get("accept", "")
    if "application/json" not in accept or "text/event-stream" not in accept:
        text = "Not Acceptable: accept both application/json and text/event-stream"
        return Answer(406, error_body(text))
    if not headers.get("content-type", "").lower().startswith("application/json"):
        return Answer(415, error_body("Unsupported Media Type: send application/json"))
    try:
        message = jsonrpc.parse(body)
    except ValueError as exc:
        return Answer(
            400, error_body(f"Parse error: {exc}", jsonrpc.PARSE_ERROR, jsonrpc.reply_id_of_unread(body, exc))
        )
    if isinstance(message, list):  # a batch: its messages are judged one by one, as JSON-RPC says
        if not message:
            return Answer(400, error_body("Invalid Request: empty batch"))
        return message
    found = jsonrpc.classify(message)
    if found.kind == jsonrpc.INVALID:
        return Answer(400, error_body(f"Invalid Request: {found.problem}", request_id=found.reply_id))
    mismatch = header_mismatch(headers, message)
    if mismatch:
        request_id = message.get("id") if jsonrpc.is_valid_id(message.get("id")) else None
        return Answer(400, error_body(mismatch, protocol.INVALID_HEADER, request_id))
    return message


def batch_refusal(headers: dict[str, str], negotiated: str | None) -> Answer | None:
    """A JSON-RPC batch is taken only in a session of revision 2025-03-26 (the only one that has them)."""
    version = headers.get("mcp-protocol-version") or negotiated
    if version == BATCH_REVISION:
        return None
    text = f"JSON-RPC batches exist only in revision {BATCH_REVISION}; this session speaks {version or 'another'}"
    return Answer(400, error_body(text))


def header_mismatch(headers: dict[str, str], message: Any) -> str | None:
    """How the routing headers disagree with the body (2026-07-28), or None."""
    version = headers.get("mcp-protocol-version")
    if version is not None and version not in protocol.REVISIONS:
        return f"unsupported MCP-Protocol-Version header {version!r}"
    meta = protocol.meta(message.get("params")) if isinstance(message, dict) else {}
    if not (protocol.PROTOCOL_VERSION_KEY in meta and "method" in message):
        return None
    if version != meta[protocol.PROTOCOL_VERSION_KEY]:
        return "the MCP-Protocol-Version header does not match the request's _meta protocol version"
    if headers.get("mcp-method") != message["method"]:
        return "the Mcp-Method header does not match the request body's method"
    key, params = NAMED.get(message["method"]), message.get("params")
    if (
        key is not None
        and isinstance(params, dict)
        and params.get(key) is not None
        and _decoded(headers.get("mcp-name")) != params[key]
    ):
        return f"the Mcp-Name header does not match the request body's {key!r}"
    return None


def _decoded(value: str | None) -> str | None:
    """An `Mcp-Name` value, undoing the `=?base64?...?=` form used for values headers cannot hold."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def error_body(text: str, code: int = jsonrpc.INVALID_REQUEST, request_id: Any = None) -> bytes:
    """A JSON-RPC error response, under request_id (None: the request had none, or it could not be read)."""
    return jsonrpc.encode(jsonrpc.error_response(request_id, code, text))


def sse_event(data: bytes, event_id: str | None = None) -> bytes:
    """One SSE `message` event carrying data (and an id, when given), a `data:` field per line."""
    lines = data.replace(b"\r\n", b"\n").rstrip(b"\n").split(b"\n")
    head = b"event: message\n" if event_id is None else b"event: message\nid: " + event_id.encode() + b"\n"
    return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"


# An SSE comment a quiet stream carries: every client skips it, proxies do not time the stream out, and a write to
# a client that vanished fails, closing its connection.
KEEPALIVE_COMMENT = b": keep-alive\n\n"


def priming_event(event_id: str) -> bytes:
    """The event a resumable server opens a request's stream with: an id to resume from, and no data."""
    return b"id: " + event_id.encode() + b"\ndata: \n\n"


def _text(status: int, text: str) -> Answer:
    return Answer(status, text.encode(), "text/plain")
