"""mockmcp's own words, written once: record modes, places in a cassette, the names of JSON types.

MCP's vocabulary is `protocol`'s; these are the words mockmcp itself uses everywhere, in its
options and its messages (as vcrpy keeps its record modes apart from HTTP's facts). It imports only
the standard library and `mockmcp.errors`: it is on the launch path (docs/architecture.md).
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

__all__ = ["Place", "RecordMode", "json_type", "render_place", "timing_factor", "yaml_type"]

# --- places and type names -------------------------------------------------------------------------

Place = tuple[str | int, ...]  # where a value sits in a cassette: ("interactions", 3, "response")
_PLAIN = re.compile(r"[A-Za-z0-9_\-/$]+")


def render_place(place: Sequence[Any]) -> str:
    """`("interactions", 3, "response")` -> `interactions[3].response`: a place as every message names it.

    The syntax is the one `--ignore` reads (see `matching.parse_path`): a key that is not plain is
    quoted (`_meta["io.modelcontextprotocol/protocolVersion"]`), and a (key, value) pair names a
    list item by its identity (`tools[name="read_file"]`).
    """
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


def json_type(value: Any, article: bool = False) -> str:
    """JSON's name of value's type: null, boolean, integer, number, string, array or object.

    With `article`, as a message says it: `an array`, `a string`, `null`. Integers are told apart
    from other numbers because JSON-RPC ids and MCP error codes must be integers.
    """
    name = _TYPES[type(value)][0] if type(value) in _TYPES else type(value).__name__
    if not article or name == "null":
        return name
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def yaml_type(value: Any) -> str:
    """What value is, in the words of a cassette's YAML: `a mapping`, `a list`, `a string`, `nothing`..."""
    return _TYPES[type(value)][1] if type(value) in _TYPES else type(value).__name__


# --- record modes ----------------------------------------------------------------------------------


class RecordMode(str, enum.Enum):
    """How a recording treats the cassette it would write (`mockmcp record --mode`, `--mockmcp-record`)."""

    ALL = "all"  # record afresh, replacing the cassette
    NEW = "new"  # keep the cassette, add the session whole unless the cassette already answers it
    ONCE = "once"  # record only when the cassette does not exist; otherwise replay it
    NONE = "none"  # never record: replay the cassette, a missing one is an error (the plugin's default)

    def records(self, exists: bool) -> bool:
        """Whether this mode records, given whether the cassette exists already."""
        return self is not RecordMode.NONE and (self is not RecordMode.ONCE or not exists)

    @classmethod
    def choices(cls, allow_none: bool = False) -> tuple[str, ...]:
        """The modes' values; `none` only with allow_none (`mockmcp record` is for recording: see `parse`)."""
        return tuple(mode.value for mode in cls if allow_none or mode is not RecordMode.NONE)

    @classmethod
    def parse(cls, text: str, allow_none: bool = False) -> RecordMode:
        """The mode named text; raises UsageError listing the valid ones.

        `none` is accepted only with allow_none (the pytest plugin, where replaying is the point);
        `mockmcp record` offers `choices()`, which leave it out, so click refuses it at the boundary.
        """
        valid = ", ".join(cls.choices(allow_none))
        if text == RecordMode.NONE.value and not allow_none:
            raise UsageError(
                "record mode 'none' never records", f"to replay, run `mockmcp replay CASSETTE`; to record, use {valid}"
            )
        if text not in cls.choices(allow_none):
            raise UsageError(f"unknown record mode {text!r}", f"use one of: {valid}")
        return cls(text)


def timing_factor(value: str | float, argument: str | None = None) -> float:
    """Replay's timing: none (answer at once), recorded (as recorded), or a factor scaling the recorded timing.

    Returns the factor; raises UsageError for any other value, in terms of `--timing`, or of the Python
    `argument` when one is named.
    """
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
