"""Keeping secrets out of cassettes: replace each secret with a visible placeholder, in every line.

The recorder redacts each line before it touches the disk (journal and cassette alike), and the
replay applies the same rules to incoming lines before matching, so a host that sends the real
secret still matches the redacted recording. The rules (environment variable names and patterns,
never values) are kept in the cassette's `meta.redact`, so replay knows them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from mockmcp.errors import UsageError

__all__ = ["Redactor"]

PATTERN_PLACEHOLDER = "[REDACTED]"


def _env_placeholder(name: str) -> str:
    return f"[REDACTED:{name}]"


class Redactor(NamedTuple):
    """Literal secrets (with their placeholders) and patterns to replace in recorded text."""

    env_names: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    literals: tuple[tuple[bytes, bytes], ...] = ()
    compiled: tuple[re.Pattern[bytes], ...] = ()

    @classmethod
    def build(cls, env_names: tuple[str, ...], patterns: tuple[str, ...], environ: Mapping[str, str]) -> Redactor:
        """Rules from variable names (their values read from environ) and regular expressions.

        Raises UsageError for a pattern that does not compile.
        """
        literals: list[tuple[bytes, bytes]] = []
        for name in env_names:
            value = environ.get(name, "")
            if value:
                placeholder = _env_placeholder(name).encode()
                # A secret may appear raw or JSON-escaped in a line; redact every spelling of it.
                spellings = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
                literals.extend((spelling.encode(), placeholder) for spelling in sorted(spellings, key=len, reverse=True))
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(re.compile(pattern.encode()))
            except re.error as exc:
                raise UsageError(f"--redact {pattern!r} is not a valid regular expression: {exc}", "fix the pattern (Python `re` syntax)") from None
        return cls(tuple(env_names), tuple(patterns), tuple(literals), tuple(compiled))

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], environ: Mapping[str, str]) -> Redactor:
        """The rules a cassette was recorded with, with secret values from this environment."""
        rules = meta.get("redact") or {}
        return cls.build(tuple(rules.get("env") or ()), tuple(rules.get("patterns") or ()), environ)

    def __bool__(self) -> bool:
        return bool(self.literals or self.compiled)

    def apply(self, line: bytes) -> bytes:
        """The line with every secret replaced by its placeholder."""
        for secret, placeholder in self.literals:
            line = line.replace(secret, placeholder)
        for pattern in self.compiled:
            line = pattern.sub(PATTERN_PLACEHOLDER.encode(), line)
        return line

    def rules(self) -> dict[str, list[str]]:
        """What the cassette's `meta.redact` keeps: names and patterns, never values."""
        rules: dict[str, list[str]] = {}
        if self.env_names:
            rules["env"] = list(self.env_names)
        if self.patterns:
            rules["patterns"] = list(self.patterns)
        return rules
