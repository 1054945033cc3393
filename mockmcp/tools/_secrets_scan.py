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

from mockmcp._wire.words import Place

__all__ = ["FIX", "SHOWN", "Secret", "scan"]

_EDGE = r"(?<![A-Za-z0-9_-])"
# Most specific first: on the same span the earlier kind wins (an Anthropic key is also `sk-...`).
_KINDS = (
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("an OpenAI-style API key", r"sk-[A-Za-z0-9_-]{20,}"),
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    ("a GitHub fine-grained token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("an AWS access key id", r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("a Slack token", r"xox[baprs]-[A-Za-z0-9-]{10,}"),
    ("a Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("a JSON Web Token", r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("a bearer token", r"(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
    ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
)
_PATTERNS = tuple((kind, re.compile(_EDGE + pattern)) for kind, pattern in _KINDS)
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
