"""Tests for mockmcp.matching: when two requests count as "the same request".

Covered, as tables over `Matcher.build(...).key` and `.normalize`:
- what always varies is ignored: `_meta.progressToken`, every `io.modelcontextprotocol/*` _meta
  key (the 2026-07-28 per-request protocol version, client info and capabilities), W3C
  `traceparent` / `tracestate` / `baggage`; other `_meta` keys still count;
- a `_meta` emptied by that removal equals no `_meta`, and params emptied that way equal no params;
- empty versus absent: `arguments` of tools/call and prompts/get, and `_meta`, sent null or `{}`,
  and a null `cursor` of a list request, equal leaving them out; values inside stay as sent;
- `initialize` matches on its method alone; `notifications/cancelled` ignores `requestId`;
- JSON types stay exact (1, 1.0, true and "1" give four different keys); key order does not
  matter; the method is part of the key;
- user ignore paths: `arguments.when`, `items[*].id`, `items.*.id`, `items.0.id`, `items[0].id`,
  `_meta["a.b/c"]`, fnmatch patterns, and an ignore path ending at a list element;
- `parse_path` on well-formed paths, and `mockmcp.errors.UsageError` for malformed ones, also
  through `Matcher.build`;
- a miss's fix that records again names the record mode, and records from where the cassette was
  recorded: the server's command after `--`, or `--http-target URL` for one the HTTP proxy recorded.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

from mockmcp._wire.words import RecordMode, parse_path
from mockmcp.cassette.model import Cassette, Interaction
from mockmcp.engine.explain import explain_miss, record_fix, record_mode
from mockmcp.engine.matching import Matcher
from mockmcp.errors import UsageError

MCP = "io.modelcontextprotocol/"
CALL = {"name": "read_file", "arguments": {"path": "notes.txt"}}


def call(**extra: Any) -> dict[str, Any]:
    """The read_file call params with extra top-level keys."""
    return {**CALL, **extra}


# --- the same request, or not -------------------------------------------------------------------

# (extra ignore paths, method, params a, params b, same key?)
SAME = [
    # empty versus absent: the SDK sends `prompts/get {arguments: {}}`, fastmcp leaves it out
    pytest.param((), "prompts/get", {"name": "p", "arguments": {}}, {"name": "p"}, True, id="sdk-vs-fastmcp-prompt"),
    pytest.param(
        (), "tools/call", {"name": "t", "arguments": None}, {"name": "t", "arguments": {}}, True, id="null-vs-empty"
    ),
    pytest.param(
        (),
        "prompts/get",
        {"name": "p", "arguments": {}},
        {"name": "p", "arguments": {"a": "1"}},
        False,
        id="given-counts",
    ),
    pytest.param((), "tools/list", {"cursor": None}, None, True, id="cursor-null-vs-none"),
    pytest.param((), "tools/list", {"cursor": ""}, None, False, id="cursor-empty-string-counts"),
    # what always varies
    pytest.param((), "tools/call", CALL, call(_meta={"progressToken": 7}), True, id="progressToken"),
    pytest.param(
        (),
        "tools/call",
        call(_meta={"progressToken": "a"}),
        call(_meta={"progressToken": 9}),
        True,
        id="progressToken-any-value",
    ),
    pytest.param(
        (),
        "tools/call",
        call(_meta={f"{MCP}protocolVersion": "2026-07-28", f"{MCP}clientInfo": {"name": "mcp", "version": "0.1.0"}}),
        call(
            _meta={
                f"{MCP}protocolVersion": "2026-09-01",
                f"{MCP}clientInfo": {"name": "inspector", "version": "2"},
                f"{MCP}clientCapabilities": {},
            }
        ),
        True,
        id="io.modelcontextprotocol-meta",
    ),
    pytest.param(
        (),
        "tools/call",
        call(_meta={"traceparent": "00-aaa-01", "tracestate": "x=1"}),
        call(_meta={"traceparent": "00-bbb-01", "baggage": "k=v"}),
        True,
        id="trace-context",
    ),
    pytest.param(
        (), "tools/call", call(_meta={"custom": 1}), call(_meta={"custom": 2}), False, id="other-meta-key-counts"
    ),
    pytest.param(
        (),
        "tools/call",
        call(_meta={"custom": 1, "progressToken": 1}),
        call(_meta={"custom": 1}),
        True,
        id="other-meta-kept-token-dropped",
    ),
    pytest.param((), "tools/call", call(_meta={"io.example/x": 1}), CALL, False, id="non-mcp-namespace-counts"),
    # _meta emptied by removal
    pytest.param((), "tools/list", {"_meta": {"progressToken": 1}}, None, True, id="emptied-meta-equals-no-params"),
    pytest.param(
        (),
        "tools/list",
        {"_meta": {f"{MCP}protocolVersion": "2026-07-28", "traceparent": "00-1"}},
        {"_meta": {f"{MCP}protocolVersion": "2026-07-28"}},
        True,
        id="emptied-meta-equals-empty-params",
    ),
    # the era takes part: a 2026-07-28 request never matches a handshake-era one (its answer has another shape)
    pytest.param(
        (),
        "tools/list",
        {"_meta": {f"{MCP}protocolVersion": "2026-07-28"}},
        {},
        False,
        id="stateless-never-matches-handshake",
    ),
    pytest.param((), "tools/call", call(_meta={f"{MCP}protocolVersion": "2026-07-28"}), CALL, False, id="era-counts"),
    pytest.param(
        (),
        "tools/list",
        {"cursor": "c1", "_meta": {"progressToken": 1}},
        {"cursor": "c1"},
        True,
        id="emptied-meta-equals-no-meta",
    ),
    pytest.param((), "tools/list", {}, None, True, id="empty-params-equals-no-params"),
    pytest.param((), "tools/list", {"cursor": "c1"}, {"cursor": "c2"}, False, id="cursor-counts"),
    # method-specific rules
    pytest.param(
        (),
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mcp", "version": "0.1.0"}},
        {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "x", "version": "9"}},
        True,
        id="initialize-method-only",
    ),
    pytest.param((), "initialize", {"protocolVersion": "2025-11-25"}, None, True, id="initialize-no-params"),
    pytest.param(
        (),
        "notifications/cancelled",
        {"requestId": 3, "reason": "timeout"},
        {"requestId": "abc", "reason": "timeout"},
        True,
        id="cancelled-requestId",
    ),
    pytest.param((), "notifications/cancelled", {"requestId": 3}, None, True, id="cancelled-only-requestId"),
    pytest.param(
        (),
        "notifications/cancelled",
        {"requestId": 3, "reason": "a"},
        {"requestId": 3, "reason": "b"},
        False,
        id="cancelled-reason-counts",
    ),
    pytest.param(
        (), "tools/call", {"requestId": 1, **CALL}, {"requestId": 2, **CALL}, False, id="requestId-counts-elsewhere"
    ),
    # exact JSON types
    pytest.param((), "tools/call", call(arguments={"n": 1}), call(arguments={"n": 1.0}), False, id="int-vs-float"),
    pytest.param((), "tools/call", call(arguments={"n": 1}), call(arguments={"n": True}), False, id="int-vs-true"),
    pytest.param((), "tools/call", call(arguments={"n": 1}), call(arguments={"n": "1"}), False, id="int-vs-string"),
    pytest.param((), "tools/call", call(arguments={"n": 0}), call(arguments={"n": False}), False, id="zero-vs-false"),
    pytest.param((), "tools/call", call(arguments={"n": None}), call(arguments={}), False, id="null-vs-absent"),
    pytest.param((), "tools/call", call(arguments={"n": 1.5}), call(arguments={"n": 1.5}), True, id="same-float"),
    # key order
    pytest.param(
        (),
        "tools/call",
        {"name": "t", "arguments": {"a": 1, "b": {"x": 1, "y": 2}}},
        {"arguments": {"b": {"y": 2, "x": 1}, "a": 1}, "name": "t"},
        True,
        id="key-order",
    ),
    pytest.param(
        (), "tools/call", call(arguments={"l": [1, 2]}), call(arguments={"l": [2, 1]}), False, id="list-order-counts"
    ),
    # user ignore paths
    pytest.param(
        ("arguments.when",),
        "tools/call",
        call(arguments={"q": "x", "when": "09:00"}),
        call(arguments={"q": "x", "when": "10:00"}),
        True,
        id="arguments.when",
    ),
    pytest.param(
        ("arguments.when",),
        "tools/call",
        call(arguments={"q": "x", "when": "09:00"}),
        call(arguments={"q": "y", "when": "09:00"}),
        False,
        id="arguments.when-rest-counts",
    ),
    pytest.param(
        ("arguments.when",),
        "tools/call",
        {"name": "t", "arguments": {"when": 1}},
        {"name": "t"},
        True,
        id="arguments-emptied-equals-absent",
    ),
    pytest.param(
        ("when",),
        "tools/call",
        call(arguments={"when": 1}),
        call(arguments={"when": 2}),
        False,
        id="paths-are-relative-to-params",
    ),
    pytest.param(
        ("items[*].id",),
        "tools/call",
        {"items": [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]},
        {"items": [{"id": 8, "v": "a"}, {"id": 9, "v": "b"}]},
        True,
        id="items[*].id",
    ),
    pytest.param(
        ("items[*].id",),
        "tools/call",
        {"items": [{"id": 1, "v": "a"}]},
        {"items": [{"id": 1, "v": "b"}]},
        False,
        id="items[*].id-rest-counts",
    ),
    pytest.param(
        ("items.*.id",),
        "tools/call",
        {"items": [{"id": 1}, {"id": 2}]},
        {"items": [{"id": 3}, {"id": 4}]},
        True,
        id="items.*.id",
    ),
    pytest.param(
        ("items.0.id",),
        "tools/call",
        {"items": [{"id": 1, "v": 0}, {"id": 2}]},
        {"items": [{"id": 5, "v": 0}, {"id": 2}]},
        True,
        id="items.0.id",
    ),
    pytest.param(
        ("items.0.id",),
        "tools/call",
        {"items": [{"id": 1}, {"id": 2}]},
        {"items": [{"id": 1}, {"id": 6}]},
        False,
        id="items.0.id-not-other-indexes",
    ),
    pytest.param(
        ("items[0].id",),
        "tools/call",
        {"items": [{"id": 1}, {"id": 2}]},
        {"items": [{"id": 7}, {"id": 2}]},
        True,
        id="items[0].id",
    ),
    pytest.param(
        ('_meta["a.b/c"]',),
        "tools/call",
        call(_meta={"a.b/c": 1}),
        call(_meta={"a.b/c": 2}),
        True,
        id="_meta-quoted-dotted-key",
    ),
    pytest.param(('_meta["a.b/c"]',), "tools/call", call(_meta={"a.b/c": 1}), CALL, True, id="_meta-quoted-emptied"),
    pytest.param(
        ('_meta["a.b/c"]',),
        "tools/call",
        call(_meta={"a": {"b/c": 1}}),
        call(_meta={"a": {"b/c": 2}}),
        False,
        id="_meta-quoted-is-one-key",
    ),
    pytest.param(
        ("arguments.ts_*",),
        "tools/call",
        call(arguments={"ts_a": 1, "ts_b": 2, "k": 0}),
        call(arguments={"ts_a": 3, "k": 0}),
        True,
        id="fnmatch-star",
    ),
    pytest.param(
        ("arguments.ts_?",),
        "tools/call",
        call(arguments={"ts_a": 1, "k": 0}),
        call(arguments={"ts_a": 2, "k": 0}),
        True,
        id="fnmatch-question-mark",
    ),
    pytest.param(
        ("arguments.ts_?",),
        "tools/call",
        call(arguments={"ts_ab": 1}),
        call(arguments={"ts_ab": 2}),
        False,
        id="fnmatch-question-mark-one-char",
    ),
    pytest.param(
        ("arguments.tags[1]",),
        "tools/call",
        call(arguments={"tags": ["a", "b"]}),
        call(arguments={"tags": ["a", "c"]}),
        True,
        id="list-element-leaf",
    ),
]


@pytest.mark.parametrize(("ignores", "method", "a", "b", "same"), SAME)
def test_same_request(ignores: tuple[str, ...], method: str, a: Any, b: Any, same: bool) -> None:
    matcher = Matcher.build(ignores)
    assert (matcher.key(method, a) == matcher.key(method, b)) is same
    assert (matcher.key(method, b) == matcher.key(method, a)) is same


def test_method_is_part_of_the_key() -> None:
    matcher = Matcher.build()
    assert matcher.key("tools/list", None) != matcher.key("prompts/list", None)
    assert matcher.key("tools/call", CALL) != matcher.key("tools/cal", CALL)


def test_json_types_give_four_different_keys() -> None:
    matcher = Matcher.build()
    keys = {matcher.key("tools/call", call(arguments={"n": n})) for n in (1, 1.0, True, "1")}
    assert len(keys) == 4


# --- what normalize leaves ---------------------------------------------------------------------

NORMALIZE = [
    pytest.param((), "tools/list", None, None, id="no-params"),
    pytest.param((), "tools/list", {}, None, id="empty-params"),
    pytest.param((), "tools/list", {"_meta": {"progressToken": 1, f"{MCP}clientInfo": {}}}, None, id="meta-emptied"),
    pytest.param(
        (),
        "tools/call",
        call(_meta={"progressToken": 1, "keep": True}),
        call(_meta={"keep": True}),
        id="meta-partly-kept",
    ),
    pytest.param((), "initialize", {"protocolVersion": "2025-11-25"}, None, id="initialize"),
    pytest.param((), "notifications/cancelled", {"requestId": 1, "reason": "r"}, {"reason": "r"}, id="cancelled"),
    pytest.param(
        ("items[*].id",),
        "x",
        {"items": [{"id": 1}, {"id": 2, "v": 3}]},
        {"items": [{}, {"v": 3}]},
        id="list-positions-kept",
    ),
    pytest.param(
        ("arguments.when",),
        "tools/call",
        {"name": "t", "arguments": {"when": 1}},
        {"name": "t"},
        id="container-emptied-dropped",
    ),
    pytest.param(
        ("arguments.when",),
        "x",
        {"name": "t", "arguments": {}},
        {"name": "t", "arguments": {}},
        id="empty-container-kept",
    ),
    # optional keys sent empty say the same as leaving them out (protocol.UNSET_WHEN_EMPTY)
    pytest.param((), "prompts/get", {"name": "p", "arguments": {}}, {"name": "p"}, id="prompt-arguments-empty"),
    pytest.param((), "prompts/get", {"name": "p", "arguments": None}, {"name": "p"}, id="prompt-arguments-null"),
    pytest.param((), "tools/call", {"name": "t", "arguments": {}}, {"name": "t"}, id="tool-arguments-empty"),
    pytest.param((), "tools/call", {"name": "t", "arguments": None}, {"name": "t"}, id="tool-arguments-null"),
    pytest.param(
        (), "tools/call", {"name": "t", "arguments": {"a": {}}}, {"name": "t", "arguments": {"a": {}}}, id="inside-kept"
    ),
    pytest.param((), "x/y", {"arguments": {}}, {"arguments": {}}, id="other-methods-arguments-kept"),
    pytest.param((), "tools/call", call(_meta={}), CALL, id="meta-empty"),
    pytest.param((), "tools/call", call(_meta=None), CALL, id="meta-null"),
    pytest.param((), "x/y", {"_meta": {}, "k": 1}, {"k": 1}, id="meta-empty-any-method"),
    pytest.param((), "tools/list", {"cursor": None}, None, id="cursor-null"),
    pytest.param((), "resources/templates/list", {"cursor": None}, None, id="cursor-null-templates"),
    pytest.param((), "tools/list", {"cursor": ""}, {"cursor": ""}, id="cursor-empty-string-kept"),
    pytest.param(
        (),
        "prompts/get",
        {"name": "p", "arguments": {}, "_meta": {"progressToken": 1}},
        {"name": "p"},
        id="arguments-empty-meta-emptied",
    ),
]


@pytest.mark.parametrize(("ignores", "method", "params", "expected"), NORMALIZE)
def test_normalize(ignores: tuple[str, ...], method: str, params: Any, expected: Any) -> None:
    assert Matcher.build(ignores).normalize(method, params) == expected


def test_normalize_does_not_modify_its_input() -> None:
    params = {"name": "t", "arguments": {"when": 1, "q": 2}, "_meta": {"progressToken": 5}, "items": [{"id": 1}]}
    snapshot = repr(params)
    Matcher.build(("arguments.when", "items[*].id")).normalize("tools/call", params)
    assert repr(params) == snapshot


# --- parse_path ----------------------------------------------------------------------------------

PATHS = [
    ("arguments.when", ("arguments", "when")),
    ("a", ("a",)),
    ("items[*].id", ("items", "*", "id")),
    ("items.*.id", ("items", "*", "id")),
    ("items[0].id", ("items", "0", "id")),
    ("items.0.id", ("items", "0", "id")),
    ('_meta["a.b/c"]', ("_meta", "a.b/c")),
    ('_meta["io.modelcontextprotocol/*"]', ("_meta", "io.modelcontextprotocol/*")),
    ('_meta["say \\"hi\\""].x', ("_meta", 'say "hi"', "x")),
    ("a[12][3]", ("a", "12", "3")),
]


@pytest.mark.parametrize(("text", "segments"), PATHS)
def test_parse_path(text: str, segments: tuple[str, ...]) -> None:
    assert parse_path(text) == segments


MALFORMED = ["", "a[", "a]", ".a", "a..b", "arguments.ts_[ab]", '_meta["a.b/c"', "[", '["unterminated', "a[1", 'a["x"']


@pytest.mark.parametrize("text", MALFORMED)
def test_parse_path_rejects_malformed(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_path(text)
    assert caught.value.fix  # a UsageError always says how to fix it
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("text", ["a[", ""])
def test_build_rejects_malformed_user_paths(text: str) -> None:
    with pytest.raises(UsageError):
        Matcher.build(("arguments.when", text))


_META_2026 = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
_RECORDED = Cassette(
    (
        Interaction("request", {"id": 1, "method": "tools/call", "params": {"name": "read", "arguments": {"p": 1}}}),
        Interaction("request", {"id": 2, "method": "resources/read", "params": {"uri": "file:///a"}}),
    ),
    {},
)


@pytest.mark.parametrize(
    ("method", "params", "mode"),
    [
        ("tools/call", {"name": "read", "arguments": {"p": 2}}, "all"),  # the same tool, other arguments: changed
        ("tools/call", {"name": "write", "arguments": {"p": 1}}, "new"),  # a tool no recording calls: new
        ("tools/call", {"name": "read", "arguments": {"p": 2}, **_META_2026}, "new"),  # the other era goes beside
        ("resources/read", {"uri": "file:///b"}, "all"),  # no name to tell by: the method's recording changed
        ("prompts/get", {"name": "greet"}, "new"),  # a method no recording has
        ("tools/list", None, "new"),
    ],
)
def test_a_miss_suggests_all_for_a_changed_request_and_new_for_a_new_one(method: str, params: Any, mode: str) -> None:
    assert record_mode(_RECORDED, method, params) == mode
    fix = record_fix(mode, "pytest --mockmcp-record-mode={mode} T")
    assert fix.endswith(f"pytest --mockmcp-record-mode={RecordMode(mode).word} T")  # as the command line spells it


@pytest.mark.parametrize(
    ("server", "source"),
    [
        (["python", "server.py"], "-- python server.py"),
        (["http://127.0.0.1:8000/mcp"], "--http-target http://127.0.0.1:8000/mcp (then point the host at the proxy)"),
        (None, "-- SERVER..."),
    ],
)
def test_a_miss_records_again_from_where_the_cassette_was_recorded(server: Any, source: str) -> None:
    # A URL after `--` would be run as a command: a cassette the HTTP proxy recorded is recorded by it again.
    recorded = _RECORDED._replace(meta={} if server is None else {"server": server}, path="c.yaml")
    params = {"name": "read", "arguments": {"p": 2}}
    miss = explain_miss(
        recorded,
        Matcher.build(()),
        collections.Counter(),
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params},
        -32099,
        "",
    )
    assert record_fix("all", f"mockmcp record --record-mode rewrite -o c.yaml {source}") in miss.fixes
