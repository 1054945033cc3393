"""Regular expressions that come with a cassette (`match:` rules' `regex`, `meta.redact.patterns`, and
`--redact`, which writes the latter): compiled by RE2, which matches in time linear in the text.

A cassette arrives in pull requests. Python's `re` backtracks: one pattern such as `(\\w+\\s?)+ in Paris`
and a 50-character string keep it busy for ages, and it cannot be interrupted, not even from a thread, so
a replay would never answer and every session of `replay --http` would stall behind it. RE2 (the
`google-re2` package) has no such pattern: a match costs time in proportion to the text, and a pattern
too large for its memory bound is refused when it is compiled. Its worst case is the text's length times
the pattern's size, so that work is bounded (`WORK`): a match rule refuses a longer text (a located
miss), and replay's redaction, whose patterns run over every string of a message, replaces a text past
the message's bound whole (`--redact`, the user's own, is not bounded). The price is its syntax: Python's
without backreferences and lookaround, with ASCII classes. RE2 is imported only when a pattern is
compiled, so a cassette without one never pays for it.
"""

from __future__ import annotations

from mockmcp._wire.jsonrpc import without_lone_surrogates
from mockmcp.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Pattern", "SYNTAX", "WORK", "compile_pattern"]

SYNTAX = (
    "RE2 syntax: Python's `re` without backreferences (`\\1`) or lookaround (`(?=`, `(?<=`); `\\w`, `\\d`, "
    "`\\s` and `\\b` are ASCII (`\\pL` is any letter)"
)


# How much work one pattern may do over one string, counted as RE2 counts its worst case: the characters times the
# instructions of the compiled pattern. RE2 runs most patterns in one pass over the text whatever its length, but a
# pattern such as `(.*a){1000}` (11,004 instructions) makes it fall back to stepping every instruction for each
# character: 88 s over a megabyte. At this bound the worst case is about a second; the docs' `(\w+\s?)+ in Paris`
# (24 instructions) still reads two million characters.
WORK = 50_000_000


class Pattern:
    """A pattern RE2 compiled, with `re`'s `pattern`, `fullmatch` and `sub`; `size`, its instructions, and
    `limit`, the longest string it is run over alone (`WORK`). RE2 reads UTF-8, which a lone surrogate (a cut
    emoji) cannot be written in: such a string is read with U+FFFD in its place, as the recorder stores it and
    replay matches it (`jsonrpc.without_lone_surrogates`)."""

    __slots__ = ("compiled", "limit", "pattern", "size")

    def __init__(self, compiled: Any, pattern: str) -> None:
        self.compiled, self.pattern = compiled, pattern
        self.size = max(1, compiled.programsize)
        self.limit = WORK // self.size

    def fullmatch(self, text: str) -> Any:
        """The match of the whole text, or None; the caller sees to `limit` first (a longer text: None)."""
        if len(text) > self.limit:
            return None
        try:
            return self.compiled.fullmatch(text)
        except UnicodeEncodeError:
            return self.compiled.fullmatch(without_lone_surrogates(text))

    def sub(self, replacement: str, text: str, budget: list[int] | None = None) -> str:
        """The text with every match replaced. `budget` holds the work left for the message the text is part of
        (None: no bound, for the user's own patterns), and this text's is taken from it; a text it cannot pay
        for is replaced whole (a secret in it could not be looked for, so none of it is kept)."""
        if budget is not None:
            cost = len(text) * self.size
            if cost > budget[0]:
                return replacement
            budget[0] -= cost
        try:
            return str(self.compiled.sub(replacement, text))
        except UnicodeEncodeError:
            return str(self.compiled.sub(replacement, without_lone_surrogates(text)))


def compile_pattern(pattern: str) -> Pattern:
    """The pattern compiled by RE2. Raises ValueError saying why RE2 refuses it, UsageError when google-re2 is
    missing."""
    try:
        import re2  # deferred: only a cassette or an option with a pattern pays for it
    except ImportError:
        raise UsageError(
            f"the pattern {pattern!r} needs google-re2, which mockmcp depends on, and it is not installed",
            "install it where mockmcp runs: pip install google-re2",
        ) from None
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own line on stderr, which belongs to mockmcp's notes
    try:
        return Pattern(re2.compile(pattern, options), pattern)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        raise ValueError(reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)) from None
