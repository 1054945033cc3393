"""Keeping secrets out of cassettes: each secret replaced with a visible placeholder, in every line.

The recorder redacts each line before it touches the disk, and replay redacts what comes in before matching,
so a host sending the real secret still matches. The cassette keeps the rules, never values. A Redactor
carries the substitutions too, so whatever redacts also substitutes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mockmcp._wire.jsonrpc import encode, map_strings, parse
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp.engine.substitute import Substitutions
from mockmcp.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["Redactor"]

PATTERN_PLACEHOLDER = "[REDACTED]"


class Redactor(NamedTuple):
    """Secret values (with their placeholders) and patterns to replace in recorded text."""

    env_names: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    secrets: tuple[tuple[str, str], ...] = ()  # (value, placeholder)
    compiled: tuple[re.Pattern[str], ...] = ()
    substitutions: Substitutions = Substitutions()

    @classmethod
    def build(cls, env_names: tuple[str, ...], patterns: tuple[str, ...], environ: Mapping[str, str]) -> Redactor:
        """Rules from variable names (their values read from environ) and regular expressions; raises
        UsageError for a pattern that does not compile."""
        secrets = tuple((environ[name], f"[REDACTED:{name}]") for name in env_names if environ.get(name))
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                problem = f"--redact {pattern!r} is not a valid regular expression: {exc}"
                raise UsageError(problem, "fix the pattern (Python `re` syntax)") from None
        return cls(tuple(env_names), tuple(patterns), secrets, tuple(compiled))

    @classmethod
    def for_recording(
        cls,
        env_names: tuple[str, ...],
        patterns: tuple[str, ...],
        environ: Mapping[str, str],
        option: str = "--redact-env",
        substitute: Iterable[tuple[str, str | None]] = (),
        substitute_option: str = "--substitute",
    ) -> Redactor:
        """`build`, for a recording: a variable to redact that is not set is refused (UsageError naming `option`)
        before anything is recorded; `substitute` as `Substitutions.build` takes it."""
        unset = [name for name in env_names if not environ.get(name)]
        if unset:
            raise UsageError(
                f"{option} {', '.join(unset)}: not set in the recorder's environment, so that secret could not be "
                "kept out of the cassette",
                "set it where the recording runs (the MCP SDK's stdio_client passes a server only a few variables: "
                f"name it in StdioServerParameters(env=...)), or leave out {option} {unset[0]}",
            )
        substitutions = Substitutions.build(substitute, environ, substitute_option)
        return cls.build(env_names, patterns, environ)._replace(substitutions=substitutions)

    @classmethod
    def for_replay(
        cls, meta: Mapping[str, Any], environ: Mapping[str, str], given: Iterable[tuple[str, str | None]], where: str
    ) -> Redactor | None:
        """What a replay of a cassette applies to what the host sends: its redaction rules and its substitutions
        with the live values (`Substitutions.for_replay`); None when it has neither."""
        names = meta.get("substitute") or ()
        if not meta.get("redact") and not names:
            return None
        substitutions = Substitutions.for_replay(names, given, environ, where)
        return cls.from_meta(meta, environ)._replace(substitutions=substitutions)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], environ: Mapping[str, str]) -> Redactor:
        """The rules a cassette was recorded with, with secret values from this environment."""
        rules = meta.get("redact") or {}
        return cls.build(tuple(rules.get("env") or ()), tuple(rules.get("patterns") or ()), environ)

    def __bool__(self) -> bool:
        return bool(self.secrets or self.compiled or self.substitutions)

    def text(self, text: str) -> str:
        """The text with every secret replaced by its placeholder, then every substituted value by its own
        (secrets first: a secret must never survive inside a value that is expanded back)."""
        text = self._secrets(text)
        text = self.substitutions.text(text)
        for pattern in self.compiled:
            text = pattern.sub(PATTERN_PLACEHOLDER, text)
        return text

    def _secrets(self, text: str) -> str:
        for secret, placeholder in self.secrets:
            text = text.replace(secret, placeholder)
        return text

    def message(self, message: Any, ids: bool = True) -> Any:
        """A parsed message (or batch) with its strings redacted value by value, so a pattern never breaks the
        JSON. A string id loses only secret values (patterns could make two ids one); with `ids=False` it stays
        whole, for a reply that carries the host's id."""
        if not self:
            return message
        if isinstance(message, list):
            return [self.message(item, ids) for item in message]
        if isinstance(message, dict):
            return {key: self._field(key, value, ids) for key, value in message.items()}
        return map_strings(message, self.text, keys=True)

    def _field(self, key: str, value: Any, ids: bool) -> Any:
        if key == "jsonrpc":
            return value
        if key == "id":
            return self._secrets(value) if ids and isinstance(value, str) else value
        return map_strings(value, self.text, keys=True)

    def line(self, line: bytes) -> bytes:
        """A wire line, redacted: a JSON one value by value (re-encoded compactly), any other as text."""
        if not self:
            return line
        try:
            parsed = parse(line)
        except ValueError:
            return self.text(line.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        return encode(self.message(parsed))[:-1]

    def rules(self) -> dict[str, list[str]]:
        """What the cassette's `meta.redact` keeps: names and patterns, never values."""
        rules: dict[str, list[str]] = {}
        if self.env_names:
            rules["env"] = list(self.env_names)
        if self.patterns:
            rules["patterns"] = list(self.patterns)
        return rules
