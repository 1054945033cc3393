"""Keeping secrets and the recording machine's values out of cassettes: each replaced in every line. Pure.

A secret becomes a visible placeholder for good (`[REDACTED:NAME]`); a substitution (the project's folder, a
variable's value) becomes `${NAME}`, put back as the replaying machine's value, so a cassette recorded in
`/home/ann/app` matches a host in `/ci/build/app`. The recorder applies both to each line before it touches the
disk, replay to what comes in before matching; one `Redactor` carries both, so no shell does one and forgets
the other. Values are replaced as text, the longest first; the cassette keeps rules and names, never values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mockmcp._wire.jsonrpc import encode, map_strings, parse
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.words import REDACTED, placeholder, substitution_name
from mockmcp.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["Redactor", "Substitutions"]


class Substitutions(NamedTuple):
    """Values and their placeholders, the longest value first; `names` in the order given."""

    names: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()  # (value, placeholder)

    @classmethod
    def build(cls, given: Iterable[tuple[str, str | None]], environ: Mapping[str, str], option: str) -> Substitutions:
        """From (name, value) pairs, a value None the environment variable's. Raises UsageError (naming `option`)
        for a bad or repeated name, a variable not set, or a value too short to stand for anything."""
        values: dict[str, str] = {}
        for name, value in given:
            substitution_name(name, option)
            if name in values:
                raise UsageError(f"{option} {name} is given twice", f"give {name} once")
            if value is None:
                value = environ.get(name)
                if not value:
                    problem = f"{option} {name}: the environment variable {name} is not set, so its value is unknown"
                    raise UsageError(problem, f"give the value: {option} {name}=VALUE, or set {name}")
            if len(value.strip()) < 2:
                problem = f"{option} {name}={value!r}: a value this short would be found in text that has nothing"
                fix = f"give the whole value {name} stands for, e.g. an absolute path"
                raise UsageError(problem + " to do with it", fix)
            values[name] = value
        pairs = sorted(((value, placeholder(name)) for name, value in values.items()), key=lambda p: -len(p[0]))
        return cls(tuple(values), tuple(pairs))

    @classmethod
    def for_replay(
        cls, names: Iterable[str], given: Iterable[tuple[str, str | None]], environ: Mapping[str, str], where: str
    ) -> Substitutions:
        """The live values of the names a cassette's `meta.substitute` lists, each as given, else its environment
        variable's (others given are left out). Raises UsageError naming `where` for one unknown here."""
        offered = dict(given)
        wanted = []
        for name in names:
            if offered.get(name) is None and not environ.get(name):
                raise UsageError(
                    f"{where} was recorded with `${{{name}}}` standing for a value of the machine that recorded it "
                    f"(meta.substitute), and the value of {name} on this machine is not given",
                    f"give it: mockmcp replay --substitute {name}=VALUE (the plugin: substitute={{{name!r}: ...}}), "
                    f"or set the environment variable {name}",
                )
            wanted.append((name, offered.get(name)))
        return cls.build(wanted, environ, "--substitute")

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def text(self, text: str) -> str:
        """The text with each value replaced by its placeholder."""
        for value, mark in self.pairs:
            text = text.replace(value, mark)
        return text

    def expand_text(self, text: str) -> str:
        """The text with each placeholder replaced by its value."""
        if "${" not in text:
            return text
        for value, mark in self.pairs:
            text = text.replace(mark, value)
        return text

    def expand(self, message: Any) -> Any:
        """A recorded message (or a part of one) with its placeholders expanded: values and keys, never its id."""
        if not self:
            return message
        if isinstance(message, dict):
            return {k: v if k == "id" else map_strings(v, self.expand_text, keys=True) for k, v in message.items()}
        return map_strings(message, self.expand_text, keys=True)


PATTERN_PLACEHOLDER = REDACTED


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
        for secret, mark in self.secrets:
            text = text.replace(secret, mark)
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
