"""mockmcp's own words, written once: record modes, places in a cassette and paths in params, the names of
JSON types, placeholders. MCP's vocabulary is `protocol`'s. On the launch path.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence

from mockmcp.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "JSON_TYPES",
    "NAME_PATTERN",
    "Path",
    "Place",
    "REDACTED",
    "RecordMode",
    "STUB_ANSWER",
    "json_type",
    "parse_path",
    "parse_substitution",
    "placeholder",
    "render_place",
    "substitution_name",
    "timing_factor",
    "yaml_type",
]

# --- places and type names -------------------------------------------------------------------------

Place = tuple[str | int, ...]  # where a value sits in a cassette: ("interactions", 3, "response")
_PLAIN = re.compile(r"[A-Za-z0-9_\-/$]+")


def render_place(place: Sequence[Any]) -> str:
    """`("interactions", 3, "response")` -> `interactions[3].response`: a place as every message names it, in the
    syntax `--ignore` reads (`parse_path`): a key that is not plain quoted (`_meta["io.example/key"]`), a (key,
    value) pair naming a list item by its identity (`tools[name="read_file"]`)."""
    out = ""
    for part in place:
        if isinstance(part, tuple):
            out += f"[{part[0]}={json.dumps(part[1], ensure_ascii=False)}]"
        elif isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN.fullmatch(str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += "[" + json.dumps(str(part), ensure_ascii=False) + "]"
    return out


Path = tuple[str, ...]  # a params path as `parse_path` reads it: ("arguments", "items", "*", "id")
_SEGMENT = re.compile(r'\["((?:[^"\\]|\\.)*)"\]|\[(\d+|\*)\]|([^.\[\]]+)')


def parse_path(text: str) -> Path:
    """Split a params path (`--ignore`'s, a match rule's) into segments; raises UsageError on a malformed one.
    Dotted, with a glob per segment, `[N]` or `[*]` for list items and `["..."]` for keys that hold dots:
    `arguments.when`, `items[*].id`, `_meta["io.example/key"]`."""
    segments: list[str] = []
    pos = 0
    while pos < len(text):
        found = _SEGMENT.match(text, pos)
        if found is None:
            raise UsageError(
                f"cannot read the params path {text!r} at character {pos + 1}",
                'write segments separated by dots, e.g. `arguments.when` or `_meta["io.example/key"]`',
            )
        quoted, index, plain = found.groups()
        segments.append(json.loads(f'"{quoted}"') if quoted is not None else index or plain)
        pos = found.end()
        if pos < len(text) and text[pos] == ".":
            pos += 1
    if not segments:
        raise UsageError("empty params path", "name a params path such as `arguments.when`")
    return tuple(segments)


# Python type -> (JSON's name, the cassette's YAML word with its article).
_TYPES: dict[type, tuple[str, str]] = {
    type(None): ("null", "nothing"),
    bool: ("boolean", "a boolean"),
    int: ("integer", "a number"),
    float: ("number", "a number"),
    str: ("string", "a string"),
    list: ("array", "a list"),
    dict: ("object", "a mapping"),
}


JSON_TYPES = tuple(name for name, _word in _TYPES.values())  # null, boolean, integer, number, ...


def json_type(value: Any, article: bool = False) -> str:
    """JSON's name of value's type (null, boolean, integer, number, string, array, object); with `article`, as a
    message says it: `an array`, `null`. Integers are told apart, as JSON-RPC ids and MCP codes must be ones."""
    name = _TYPES[type(value)][0] if type(value) in _TYPES else type(value).__name__
    if not article or name == "null":
        return name
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def yaml_type(value: Any) -> str:
    """What value is, in the words of a cassette's YAML: `a mapping`, `a list`, `a string`, `nothing`..."""
    return _TYPES[type(value)][1] if type(value) in _TYPES else type(value).__name__


# --- placeholders: values of the recording machine, written as ${NAME} -------------------------------

REDACTED = "[REDACTED]"  # what a secret becomes for good (a redact pattern's match, a credential in meta.server)
# The text of an answer `mockmcp stub` wrote for a person to fill in (lint names each one it finds).
STUB_ANSWER = "mockmcp stub: a placeholder; write what this tool answers"

NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"  # a substitution's name
_NAME = re.compile(NAME_PATTERN)


def placeholder(name: str) -> str:
    """`${NAME}`: how a cassette writes the value a substitution named NAME stands for."""
    return "${" + name + "}"


def substitution_name(name: str, option: str = "--substitute") -> str:
    """name, checked: letters, digits and `_`, not starting with a digit; raises UsageError."""
    if not _NAME.fullmatch(name):
        raise UsageError(
            f"{option} {name!r}: a substitution's name is letters, digits and `_`, not starting with a digit",
            f"write e.g. `{option} PROJECT=/path/to/project`",
        )
    return name


def parse_substitution(text: str) -> tuple[str, str | None]:
    """`--substitute NAME=VALUE` (the value) or `NAME` (the environment variable's): (name, value or None).

    Raises UsageError for a bad name or an empty value.
    """
    name, equals, value = text.partition("=")
    substitution_name(name)
    if equals and not value:
        raise UsageError(
            f"--substitute {text!r}: an empty value would be found everywhere",
            f"give the value (`{name}=/path`), or only the name to take the environment variable {name}'s",
        )
    return name, value if equals else None


# --- record modes ----------------------------------------------------------------------------------


class RecordMode(str, enum.Enum):
    """How a recording treats the cassette it would write (`--record-mode`, the plugin's `--mockmcp-record`).

    A mode's value is what journals, `wrap`'s sidecars and reports store (unchanged since 0.x); `word` is the
    command line's, pytest-recording's name wherever the meaning is the same (docs/cli.md, "Record modes").
    """

    ALL = "all"  # rewrite: record afresh, replacing the cassette
    NEW = "new"  # new_episodes: keep the cassette, add the session whole unless the cassette already answers it
    ONCE = "once"  # record only when the cassette does not exist; otherwise replay it
    NONE = "none"  # never record: replay the cassette, a missing one is an error (the plugin's default)

    @property
    def word(self) -> str:
        """The command line's name of this mode."""
        return _WORDS[self]

    def records(self, exists: bool, later: bool = False) -> bool:
        """Whether this mode records, given whether the cassette exists already, and whether this run saved it
        (`later`: a later start of its server by the same host, which records under `once` too)."""
        return self is not RecordMode.NONE and (later or self is not RecordMode.ONCE or not exists)

    @classmethod
    def words(cls, allow_none: bool = False) -> tuple[str, ...]:
        """The command line's names, in the order help lists them; `none` only with allow_none."""
        return tuple(word for word, mode in _BY_WORD.items() if allow_none or mode is not RecordMode.NONE)

    @classmethod
    def parse(cls, text: str, allow_none: bool = False, old: bool = True) -> RecordMode:
        """The mode named text: a word, or (with old) mockmcp 0.x's spelling (`deprecated`); `none` only with
        allow_none (the plugin and `exec`, where replaying is the point). Raises UsageError listing the valid words."""
        valid = ", ".join(cls.words(allow_none))
        mode = _BY_WORD.get(text) or (_OLD.get(text) if old else None)
        if mode is RecordMode.NONE and not allow_none:
            raise UsageError(
                "record mode 'none' never records", f"to replay, run `mockmcp replay CASSETTE`; to record, use {valid}"
            )
        if mode is None:
            raise UsageError(f"unknown record mode {text!r}", f"use one of: {valid}")
        return mode

    @classmethod
    def deprecated(cls, text: str) -> str | None:
        """The one-line note for a mode written as mockmcp 0.x spelled it (None for a word of today)."""
        mode = None if text in _BY_WORD else _OLD.get(text)
        if mode is None:
            return None
        said = {RecordMode.ALL: " (which pytest-recording's all means here too: every request recorded again)"}
        return f"record mode {text} is deprecated: write {mode.word}{said.get(mode, '')}"


_BY_WORD = {
    "none": RecordMode.NONE,
    "once": RecordMode.ONCE,
    "new_episodes": RecordMode.NEW,
    "rewrite": RecordMode.ALL,
}
_WORDS = {mode: word for word, mode in _BY_WORD.items()}
_OLD = {"new": RecordMode.NEW, "all": RecordMode.ALL}  # mockmcp 0.x's words (and the stored values)


def timing_factor(value: str | float, argument: str | None = None) -> float:
    """Replay's timing as a factor of the recorded one: none (0, at once), recorded (1) or a factor; raises
    UsageError for any other value, in terms of `--timing`, or of the Python `argument` when one is named."""
    named = {"none": 0.0, "recorded": 1.0}
    try:
        factor = named[value] if isinstance(value, str) and value in named else float(value)
    except (TypeError, ValueError):
        factor = -1.0
    if not factor >= 0 or factor == float("inf"):
        said = f"{argument}={value!r}: " if argument else ""
        fix = f"{argument}='recorded', or {argument}=0.5" if argument else "`--timing recorded`, or `--timing 0.5`"
        raise UsageError(f"{said}{value!r} is neither none, recorded nor a factor", f"write e.g. {fix} (twice as fast)")
    return factor
