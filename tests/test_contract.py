"""A server's contract and its changes in tiers: a table row per rule id, literal listings in, rules out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.validation import from_data
from mockmcp.engine.matching import Matcher
from mockmcp.tools import RULES, TIERS, as_json, as_markdown, compare
from mockmcp.tools._contract import changes, contract

T = {"type": "object"}  # an inputSchema with no arguments


def tool(name: str = "fetch", **more: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": more.pop("inputSchema", T), **more}


def args(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def out(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


S, N = {"type": "string"}, {"type": "integer"}


def cassette(method: str, items: list[dict[str, Any]]) -> Any:
    """A cassette whose one interaction lists `items` in answer to `method`."""
    field = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources"}.get(
        method, "resourceTemplates"
    )
    return from_data(
        {
            "version": 1,
            "interactions": [{"request": {"id": 1, "method": method}, "response": {"result": {field: items}}}],
        }
    )


# rule id, the listing, what the recording offered, what the server offers now, the one change's detail.
ROWS = [
    (
        "tool-removed",
        "tools/list",
        [tool(), tool("x")],
        [tool("x")],
        "tool fetch: offered by the recording, not any more",
    ),
    (
        "prompt-removed",
        "prompts/list",
        [{"name": "review"}],
        [],
        "prompt review: offered by the recording, not any more",
    ),
    (
        "resource-removed",
        "resources/list",
        [{"uri": "a://1", "name": "one"}],
        [],
        "resource a://1: offered by the recording, not any more",
    ),
    (
        "resource-removed",
        "resources/templates/list",
        [{"uriTemplate": "a://{n}", "name": "n"}],
        [],
        "resource template a://{n}: offered by the recording, not any more",
    ),
    (
        "required-argument-added",
        "tools/list",
        [tool(inputSchema=args(("q",), q=S))],
        [tool(inputSchema=args(("q", "n"), q=S, n=N))],
        "tool fetch: argument `n` added",
    ),
    (
        "required-argument-added",
        "tools/list",
        [tool(inputSchema=args(q=S))],
        [tool(inputSchema=args(("q",), q=S))],
        "tool fetch: argument `q` is required now",
    ),
    (
        "required-argument-added",
        "prompts/list",
        [{"name": "p"}],
        [{"name": "p", "arguments": [{"name": "a", "required": True}]}],
        "prompt p: argument `a` added",
    ),
    (
        "argument-type-changed",
        "tools/list",
        [tool(inputSchema=args(q=S))],
        [tool(inputSchema=args(q=N))],
        "tool fetch: argument `q`: type string -> integer",
    ),
    (
        "argument-type-changed",
        "tools/list",
        [tool(inputSchema=args(q={"properties": {"a": S}}))],
        [tool(inputSchema=args(q={"properties": {"a": N}}))],
        "tool fetch: argument `q.a`: type string -> integer",
    ),
    (
        "argument-enum-narrowed",
        "tools/list",
        [tool(inputSchema=args(u={"type": "string", "enum": ["c", "f"]}))],
        [tool(inputSchema=args(u={"type": "string", "enum": ["c"]}))],
        'tool fetch: argument `u`: enum ["c","f"] -> ["c"]',
    ),
    (
        "output-field-removed",
        "tools/list",
        [tool(outputSchema=out(a=S, b=S))],
        [tool(outputSchema=out(a=S))],
        "tool fetch: output field `b` removed",
    ),
    (
        "output-field-removed",
        "tools/list",
        [tool(outputSchema={"$defs": {"R": out(a=S, b=S)}, **out(r={"$ref": "#/$defs/R"})})],
        [tool(outputSchema={"$defs": {"R": out(a=S)}, **out(r={"$ref": "#/$defs/R"})})],
        "tool fetch: output field `r.b` removed",
    ),
    (
        "read-only-hint-removed",
        "tools/list",
        [tool(annotations={"readOnlyHint": True})],
        [tool(annotations={"readOnlyHint": False})],
        "tool fetch: annotations.readOnlyHint true -> false",
    ),
    (
        "destructive-hint-added",
        "tools/list",
        [tool(annotations={"destructiveHint": False})],
        [tool(annotations={"destructiveHint": True})],
        "tool fetch: annotations.destructiveHint false -> true",
    ),
    (
        "destructive-hint-added",
        "tools/list",
        [tool(annotations={"destructiveHint": False})],
        [tool(annotations={})],
        "tool fetch: annotations.destructiveHint removed (was false)",
    ),
    (
        "description-changed",
        "tools/list",
        [tool(description="Fetch a page")],
        [tool(description="Fetch a page, or a file")],
        'tool fetch: description "Fetch a page" -> "Fetch a page, or a file"',
    ),
    (
        "description-changed",
        "tools/list",
        [tool(inputSchema=args(q={"type": "string", "description": "query"}))],
        [tool(inputSchema=args(q={"type": "string", "description": "search"}))],
        "tool fetch: argument `q`: description query -> search",
    ),
    (
        "description-changed",
        "resources/list",
        [{"uri": "a://1", "name": "one", "description": "x"}],
        [{"uri": "a://1", "name": "one", "description": "y"}],
        "resource a://1: description x -> y",
    ),
    (
        "default-changed",
        "tools/list",
        [tool(inputSchema=args(n={"type": "integer", "default": 10}))],
        [tool(inputSchema=args(n={"type": "integer", "default": 100}))],
        "tool fetch: argument `n`: default 10 -> 100",
    ),
    (
        "annotation-changed",
        "tools/list",
        [tool(annotations={"openWorldHint": False})],
        [tool(annotations={"openWorldHint": True})],
        "tool fetch: annotations.openWorldHint false -> true",
    ),
    (
        "annotation-changed",
        "tools/list",
        [tool(annotations={"readOnlyHint": False})],
        [tool(annotations={"readOnlyHint": True})],
        "tool fetch: annotations.readOnlyHint false -> true",
    ),
    (
        "argument-removed",
        "tools/list",
        [tool(inputSchema=args(q=S, n=N))],
        [tool(inputSchema=args(q=S))],
        "tool fetch: argument `n` removed",
    ),
    ("field-changed", "tools/list", [tool(title="Fetch")], [tool(title="Get")], "tool fetch: title Fetch -> Get"),
    ("tool-added", "tools/list", [], [tool()], "tool fetch: offered now, not in the recording"),
    ("prompt-added", "prompts/list", [], [{"name": "review"}], "prompt review: offered now, not in the recording"),
    (
        "resource-added",
        "resources/list",
        [],
        [{"uri": "a://1", "name": "one"}],
        "resource a://1: offered now, not in the recording",
    ),
    (
        "optional-argument-added",
        "tools/list",
        [tool(inputSchema=args(q=S))],
        [tool(inputSchema=args(q=S, n=N))],
        "tool fetch: argument `n` added",
    ),
    (
        "optional-argument-added",
        "prompts/list",
        [{"name": "p"}],
        [{"name": "p", "arguments": [{"name": "a"}]}],
        "prompt p: argument `a` added",
    ),
    (
        "argument-enum-widened",
        "tools/list",
        [tool(inputSchema=args(u={"type": "string", "enum": ["c"]}))],
        [tool(inputSchema=args(u={"type": "string", "enum": ["c", "f"]}))],
        'tool fetch: argument `u`: enum ["c"] -> ["c","f"]',
    ),
    (
        "output-field-added",
        "tools/list",
        [tool(outputSchema=out(a=S))],
        [tool(outputSchema=out(a=S, b=S))],
        "tool fetch: output field `b` added",
    ),
]


@pytest.mark.parametrize(
    ("rule", "method", "old", "new", "detail"), ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)]
)
def test_each_change_of_the_contract_is_its_rule(rule: str, method: str, old: Any, new: Any, detail: str) -> None:
    found = changes(contract(cassette(method, old)), contract(cassette(method, new)))
    assert [(c.rule, f"{c.subject}: {c.detail}") for c in found] == [(rule, detail)]
    assert found[0].tier == RULES[rule][0]


def test_every_rule_has_a_row_and_the_tiers_are_the_issues() -> None:
    assert {row[0] for row in ROWS} == set(RULES)
    tiers = {tier: {rule for rule, (t, _) in RULES.items() if t == tier} for tier in TIERS}
    assert tiers["breaking"] == {
        "tool-removed", "prompt-removed", "resource-removed", "required-argument-added", "argument-type-changed",
        "argument-enum-narrowed", "output-field-removed", "read-only-hint-removed", "destructive-hint-added",
    }  # fmt: skip
    assert {"description-changed", "default-changed", "annotation-changed"} <= tiers["dangerous"]
    assert {"tool-added", "prompt-added", "resource-added", "optional-argument-added"} <= tiers["minor"]


def test_a_listing_one_side_never_answered_says_nothing() -> None:
    tools, prompts = cassette("tools/list", [tool()]), cassette("prompts/list", [])
    assert changes(contract(tools), contract(prompts)) == ()
    assert contract(prompts)["tools/list"] is None and contract(prompts)["prompts/list"] == {}


def test_the_same_contract_has_no_change_and_pages_count_together() -> None:
    paged = from_data(
        {
            "version": 1,
            "interactions": [
                {
                    "request": {"method": "tools/list"},
                    "response": {"result": {"tools": [tool("a")], "nextCursor": "2"}},
                },
                {
                    "request": {"method": "tools/list", "params": {"cursor": "2"}},
                    "response": {"result": {"tools": [tool("b")]}},
                },
            ],
        }
    )
    assert changes(contract(paged), contract(cassette("tools/list", [tool("b"), tool("a")]))) == ()


def test_fail_on_counts_the_tier_and_worse_and_any_counts_every_drift() -> None:
    old = cassette("tools/list", [tool(description="a")])
    drift = compare(old, cassette("tools/list", [tool(description="b")]), Matcher.build())
    assert drift.counts() == {"breaking": 0, "dangerous": 1, "minor": 0}
    assert [drift.fails(tier) for tier in ("any", "minor", "dangerous", "breaking")] == [True, True, True, False]
    same = compare(old, old, Matcher.build())
    assert not any(same.fails(tier) for tier in ("any", "minor", "dangerous", "breaking"))


def test_the_json_and_markdown_reports_say_the_same_facts() -> None:
    drift = compare(cassette("tools/list", [tool(), tool("x|y")]), cassette("tools/list", [tool()]), Matcher.build())
    document = json.loads(as_json(drift, "mockmcp verify: t.yaml", "breaking"))
    assert document["fails"] is True and document["tiers"] == {"breaking": 1, "dangerous": 0, "minor": 0}
    assert document["changes"] == [
        {
            "tier": "breaking",
            "rule": "tool-removed",
            "subject": "tool x|y",
            "detail": "offered by the recording, not any more",
        }
    ]
    assert document["interactions"][0]["status"] == "changed"
    text = as_markdown(drift, "mockmcp verify: t.yaml", "breaking")
    assert text.splitlines()[:4] == [
        "<!-- mockmcp drift -->",
        "### mockmcp verify: t.yaml",
        "",
        "Contract: **1 breaking**, 0 dangerous, 0 minor. 1 interactions: 0 same, 1 changed, 0 missing, 0 new. "
        "`--fail-on breaking` fails.",
    ]
    assert "| breaking | `tool-removed` | tool x\\|y | offered by the recording, not any more |" in text
    assert "- `tool-removed`: a tool the recording lists is no longer offered" in text
    assert "<details><summary>1 interactions differ</summary>" in text
