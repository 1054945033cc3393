"""Explaining a near miss: which recorded requests come closest to an unmatched one, and how they differ.

Only a miss pays for this module: it imports deepdiff, which costs more at start-up than the rest
of mockmcp together, so the replay engine imports it lazily. Candidates are ranked with a cheap
count of differing leaves (fine for thousands of candidates), and the best three are then described
exactly with deepdiff, down to a depth (deeper values are compared as their JSON text).
"""

from __future__ import annotations

import collections
import json
import shlex
from typing import Any, NamedTuple

from mockmcp._wire.jsonrpc import depth
from mockmcp._wire.patterns import WORK
from mockmcp._wire.protocol import NAMED_BY, params_era
from mockmcp._wire.words import RecordMode, json_type, render_place
from mockmcp.cassette.model import REQUEST, Cassette, Interaction, recorded_url, written_eras
from mockmcp.engine.matching import Matcher, canonical, short

__all__ = ["Candidate", "Miss", "describe_differences", "explain_miss", "hand_edit", "kept_params", "label"]
__all__ += ["record_fix", "record_mode", "shown"]

MAX_CANDIDATES = 3
# What a miss keeps of its params, in the report and in memory while its session lasts: about this many bytes of
# JSON (a host can send thousands of misses of megabytes each); of one string at most _KEPT_STRING characters,
# of nesting _KEPT_DEPTH levels (deeper, a container is kept as its JSON text, cut like a string).
KEPT_PARAMS = 4096
_KEPT_STRING = 1024
_KEPT_DEPTH = 16


class Candidate(NamedTuple):
    """A recorded request close to the incoming one; `ruled`: some of its match rules refused the incoming values."""

    index: int
    differences: tuple[str, ...]
    first_path: str
    plays: int
    ruled: bool = False

    def to_json(self) -> dict[str, Any]:
        facts = {"interaction": self.index, "plays": self.plays, "differences": list(self.differences)}
        return {**facts, "first_path": self.first_path, "ruled": self.ruled}


class Miss(NamedTuple):
    """An incoming request no recorded interaction answers, with the full story."""

    request_id: Any
    method: str
    params: Any
    code: int
    reason: str
    candidates: tuple[Candidate, ...]
    fixes: tuple[str, ...]
    record: str = "new"  # the record mode that fixes it: `record_mode`
    params_cut: int | None = None  # `params` were cut (`kept_params`): their full size, in bytes of JSON

    def _said_params(self) -> str:
        cut = f" (cut: {self.params_cut} bytes of params in all)" if self.params_cut is not None else ""
        return _short(shown(self.params)) + cut

    def render(self) -> str:
        """The story for stderr: reason, request, closest candidates with differences, how to fix."""
        lines = [
            f"mockmcp: {self.reason}",
            f"  incoming request (id {json.dumps(self.request_id)}): {self.method} {self._said_params()}",
        ]
        if self.candidates:
            lines.append("  closest recorded requests:")
        for n, candidate in enumerate(self.candidates, 1):
            plays = candidate.plays
            played = f"already played {plays} time{'s' * (plays != 1)}" if plays else "not played yet"
            lines.append(f"    {n}. interactions[{candidate.index}] ({played})")
            lines.extend(f"       - {difference}" for difference in candidate.differences)
        lines.append("  how to fix:")
        lines.extend(f"    {n}. {fix}" for n, fix in enumerate(self.fixes, 1))
        return "\n".join(lines)

    def error_data(self) -> dict[str, Any]:
        """The `data` of the JSON-RPC error the host receives: short, but enough to act on."""
        data: dict[str, Any] = {"method": self.method}
        if self.candidates:
            best = self.candidates[0]
            data["closest"] = f"interactions[{best.index}]"
            data["differences"] = list(best.differences)
        return data

    def to_json(self) -> dict[str, Any]:
        facts = {"id": self.request_id, "method": self.method, "params": self.params, "params_cut": self.params_cut}
        facts["code"] = self.code
        closest = [candidate.to_json() for candidate in self.candidates]
        more = {"reason": self.reason, "closest": closest, "fixes": list(self.fixes), "record": self.record}
        return {**facts, **more, "explanation": self.render()}


def explain_miss(
    cassette: Cassette,
    matcher: Matcher,
    plays: collections.Counter[int],
    message: dict[str, Any],
    code: int,
    reason: str,
) -> Miss:
    """Rank the recorded requests of the same method against the incoming one and describe the best; a
    recording with match rules is compared without the paths they govern, each refusing rule a difference."""
    method, params = message["method"], message.get("params")
    live_era = params_era(params)
    eras = written_eras(cassette)
    scored = []
    budget = [WORK]  # the patterns' work for explaining this request, over every recording with rules
    for index, interaction in enumerate(cassette.interactions):
        if interaction.kind == REQUEST and interaction.method == method:
            refused: list[tuple[str, str]] = []
            compare = matcher
            if interaction.match:
                from mockmcp.engine.rules import Group  # only a cassette with match rules needs it

                group = Group.of(matcher, interaction, eras[index])
                compare, refused = group.inner, group.refusals(method, params, budget)
            recorded, live = compare.normalize(method, interaction.params), compare.normalize(method, params)
            other_era = eras[index] != live_era
            score = len(_leaves(recorded) ^ _leaves(live)) + len(refused) + other_era
            scored.append((score, index, recorded, live, refused))
    scored.sort(key=lambda item: (item[0], item[1]))
    candidates = []
    for _score, index, recorded, live, refused in scored[:MAX_CANDIDATES]:
        differences = sorted(describe_differences(recorded, live) + refused)
        if eras[index] != live_era:
            speaks = f"this request speaks the {live_era} era (a protocol version in `_meta` or not)"
            why = "a server answers the two eras differently, so they never match"
            differences.insert(0, ("", f"recorded in the {eras[index]} era, and {speaks}: {why}"))
        differences = differences or [("", _used_up(cassette.interactions[index]))]
        # A path a rule refused is governed by that rule: loosen the rule rather than ignore the path.
        first = next((path for path, _text in differences if path and (path, _text) not in refused), "")
        texts = tuple(text for _path, text in differences)
        candidates.append(Candidate(index, texts, first, plays[index], bool(refused)))
    mode = record_mode(cassette, method, params)
    fixes = _fixes(cassette, method, candidates, mode)
    kept, size = kept_params(params)
    return Miss(message["id"], method, kept, code, reason, tuple(candidates), fixes, mode, size)


def shown(params: Any) -> Any:
    """A missed request's params as a person reads them: without `_meta`, whose keys (a stateless-era host's
    protocol version, capabilities and client info first) would fill the line before the arguments."""
    return {key: value for key, value in params.items() if key != "_meta"} if isinstance(params, dict) else params


def kept_params(params: Any) -> tuple[Any, int | None]:
    """What a miss keeps of `params`, and their full size in bytes of compact JSON when cut (else None): them whole
    up to KEPT_PARAMS bytes, else a copy of about that size, each cut saying what it left out."""
    size = len(canonical(params).encode("utf-8", "surrogatepass"))
    if size <= KEPT_PARAMS:
        return params, None
    return _cut(params, [KEPT_PARAMS], _KEPT_DEPTH), size


def _cut(value: Any, budget: list[int], levels: int) -> Any:
    """value within what is left of `budget` (one number in a list, spent as the walk goes): long strings
    shortened, keys and items past the budget left out, containers deeper than `levels` kept as JSON text."""
    if isinstance(value, str):
        take = min(len(value), _KEPT_STRING, max(budget[0], 0))
        budget[0] -= take + 2
        return value if take == len(value) else f"{value[:take]}... ({len(value) - take} more characters cut)"
    if not isinstance(value, (dict, list)):
        budget[0] -= len(canonical(value))
        return value
    if levels == 0:
        return _cut(canonical(value), budget, 0)
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for n, (key, item) in enumerate(value.items()):
            if budget[0] <= 0:
                kept["..."] = f"{len(value) - n} more keys cut"
                break
            name = _cut(key, budget, 0)  # the key first: it spends the budget before its value
            kept[name] = _cut(item, budget, levels - 1)
        return kept
    items: list[Any] = []
    for n, item in enumerate(value):
        if budget[0] <= 0:
            items.append(f"... {len(value) - n} more items cut")
            break
        items.append(_cut(item, budget, levels - 1))
    return items


def record_mode(cassette: Cassette, method: str, params: Any) -> str:
    """The record mode that fixes a miss: `new` for a new request (no recording of its era has its method,
    or names what it names), `all` for a changed one (a session beside the stale one would leave it unplayed)."""
    key = NAMED_BY.get(method)
    named = params.get(key) if key and isinstance(params, dict) else None
    era = params_era(params)
    for interaction, written in zip(cassette.interactions, written_eras(cassette), strict=True):
        if interaction.kind == REQUEST and interaction.method == method and written == era:
            recorded = interaction.params
            if named is None or (isinstance(recorded, dict) and recorded.get(key) == named):
                return "all"
    return "new"


def record_fix(mode: str, command: str) -> str:
    """The fix of a miss that records: `command` with the mode in it as the command line spells it (`{mode}`
    marks where; any other brace, a server's argument's, is left as it is)."""
    told = command.replace("{mode}", RecordMode(mode).word)
    if mode == "all":
        return f"if the host changed this request on purpose, record the cassette again: {told}"
    return f"if the host now asks something new, record it: {told}"


def _used_up(interaction: Interaction) -> str:
    times = f"`times: {interaction.times}`" if interaction.times != 1 else "once (the default `times: 1`)"
    return f"the same request, but used up: recorded to play {times}, then `after: {interaction.after}`"


def _fixes(cassette: Cassette, method: str, candidates: list[Candidate], mode: str) -> tuple[str, ...]:
    where = cassette.path or "CASSETTE"
    server = cassette.meta.get("server")
    command = shlex.join(str(part) for part in server) if isinstance(server, list) and server else "SERVER..."
    url = recorded_url(cassette.meta)
    # A cassette recorded through the HTTP proxy names the target's URL, which `--` would run as a command.
    source = f"--http-target {shlex.quote(url)} (then point the host at the proxy)" if url else f"-- {command}"
    fixes = []
    if candidates and candidates[0].first_path:
        path, index = candidates[0].first_path, candidates[0].index
        fixes.append(
            f"if {path} varies from run to run, leave it out of matching: --ignore '{path}', or in the cassette "
            f"`meta.match: {{ignore: ['{path}']}}` (for one request: a rule in interactions[{index}].match)"
        )
    word = RecordMode(mode).word  # the command line's name of the mode the fix records with
    fixes.append(record_fix(mode, f"mockmcp record --record-mode {word} -o {where} {source}"))
    fixes.append(hand_edit(where, method, candidates[0] if candidates else None))
    return tuple(fixes)


def hand_edit(where: str, method: str, best: Candidate | None) -> str:
    """The last fix of a miss, the same at a shell and in pytest: which part of the cassette to edit."""
    if best is None:
        return f"or add an interaction for {method} to {where} by hand"
    if best.ruled:
        return (
            f"or edit {where} by hand: interactions[{best.index}].match (a rule that refused it: "
            f"`any` takes any value) or interactions[{best.index}].request.params"
        )
    return f"or edit {where} by hand: interactions[{best.index}].request.params"


def describe_differences(
    recorded: Any,
    other: Any,
    other_name: str = "incoming",
    holder: str = "the incoming request",
    root: str = "params",
    by_identity: bool = False,
) -> list[tuple[str, str]]:
    """Exact differences between a recorded value and another, as sorted (path, sentence) pairs; `root` names
    the whole value. With `by_identity`, list items with a `name` or `uri` are paired by it, not by position
    (a change of order is no difference), and paths name them: `tools[name="read_file"].title`."""
    from deepdiff import DeepDiff  # deferred: see the module docstring

    recorded, other = _clipped(recorded), _clipped(other)
    pairing = _same_item if by_identity else None
    diff = DeepDiff(recorded, other, view="tree", verbose_level=2, iterable_compare_func=pairing)
    out: list[tuple[str, str]] = []
    for report_type, items in sorted(diff.items()):
        if report_type == "iterable_item_moved":
            continue
        for item in items:
            segments = item.path(output_format="list")
            where = recorded if "removed" in report_type else other
            path = _identified_path(where, segments) if by_identity else render_place(segments)
            out.append((path, _sentence(report_type, path or root, item.t1, item.t2, other_name, holder)))
    out.sort()
    return out


_IDENTITY_KEYS = ("name", "uri", "uriTemplate")


def _same_item(first: Any, second: Any, _level: Any = None) -> bool:
    """deepdiff's pairing of list items: the same tool, prompt or resource, wherever it stands."""
    from deepdiff.helper import CannotCompare

    for key in _IDENTITY_KEYS:
        if isinstance(first, dict) and isinstance(second, dict) and key in first and key in second:
            return bool(first[key] == second[key])
    raise CannotCompare() from None


def _identified_path(value: Any, segments: list[Any]) -> str:
    """render_place, with list items that have an identity named by it instead of their position."""
    named: list[Any] = []
    for segment in segments:
        try:
            item = value[segment] if isinstance(value, (dict, list)) else None
        except (KeyError, IndexError, TypeError):
            item = None
        key = next((k for k in _IDENTITY_KEYS if isinstance(item, dict) and isinstance(item.get(k), str)), None)
        named.append((key, item[key]) if isinstance(segment, int) and key is not None else segment)
        value = item
    return render_place(named)


def _sentence(report_type: str, where: str, recorded: Any, other: Any, other_name: str, holder: str) -> str:
    if "added" in report_type:
        return f"{where}: only in {holder} ({_short(other)})"
    if "removed" in report_type:
        return f"{where}: only in the recording ({_short(recorded)})"
    if report_type == "type_changes":
        was, now = f"{_short(recorded)} ({json_type(recorded)})", f"{_short(other)} ({json_type(other)})"
        return f"{where}: recorded {was}, {other_name} {now}"
    return f"{where}: recorded {_short(recorded)}, {other_name} {_short(other)}"


def _leaves(value: Any) -> set[tuple[str, str]]:
    """Every leaf of value with its path, for ranking: walked without recursion, so any depth is fine."""
    found: set[tuple[str, str]] = set()
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        prefix, item = stack.pop()
        if isinstance(item, dict) and item:
            stack.extend((f"{prefix}.{key}", child) for key, child in item.items())
        elif isinstance(item, list) and item:
            stack.extend((f"{prefix}[{i}]", child) for i, child in enumerate(item))
        else:
            found.add((prefix, canonical(item)))
    return found


# deepdiff recurses several frames per level: below this depth, a value is compared as its JSON text.
_DESCRIBED_DEPTH = 40


def _clipped(value: Any, levels: int = _DESCRIBED_DEPTH) -> Any:
    """value with every container nested deeper than levels replaced by its canonical JSON text."""
    return value if depth(value) <= levels else _clip(value, levels)


def _clip(value: Any, levels: int) -> Any:
    if not isinstance(value, (dict, list)):
        return value
    if levels == 0:
        return canonical(value)
    if isinstance(value, dict):
        return {key: _clip(item, levels - 1) for key, item in value.items()}
    return [_clip(item, levels - 1) for item in value]


def _short(value: Any) -> str:
    return short(value, 120)


def label(interaction: Interaction) -> str:
    """`tools/call read_file`: the method, and the tool, prompt or resource it names."""
    params = interaction.params if isinstance(interaction.params, dict) else {}
    name = params.get("name") or params.get("uri")
    return f"{interaction.method or 'server'}" + (f" {name}" if isinstance(name, str) else "")
