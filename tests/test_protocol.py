"""MCP's vocabulary (`mockmcp._wire.protocol`): literal JSON-RPC messages in, the facts mockmcp reads out."""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp._wire import protocol

V = "io.modelcontextprotocol/protocolVersion"  # written out: tests state the protocol's facts themselves

META = [
    # (params or result, its _meta)
    ({"_meta": {"progressToken": 1}}, {"progressToken": 1}),
    ({"name": "x"}, {}),
    ({"_meta": None}, {}),
    ({"_meta": ["not", "a", "mapping"]}, {}),
    (["by", "position"], {}),
    (None, {}),
]


@pytest.mark.parametrize(("holder", "meta"), META)
def test_meta_is_the_mapping_or_nothing(holder: Any, meta: dict[str, Any]) -> None:
    assert protocol.meta(holder) == meta


MESSAGES = [
    # (message, progress token, protocol version, speaks the stateless era)
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, None, None, False),
    (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": {"progressToken": "p"}}},
        "p",
        None,
        False,
    ),
    (
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {V: "2026-07-28", "progressToken": 7}}},
        7,
        "2026-07-28",
        True,
    ),
    (
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {V: "2027-01-01"}}},
        None,
        "2027-01-01",
        True,
    ),
    # the key says the era even when its value is not a version string
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {V: 20260728}}}, None, None, True),
    ({"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover"}, None, None, True),
    (
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        None,
        None,
        False,
    ),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None, None, False),
    ({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": [1, 2]}, None, None, False),
    ([{"jsonrpc": "2.0", "id": 7, "method": "server/discover"}], None, None, False),  # a batch is not one message
    ("not json-rpc", None, None, False),
]


@pytest.mark.parametrize(("message", "token", "version", "stateless"), MESSAGES)
def test_facts_of_one_message(message: Any, token: Any, version: str | None, stateless: bool) -> None:
    assert protocol.progress_token(message) == token
    assert protocol.protocol_version(message) == version
    assert protocol.speaks_stateless(message) is stateless


@pytest.mark.parametrize(
    ("header", "stateless"),
    [("2026-07-28", True), ("2025-11-25", False), ("2025-06-18", False), (None, False)],
)
def test_the_http_version_header_tells_only_by_its_value(header: str | None, stateless: bool) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert protocol.speaks_stateless(message, header) is stateless


INIT = {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
INIT_OK = {"result": {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s"}}}
PROBE = {"id": "server-discover-probe-1", "method": "server/discover"}
REFUSED = {"error": {"code": -32601, "message": "Method not found"}}
DISCOVERED = {"result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}}
LIST_2026 = {"id": 2, "method": "tools/list", "params": {"_meta": {V: "2026-07-28"}}}

ERAS = [
    ("nothing", [], {}),
    ("a handshake", [(INIT, INIT_OK)], {"handshake": "2025-06-18"}),  # the server's answer names the version
    ("an unanswered initialize", [(INIT, None)], {}),
    ("a refused initialize", [(INIT, REFUSED)], {}),
    ("an initialize answered without a version", [(INIT, {"result": {}})], {"handshake": None}),
    ("a refused probe, then a handshake", [(PROBE, REFUSED), (INIT, INIT_OK)], {"handshake": "2025-06-18"}),
    ("an answered probe", [(PROBE, DISCOVERED)], {"stateless": None}),
    (
        "an answered probe, then versioned requests",
        [(PROBE, DISCOVERED), (LIST_2026, None)],
        {"stateless": "2026-07-28"},
    ),
    ("versioned requests only", [(LIST_2026, {"result": {"tools": []}})], {"stateless": "2026-07-28"}),
    (
        "both, stateless first",
        [(LIST_2026, None), (INIT, INIT_OK)],
        {"handshake": "2025-06-18", "stateless": "2026-07-28"},
    ),
    ("server-only interactions", [(None, None)], {}),
    ("an unanswered probe", [(PROBE, None)], {}),
    (
        "a version key that names no version",
        [({"id": 1, "method": "x", "params": {"_meta": {V: 1}}}, None)],
        {"stateless": None},
    ),
]


@pytest.mark.parametrize(("why", "exchanges", "eras"), ERAS, ids=[why for why, _e, _r in ERAS])
def test_the_eras_a_session_shows(why: str, exchanges: list[tuple[Any, Any]], eras: dict[str, str | None]) -> None:
    found = protocol.session_eras(exchanges)
    assert found == eras
    assert list(found) == list(eras)  # handshake first: the recorder writes the first


def _tools_list(*names: Any, cursor: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    result: dict[str, Any] = {"tools": [{"name": name} if isinstance(name, str) else name for name in names]}
    if cursor:
        result["nextCursor"] = cursor
    return {"id": 1, "method": "tools/list"}, {"result": result}


OFFERED = [
    ("no tools/list", [(INIT, INIT_OK)], None),
    ("an empty list", [_tools_list()], frozenset()),
    ("one list", [_tools_list("read", "write")], frozenset({"read", "write"})),
    # Pages: the last answer alone would make `read` unknown.
    ("two pages", [_tools_list("read", cursor="c1"), _tools_list("write")], frozenset({"read", "write"})),
    ("listed again after a change", [_tools_list("read"), _tools_list("read", "grep")], frozenset({"read", "grep"})),
    ("nameless and odd tools are no tools", [_tools_list({"title": "x"}, "ok", 3)], frozenset({"ok"})),
    ("an unanswered tools/list", [({"id": 1, "method": "tools/list"}, None)], None),
    ("a refused tools/list", [({"id": 1, "method": "tools/list"}, REFUSED)], None),
    ("tools in another method's result", [({"id": 1, "method": "x"}, {"result": {"tools": [{"name": "a"}]}})], None),
]


@pytest.mark.parametrize(("why", "exchanges", "tools"), OFFERED, ids=[why for why, _e, _t in OFFERED])
def test_the_tools_a_session_offers(why: str, exchanges: list[tuple[Any, Any]], tools: frozenset[str] | None) -> None:
    assert protocol.offered_tools(exchanges) == tools


@pytest.mark.parametrize(
    ("method", "params", "compared"),
    [
        ("notifications/progress", {"progressToken": 3, "progress": 1, "total": 2}, {"progress": 1, "total": 2}),
        ("notifications/progress", None, None),
        ("notifications/message", {"progressToken": 3, "level": "info"}, {"progressToken": 3, "level": "info"}),
        ("tools/call", {"name": "x"}, {"name": "x"}),
    ],
)
def test_only_a_progress_notification_loses_its_token_for_comparison(method: str, params: Any, compared: Any) -> None:
    assert protocol.without_progress_token(method, params) == compared
