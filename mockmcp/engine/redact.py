"""Keeping secrets and the recording machine's values out of cassettes: each replaced in every line. Pure.

A secret becomes a visible placeholder for good (`[REDACTED:NAME]`); a substitution (the project's folder, a
variable's value) becomes `${NAME}`, put back as the replaying machine's value, so a cassette recorded in
`/home/ann/app` matches a host in `/ci/build/app`. The recorder applies both to each line before it touches the
disk, replay to what comes in before matching; one `Redactor` carries both, so no shell does one and forgets
the other. Values are replaced as text, the longest first; the cassette keeps rules and names, never values.
"""

from __future__ import annotations

from collections.abc import Mapping

from mockmcp._wire.credentials import secret_variable
from mockmcp._wire.jsonrpc import encode, map_strings, parse
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.patterns import SYNTAX, WORK, Pattern, compile_pattern
from mockmcp._wire.words import REDACTED, placeholder, substitution_name
from mockmcp.errors import CassetteError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from mockmcp.cassette.model import Cassette

__all__ = ["Redactor", "Substitutions", "given_as", "mentioned"]


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
        cls,
        recorded: Cassette,
        given: Iterable[tuple[str, str | None]],
        environ: Mapping[str, str],
        where: str,
        asker: str = "mockmcp replay --substitute",
    ) -> Substitutions:
        """The live values of the names a cassette's `meta.substitute` lists: only names the user gave (a value
        None: the environment variable's), since a cassette arrives in pull requests and could otherwise put any
        variable of this machine (a token) in its answers; a name no recorded message writes needs no value.
        Raises CassetteError at `where` for a name used but not given, its fix in terms of `asker` (the option
        that gives values: `mockmcp verify --substitute`, `substitute=`)."""
        offered = dict(given)
        names = list(recorded.meta.get("substitute") or ())
        used = mentioned(recorded, [name for name in names if name not in offered])
        wanted = []
        for index, name in enumerate(names):
            if name in offered:
                wanted.append((name, offered[name]))
            elif name in used:
                raise CassetteError(
                    f"the recording writes `${{{name}}}` for a value of the machine that replays it, and {name} is "
                    "not given: replay fills in only the values its user names (a cassette could otherwise put any "
                    "environment variable of this machine, a token, in what the host reads)",
                    path=where,
                    place=f"meta.substitute[{index}]",
                    fix=(
                        f"{name} reads like a credential's name: its value would reach the host, its model and its "
                        f"logs; take it out of meta.substitute, or if that is meant, give it: {given_as(asker, name)}"
                        if secret_variable(name)
                        else f"if {name} is meant, give it: {given_as(asker, name)}"
                    ),
                )
        return cls.build(wanted, environ, asker.rpartition(" ")[2].rstrip("="))

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


def given_as(asker: str, name: str) -> str:
    """How a user gives the value of `${NAME}` through `asker`: an option (`mockmcp replay --substitute`) or a
    keyword (`substitute=`)."""
    if asker.endswith("="):
        return f"{asker}{{{name!r}: VALUE}} (a value None: the environment variable {name}'s)"
    return (
        f"{asker} {name}=VALUE, or {asker} {name} for the environment variable {name}'s value (the pytest plugin "
        f"and mockmcp.transport: substitute={{{name!r}: VALUE}})"
    )


def mentioned(recorded: Cassette, names: Iterable[str]) -> set[str]:
    """The names whose placeholder `${NAME}` the recording writes: in its messages both ways, raw lines, match
    rules or `meta.server`."""
    marks = {placeholder(name): name for name in names}
    if not marks:
        return set()
    found: set[str] = set()
    stack: list[Any] = [recorded.meta.get("server")]
    for interaction in recorded.interactions:
        stack += (interaction.message, interaction.response, interaction.raw_response, interaction.match)
        stack += [part for item in interaction.server for part in item]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if "${" in value:
                found.update(name for mark, name in marks.items() if mark in value)
        elif isinstance(value, dict):
            stack += value
            stack += value.values()
        elif isinstance(value, list | tuple):
            stack += value
    return found


PATTERN_PLACEHOLDER = REDACTED


class Redactor(NamedTuple):
    """Secret values (with their placeholders) and patterns to replace in recorded text."""

    env_names: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    secrets: tuple[tuple[str, str], ...] = ()  # (value, placeholder)
    compiled: tuple[Pattern, ...] = ()
    substitutions: Substitutions = Substitutions()
    work: int = 0  # the patterns' bound of work over one message (`Pattern.sub`); 0: none, the user's own patterns

    @classmethod
    def build(cls, env_names: tuple[str, ...], patterns: tuple[str, ...], environ: Mapping[str, str]) -> Redactor:
        """Rules from variable names (their values read from environ) and regular expressions; raises
        UsageError for a pattern that does not compile."""
        secrets = tuple((environ[name], f"[REDACTED:{name}]") for name in env_names if environ.get(name))
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(compile_pattern(pattern))  # RE2: linear in the text (see `_wire.patterns`)
            except ValueError as exc:
                problem = f"--redact {pattern!r} is not a regular expression mockmcp takes: {exc}"
                raise UsageError(problem, f"fix the pattern ({SYNTAX})") from None
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
        cls,
        recorded: Cassette,
        environ: Mapping[str, str],
        given: Iterable[tuple[str, str | None]],
        where: str,
        asker: str = "mockmcp replay --substitute",
    ) -> Redactor | None:
        """What a replay of a cassette applies to what the host sends: its redaction rules and its substitutions
        with the live values (`Substitutions.for_replay`, which raises CassetteError for a name not given); None
        when it has neither."""
        meta = recorded.meta
        if not meta.get("redact") and not meta.get("substitute"):
            return None
        substitutions = Substitutions.for_replay(recorded, given, environ, where, asker)
        return cls.from_meta(meta, environ)._replace(substitutions=substitutions)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], environ: Mapping[str, str]) -> Redactor:
        """The rules a cassette was recorded with, with secret values from this environment; its patterns, which
        come with the cassette, bounded in their work (`WORK`)."""
        rules = meta.get("redact") or {}
        built = cls.build(tuple(rules.get("env") or ()), tuple(rules.get("patterns") or ()), environ)
        return built._replace(work=WORK)

    def __bool__(self) -> bool:
        return bool(self.secrets or self.compiled or self.substitutions)

    def text(self, text: str, budget: list[int] | None = None) -> str:
        """The text with every secret replaced by its placeholder, then every substituted value by its own
        (secrets first: a secret must never survive inside a value that is expanded back), then every pattern's
        match; `budget`: the patterns' work left for the message it is part of (`Pattern.sub`)."""
        text = self._secrets(text)
        text = self.substitutions.text(text)
        for pattern in self.compiled:
            text = pattern.sub(PATTERN_PLACEHOLDER, text, budget)
        return text

    def _secrets(self, text: str) -> str:
        for secret, mark in self.secrets:
            text = text.replace(secret, mark)
        return text

    def message(self, message: Any, ids: bool = True) -> Any:
        """A parsed message (or batch) with its strings redacted value by value, so a pattern never breaks the
        JSON. A string id loses only secret values (patterns could make two ids one); with `ids=False` it stays
        whole, for a reply that carries the host's id. The patterns share one bound of work over it all (`work`)."""
        if not self:
            return message
        budget = [self.work] if self.work else None
        if isinstance(message, list):
            return [self._message(item, ids, budget) for item in message]
        return self._message(message, ids, budget)

    def _message(self, message: Any, ids: bool, budget: list[int] | None) -> Any:
        if isinstance(message, dict):
            return {key: self._field(key, value, ids, budget) for key, value in message.items()}
        return map_strings(message, lambda text: self.text(text, budget), keys=True)

    def _field(self, key: str, value: Any, ids: bool, budget: list[int] | None) -> Any:
        if key == "jsonrpc":
            return value
        if key == "id":
            return self._secrets(value) if ids and isinstance(value, str) else value
        return map_strings(value, lambda text: self.text(text, budget), keys=True)

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
