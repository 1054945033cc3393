"""`record --mode new`: what a new recording adds to the cassette there was. Pure.

A stateful server answers the same request otherwise as its state grows, so a new session is kept whole, a
recorded session of its own, unless replaying the old cassette already answers it alike. The old
interactions and meta are kept as written.
"""

from __future__ import annotations

from typing import Any

from mockmcp.cassette.model import REQUEST, Cassette, Interaction
from mockmcp.engine.consistency import server_said
from mockmcp.engine.explain import describe_differences, label
from mockmcp.engine.matching import Matcher, answer_body, canonical
from mockmcp.engine.selection import Recordings, Selection

__all__ = ["merge", "merged_meta"]

_UNCHANGED = "this session adds nothing the cassette does not already answer; the cassette is unchanged"


def merge(old: Cassette, new: Cassette, whole: bool = False) -> tuple[Cassette, tuple[str, ...], dict[int, int]]:
    """`--mode new`: the old interactions, then each new session not already answered alike, whole (with `whole`,
    each new session: a later session of one run, which a replay of the run plays in its turn).
    Returns the cassette (meta by `merged_meta`), notes for stderr (a request answered otherwise this time,
    or the cassette unchanged), and the number each added session has in it."""
    matcher = Matcher.build()
    recordings = Recordings(old, Matcher.build((), old.meta))  # the cassette's own match rules count
    number = 1 + max((i.session for i in old.interactions), default=-1)
    added: list[Interaction] = []
    notes: list[str] = []
    numbers: dict[int, int] = {}
    for session in sorted({i.session for i in new.interactions}):
        interactions = [i for i in new.interactions if i.session == session]
        base = len(old.interactions) + len(added)  # where this session goes, if it is added
        same, otherwise = (False, []) if whole else _compare(old, Selection(recordings), matcher, interactions, base)
        notes.extend(otherwise)
        if not same:
            added.extend(interaction._replace(session=number) for interaction in interactions)
            numbers[session] = number
            number += 1
    if not added:
        notes.append(_UNCHANGED)
    kept = old.interactions + tuple(added)
    return old._replace(interactions=kept, meta=merged_meta(old.meta, new.meta)), tuple(notes), numbers


def _compare(
    old: Cassette, selection: Selection, matcher: Matcher, interactions: list[Interaction], base: int
) -> tuple[bool, list[str]]:
    """Whether replaying the old cassette gives every answer of this session, and a note per request it
    had that was answered otherwise (once per request: a growing state would say it at every call)."""
    same = True
    notes: list[str] = []
    noted: set[str] = set()
    for index, interaction in enumerate(interactions):
        if interaction.kind != REQUEST:
            continue
        key = selection.recordings.key(interaction.method or "", interaction.params)
        pick = selection.request(key)
        if pick is None or pick.interaction is None:
            same = False
            continue
        before = old.interactions[pick.interaction]
        recorded = answer_body(before.response)
        # A raw reply differs by its line; what the server said on the way counts as much as the reply.
        alike = canonical(recorded) == canonical(answer_body(interaction.response))
        said = (before.raw_response, server_said(before, matcher))
        if alike and said == (interaction.raw_response, server_said(interaction, matcher)):
            continue
        same = False
        if key not in noted:
            noted.add(key)
            notes.append(_answered_otherwise(pick.interaction, recorded, base + index, interaction))
    return same, notes


def _answered_otherwise(old_index: int, recorded: Any, new_index: int, interaction: Interaction) -> str:
    found = describe_differences(recorded, answer_body(interaction.response), "now", "this answer", root="answer")
    lines = [
        f"{label(interaction)} was answered otherwise than in interactions[{old_index}] of the cassette; "
        f"both are kept, this time's as interactions[{new_index}]:",
        *(f"  - {text}" for _path, text in found[:3]),
    ]
    if len(found) > 3:
        lines.append(f"  - and {len(found) - 3} more")
    return "\n".join(lines)


def merged_meta(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The old cassette's meta, with when it was updated, the redaction rules and the substitutions of both
    recordings, and the new recording's HTTP framing (how the server frames its answers now)."""
    meta = dict(old)
    if new.get("recorded_at"):
        meta["updated_at"] = new["recorded_at"]
    both = {
        key: sorted({*old.get("redact", {}).get(key, []), *new.get("redact", {}).get(key, [])})
        for key in ("env", "patterns")
    }
    rules = {key: values for key, values in both.items() if values}
    if rules:
        meta["redact"] = rules
    names = list(dict.fromkeys([*old.get("substitute", []), *new.get("substitute", [])]))
    if names:
        meta["substitute"] = names
    if new.get("http"):  # how the server frames its answers now
        meta["http"] = new["http"]
    return meta
