"""`mockmcp.calls`: the host's requests from a replay's report, filtered as a cassette's recordings match. Pure."""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay
from mockmcp.errors import UsageError
from mockmcp.inprocess import Calls, calls


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


REPORT = {
    "calls": [
        {"method": "tools/list", "params": None},
        call("search", query="mcp servers", limit=10),
        call("fetch", url="https://a.example/1"),
        call("search", query="mcp hosts", limit=5),
        call("fetch", url="https://b.example/2"),
    ]
}


@pytest.mark.parametrize(
    ("filters", "found"),
    [
        ({}, 4),  # every tool call
        ({"tool": "search"}, 2),
        ({"tool": "delete"}, 0),
        ({"tool": "search", "arguments": {"query": "mcp hosts", "limit": 5}}, 1),
        ({"tool": "search", "arguments": {"query": "mcp hosts"}}, 0),  # all the arguments, as a recording holds them
        ({"tool": "search", "arguments": {"query": "mcp"}, "match": {"arguments.query": {"regex": "mcp .*"}}}, 0),
        (
            {
                "tool": "search",
                "arguments": {"query": "", "limit": 0},
                "match": {"arguments.query": {"regex": "mcp .*"}},
            },
            0,
        ),
        ({"tool": "search", "arguments": {"query": "x", "limit": 0}, "match": {"arguments": {"type": "object"}}}, 2),
        ({"tool": "search", "arguments": {"limit": 10}, "match": {"arguments": "subset"}}, 1),
        ({"tool": "fetch", "arguments": {"url": ""}, "match": {"arguments.url": {"regex": "https://b\\..*"}}}, 1),
        ({"arguments": {"url": "https://a.example/1"}}, 1),  # any tool, these arguments
        ({"method": "tools/list"}, 1),
    ],
)
def test_a_filter_holds_calls_as_a_recording_with_match_rules_holds_requests(
    filters: dict[str, Any], found: int
) -> None:
    assert calls(REPORT)(**filters).count == found


def test_count_called_args_and_tools() -> None:
    made = calls(REPORT)
    search = made(tool="search")
    assert (search.count, search.called, made(tool="delete").called) == (2, True, False)
    assert search.args == [{"query": "mcp servers", "limit": 10}, {"query": "mcp hosts", "limit": 5}]
    assert made().tools == ["search", "fetch", "search", "fetch"]
    assert [str(c) for c in made(tool="fetch")] == [
        'fetch({"url":"https://a.example/1"})',
        'fetch({"url":"https://b.example/2"})',
    ]


def test_a_failed_assertion_shows_the_calls_that_did_happen() -> None:
    made = calls(REPORT)
    made(tool="search").assert_called(times=2)
    made(tool="delete").assert_not_called()
    with pytest.raises(AssertionError) as failed:
        made(tool="search").assert_called(times=3)
    assert str(failed.value).splitlines() == [
        "expected tool 'search' 3 times, found 2",
        "the host made 5 calls:",
        "    1. tools/list",
        '  * 2. search({"limit":10,"query":"mcp servers"})',
        '    3. fetch({"url":"https://a.example/1"})',
        '  * 4. search({"limit":5,"query":"mcp hosts"})',
        '    5. fetch({"url":"https://b.example/2"})',
    ]
    with pytest.raises(AssertionError, match=r"expected no tool 'fetch', found 2\nthe host made 5 calls:"):
        made(tool="fetch").assert_not_called()
    assert repr(made(tool="fetch")).startswith("<2 tool 'fetch': [fetch(")


def test_a_bad_rule_is_said_as_a_cassettes_would_be() -> None:
    with pytest.raises(UsageError) as caught:
        calls(REPORT)(tool="search", match={"arguments.query": "regexp"})
    assert "unknown matcher 'regexp'" in caught.value.render()


def test_the_engine_keeps_the_hosts_requests_in_order_for_its_report() -> None:
    engine = Replay(
        loads("version: 1\ninteractions:\n- request: {method: tools/list}\n  response: {result: {tools: []}}\n"),
        Matcher.build(),
    )
    engine.receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    engine.receive(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}')
    made = calls(engine.report)
    assert isinstance(made, Calls) and made(tool="x").args == [{"a": 1}] and len(calls(engine.report.to_json())) == 2


def test_a_report_not_written_yet_says_when_calls_can_be_read(tmp_path: Any) -> None:
    with pytest.raises(UsageError) as caught:
        calls(str(tmp_path / "report.json"))
    assert "writes it when the host closes the session" in caught.value.render()
