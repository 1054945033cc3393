"""Drift: how a cassette differs from a live server's answers, or from another cassette. Pure.

Interactions are paired as replay pairs them (`matching`), in order; responses are compared without what always
varies (ids, progress tokens, per-request `_meta`, --ignore paths, values the server mints and the client echoes).
Each recorded interaction is `same`, `changed` or `missing` (its method or tool is gone); the other side's rest `new`.
Beside them, the contract's changes (`_contract`): what the listings offer, each change a rule of a tier.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mockmcp._wire import protocol
from mockmcp._wire.jsonrpc import METHOD_NOT_FOUND, map_strings
from mockmcp._wire.protocol import MINTED_KEYS
from mockmcp.cassette.model import CUT, KNOBS, RAW, REQUEST, SERVER, Cassette, Interaction, written_eras
from mockmcp.engine.explain import describe_differences, label
from mockmcp.engine.matching import Matcher, canonical
from mockmcp.engine.rules import Group
from mockmcp.record import merged_meta
from mockmcp.tools._contract import TIERS, Change, at_least, changes, contract

__all__ = ["ANY", "Drift", "Entry", "compare", "updated"]

SAME, CHANGED, MISSING, NEW = "same", "changed", "missing", "new"


class Entry(NamedTuple):
    """One interaction's verdict: status, the recorded index (None for new), a label, the details."""

    status: str
    recorded: int | None
    other: int | None
    label: str
    details: tuple[str, ...] = ()


ANY = "any"  # `--fail-on any`: every drift fails, a changed answer as much as a change of the contract


class Drift(NamedTuple):
    """All verdicts, in the recorded order, new ones last; and the contract's changes, worst first."""

    entries: tuple[Entry, ...]
    other_name: str
    changes: tuple[Change, ...] = ()

    @property
    def drifted(self) -> bool:
        return bool(self.changes) or any(entry.status != SAME for entry in self.entries)

    def fails(self, tier: str) -> bool:
        """Whether this drift fails `--fail-on tier`: any drift for `any`, else a change of that tier or worse."""
        return self.drifted if tier == ANY else bool(at_least(tier, self.changes))

    def counts(self) -> dict[str, int]:
        """How many changes of the contract each tier has, worst first."""
        return {tier: sum(change.tier == tier for change in self.changes) for tier in TIERS}

    def where(self, entry: Entry) -> str:
        """An entry's place: `[3]` in the recording, `live[5]` for one only the other side has."""
        return f"[{entry.recorded}]" if entry.recorded is not None else f"{self.other_name}[{entry.other}]"

    def tally(self) -> str:
        """`11 interactions: 9 same, 1 changed, 1 missing, 0 new`"""
        counts = (
            f"{sum(e.status == status for e in self.entries)} {status}" for status in (SAME, CHANGED, MISSING, NEW)
        )
        return f"{len(self.entries)} interactions: {', '.join(counts)}"

    def render(self, title: str) -> str:
        lines = [title]
        for entry in self.entries:
            lines.append(f"  {entry.status:<8} {self.where(entry)} {entry.label}")
            lines.extend(f"           - {detail}" for detail in entry.details)
        lines.append(self.tally())
        if self.changes:
            lines.append("contract: " + ", ".join(f"{n} {tier}" for tier, n in self.counts().items()))
            width = max(len(change.rule) for change in self.changes)
            lines.extend(f"  {c.tier:<9} {c.rule:<{width}} {c.subject}: {c.detail}" for c in self.changes)
        return "\n".join(lines)


def compare(recorded: Cassette, other: Cassette, matcher: Matcher, other_name: str = "live") -> Drift:
    """Pair the two cassettes' client interactions and judge each pair."""
    minted = frozenset(minted_values(recorded) | minted_values(other))
    offered = protocol.offered_tools((i.message, i.response) for i in other.interactions)
    pairing = _Pairing(matcher, minted, other, other_name, offered)
    pending: dict[str, list[int]] = {}
    other_eras, eras = written_eras(other), written_eras(recorded)
    for position, interaction in enumerate(other.interactions):
        if interaction.kind != SERVER:
            pending.setdefault(pairing.key(interaction, other_eras[position]), []).append(position)
    entries = []
    for i, interaction in enumerate(recorded.interactions):
        if interaction.kind == SERVER:
            continue
        if interaction.match:  # its match rules say which of the other's requests are its
            j = pairing.ruled(interaction, pending, eras[i])
        else:
            queue = pending.get(pairing.key(interaction, eras[i]))
            j = queue.pop(0) if queue else None
        entries.append(pairing.judge(i, interaction, j))
    leftover = sorted(j for queue in pending.values() for j in queue)
    entries.extend(Entry(NEW, None, j, label(other.interactions[j])) for j in leftover)
    return Drift(tuple(entries), other_name, changes(contract(recorded), contract(other)))


class _Pairing(NamedTuple):
    """What pairing the recorded interactions with the other cassette's, and judging each pair, holds to."""

    matcher: Matcher
    minted: frozenset[str]  # values a server minted, masked so that their echoes compare equal
    other: Cassette
    name: str  # how differences name the other side: "live", or a file
    offered: frozenset[str] | None  # the tools the other side's tools/list offers

    def key(self, interaction: Interaction, era: str) -> str:
        return self.matcher.key(interaction.method or "", self.mask(interaction.params), era)

    def mask(self, value: Any) -> Any:
        """value with server-minted strings replaced by one marker, so that echoes of them compare equal."""
        return map_strings(value, lambda text: "<minted>" if text in self.minted else text)

    def ruled(self, interaction: Interaction, pending: dict[str, list[int]], era: str) -> int | None:
        """The first of the other's unpaired requests a recorded request with match rules accepts, taken."""
        message = dict(interaction.message or {}, params=self.mask(interaction.params))
        group = Group.of(self.matcher, interaction._replace(message=message), era)
        others = self.other.interactions
        accepted = [
            (j, queue)
            for queue in pending.values()
            for j in queue
            if group.accepts(others[j].method or "", self.mask(others[j].params))
        ]
        if not accepted:
            return None
        j, queue = min(accepted, key=lambda pair: pair[0])
        queue.remove(j)
        return j

    def judge(self, i: int, recorded: Interaction, j: int | None) -> Entry:
        """The verdict on interactions[i] against the other's interactions[j] (None: unpaired)."""
        what, name = label(recorded), self.name
        if j is None:
            return Entry(MISSING, i, None, what, (f"the {name} session has no such {recorded.kind}",))
        live = self.other.interactions[j]
        gone = _gone(recorded, live, self.offered)
        if gone:
            return Entry(MISSING, i, j, what, (gone,))
        if live.response is None and recorded.response is not None:
            why = f"no {name} answer: the server exited, or took longer than the timeout"
            return Entry(CHANGED, i, j, what, (why,))
        a, b = (self.mask(_normal(self.matcher, x.response)) for x in (recorded, live))
        sa, sb = (self.mask(_server_messages(self.matcher, x)) for x in (recorded, live))
        if canonical(a) == canonical(b) and canonical(sa) == canonical(sb):
            return Entry(SAME, i, j, what)
        found = describe_differences(a, b, name, f"the {name} answer", root="response", by_identity=True)
        found += describe_differences({"server": sa}, {"server": sb}, name, f"the {name} session", by_identity=True)
        return Entry(CHANGED, i, j, what, tuple(text for _path, text in found))


def _server_messages(matcher: Matcher, interaction: Interaction) -> list[Any]:
    """What the server sent during an interaction, as compared: no ids, no progress tokens, no volatile _meta."""
    out: list[Any] = []
    for item in interaction.server:
        if item.kind == RAW:
            out.append({"raw": item.message})
            continue
        params = protocol.without_progress_token(item.message["method"], item.message.get("params"))
        out.append({item.kind: item.message["method"], "params": matcher.normalize("", params)})
    return out


def _gone(recorded: Interaction, live: Interaction, offered: frozenset[str] | None) -> str | None:
    """Why the other server no longer knows this request, or None."""
    error = (live.response or {}).get("error")
    if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND and not (recorded.response or {}).get("error"):
        return f"the method {recorded.method} is unknown now ({error.get('message')})"
    name = recorded.params.get("name") if isinstance(recorded.params, dict) else None
    if recorded.method == "tools/call" and offered is not None and name not in offered:
        return f"the tool {name!r} is no longer offered by {protocol.TOOLS_LIST}"
    return None


def _normal(matcher: Matcher, response: dict[str, Any] | None) -> Any:
    """A response as compared: without its id and, like params, without what varies between runs."""
    if response is None:
        return None
    body = {k: v for k, v in response.items() if k != "id"}
    return matcher.normalize("", body.get("result")) if "result" in body else body


def minted_values(cassette: Cassette) -> set[str]:
    """Values a server minted (under MINTED_KEYS in a result) that the client then echoed in a request."""
    seen: set[str] = set()
    echoed: set[str] = set()
    for interaction in cassette.interactions:
        if interaction.kind != SERVER:
            echoed |= seen & _strings(interaction.params)
        seen |= _strings((interaction.response or {}).get("result"), MINTED_KEYS)
    return echoed


def _strings(value: Any, keys: frozenset[str] | None = None) -> set[str]:
    """The strings in value at any depth; with keys, only those that are the value of one of them."""
    found: set[str] = set()
    stack: list[tuple[Any, Any]] = [(None, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, str) and (keys is None or key in keys):
            found.add(item)
        elif isinstance(item, (dict, list)):
            stack.extend(item.items() if isinstance(item, dict) else ((None, one) for one in item))
    return found


_NO_KNOBS = Interaction(REQUEST)  # every knob at its default
_ANSWER = ("server", "response", "raw_response", "took")  # what the live session gives an interaction


def updated(recorded: Cassette, live: Cassette, drift: Drift) -> tuple[Cassette, list[str]]:
    """The recorded cassette with the live answers where they drifted (its requests and hand-made knobs kept, values
    the server minted anew written as recorded, so that their echoes still match), and the live session's new
    requests; and a note per interaction whose knobs (or recorded answer, with no live one) were kept."""
    interactions = list(recorded.interactions)
    back = _minted_back(recorded, live, drift)
    notes: list[str] = []
    for entry in drift.entries:
        if entry.status == SAME or entry.recorded is None or entry.other is None:
            continue
        old, new = recorded.interactions[entry.recorded], live.interactions[entry.other]
        if old.answers:  # written by hand, one answer a play: no live answer stands for them
            notes.append(f"kept the scripted answers of [{entry.recorded}] {entry.label}")
            continue
        if new.response is None and old.response is not None:
            notes.append(f"kept the recorded answer of [{entry.recorded}] {entry.label}: there was no live answer")
            continue
        answer = {field: _unmint(getattr(new, field), back) for field in _ANSWER}
        if old.drop == CUT and old.expect is None:  # the recorded server broke its answer off: no knob of a person's
            answer["drop"] = new.drop
        interactions[entry.recorded] = written = old._replace(**answer)
        knobs = [knob for knob in KNOBS if getattr(written, knob) != getattr(_NO_KNOBS, knob)]
        if knobs:
            notes.append(f"kept {', '.join(knobs)} on [{entry.recorded}] {entry.label}")
    interactions += [live.interactions[e.other] for e in drift.entries if e.status == NEW and e.other is not None]
    # What the server says now, but the redaction rules and substitutions of both (for the messages kept).
    merged = merged_meta(recorded.meta, live.meta)
    united = ("redact", "substitute")
    meta = {key: value for key, value in {**recorded.meta, **live.meta}.items() if key not in united}
    meta |= {key: merged[key] for key in united if key in merged}
    return recorded._replace(interactions=tuple(interactions), meta=meta), notes


def _minted_back(recorded: Cassette, live: Cassette, drift: Drift) -> dict[str, str]:
    """Each minted value the live session echoed in place of a recorded one: live value to recorded."""
    minted = minted_values(recorded)
    back: dict[str, str] = {}
    for entry in drift.entries:
        if entry.recorded is not None and entry.other is not None:
            old, new = recorded.interactions[entry.recorded], live.interactions[entry.other]
            _pair_strings(old.params, new.params, minted, back)
    return back


def _pair_strings(old: Any, new: Any, minted: set[str], back: dict[str, str]) -> None:
    if isinstance(old, str) and isinstance(new, str) and old in minted and old != new:
        back[new] = old
    elif isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            _pair_strings(value, new.get(key), minted, back)
    elif isinstance(old, list) and isinstance(new, list):
        for one, other in zip(old, new, strict=False):
            _pair_strings(one, other, minted, back)


def _unmint(value: Any, back: dict[str, str]) -> Any:
    if not back or value is None:
        return value
    if isinstance(value, tuple):  # server items
        return tuple(i._replace(message=_unmint(i.message, back), response=_unmint(i.response, back)) for i in value)
    return map_strings(value, lambda text: back.get(text, text))
