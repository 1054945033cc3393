"""The one definition of "the same request": method and params, minus what varies between runs.

Params are normalized (ignored paths removed, containers emptied by that dropped, optional keys sent
empty dropped) and serialized canonically (sorted keys, exact JSON types): equal keys are a match, so
the engine finds a recording by key whatever the cassette's size. Ids never enter a key. Ignore paths
are `words.parse_path`'s; a cassette's own (`meta.match.ignore`) join the user's in `Matcher.build`.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from mockmcp._wire.jsonrpc import compact
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.protocol import CANCELLED, INITIALIZE, PROGRESS_TOKEN, SPEC_PREFIX, UNSET_WHEN_EMPTY, params_era
from mockmcp._wire.words import Path, parse_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["DEFAULT_IGNORES", "Matcher", "answer_body", "locate", "short"]

# What always varies between runs and hosts, all in params._meta: the progress token, MCP's own keys, trace context.
DEFAULT_IGNORES = (
    f"_meta.{PROGRESS_TOKEN}",
    f'_meta["{SPEC_PREFIX}*"]',
    "_meta.traceparent",
    "_meta.tracestate",
    "_meta.baggage",
)
# Methods matched on their name alone: initialize's client info and capabilities change with every
# host version. notifications/cancelled names a live request id, and ids never decide a match.
_METHOD_ONLY = {INITIALIZE}
_IGNORED_BY_METHOD = {CANCELLED: ("requestId",)}

_MASK = "<ignored by mockmcp>"
_DEFAULT_PATHS = tuple(parse_path(text) for text in DEFAULT_IGNORES)


class Matcher(NamedTuple):
    """Normalizes and keys requests; `ignores` are parsed paths relative to params."""

    ignores: tuple[Path, ...]
    heads: frozenset[str] | None = None  # their first segments, when none is a pattern: params without one keep all

    @classmethod
    def build(cls, extra: tuple[str, ...] = (), meta: Mapping[str, Any] | None = None) -> Matcher:
        """The default volatile paths, the cassette's own (`meta.match.ignore`, when `meta` is given) and the
        user's (`--ignore`, the plugin's `ignore=`); raises UsageError for a malformed path."""
        rules = (meta or {}).get("match") or {}
        ignores = _DEFAULT_PATHS + tuple(parse_path(text) for text in (*(rules.get("ignore") or ()), *extra))
        heads = frozenset(path[0] for path in ignores)
        return cls(ignores, None if any(map(_is_pattern, heads)) else heads)

    def normalize(self, method: str, params: Any) -> Any:
        """params without the ignored paths: what a match compares."""
        if method in _METHOD_ONLY or params is None:
            return None
        if self.heads is None or not isinstance(params, dict) or not self.heads.isdisjoint(params):
            for path in self.ignores:
                params = _without(params, path)
        for key in _IGNORED_BY_METHOD.get(method, ()):
            params = _without(params, (key,))
        # The optional keys sent empty (`protocol.UNSET_WHEN_EMPTY`) dropped.
        for key in UNSET_WHEN_EMPTY["*"] + UNSET_WHEN_EMPTY.get(method, ()) if isinstance(params, dict) else ():
            if key in params and (params[key] is None or params[key] == {}):
                params = {k: v for k, v in params.items() if k != key}
        return None if params == {} else params

    def key(self, method: str, params: Any, era: str | None = None) -> str:
        """The canonical match key of a request or notification; the era takes part (a stateless-era request
        never matches a handshake-era one), `era` overriding the one params show."""
        return method + "\0" + (era or params_era(params)) + "\0" + canonical(self.normalize(method, params))


def answer_body(response: Any) -> Any:
    """What of a response counts when the host's answer is compared with the recorded one: its `result` or
    `error`, without the result's `_meta` keys that DEFAULT_IGNORES names (not the user's: those are params')."""
    if not isinstance(response, dict):
        return response
    body = {key: value for key, value in response.items() if key in ("result", "error")}
    if isinstance(body.get("result"), dict):
        result = body["result"]
        for path in _DEFAULT_PATHS:
            result = _without(result, path)
        body["result"] = result
    return body


canonical = compact(sort_keys=True)  # canonical JSON text: sorted keys, compact, exact types


def short(value: Any, limit: int) -> str:
    """A value's canonical JSON text, cut to `limit` characters with `...`, for a sentence."""
    text = canonical(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def locate(value: Any, path: Path) -> dict[tuple[str | int, ...], Any]:
    """Where path leads in value, as `_without` reads it: each place it names (keys, list indexes) and its value."""
    found: dict[tuple[str | int, ...], Any] = {}
    stack: list[tuple[tuple[str | int, ...], Any, int]] = [((), value, 0)]
    while stack:
        place, item, depth = stack.pop()
        if depth == len(path):
            found[place] = item
            continue
        head = path[depth]
        if isinstance(item, dict):
            if not _is_pattern(head):
                if head in item:
                    stack.append((place + (head,), item[head], depth + 1))
                continue
            stack.extend((place + (key,), child, depth + 1) for key, child in item.items() if fnmatchcase(key, head))
        elif isinstance(item, list):
            stack.extend((place + (i,), child, depth + 1) for i, child in enumerate(item) if _index_matches(i, head))
    return found


def _without(value: Any, path: Path) -> Any:
    """A copy of value with every match of path removed, containers emptied by it too; value itself if none."""
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        # A plain key (the common case) is one lookup, no scan.
        keys = [key for key in value if fnmatchcase(key, head)] if _is_pattern(head) else [head] * (head in value)
        copy: dict[str, Any] | None = None
        for key in keys:
            item = value[key]
            new = _without(item, rest) if rest else None
            if rest and new is item:
                continue
            copy = dict(value) if copy is None else copy
            if not rest or (new in ({}, []) and item not in ({}, [])):
                del copy[key]  # what the path names, or a container it emptied
            else:
                copy[key] = new
        return value if copy is None else copy
    if isinstance(value, list):
        # A list element named by the last segment is masked, not removed, so later positions still line up.
        items = [
            (_without(item, rest) if rest else _MASK) if _index_matches(i, head) else item
            for i, item in enumerate(value)
        ]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _is_pattern(segment: str) -> bool:
    return "*" in segment or "?" in segment or "[" in segment


def _index_matches(index: int, pattern: str) -> bool:
    return fnmatchcase(str(index), pattern)
