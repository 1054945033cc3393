"""A request's match rules (`match:` in its interaction): values compared otherwise than equal. Pure.

A live request meets a recording with rules when its params without the governed paths have the
recording's key and every rule accepts the live values at its path. Such recordings cannot be found by
an exact key, so they are kept in groups, each under a key of its own, which a live request tries only
when its exact key found nothing. On the launch path when a cassette has rules.
"""

from __future__ import annotations

from collections import Counter

from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.patterns import WORK, compile_pattern
from mockmcp._wire.words import Path, json_type, parse_path, render_place
from mockmcp.engine.matching import Matcher, canonical, locate, short

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.cassette.model import Interaction

    _Located = dict[tuple[str | int, ...], Any]

__all__ = ["Group", "Rule", "refusal", "rules_of"]


class Rule(NamedTuple):
    """One rule: the path as written and parsed, the matcher's name, and its argument (a regex, a type, None)."""

    text: str
    path: Path
    kind: str
    argument: Any = None

    def render(self) -> str:
        """The matcher as a cassette writes it: `any`, `{regex: 'a.*'}`, `{type: integer}`."""
        if self.argument is None:
            return self.kind
        # A pattern as YAML quotes it, so it reads as written in the cassette (backslashes single).
        shown = "'" + self.argument.pattern.replace("'", "''") + "'" if self.kind == "regex" else self.argument
        return f"{{{self.kind}: {shown}}}"


def rules_of(match: dict[str, Any]) -> tuple[Rule, ...]:
    """The rules of a validated `match:` mapping (see `validation`), in the order written."""
    out = []
    for text, matcher in match.items():
        if isinstance(matcher, dict):
            ((kind, argument),) = matcher.items()
            # RE2: linear in the live string, whatever pattern the cassette holds (see `_wire.patterns`)
            argument = compile_pattern(argument) if kind == "regex" else argument
        else:
            kind, argument = matcher, None
        out.append(Rule(text, parse_path(text), kind, argument))
    return tuple(out)


class Group(NamedTuple):
    """The recordings of one request with rules, under a key of their own."""

    rules: tuple[Rule, ...]
    outer: Matcher  # the cassette's matcher
    inner: Matcher  # the same, leaving out the paths the rules govern
    base: str  # the recorded request's key without those paths
    recorded: tuple[_Located, ...]  # for each rule, the recorded values where its path leads
    key: str  # the group's key (base, rules, what of the recorded values they read)

    @classmethod
    def of(cls, matcher: Matcher, interaction: Interaction, era: str | None = None) -> Group:
        """The group of a recorded request with rules (`interaction.match`); `era` as `model.written_eras` gives it."""
        method, params = interaction.method or "", interaction.params
        rules = rules_of(interaction.match or {})
        inner = Matcher(matcher.ignores + tuple(rule.path for rule in rules))
        base = inner.key(method, params, era)
        normal = matcher.normalize(method, params)
        recorded = tuple(locate(normal, rule.path) for rule in rules)
        pairs = zip(rules, recorded, strict=True)
        read = [
            [r.text, r.render(), sorted((render_place(k), _read(r, v)) for k, v in found.items())] for r, found in pairs
        ]
        return cls(rules, matcher, inner, base, recorded, base + "\0match\0" + canonical(read))

    def accepts(self, method: str, params: Any, budget: list[int] | None = None) -> bool:
        """Whether a live request is one of this group's: the same key without the governed paths, every rule met.
        `budget`: the work its patterns may still do for this request (see `refusal`)."""
        return self.inner.key(method, params) == self.base and not self.refusals(method, params, budget)

    def refusals(self, method: str, params: Any, budget: list[int] | None = None) -> list[tuple[str, str]]:
        """Why the rules refuse a live request's values: (path, sentence) for each place refused; [] when none is."""
        normal = self.outer.normalize(method, params)
        out: list[tuple[str, str]] = []
        for rule, recorded in zip(self.rules, self.recorded, strict=True):
            if rule.kind == "any":
                continue
            live = locate(normal, rule.path)
            for place in sorted(recorded.keys() | live.keys(), key=render_place):
                if place not in live:
                    why = "needs it, and the incoming request has none"
                elif place not in recorded:
                    why = "has no recorded value there, and the incoming request has one"
                else:
                    refused = refusal(rule, recorded[place], live[place], budget)
                    if refused is None:
                        continue
                    why = f"refuses {refused}"
                where = render_place(place)
                named = "" if rule.text == where else f" (for `{rule.text}`)"
                out.append((where, f"{where}: its match rule `{rule.render()}`{named} {why}"))
        return out


def _read(rule: Rule, value: Any) -> Any:
    """What of a recorded value a rule holds the live one to (so it sets a group apart): the type for a bare
    `type`, the value for `subset` and `unordered`; None for the others."""
    if rule.kind == "type" and rule.argument is None:
        return json_type(value)
    return value if rule.kind in ("subset", "unordered") else None


def refusal(rule: Rule, recorded: Any, live: Any, budget: list[int] | None = None) -> str | None:
    """Why the rule refuses the live value (held to the recorded one), to end a sentence; None when it accepts.
    A pattern's work is bounded for each string (`Pattern.limit`) and, with `budget` (the work left for the
    live request, shared by every rule of every group it is tried against), for the whole request."""
    if rule.kind == "type":
        wanted = rule.argument or json_type(recorded)
        found = json_type(live)
        ok = found == wanted or (wanted == "number" and found == "integer")  # JSON's integers are numbers
        return None if ok else f"{_short(live)} ({found}): it wants {'an' if wanted[0] in 'aeiou' else 'a'} {wanted}"
    if rule.kind == "regex":
        if not isinstance(live, str):
            return f"{_short(live)}: it wants a string"
        pattern = rule.argument
        if len(live) > pattern.limit:
            return (
                f"a string of {len(live)} characters: the pattern is run over at most {pattern.limit} "
                "(its work is bounded: a simpler pattern reads longer strings)"
            )
        if budget is not None:
            cost = len(live) * pattern.size
            if cost > budget[0]:
                return (
                    f"a string of {len(live)} characters: the cassette's patterns have done the work one request "
                    f"may cost ({WORK} steps: fewer or simpler patterns, or shorter strings)"
                )
            budget[0] -= cost
        return None if pattern.fullmatch(live) else f"{_short(live)}: the pattern does not match it whole"
    if rule.kind == "subset":
        return _not_in(recorded, live, ())
    if rule.kind == "unordered":
        if not isinstance(live, list):
            return f"{_short(live)}: it wants a list"
        gone = Counter(map(canonical, recorded)) - Counter(map(canonical, live))
        new = Counter(map(canonical, live)) - Counter(map(canonical, recorded))
        if not gone and not new:
            return None
        parts = [f"only recorded: {', '.join(gone.elements())}" if gone else ""]
        parts.append(f"only incoming: {', '.join(new.elements())}" if new else "")
        return "the items, in any order: " + "; ".join(part for part in parts if part)
    return None  # any


def _not_in(recorded: Any, live: Any, under: tuple[str, ...]) -> str | None:
    """Why live does not hold recorded as a subset (objects within objects too; anything else equal), or None."""
    where = f" at `{render_place(under)}`" if under else ""
    if isinstance(recorded, dict):
        if not isinstance(live, dict):
            return f"{_short(live)}{where}: it wants an object holding {_short(recorded)}"
        for key, value in recorded.items():
            if key not in live:
                return f"the object: `{render_place((*under, key))}` is recorded ({_short(value)}) and missing"
            deeper = _not_in(value, live[key], (*under, key))
            if deeper is not None:
                return deeper
        return None
    if canonical(recorded) != canonical(live):
        return f"the object: `{render_place(under)}` is recorded {_short(recorded)}, incoming {_short(live)}"
    return None


def _short(value: Any) -> str:
    return short(value, 80)
