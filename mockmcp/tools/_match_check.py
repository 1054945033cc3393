"""`mockmcp lint`'s checks of match rules, which need the recorded request beside its rules: a rule that
refuses the very values it stands beside (an error: never answered), and a rule other than `any` whose path
leads nowhere in the recorded request (a warning, naming the path meant when one is a slip away).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

try:  # the parser of Python's `re`, which reads a pattern without matching anything
    import re._constants as _constants
    import re._parser as _parser
except ImportError:  # Python 3.10
    import sre_constants as _constants  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

from mockmcp._wire.words import Place, render_place
from mockmcp.cassette.model import Cassette
from mockmcp.cassette.shapes import near
from mockmcp.engine.matching import Matcher, locate
from mockmcp.engine.rules import refusal, rules_of

__all__ = ["RuleIssue", "nested_issue", "nested_repeat", "rule_issues"]


class RuleIssue(NamedTuple):
    """What is wrong with one rule: where, whether it is an error (else a warning), what, how to fix."""

    place: Place
    error: bool
    problem: str
    fix: str


def rule_issues(cassette: Cassette, indices: list[int]) -> Iterator[RuleIssue]:
    """The issues of every request's match rules; indices are the interactions' places in the file."""
    matcher = Matcher.build((), cassette.meta)
    for index, interaction in zip(indices, cassette.interactions, strict=True):
        if not interaction.match:
            continue
        params = matcher.normalize(interaction.method or "", interaction.params)
        for rule in rules_of(interaction.match):
            place: Place = ("interactions", index, "match", rule.text)
            found = locate(params, rule.path)
            if rule.kind == "regex" and nested_repeat(rule.argument.pattern):
                yield RuleIssue(place, False, *nested_issue(rule.argument.pattern))
            if not found and rule.kind != "any":
                meant = near(rule.text, _paths(params))
                nowhere = f"`{rule.text}` leads nowhere in the recorded request"
                problem = f"{nowhere}, so its rule accepts only a request without that value"
                fix = (
                    f"did you mean `{meant}`?" if meant else "name a path the recorded params have (relative to params)"
                )
                yield RuleIssue(place, False, problem, fix)
            for where, value in sorted(found.items(), key=lambda item: render_place(item[0])):
                why = refusal(rule, value, value)
                if rule.kind == "subset" and not isinstance(value, dict):
                    why = f"{render_place(where)}: `subset` compares objects, and this is not one"
                elif rule.kind == "unordered" and not isinstance(value, list):
                    why = f"{render_place(where)}: `unordered` compares lists, and this is not one"
                if why is not None:
                    problem = (
                        f"the rule `{rule.render()}` refuses the recorded value itself ({why}), so no request, "
                        "not even the one recorded, is answered by this interaction"
                    )
                    fix = "fix the rule (a regex must match the whole recorded string) or the recorded params"
                    yield RuleIssue(place, True, problem, fix)


def nested_repeat(pattern: str) -> bool:
    """Whether the pattern repeats something that repeats itself (`(\\w+\\s?)+`), read by Python's parser (a
    pattern it cannot read, RE2's own `\\pL`, is not judged)."""
    try:
        parsed = _parser.parse(pattern)
    except Exception:
        return False
    return _repeats(parsed, inside=False)


def nested_issue(pattern: str) -> tuple[str, str]:
    """The warning on a nested repetition: the problem, and how to fix it."""
    problem = (
        f"the pattern `{pattern}` repeats a repetition: mockmcp's RE2 matches it in linear time, but in a "
        "backtracking engine (Python's `re`, where such a pattern is copied to) it can run for ages"
    )
    return problem, "write it flat, e.g. `(\\w+\\s?)+` as `[\\w\\s]+`"


_REPEATS = {_constants.MAX_REPEAT, _constants.MIN_REPEAT, getattr(_constants, "POSSESSIVE_REPEAT", None)}


def _repeats(parsed: Any, inside: bool) -> bool:
    """Whether a repetition of more than one sits inside another (`inside`: within one already)."""
    for op, av in parsed:
        if op in _REPEATS:
            _low, high, sub = av
            many = high is _constants.MAXREPEAT or high > 1
            if many and inside:
                return True
            if _repeats(sub, inside or many):
                return True
        elif op is _constants.SUBPATTERN:
            if _repeats(av[-1], inside):
                return True
        elif op is _constants.BRANCH:
            if any(_repeats(branch, inside) for branch in av[1]):
                return True
        elif op is getattr(_constants, "ATOMIC_GROUP", None) and _repeats(av, inside):
            return True
    return False


def _paths(value: object) -> list[str]:
    """Every path into value's objects (the leaves and what holds them), as rules write them."""
    out: list[str] = []
    stack: list[tuple[tuple[str | int, ...], object]] = [((), value)]
    while stack:
        place, item = stack.pop()
        if place:
            out.append(render_place(place))
        if isinstance(item, dict):
            stack.extend((place + (key,), child) for key, child in item.items())
    return out
