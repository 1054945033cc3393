"""JSON-RPC 2.0 as MCP uses it: the four message shapes, error codes, one line in, one line out. Pure.

Messages stay plain dicts from the wire to the cassette and back, so fields no model knows survive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]

from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.words import json_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CODES",
    "Classified",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "MAX_LINE",
    "METHOD_NOT_FOUND",
    "NOT_RECORDED",
    "NO_MATCH",
    "PARSE_ERROR",
    "classify",
    "compact",
    "depth",
    "encode",
    "error_response",
    "is_valid_id",
    "map_strings",
    "may_hold_lone_surrogates",
    "parse",
    "reply_id_of_unread",
    "without_lone_surrogates",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CODES = frozenset({PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR})  # JSON-RPC's own
# mockmcp's own codes, at the end of the server range, farthest from those MCP assigns from its start:
NO_MATCH = -32099  # no recorded interaction answers the request
NOT_RECORDED = -32098  # the cassette's stand-in for an answer the recording could not keep


# How deep a message may nest: Python's JSON reader gives up near 1000 levels and every walk over a message
# needs stack too, so a deeper one is answered -32700; no MCP message comes near it.
MAX_DEPTH = 512
# How long a line (or HTTP body) may be: a host's runaway line is answered -32700, not buffered without end.
MAX_LINE = 64 * 1024 * 1024

REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
INVALID = "invalid"


def is_valid_id(value: object) -> bool:
    """True for the ids JSON-RPC allows in a request: a string or an integer (not a bool, not null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Classified(NamedTuple):
    """What one parsed JSON value is (request, notification, response or invalid); for an invalid one,
    `problem` says why and `reply_id` is the id to answer with (None when unreadable)."""

    kind: str
    message: Any
    problem: str = ""
    reply_id: Any = None


def classify(message: Any) -> Classified:
    """Sort one parsed JSON value into the four JSON-RPC shapes, or say why it is none of them."""
    if not isinstance(message, dict):
        return Classified(INVALID, message, f"expected a JSON object, got {json_type(message, article=True)}")
    reply_id = message.get("id") if is_valid_id(message.get("id")) else None
    problem = _problem(message, reply_id)
    if problem:
        return Classified(INVALID, message, problem, reply_id)
    if "method" not in message:
        return Classified(RESPONSE, message)
    return Classified(REQUEST, message, reply_id=reply_id) if "id" in message else Classified(NOTIFICATION, message)


def _problem(message: dict[str, Any], reply_id: Any) -> str:
    """Why a JSON object is no JSON-RPC message ("" when it is one)."""
    if message.get("jsonrpc") != "2.0":
        return 'missing or wrong "jsonrpc": must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" must be a string'
        if "params" in message and not isinstance(message["params"], (dict, list)):
            return '"params" must be an object or an array'
        if "id" in message and reply_id is None:
            return f'"id" must be a string or an integer, got {json_type(message["id"], article=True)}'
        return ""
    if "result" not in message and "error" not in message:
        return 'neither a request (no "method") nor a response'
    if "result" in message and "error" in message:
        return 'a response has exactly one of "result" and "error"'
    return "" if reply_id is not None else 'a response needs the "id" of the request it answers'


def error_response(reply_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response; `data` is left out when None."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": reply_id, "error": error}


def map_strings(value: Any, change: Callable[[str], str], keys: bool = False) -> Any:
    """A copy of a JSON value (of any depth) with every string value (and, with keys, every key) changed."""
    pending: list[tuple[Any, Any]] = []

    def copy(item: Any) -> Any:
        if isinstance(item, str):
            return change(item)
        if isinstance(item, (dict, list)):
            shell: Any = {} if isinstance(item, dict) else []
            pending.append((item, shell))  # filled below, in place
            return shell
        return item

    top = copy(value)
    while pending:
        source, target = pending.pop()
        if isinstance(source, dict):
            for key, item in source.items():
                target[change(key) if keys and isinstance(key, str) else key] = copy(item)
        else:
            target.extend([copy(item) for item in source])
    return top


def depth(value: Any) -> int:
    """How deep value nests: 0 for a scalar, 1 for `[]` or `[1]`, 2 for `[[1]]`... (walked without recursion)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _finite(text: str) -> float:
    number = float(text)
    if number in (_INF, -_INF):
        raise ValueError(f"the number {text[:40]} is too large for a float; JSON-RPC peers read it as Infinity")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (JSON has no NaN or Infinity)")


_INF = float("inf")
_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)


def parse(line: bytes | str) -> Any:
    """One JSON text (a wire line, an HTTP body) as a value; raises ValueError saying why it is not one. Stricter
    than `json.loads`, as a strict peer is: no NaN or Infinity, at most MAX_DEPTH levels, MAX_LINE bytes."""
    if len(line) > MAX_LINE:
        raise ValueError(f"the line is longer than {MAX_LINE // (1024 * 1024)} MiB, more than mockmcp reads")
    if isinstance(line, bytes):
        line = line.decode(json.detect_encoding(line), "surrogatepass")  # as json.loads does
    try:
        value = _DECODER.decode(line)
    except RecursionError:
        value = None
    else:  # the length bounds the depth, and so does the count of brackets, cheaply
        if len(line) <= MAX_DEPTH or line.count("[") + line.count("{") <= MAX_DEPTH or depth(value) <= MAX_DEPTH:
            return value
    raise _TooDeep(f"nested more than {MAX_DEPTH} levels deep, more than mockmcp reads")


class _TooDeep(ValueError):
    """A JSON text nested deeper than mockmcp reads (`parse`)."""


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.S)  # a string, or a bracket outside strings
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")


def reply_id_of_unread(line: bytes | str, error: ValueError) -> Any:
    """The id to answer a text `parse` refused with: None, but for one only nested too deep, the top-level `id`
    a shallow scan finds, so the host is answered under its own id rather than left waiting."""
    if not isinstance(error, _TooDeep):
        return None
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    try:
        found = _top_level_id(text)
    except ValueError:
        return None
    return found if is_valid_id(found) else None


def _top_level_id(text: str) -> Any:
    """The top-level object's `id` (None: none), found by counting brackets outside strings: no other value is read."""
    if not text.lstrip(" \t\n\r").startswith("{"):
        return None
    level = 0
    for token in _TOKEN.finditer(text):
        char = token.group()[0]
        if char != '"':
            level += 1 if char in "{[" else -1
            if level == 0:
                return None
        elif level == 1 and (colon := _COLON.match(text, token.end())) and json.loads(token.group()) == "id":
            at = colon.end()
            return None if text[at : at + 1] in ("{", "[") else _DECODER.raw_decode(text, at)[0]
    return None


# A lone surrogate comes only as a `\uD800`-`\uDFFF` escape, or as bytes json lets through (surrogatepass).
_SURROGATE_IN_LINE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def may_hold_lone_surrogates(line: bytes) -> bool:
    """Whether the JSON text of a line may decode to a lone surrogate: a quick test before the exact one."""
    return (b"\\u" in line or b"\xed" in line) and _SURROGATE_IN_LINE.search(line) is not None


def without_lone_surrogates(value: Any) -> Any:
    """value with every lone surrogate (a cut emoji, which no YAML text holds) in strings and keys as U+FFFD;
    the one rule for the recorder and for what replay matches. value itself when it holds none."""
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return map_strings(value, lambda text: _SURROGATE.sub("\ufffd", text), keys=True)
    return value


def compact(sort_keys: bool = False, ascii_only: bool = False) -> Callable[[Any], str]:
    """The compact JSON text of a value, as `json.JSONEncoder(separators=(",", ":"), ...).encode` writes it; its C
    encoder built once, not on every call as `encode` builds it, and without the check for circular values (a parsed
    message or cassette has none)."""
    encoder = json.JSONEncoder(ensure_ascii=ascii_only, separators=(",", ":"), sort_keys=sort_keys)
    if c_make_encoder is None:  # a Python without json's C speedups
        return encoder.encode
    escape = encode_basestring_ascii if ascii_only else encode_basestring
    encoded = c_make_encoder(None, encoder.default, escape, None, ":", ",", sort_keys, False, True)
    return lambda value: "".join(encoded(value, 0))


_TEXT, _ASCII_TEXT = compact(), compact(ascii_only=True)


def encode(message: Any) -> bytes:
    """One message as one line (of stdio, or an HTTP body): compact JSON, UTF-8, newline-terminated."""
    text = _TEXT(message)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate (legal in a JSON escape, not in UTF-8): keep it escaped, as it came.
        return _ASCII_TEXT(message).encode() + b"\n"
