"""Where each value sits in a host's config: JSON with comments, YAML and TOML read with spans. Pure.

`mockmcp wrap` replaces only spans `(start, end)` of the text, so every other byte (comments, order,
quoting) stays as a person wrote it: each reader returns the data and a map from a value's place to its span.
A config may come with a repository, so it is read as untrusted text: nesting past `DEEPEST` levels (the
readers recurse) and YAML aliases expanding past `MOST_VALUES` values or into themselves are refused with
their line, before anything recurses or expands.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from mockmcp._wire.words import Place
from mockmcp.errors import ConfigError

__all__ = ["DEEPEST", "MOST_VALUES", "Span", "read_json", "read_toml", "read_yaml"]

DEEPEST = 100  # levels of nesting a config may have
MOST_VALUES = 100_000  # values a YAML config may hold, its aliases expanded

Span = tuple[int, int]
Spans = dict[Place, Span]


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_WORDS = {"true": True, "false": False, "null": None}
_BLANK = re.compile(r"(?:[ \t\r\n\ufeff]|//[^\n]*|/\*.*?\*/)*", re.S)  # whitespace, comments, a byte-order mark


class _Json:
    def __init__(self, text: str, path: str | None) -> None:
        self.text, self.path, self.pos = text, path, 0
        self.spans: Spans = {}

    def fail(self, problem: str) -> ConfigError:
        return ConfigError(problem, path=self.path, line=_line(self.text, self.pos), fix="fix the file's syntax")

    def skip(self) -> None:
        self.pos = _BLANK.match(self.text, self.pos).end()  # type: ignore[union-attr]
        if self.text.startswith("/*", self.pos):
            raise self.fail("a /* comment never ends")

    def value(self, place: Place) -> Any:
        self.skip()
        start, text = self.pos, self.text
        if start >= len(text):
            raise self.fail("the text ends where a value should be")
        char = text[start]
        word = next((w for w in _WORDS if text.startswith(w, start)), None)
        if char in "{[":
            if len(place) >= DEEPEST:
                raise _too_deep(self.path, _line(text, start))
            value: Any = self.mapping(place) if char == "{" else self.sequence(place)
        elif char == '"':
            value = self.string()
        elif word is not None:
            value, self.pos = _WORDS[word], start + len(word)
        elif found := _NUMBER.match(text, start):
            value, self.pos = json.loads(found.group(0)), found.end()
        else:
            raise self.fail(f"unexpected {char!r} where a value should be")
        self.spans[place] = (start, self.pos)
        return value

    def string(self) -> str:
        found = _STRING.match(self.text, self.pos)
        if not found:
            raise self.fail("a string never ends")
        try:
            value: str = json.loads(found.group(0))
        except json.JSONDecodeError as exc:
            raise self.fail(f"a string JSON cannot read ({exc.msg})") from None
        self.pos = found.end()
        return value

    def more(self, close: str, first: bool) -> bool:
        """Whether an item follows the opening bracket (`first`) or the item before; a trailing comma allowed."""
        self.skip()
        if not first and self.text.startswith(",", self.pos):
            self.pos += 1
            self.skip()
        elif not first and not self.text.startswith(close, self.pos):
            raise self.fail(f"expected `,` or `{close}`")
        if self.text.startswith(close, self.pos):
            self.pos += 1
            return False
        return True

    def mapping(self, place: Place) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while self.more("}", not out):
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a key in double quotes")
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail(f"expected `:` after the key {key!r}")
            self.pos += 1
            out[key] = self.value((*place, key))
        return out

    def sequence(self, place: Place) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while self.more("]", not out):
            out.append(self.value((*place, len(out))))
        return out


def read_json(text: str, path: str | None = None) -> tuple[Any, Spans]:
    """JSON, or JSONC (comments, trailing commas): the data and each value's span. Raises ConfigError."""
    reader = _Json(text, path)
    data = reader.value(())
    reader.skip()
    if reader.pos < len(text):
        raise reader.fail("more text after the config's end")
    return data, reader.spans


def _too_deep(path: str | None, line: int) -> ConfigError:
    return ConfigError(
        f"its nesting depth passes {DEEPEST} levels here: no host's config nests so deep, and mockmcp reads none "
        "that does",
        path=path,
        line=line,
        fix="check that this is the host's MCP config; write its values with less nesting",
    )


def read_yaml(text: str, path: str | None = None) -> tuple[Any, Spans]:
    """YAML: the data and each value's span (PyYAML's marks). Raises ConfigError."""
    import yaml

    try:
        _yaml_bounded(text, path)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = f"YAML cannot read it: {getattr(exc, 'problem', None) or exc}"
        raise ConfigError(problem, path=path, line=line, fix="fix the file's syntax") from None
    spans: Spans = {}
    if root is not None:
        _yaml_spans(root, (), spans)
    return data, spans


def _yaml_bounded(text: str, path: str | None) -> None:
    """Refuse YAML nested deeper than DEEPEST, holding more than MOST_VALUES values with its aliases expanded, or
    a value that holds itself, from the parser's events alone (nothing recurses, nothing expands)."""
    import yaml

    sizes: dict[str, int] = {}  # each anchor's value: how many values it holds, expanded
    open_: list[list[Any]] = [[None, 0]]  # the stream, then each collection being read: [its anchor, its values]
    total = 0
    # libyaml's parser where there is one: PyYAML's own looks a kilobyte ahead at each `[` of a flow (0.8 s).
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        line = event.start_mark.line + 1
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(open_) > DEEPEST:
                raise _too_deep(path, line)
            open_.append([event.anchor, 1])
            total += 1
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = open_.pop()
            open_[-1][1] += size
            if anchor is not None:
                sizes[anchor] = size
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes and any(each[0] == event.anchor for each in open_):
                problem = f"the alias *{event.anchor} is inside the value it names: that value would hold itself"
                raise ConfigError(problem, path=path, line=line, fix=f"write a value where *{event.anchor} stands")
            size = sizes.get(event.anchor, 1)  # an unknown anchor: the composer says so, with its line
            open_[-1][1] += size
            total += size
        elif isinstance(event, yaml.ScalarEvent):
            open_[-1][1] += 1
            total += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        if total > MOST_VALUES:
            raise ConfigError(
                f"its aliases (`*name`) expand it to more than {MOST_VALUES:,} values: no host's config holds "
                "that many, and mockmcp expands no more (an alias bomb)",
                path=path,
                line=line,
                fix="write the values out without repeating aliases of aliases",
            )


def _yaml_spans(node: Any, place: Place, spans: Spans) -> int:
    """Note the span of node and of everything in it; returns where it ends."""
    import yaml

    end: int = node.end_mark.index
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            end = _yaml_spans(value, (*place, str(key.value)), spans)
        end = node.end_mark.index if node.flow_style else end
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            end = _yaml_spans(item, (*place, index), spans)
        end = node.end_mark.index if node.flow_style or not node.value else end
    spans[place] = (node.start_mark.index, end)
    return end


_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_DOTTED = rf"{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*"
_KEY_LINE = re.compile(rf"[ \t]*(?P<key>{_DOTTED})[ \t]*=[ \t]*")
# `[table]`; `[[array of tables]]` too, whose name (`[x`) is no table this reader knows
_HEADER = re.compile(r"[ \t]*\[(?P<name>[^\]\n]*)\]\]?[ \t]*(?:#.*)?$")


def _toml_keys(dotted: str) -> list[str]:
    """A dotted key (`mcp_servers."my server"`) as its parts; a key no config names when it is not one."""
    if not re.fullmatch(_DOTTED, dotted.strip()):
        return ["\0"]
    return [json.loads(key) if key[0] == '"' else key.strip("'") for key in re.findall(_KEY, dotted)]


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _toml_string_end(text: str, pos: int) -> int:
    """Where the TOML string starting at pos ends: after its closing quotes (a basic string's escapes skipped)."""
    quote = text[pos : pos + 3] if text.startswith(('"""', "'''"), pos) else text[pos]
    end = pos + len(quote)
    while end < len(text) and not text.startswith(quote, end) and (len(quote) == 3 or text[end] != "\n"):
        end += 2 if quote[0] == '"' and text[end] == "\\" else 1
    end += len(quote)
    while len(quote) == 3 and text.startswith(quote[0], end):  # up to two quotes may close a multi-line string
        end += 1
    return end


def _toml_value_end(text: str, pos: int) -> int:
    """Where the TOML value starting at pos ends: strings, nested arrays and inline tables, comments in arrays."""
    depth = 0
    while pos < len(text):
        char = text[pos]
        if char in "\"'":
            pos = _toml_string_end(text, pos)
        elif char == "#" and depth:
            pos = _line_end(text, pos)
        elif depth == 0 and char in "\n#,":
            break
        else:
            depth, pos = depth + (char in "[{") - (char in "]}"), pos + 1
        if depth == 0 and char in "]}\"'":
            return pos
    while pos > 0 and text[pos - 1] in " \t\r":  # a bare value (a number, true) ends before the blanks after it
        pos -= 1
    return pos


def _toml_load(text: str, path: str | None) -> Any:
    """tomllib's data, once brackets outside strings and comments show no nesting past DEEPEST (tomllib recurses)."""
    depth, pos = 0, 0
    while pos < len(text):
        char = text[pos]
        if char in "\"'":
            pos = _toml_string_end(text, pos)
        elif char == "#":
            pos = _line_end(text, pos)
        else:
            depth, pos = depth + (char in "[{") - (char in "]}"), pos + 1
            if depth > DEEPEST:
                raise _too_deep(path, _line(text, pos))
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the dependency is installed for Python 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        raise ConfigError(f"TOML cannot read it: {exc}", path=path, line=line, fix="fix the syntax") from None


def read_toml(text: str, path: str | None = None) -> tuple[Any, Spans]:
    """TOML: the data and the span of each `key = value` under a `[table]` header (not of arrays of tables, or
    dotted keys in another table). Raises ConfigError."""
    data = _toml_load(text, path)
    spans: Spans = {}
    table: list[str] = []
    pos = 0
    while pos < len(text):
        end = _line_end(text, pos)
        header, found = _HEADER.match(text, pos, end), _KEY_LINE.match(text, pos, end)
        if header:
            table = _toml_keys(header.group("name"))
        elif found:
            stop = _toml_value_end(text, found.end())
            spans[tuple(table + _toml_keys(found.group("key")))] = (found.end(), stop)
            end = _line_end(text, stop)
        pos = end + 1
    return data, spans
