"""Substitutions: values of the recording machine (the project's folder, a variable's value) written in a
cassette as placeholders, `${PROJECT}`, and put back as the values of the machine that replays. Pure.

Redaction's reversible sibling, carried by the same `Redactor`. Values are replaced as text, the longest
first, in every string and key but ids; the cassette keeps only the names (`meta.substitute`).
"""

from __future__ import annotations

from mockmcp._wire.jsonrpc import map_strings
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.words import placeholder, substitution_name
from mockmcp.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

__all__ = ["Substitutions"]


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
            values[name] = _checked(name, value, option)
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


def _checked(name: str, value: str, option: str) -> str:
    if len(value.strip()) < 2:
        problem = f"{option} {name}={value!r}: a value this short would be found in text that has nothing to do with it"
        raise UsageError(problem, f"give the whole value {name} stands for, e.g. an absolute path")
    return value
