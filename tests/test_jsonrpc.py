"""Tests for mockmcp._wire.jsonrpc: sorting parsed values into JSON-RPC shapes, and encoding lines.

Covered:
- `classify` on every valid shape (request with string and integer ids, notification with and
  without params, success and error responses) and on every invalid shape (non-object, missing or
  wrong "jsonrpc", id null / fractional / boolean, method not a string, params a string, a
  response with both or neither of result and error, a response without a usable id), checking
  the kind, the id an error reply would carry (null where the id is unreadable) and a word of the
  problem text;
- `is_valid_id` and `error_response`;
- `encode`: compact, one line, newline-terminated, non-ASCII kept as UTF-8, embedded newlines
  escaped, and a lone surrogate escaped instead of crashing;
- lone surrogates: `may_hold_lone_surrogates` on escapes, raw bytes, pairs and near misses;
  `without_lone_surrogates` puts U+FFFD in strings and keys, and returns a clean value itself.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp._wire import jsonrpc, protocol

# --- classify: the valid shapes --------------------------------------------------------------

VALID = [
    pytest.param(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        jsonrpc.REQUEST,
        1,
        id="request-int-id",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": {}},
        jsonrpc.REQUEST,
        "server-discover-probe-1",
        id="request-string-id",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": 0, "method": "ping"},
        jsonrpc.REQUEST,
        0,
        id="request-id-zero",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        jsonrpc.NOTIFICATION,
        None,
        id="notification-no-params",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
        jsonrpc.NOTIFICATION,
        None,
        id="notification-with-params",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": 4, "result": {}},
        jsonrpc.RESPONSE,
        None,
        id="success-response",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "Method not found"}},
        jsonrpc.RESPONSE,
        None,
        id="error-response",
    ),
]


@pytest.mark.parametrize(("message", "kind", "reply_id"), VALID)
def test_classify_valid_shapes(message: Any, kind: str, reply_id: Any) -> None:
    found = jsonrpc.classify(message)
    assert found.kind == kind
    assert found.problem == ""
    assert found.message is message
    assert found.reply_id == reply_id
    assert type(found.reply_id) is type(reply_id)  # "7" is not 7


# --- classify: the invalid shapes ------------------------------------------------------------

INVALID = [
    # (message, reply_id, a word of the problem)
    pytest.param([], None, "object", id="array"),
    pytest.param("tools/list", None, "object", id="string"),
    pytest.param(42, None, "object", id="number"),
    pytest.param(None, None, "object", id="null"),
    pytest.param({"id": 1, "method": "tools/list"}, 1, "jsonrpc", id="missing-jsonrpc"),
    pytest.param({"jsonrpc": "1.0", "id": "a", "method": "tools/list"}, "a", "jsonrpc", id="wrong-jsonrpc"),
    pytest.param({"jsonrpc": 2.0, "id": 1, "method": "tools/list"}, 1, "jsonrpc", id="jsonrpc-a-number"),
    pytest.param({"jsonrpc": "2.0", "id": None, "method": "tools/list"}, None, "null", id="id-null"),
    pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}, None, "id", id="id-fractional"),
    pytest.param({"jsonrpc": "2.0", "id": True, "method": "tools/list"}, None, "boolean", id="id-boolean"),
    pytest.param({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}, None, "id", id="id-array"),
    pytest.param({"jsonrpc": "2.0", "id": 2, "method": 7}, 2, "method", id="method-not-string"),
    pytest.param({"jsonrpc": "2.0", "method": None}, None, "method", id="notification-method-null"),
    pytest.param({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "x"}, 3, "params", id="params-string"),
    pytest.param(
        {"jsonrpc": "2.0", "method": "notifications/x", "params": 5}, None, "params", id="notification-params-number"
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": 4, "result": {}, "error": {"code": 1, "message": "m"}},
        4,
        "exactly one",
        id="response-result-and-error",
    ),
    pytest.param({"jsonrpc": "2.0", "result": {}}, None, "id", id="response-without-id"),
    pytest.param(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}}, None, "id", id="response-id-null"
    ),
    pytest.param({"jsonrpc": "2.0", "id": 5}, 5, "neither", id="neither-request-nor-response"),
    pytest.param({"id": 1}, 1, "jsonrpc", id="bare-id"),
]


@pytest.mark.parametrize(("message", "reply_id", "word"), INVALID)
def test_classify_invalid_shapes(message: Any, reply_id: Any, word: str) -> None:
    found = jsonrpc.classify(message)
    assert found.kind == jsonrpc.INVALID
    assert found.reply_id == reply_id
    assert type(found.reply_id) is type(reply_id)
    assert word in found.problem


# --- ids and error responses -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (1, True),
        (0, True),
        (-3, True),
        ("", True),
        ("7", True),
        (None, False),
        (True, False),
        (False, False),
        (1.0, False),
        (1.5, False),
        ([], False),
        ({}, False),
    ],
)
def test_is_valid_id(value: Any, valid: bool) -> None:
    assert jsonrpc.is_valid_id(value) is valid


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            (None, jsonrpc.PARSE_ERROR, "Parse error"),
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        ),
        (
            ("7", jsonrpc.METHOD_NOT_FOUND, "Method not found: x", {"method": "x"}),
            {
                "jsonrpc": "2.0",
                "id": "7",
                "error": {"code": -32601, "message": "Method not found: x", "data": {"method": "x"}},
            },
        ),
        (
            (3, jsonrpc.INVALID_REQUEST, "Invalid Request", None),
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": "Invalid Request"}},
        ),
        (
            (3, jsonrpc.INTERNAL_ERROR, "boom", 0),  # falsy data that is not None is kept
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "boom", "data": 0}},
        ),
    ],
)
def test_error_response(args: tuple[Any, ...], expected: dict[str, Any]) -> None:
    assert jsonrpc.error_response(*args) == expected


def test_error_codes_are_the_documented_ones() -> None:
    assert (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST, jsonrpc.METHOD_NOT_FOUND) == (-32700, -32600, -32601)
    assert (jsonrpc.INVALID_PARAMS, jsonrpc.INTERNAL_ERROR) == (-32602, -32603)
    assert -32099 <= jsonrpc.NO_MATCH <= -32000  # implementation-defined server error range
    assert jsonrpc.NO_MATCH not in protocol.CODES  # never a code of MCP's: a host must not take a miss for one


# --- encode ----------------------------------------------------------------------------------

ENCODE = [
    pytest.param(
        {"jsonrpc": "2.0", "id": 1, "result": {"a": [1, 2], "b": None}},
        b'{"jsonrpc":"2.0","id":1,"result":{"a":[1,2],"b":null}}\n',
        id="compact",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": 1, "result": {"text": "caf\u00e9 \u2603 \U0001f600"}},
        '{"jsonrpc":"2.0","id":1,"result":{"text":"caf\u00e9 \u2603 \U0001f600"}}\n'.encode(),
        id="non-ascii-kept-as-utf8",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "line 1\nline 2\r\n"}},
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"line 1\\nline 2\\r\\n"}}\n',
        id="embedded-newlines-escaped",
    ),
    pytest.param(
        [{"jsonrpc": "2.0", "id": 1, "result": {}}], b'[{"jsonrpc":"2.0","id":1,"result":{}}]\n', id="batch-array"
    ),
]


@pytest.mark.parametrize(("message", "expected"), ENCODE)
def test_encode_exact_bytes(message: Any, expected: bytes) -> None:
    assert jsonrpc.encode(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb\u2028c\u0085d"}},
        {"jsonrpc": "2.0", "id": "\u00e9", "result": {"nested": {"deep": ["x\ny", {"k": "\t"}]}}},
        {"jsonrpc": "2.0", "id": 1, "result": {"lone": "\ud800"}},
        {"jsonrpc": "2.0", "id": 1, "result": {"lone": "ok \udfff and caf\u00e9"}},
    ],
    ids=["unicode-line-separators", "nested", "lone-high-surrogate", "lone-low-surrogate-with-non-ascii"],
)
def test_encode_is_one_newline_terminated_line_that_round_trips(message: Any) -> None:
    line = jsonrpc.encode(message)
    assert isinstance(line, bytes)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    line.decode("utf-8")  # valid UTF-8 even when the text held a lone surrogate
    assert json.loads(line) == message


def test_encode_lone_surrogate_is_escaped_as_it_came() -> None:
    line = jsonrpc.encode({"s": "\ud800"})
    assert line == b'{"s":"\\ud800"}\n'


# --- lone surrogates: the one rule the recorder and replay share ----------------------------------


@pytest.mark.parametrize(
    ("line", "may_hold"),
    [
        (b'{"text":"cut \\ud83d"}', True),
        (b'{"text":"cut \\uDFFF"}', True),
        (b'{"text":"cut \xed\xa0\xbd"}', True),
        (b'{"text":"\\ud83d\\ude00 whole"}', True),  # a pair: the quick test says maybe, the exact one no
        (b'{"text":"\\u00e9 plain \xc3\xa9"}', False),
        (b'{"text":"\xed\x9f\xbf hangul"}', False),  # U+D7FF, just below the surrogates
    ],
)
def test_may_hold_lone_surrogates(line: bytes, may_hold: bool) -> None:
    assert jsonrpc.may_hold_lone_surrogates(line) is may_hold


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"text": "cut \ud83d"}, {"text": "cut \ufffd"}),
        ({"\udc00key": ["a\ud83d", 1, None]}, {"\ufffdkey": ["a\ufffd", 1, None]}),
        ("\ud83d\ude00", "\ufffd\ufffd"),  # surrogates that came as two lone escapes stay two characters
    ],
)
def test_without_lone_surrogates_replaces_them_with_u_fffd(value: Any, expected: Any) -> None:
    assert jsonrpc.without_lone_surrogates(value) == expected


def test_without_lone_surrogates_returns_a_value_without_any_as_it_is() -> None:
    value = {"text": "😀 whole", "n": [1, 2.5, True]}
    assert jsonrpc.without_lone_surrogates(value) is value


DEEP = "[" * (jsonrpc.MAX_DEPTH + 5) + "]" * (jsonrpc.MAX_DEPTH + 5)
UNREAD_IDS = [
    # (a text too deep to read, the id its answer goes under)
    ('{"jsonrpc":"2.0","id":7,"method":"m","params":' + DEEP + "}", 7),
    ('{"jsonrpc":"2.0","method":"m","params":' + DEEP + ',"id":"a\\"b"}', 'a"b'),  # after the deep part
    ('{"params":{"s":"}]{[","x":' + DEEP + '}, "id" : -3}', -3),  # brackets inside strings do not count
    ('{"jsonrpc":"2.0","method":"m","params":' + DEEP + "}", None),  # a notification: no id
    ('{"id":' + DEEP + "}", None),  # an id that is no id
    ('{"id":true,"params":' + DEEP + "}", None),
    ('{"a":{"id":3},"b":[' + DEEP + ',"id"],"id":4}', 4),  # an id nested deeper is not the message's
    ("[" + DEEP + "]", None),  # a batch: answered as a whole, with null
    ('{"params":' + DEEP[: jsonrpc.MAX_DEPTH + 5], None),  # cut short
]


@pytest.mark.parametrize(("text", "expected"), UNREAD_IDS)
def test_a_message_refused_as_too_deep_is_answered_under_its_top_level_id(text: str, expected: object) -> None:
    with pytest.raises(ValueError) as refused:
        jsonrpc.parse(text)
    assert jsonrpc.reply_id_of_unread(text.encode(), refused.value) == expected


def test_a_text_that_is_not_json_is_answered_with_null_whatever_it_holds() -> None:
    with pytest.raises(ValueError) as refused:
        jsonrpc.parse('{"id": 1, "x": NaN}')
    assert jsonrpc.reply_id_of_unread('{"id": 1, "x": NaN}', refused.value) is None
