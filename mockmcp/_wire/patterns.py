"""Regular expressions that come with a cassette (`match:` rules' `regex`, `meta.redact.patterns`, `--redact`),
compiled by RE2: a cassette arrives in pull requests, and Python's `re` can backtrack for ages on a pattern such as
`(\\w+\\s?)+ in Paris`, uninterruptibly, stalling replay (and every session of `replay --http`) behind it.

RE2 (`google-re2`) matches in time linear in the text, and refuses a pattern too large for its memory bound when
it compiles it. Its worst case, the text's length times the pattern's size, is bounded (`WORK`): a match rule
refuses a longer text (a located miss), replay's redaction replaces a text past the message's bound whole
(`--redact`, the user's own, is not bounded). The price is its syntax (`SYNTAX`). RE2 is imported only when a
pattern is compiled.
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


# The work one pattern may do over one string: characters times the compiled pattern's instructions, RE2's worst
# case (`(.*a){1000}`, 11,004 instructions, takes 88 s over a megabyte). At this bound the worst is about a second;
# `(\w+\s?)+ in Paris` (24 instructions) still reads two million characters.
WORK = 50_000_000


class Pattern:
    """A pattern RE2 compiled, with `re`'s `pattern`, `fullmatch` and `sub`; `size`, its instructions, and
    `limit`, the longest string it is run over alone (`WORK`). A lone surrogate (a cut emoji), which RE2's UTF-8
    cannot hold, is read as U+FFFD, as the recorder stores it (`jsonrpc.without_lone_surrogates`)."""

    __slots__ = ("compiled", "limit", "pattern", "size")

    def __init__(self, compiled: Any, pattern: str) -> None:
        self.compiled, self.pattern = compiled, pattern
        self.size = max(1, compiled.programsize)
        self.limit = WORK // self.size

    def fullmatch(self, text: str) -> Any:
        """The match of the whole text, or None (also for a text longer than `limit`: the caller sees to it first)."""
        return None if len(text) > self.limit else _utf8(self.compiled.fullmatch, text)

    def sub(self, replacement: str, text: str, budget: list[int] | None = None) -> str:
        """The text with every match replaced. `budget` holds the work left for the message the text is part of
        (None: no bound, for the user's own patterns), and this text's is taken from it; a text it cannot pay
        for is replaced whole (a secret in it could not be looked for, so none of it is kept)."""
        if budget is not None:
            cost = len(text) * self.size
            if cost > budget[0]:
                return replacement
            budget[0] -= cost
        return str(_utf8(lambda text: self.compiled.sub(replacement, text), text))


def _utf8(run: Any, text: str) -> Any:
    try:
        return run(text)
    except UnicodeEncodeError:
        return run(without_lone_surrogates(text))


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
