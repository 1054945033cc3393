"""Credentials left in cassette text: known key formats, bearer tokens, private keys.

Cassettes get committed. The scan reads the raw text, so comments, keys and a file that does not parse
are covered too (with YAML nodes given, each secret gets its place). A pattern starts at a word edge, so
a key-like run inside a longer identifier does not count, nor does `[REDACTED]`. Only the first
characters of a secret are ever shown: the report may end up in a CI log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import yaml

from mockmcp._wire.credentials import EDGE, KINDS
from mockmcp._wire.words import Place

__all__ = ["FIX", "SHOWN", "Secret", "scan"]

_PATTERNS = tuple((kind, re.compile(EDGE + pattern)) for kind, pattern in KINDS)
SHOWN = 4  # characters of a secret a report may show
FIX = (
    "redact it: re-record with `mockmcp record --redact-env NAME` or `--redact REGEX`, or replace it by hand"
    " with `[REDACTED]` (in a request, also add a pattern to `meta.redact.patterns` so the live value still"
    " matches); revoke it if it is real"
)


class Secret(NamedTuple):
    """A credential found in the text; never print `value`, show `shown`. `place` is empty when no YAML value
    holds it (a comment, a file that does not parse)."""

    kind: str
    start: int  # character offset in the text
    value: str
    line: int
    place: Place = ()

    @property
    def shown(self) -> str:
        """The first few characters and an ellipsis: enough to find it, not enough to use it."""
        return self.value[:SHOWN] + "..."

    @property
    def problem(self) -> str:
        return f"{self.kind} ({self.shown}) left in the cassette; cassettes get committed"


def scan(text: str, nodes: Sequence[tuple[Place, yaml.Node]] = ()) -> list[Secret]:
    """Every credential in the text, in order, each reported once, placed among the YAML nodes given."""
    matches = sorted(
        (match.start(), -match.end(), rank, kind, match)
        for rank, (kind, pattern) in enumerate(_PATTERNS)
        for match in pattern.finditer(text)
    )
    scalars = _scalars(nodes)
    found: list[Secret] = []
    end = -1
    for start, neg_end, _rank, kind, match in matches:
        if start < end:
            continue  # inside a secret already reported (a JWT after `Bearer`, sk-ant- as sk-)
        end = -neg_end
        value = match.group("secret") if "secret" in match.re.groupindex else match.group()
        place = next((place for place, node in scalars if _holds(node, start, value)), ())
        found.append(Secret(kind, start, value, text.count("\n", 0, start) + 1, place))
    return found


def _scalars(nodes: Sequence[tuple[Place, yaml.Node]]) -> list[tuple[Place, yaml.Node]]:
    """Scalar nodes with their places, mapping keys included (a secret can be a key)."""
    scalars = [(place, node) for place, node in nodes if isinstance(node, yaml.ScalarNode)]
    for place, node in nodes:
        if isinstance(node, yaml.MappingNode):
            scalars += [(place + (str(k.value),), k) for k, _value in node.value if isinstance(k, yaml.ScalarNode)]
    return scalars


def _holds(node: yaml.Node, start: int, value: str) -> bool:
    # libyaml's mark index counts characters, like the offsets of `re`; the value check guards that.
    return bool(node.start_mark.index <= start < node.end_mark.index and value in node.value)
