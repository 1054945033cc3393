"""The Streamable HTTP endpoint's admission rules, in memory: one literal request per rule, no sockets."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from mockmcp.http._streamable import LOOPBACK, Answer, admit, batch_refusal, sse_event

ALLOWED = LOOPBACK | {"mcp.test"}
OK = {
    "host": "127.0.0.1:8000",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_file", "_meta": META}}
MODERN = {**OK, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "read_file"}


def _admit(method: bytes, headers: dict[str, str], body: Any = LIST, target: str = "/mcp") -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return admit(method, target, headers, data, ALLOWED, "/mcp")


# (rule, method, headers, body, target, status, JSON-RPC error code or None for a text answer)
REFUSALS = [
    ("foreign Host", b"POST", {**OK, "host": "evil.example:8000"}, LIST, "/mcp", 421, None),
    ("Host missing", b"POST", {k: v for k, v in OK.items() if k != "host"}, LIST, "/mcp", 421, None),
    ("foreign Origin", b"POST", {**OK, "origin": "https://evil.example"}, LIST, "/mcp", 403, None),
    # a repeated Origin arrives joined: a page's origin behind a loopback one is still refused
    ("two Origins", b"POST", {**OK, "origin": "http://127.0.0.1:8000, https://evil.example"}, LIST, "/mcp", 403, None),
    ("foreign Host before the path", b"GET", {**OK, "host": "evil.example"}, b"", "/other", 421, None),
    ("another path", b"POST", OK, LIST, "/other", 404, None),
    ("another method", b"PUT", OK, LIST, "/mcp", 405, None),
    ("Accept without SSE", b"POST", {**OK, "accept": "application/json"}, LIST, "/mcp", 406, -32600),
    ("Accept missing", b"POST", {k: v for k, v in OK.items() if k != "accept"}, LIST, "/mcp", 406, -32600),
    ("a body not JSON", b"POST", {**OK, "content-type": "text/plain"}, LIST, "/mcp", 415, -32600),
    ("invalid JSON", b"POST", OK, b"{not json", "/mcp", 400, -32700),
    # what Python's json writes by default, which JSON has not: a parse error, never silence
    (
        "NaN in params",
        b"POST",
        OK,
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":NaN}}',
        "/mcp",
        400,
        -32700,
    ),
    (
        "Infinity in params",
        b"POST",
        OK,
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"x":Infinity}}',
        "/mcp",
        400,
        -32700,
    ),
    (
        "-Infinity in a batch",
        b"POST",
        OK,
        b'[{"jsonrpc":"2.0","id":1,"method":"x","params":[-Infinity]}]',
        "/mcp",
        400,
        -32700,
    ),
    ("an empty batch", b"POST", OK, [], "/mcp", 400, -32600),
    ("not JSON-RPC", b"POST", OK, {"id": 1}, "/mcp", 400, -32600),
    ("unknown protocol version", b"POST", {**OK, "mcp-protocol-version": "1999-01-01"}, LIST, "/mcp", 400, -32020),
    (
        "version header against _meta",
        b"POST",
        {**MODERN, "mcp-protocol-version": "2025-11-25"},
        CALL,
        "/mcp",
        400,
        -32020,
    ),
    ("Mcp-Method against the body", b"POST", {**MODERN, "mcp-method": "tools/list"}, CALL, "/mcp", 400, -32020),
    ("Mcp-Name against the body", b"POST", {**MODERN, "mcp-name": "other"}, CALL, "/mcp", 400, -32020),
]


@pytest.mark.parametrize(
    ("rule", "method", "headers", "body", "target", "status", "code"), REFUSALS, ids=[r[0] for r in REFUSALS]
)
def test_each_rule_refuses_with_its_status(
    rule: str, method: bytes, headers: dict[str, str], body: Any, target: str, status: int, code: int | None
) -> None:
    answer = _admit(method, headers, body, target)
    assert isinstance(answer, Answer) and answer.status == status, rule
    if code is None:
        assert answer.content_type == "text/plain" and answer.body
    else:
        assert json.loads(answer.body)["error"]["code"] == code


# (rule, method, headers, body, what admit returns)
ADMITTED = [
    ("a request", b"POST", OK, LIST, LIST),
    ("a loopback Origin on another port", b"POST", {**OK, "origin": "http://localhost:3000"}, LIST, LIST),
    ("an allowed name", b"POST", {**OK, "host": "mcp.test", "origin": "http://mcp.test"}, LIST, LIST),
    ("IPv6 loopback", b"POST", {**OK, "host": "[::1]:8000"}, LIST, LIST),
    ("a query string", b"POST", OK, LIST, LIST),
    ("stateless headers agreeing", b"POST", MODERN, CALL, CALL),
    (
        "Mcp-Name in base64",
        b"POST",
        {**MODERN, "mcp-name": "=?base64?" + base64.b64encode(b"read_file").decode() + "?="},
        CALL,
        CALL,
    ),
    ("a batch, for the session to judge", b"POST", OK, [LIST, {"id": 9}], [LIST, {"id": 9}]),
    ("GET", b"GET", OK, b"", None),
    ("DELETE", b"DELETE", OK, b"", None),
]


@pytest.mark.parametrize(("rule", "method", "headers", "body", "expected"), ADMITTED, ids=[r[0] for r in ADMITTED])
def test_what_the_endpoint_takes(rule: str, method: bytes, headers: dict[str, str], body: Any, expected: Any) -> None:
    target = "/mcp?x=1" if rule == "a query string" else "/mcp"
    assert _admit(method, headers, body, target) == expected, rule


def test_an_sse_event_gives_each_line_its_own_data_field() -> None:
    assert sse_event(b'{"a":1}\n') == b'event: message\ndata: {"a":1}\n\n'
    assert sse_event(b"one\r\ntwo") == b"event: message\ndata: one\ndata: two\n\n"


@pytest.mark.parametrize(
    ("header", "negotiated", "taken"),
    [
        (None, "2025-03-26", True),
        ("2025-03-26", None, True),
        (None, "2025-06-18", False),
        ("2025-11-25", "2025-03-26", False),  # the header names the revision in use
        (None, None, False),
    ],
)
def test_a_batch_is_taken_only_in_revision_2025_03_26(header: str | None, negotiated: str | None, taken: bool) -> None:
    headers = {} if header is None else {"mcp-protocol-version": header}
    refused = batch_refusal(headers, negotiated)
    assert (refused is None) == taken
    if refused is not None:
        assert refused.status == 400 and json.loads(refused.body)["error"]["code"] == -32600
