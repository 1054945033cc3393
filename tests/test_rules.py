"""Match rules (`engine/rules.py`): a request's `match:` and the cassette's `meta.match`, as tables in memory.

Covered:
- each matcher (any, type, {type: NAME}, {regex: ...}, subset, unordered) accepting and refusing live
  values, with wildcard paths, presence, and what the rules do not govern still matched exactly;
- `meta.match.ignore`, added to the user's ignore paths;
- the fast path: an exact recording wins over a ruled one; recordings with the same rules play in order;
- a miss says which rule refused which value, and points at the rule;
- the loader's located errors, lint's checks, show's marks, and `diff` pairing by the rules.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp._wire.patterns import WORK, compile_pattern
from mockmcp.cassette.model import Cassette
from mockmcp.cassette.store import loads
from mockmcp.cassette.validation import from_data
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.replay import Replay, Send
from mockmcp.engine.rules import refusal, rules_of
from mockmcp.engine.selection import Recordings
from mockmcp.errors import CassetteError
from mockmcp.tools import _lint as lint
from mockmcp.tools._drift import compare
from mockmcp.tools._lint import nested_repeat
from mockmcp.tools._show import render

ANSWER = {"result": {"content": [{"type": "text", "text": "found"}]}}


def ruled(arguments: dict[str, Any], match: dict[str, Any], meta: dict[str, Any] | None = None) -> Cassette:
    """A cassette of one `search` call with these recorded arguments and rules."""
    call = {"method": "tools/call", "params": {"name": "search", "arguments": arguments}}
    return from_data(
        {"version": 1, "meta": meta or {}, "interactions": [{"request": call, "match": match, "response": ANSWER}]}
    )


def accepts(cassette: Cassette, arguments: dict[str, Any], ignores: tuple[str, ...] = ()) -> bool:
    recordings = Recordings(cassette, Matcher.build(ignores, cassette.meta))
    return recordings.key("tools/call", {"name": "search", "arguments": arguments}) in recordings.requests


# (rules, recorded arguments, live arguments, accepted?)
MATCHERS = [
    # any: any value, or none
    ({"q": "any"}, {"q": "a"}, {"q": "b"}, True),
    ({"q": "any"}, {"q": "a"}, {}, True),
    ({"q": "any"}, {}, {"q": {"deep": [1]}}, True),
    # type: the recorded value's JSON type
    ({"n": "type"}, {"n": 3}, {"n": 7}, True),
    ({"n": "type"}, {"n": 3}, {"n": "7"}, False),
    ({"n": "type"}, {"n": 3}, {"n": 2.5}, False),
    ({"n": "type"}, {"n": 1.5}, {"n": 2}, True),  # an integer is a number
    ({"n": "type"}, {"n": True}, {"n": 1}, False),  # a boolean is not a number
    ({"n": "type"}, {"n": 3}, {}, False),  # a rule other than any needs the value
    # {type: NAME}
    ({"q": {"type": "string"}}, {"q": "a"}, {"q": "zzz"}, True),
    ({"q": {"type": "string"}}, {"q": "a"}, {"q": None}, False),
    ({"q": {"type": "null"}}, {"q": None}, {"q": None}, True),
    ({"q": {"type": "number"}}, {"q": 1.5}, {"q": 7}, True),
    ({"q": {"type": "object"}}, {"q": {}}, {"q": {"a": 1}}, True),
    ({"q": {"type": "array"}}, {"q": []}, {"q": {}}, False),
    # {regex: PATTERN}: the whole string
    ({"q": {"regex": r"weather in \w+"}}, {"q": "weather in Paris"}, {"q": "weather in Rome"}, True),
    ({"q": {"regex": r"weather in \w+"}}, {"q": "weather in Paris"}, {"q": "weather in New York"}, False),
    ({"q": {"regex": r"weather in \w+"}}, {"q": "weather in Paris"}, {"q": "the weather in Rome"}, False),
    ({"q": {"regex": r".*Rome.*"}}, {"q": "Rome"}, {"q": "the weather in Rome today"}, True),
    ({"q": {"regex": r"\d+"}}, {"q": "1"}, {"q": 12}, False),  # a number is not a string
    # subset: at least the recorded keys and values, objects within as subsets too
    ({"f": "subset"}, {"f": {"lang": "en"}}, {"f": {"lang": "en", "unit": "C"}}, True),
    ({"f": "subset"}, {"f": {"lang": "en"}}, {"f": {"lang": "fr"}}, False),
    ({"f": "subset"}, {"f": {"lang": "en"}}, {"f": {}}, False),
    ({"f": "subset"}, {"f": {"a": {"b": 1}}}, {"f": {"a": {"b": 1, "c": 2}, "d": 3}}, True),
    ({"f": "subset"}, {"f": {"a": [1, 2]}}, {"f": {"a": [2, 1]}}, False),  # lists within are equal or not
    ({"f": "subset"}, {"f": {"a": 1}}, {"f": "a"}, False),
    ({"f": "subset"}, {"f": {"a": 1}}, {"f": {"a": 1.0}}, False),  # JSON types stay exact
    # unordered: the recorded items, in any order, as often as recorded
    ({"t": "unordered"}, {"t": ["a", "b"]}, {"t": ["b", "a"]}, True),
    ({"t": "unordered"}, {"t": ["a", "b"]}, {"t": ["b", "a", "b"]}, False),
    ({"t": "unordered"}, {"t": ["a", "a"]}, {"t": ["a"]}, False),
    ({"t": "unordered"}, {"t": [{"id": 1}, {"id": 2}]}, {"t": [{"id": 2}, {"id": 1}]}, True),
    ({"t": "unordered"}, {"t": ["a"]}, {"t": "a"}, False),
    # wildcard paths name each item
    ({"items[*].id": "any"}, {"items": [{"id": 1, "v": "x"}]}, {"items": [{"id": 9, "v": "x"}]}, True),
    ({"items[*].id": "any"}, {"items": [{"id": 1, "v": "x"}]}, {"items": [{"id": 9, "v": "y"}]}, False),
    (
        {"items[*].id": {"type": "integer"}},
        {"items": [{"id": 1}, {"id": 2}]},
        {"items": [{"id": 5}, {"id": "6"}]},
        False,
    ),
    ({"items[*].id": {"type": "integer"}}, {"items": [{"id": 1}]}, {"items": [{"id": 1}, {"id": 2}]}, False),
    # what no rule governs is matched as always
    ({"q": "any"}, {"q": "a", "n": 1}, {"q": "b", "n": 2}, False),
    ({"q": "any"}, {"q": "a", "n": 1}, {"q": "b", "n": 1}, True),
]


@pytest.mark.parametrize(("rules", "recorded", "live", "expected"), MATCHERS)
def test_each_matcher(rules: dict[str, Any], recorded: dict[str, Any], live: dict[str, Any], expected: bool) -> None:
    prefixed = {f"arguments.{path}": how for path, how in rules.items()}
    assert accepts(ruled(recorded, prefixed), live) is expected


def test_the_cassettes_ignore_paths_join_the_users() -> None:
    cassette = ruled({"q": "a", "when": 1, "trace": "t1"}, {}, {"match": {"ignore": ["arguments.when"]}})
    assert accepts(cassette, {"q": "a", "when": 2, "trace": "t1"})
    assert not accepts(cassette, {"q": "a", "when": 2, "trace": "t2"})
    assert accepts(cassette, {"q": "a", "when": 2, "trace": "t2"}, ignores=("arguments.trace",))


# --- the engine: fast path, order, misses --------------------------------------------------------------

SEARCHES = """
version: 1
interactions:
- request: {method: tools/call, params: {name: search, arguments: {q: any words}}}
  match: {arguments.q: any}
  response: {result: {content: [{type: text, text: first}]}}
- request: {method: tools/call, params: {name: search, arguments: {q: other words}}}
  match: {arguments.q: any}
  response: {result: {content: [{type: text, text: second}]}}
- request: {method: tools/call, params: {name: search, arguments: {q: exact}}}
  response: {result: {content: [{type: text, text: exact}]}}
- request: {method: tools/call, params: {name: lookup, arguments: {id: abc-1}}}
  match: {arguments.id: {regex: 'abc-\\d+'}}
  response: {result: {content: [{type: text, text: abc}]}}
- request: {method: tools/call, params: {name: lookup, arguments: {id: xyz-1}}}
  match: {arguments.id: {regex: 'xyz-\\d+'}}
  response: {result: {content: [{type: text, text: xyz}]}}
"""


def ask(engine: Replay, name: str, arguments: dict[str, Any], id: int = 1) -> Any:
    line = json.dumps(
        {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    )
    [answer] = [json.loads(a.data) for a in engine.receive(line.encode()) if isinstance(a, Send)]
    return answer["result"]["content"][0]["text"] if "result" in answer else answer["error"]


def test_exact_first_then_rules_in_recorded_order_each_group_played_in_turn() -> None:
    engine = Replay(loads(SEARCHES, "s.yaml"), Matcher.build())
    assert ask(engine, "search", {"q": "exact"}) == "exact"  # an exact recording wins over earlier rules
    assert [ask(engine, "search", {"q": q}) for q in ("x", "y", "z")] == ["first", "second", "second"]
    assert engine.report.repeats == {1: 1}  # the same request with the same rules: one group, played in order
    assert [ask(engine, "lookup", {"id": i}) for i in ("xyz-7", "abc-9")] == ["xyz", "abc"]  # each its own group


# (live arguments, the difference the miss names)
REFUSALS = [
    (
        {"id": "abd-1"},
        "arguments.id: its match rule `{regex: 'abc-\\d+'}` refuses \"abd-1\": the pattern does not match it whole",
    ),
    ({"id": 7}, "arguments.id: its match rule `{regex: 'abc-\\d+'}` refuses 7: it wants a string"),
    ({}, "arguments.id: its match rule `{regex: 'abc-\\d+'}` needs it, and the incoming request has none"),
]


@pytest.mark.parametrize(("arguments", "difference"), REFUSALS)
def test_a_miss_names_the_rule_that_refused(arguments: dict[str, Any], difference: str) -> None:
    engine = Replay(loads(SEARCHES, "s.yaml"), Matcher.build())
    error = ask(engine, "lookup", arguments)
    assert error["code"] == -32099
    assert difference in error["data"]["differences"]
    [miss] = engine.report.misses
    assert miss.candidates[0].ruled and miss.candidates[0].first_path == ""  # no --ignore hint for a ruled path
    assert "interactions[3].match (a rule that refused it" in miss.fixes[-1]


def test_more_rules_name_each_refusal_and_keep_the_plain_differences() -> None:
    cassette = ruled(
        {"q": "weather in Paris", "n": 3, "t": ["a", "b"], "f": {"lang": "en"}, "k": "same"},
        {
            "arguments.q": {"regex": r"weather in \w+"},
            "arguments.n": "type",
            "arguments.t": "unordered",
            "arguments.f": "subset",
        },
    )
    engine = Replay(cassette, Matcher.build())
    error = ask(engine, "search", {"q": "rain", "n": 2.5, "t": ["b"], "f": {"lang": "fr"}, "k": "other"})
    assert error["data"]["differences"] == [
        'arguments.f: its match rule `subset` refuses the object: `lang` is recorded "en", incoming "fr"',
        'arguments.k: recorded "same", incoming "other"',
        "arguments.n: its match rule `type` refuses 2.5 (number): it wants an integer",
        "arguments.q: its match rule `{regex: 'weather in \\w+'}` refuses \"rain\": "
        "the pattern does not match it whole",
        'arguments.t: its match rule `unordered` refuses the items, in any order: only recorded: "a"',
    ]
    assert engine.report.misses[0].candidates[0].first_path == "arguments.k"  # the plain difference may be ignored


# --- the loader, lint, show, diff ------------------------------------------------------------------------------

# (the interaction's `match`, the place of the error, what the error says)
LOAD_ERRORS = [
    ("{arguments.q: anything}", 'interactions[0].match["arguments.q"]', "unknown matcher 'anything'"),
    ("{arguments.q: subst}", 'interactions[0].match["arguments.q"]', "unknown matcher 'subst'"),
    ("{arguments.q: regex}", 'interactions[0].match["arguments.q"]', "`regex` needs its argument"),
    ("{arguments.q: {type: text}}", 'interactions[0].match["arguments.q"].type', "unknown JSON type 'text'"),
    ("{arguments.q: {type: null}}", 'interactions[0].match["arguments.q"].type', "unknown JSON type None"),
    ("{arguments.q: {regex: '('}}", 'interactions[0].match["arguments.q"].regex', "missing ): ("),
    # RE2 takes no backreference or lookaround: refused where it stands, with RE2's reason
    ("{arguments.q: {regex: '(a)\\1'}}", 'interactions[0].match["arguments.q"].regex', "invalid escape sequence: \\1"),
    ("{arguments.q: {regex: '(?=a)a'}}", 'interactions[0].match["arguments.q"].regex', "invalid perl operator: (?="),
    ("{arguments.q: {regex: 1}}", 'interactions[0].match["arguments.q"].regex', "a `regex` is a string"),
    ("{arguments.q: {regx: a}}", 'interactions[0].match["arguments.q"].regx', "unknown key 'regx'"),
    ("{arguments.q: {regex: a, type: string}}", 'interactions[0].match["arguments.q"]', "a mapping of one key"),
    ("{'a[': any}", 'interactions[0].match["a["]', "cannot read the params path 'a['"),
    ("[arguments.q]", "interactions[0].match", "expected a mapping, got a list"),
]


@pytest.mark.parametrize(("match", "place", "problem"), LOAD_ERRORS)
def test_a_bad_rule_is_a_located_load_error(match: str, place: str, problem: str) -> None:
    text = f"version: 1\ninteractions:\n- request: {{method: m, params: {{arguments: {{q: a}}}}}}\n  match: {match}\n"
    with pytest.raises(CassetteError) as caught:
        loads(text, "c.yaml")
    assert (caught.value.place, caught.value.line) == (place, 4)
    assert problem in caught.value.problem and caught.value.fix


@pytest.mark.parametrize(
    ("meta", "place", "problem"),
    [
        ("{match: {ignore: arguments.q}}", "meta.match.ignore", "`ignore` must be a list of params paths"),
        ("{match: {ignore: ['a[']}}", "meta.match.ignore[0]", "cannot read the params path"),
        ("{match: {ignor: [a]}}", "meta.match.ignor", "unknown key 'ignor'"),
        ("{substitute: PROJECT}", "meta.substitute", "`substitute` must be a list of names"),
        ("{substitute: [PROJECT, PROJECT]}", "meta.substitute[1]", "'PROJECT' is named twice"),
        ("{substitute: [my-dir]}", "meta.substitute[0]", "a substitution's name is letters, digits and `_`"),
    ],
)
def test_bad_meta_rules_are_located_load_errors(meta: str, place: str, problem: str) -> None:
    with pytest.raises(CassetteError) as caught:
        loads(f"version: 1\nmeta: {meta}\ninteractions: []\n", "c.yaml")
    assert caught.value.place == place and problem in caught.value.problem


# What a cassette could once hang replay with: patterns that backtrack for ages in Python's `re` (the docs'
# style, `\w+` under a repetition), each answered at once by RE2, which is linear in the string.
# (the pattern, a live string it refuses, one it accepts, whether lint sees a nested repetition)
BACKTRACKERS = [
    (r"(\w+\s?)+ in Paris", "a" * 50 + "!", "weather in Paris", True),
    (r"(a+)+b", "a" * 60, "aaab", True),
    (r"(.*a){20}", "a" * 19 + "b" * 40, "a" * 20, True),
    (r"(a|aa)+c", "a" * 60, "aac", False),  # overlapping branches, no nesting: lint does not read that far
]


@pytest.mark.parametrize(("pattern", "refused", "accepted", "nested"), BACKTRACKERS)
def test_a_pattern_that_backtracks_in_re_answers_at_once(
    pattern: str, refused: str, accepted: str, nested: bool
) -> None:
    cassette = ruled({"q": accepted}, {"arguments.q": {"regex": pattern}})
    assert accepts(cassette, {"q": accepted})
    engine = Replay(cassette, Matcher.build())
    error = ask(engine, "search", {"q": refused})  # a located miss, never a hang
    assert error["code"] == -32099
    assert error["data"]["differences"] == [
        f"arguments.q: its match rule `{{regex: '{pattern}'}}` refuses \"{refused}\": "
        "the pattern does not match it whole"
    ]
    found = [(f.place, f.severity, f.problem) for f in lint.lint_text(_yaml_of(cassette), "c.yaml")]
    assert (
        found == []
        if not nested
        else [
            (
                'interactions[0].match["arguments.q"]',
                "warning",
                f"the pattern `{pattern}` repeats a repetition: mockmcp's RE2 matches it in linear time, but in a "
                "backtracking engine (Python's `re`, where such a pattern is copied to) it can run for ages",
            )
        ]
    )


def test_a_pattern_whose_worst_case_is_too_costly_for_a_string_refuses_it_and_redacts_it_whole() -> None:
    # RE2's worst case is the text's length times the pattern's size: (.*a){1000} took 88 s over a megabyte.
    pattern = "(.*a){1000}"
    compiled = compile_pattern(pattern)
    assert compiled.limit == WORK // compiled.compiled.programsize < 10_000
    long = "a" * (compiled.limit + 1)
    cassette = ruled({"q": "a" * 1000}, {"arguments.q": {"regex": pattern}})
    assert accepts(cassette, {"q": "a" * 1000})
    error = ask(Replay(cassette, Matcher.build()), "search", {"q": long})
    assert error["data"]["differences"] == [
        f"arguments.q: its match rule `{{regex: '{pattern}'}}` refuses a string of {len(long)} characters: the "
        f"pattern is run over at most {compiled.limit} (its work is bounded: a simpler pattern reads longer strings)"
    ]
    # replay's redaction by the cassette's patterns: one bound over the whole message, a text past it replaced whole
    redactor = Redactor.for_replay(ruled({}, {}, {"redact": {"patterns": [pattern]}}), {}, (), "c.yaml")
    assert redactor is not None and redactor.work == WORK
    half = "a" * (compiled.limit // 2 + 1) + "b"
    call = {"params": {"arguments": {"x": "a" * 1000 + "b", "y": half, "z": half}}}
    assert redactor.message(call)["params"]["arguments"] == {"x": "[REDACTED]b", "y": "[REDACTED]b", "z": "[REDACTED]"}
    # the user's own --redact is not bounded
    assert Redactor.build((), (pattern,), {}).text(long + "b") == "[REDACTED]b"


def test_the_patterns_tried_for_one_request_share_one_bound_of_work() -> None:
    # Many groups with costly patterns, each string under its own limit, would add up: one request, one bound.
    rules = rules_of({"a": {"regex": "(.*a){1000}"}, "b": {"regex": "(.*a){999}"}})
    live = "b" * (rules[0].argument.limit * 6 // 10)
    budget = [WORK]
    assert (refusal(rules[0], "a", live, budget) or "").endswith("the pattern does not match it whole")
    assert refusal(rules[1], "a", live, budget) == (
        f"a string of {len(live)} characters: the cassette's patterns have done the work one request may cost "
        f"({WORK} steps: fewer or simpler patterns, or shorter strings)"
    )
    assert (refusal(rules[1], "a", live) or "").endswith("the pattern does not match it whole")  # alone: within


def test_a_lone_surrogate_is_read_as_u_fffd_by_a_pattern_as_replay_matches_it() -> None:
    cassette = ruled({"q": "cut \ufffd"}, {"arguments.q": {"regex": "cut ."}})
    assert accepts(cassette, {"q": "cut \ud83d"})  # RE2 reads UTF-8, which cannot hold a lone surrogate


def test_a_redaction_pattern_that_backtracks_in_re_redacts_at_once_and_lint_warns_of_it() -> None:
    meta = {"redact": {"patterns": [r"(\w+\s?)+!"]}}
    cassette = ruled({"q": "[REDACTED]"}, {}, meta)
    redactor = Redactor.for_replay(cassette, {}, (), "c.yaml")
    assert redactor is not None
    assert redactor.text("a" * 60) == "a" * 60 and redactor.text("hello you!") == "[REDACTED]"
    found = [(f.place, f.severity) for f in lint.lint_text(_yaml_of(cassette), "c.yaml")]
    assert found == [("meta.redact.patterns[0]", "warning")]


@pytest.mark.parametrize(
    ("pattern", "nested"),
    [
        ("weather in \\w+", False),
        ("(a|b)*", False),
        ("(?:ab)+c", False),
        ("(a?)+", False),  # one at most, repeated: no nesting of many
        ("\\pL+", False),  # RE2's own syntax, which Python's parser cannot read: not judged
        ("(a+)+", True),
        ("((a)*)*", True),
        ("(a{2,3})+", True),
        ("x|(y*z)*", True),
    ],
)
def test_lint_reads_a_nested_repetition_without_running_the_pattern(pattern: str, nested: bool) -> None:
    assert nested_repeat(pattern) is nested


def _yaml_of(cassette: Cassette) -> str:
    return json.dumps(cassette.to_data())


LINTED = """\
version: 1
interactions:
- request: {method: tools/call, params: {name: search, arguments: {query: weather in Paris, n: 3}}}
  match:
    arguments.qurey: {regex: 'weather in .+'}
    arguments.n: {type: string}
    arguments.query: {regex: rain}
    arguments.extra: any
  response: {result: {content: [{type: text, text: found}]}}
"""


def test_lint_finds_a_rule_that_refuses_its_own_request_and_one_that_leads_nowhere() -> None:
    found = [(f.line, f.severity, f.problem, f.fix) for f in lint.lint_text(LINTED, "c.yaml")]
    assert [(line, severity) for line, severity, _p, _f in found] == [(5, "warning"), (6, "error"), (7, "error")]
    assert found[0][3] == "did you mean `arguments.query`?"
    assert "the rule `{type: string}` refuses the recorded value itself (3 (integer): it wants a string)" in found[1][2]
    assert (
        "the rule `{regex: 'rain'}` refuses the recorded value itself" in found[2][2]
    )  # `any` leading nowhere is fine


def test_show_marks_the_rules_on_the_request_line() -> None:
    text = render(loads(LINTED, "c.yaml"), color=False, width=200)
    request_line = text.splitlines()[1]
    assert request_line.endswith(
        "match: arguments.qurey regex, arguments.n type string, arguments.query regex, arguments.extra any"
    )


def test_diff_pairs_a_ruled_request_with_the_one_its_rules_accept() -> None:
    recorded = loads(SEARCHES, "a.yaml")
    other = loads(SEARCHES.replace("abc-1", "abc-42").replace("q: any words", "q: new words"), "b.yaml")
    drift = compare(recorded, other, Matcher.build((), recorded.meta), "other")
    assert [entry.status for entry in drift.entries] == ["same"] * 5
