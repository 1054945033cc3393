"""`mockmcp lint`'s checks of match rules, which need the recorded request beside its rules: a rule that
refuses the very values it stands beside (an error: never answered), and a rule other than `any` whose path
leads nowhere in the recorded request (a warning, naming the path meant when one is a slip away).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from mockmcp._wire.words import Place, render_place
from mockmcp.cassette.model import Cassette
from mockmcp.cassette.shapes import near
from mockmcp.engine.matching import Matcher, locate
from mockmcp.engine.rules import refusal, rules_of

__all__ = ["RuleIssue", "rule_issues"]


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
