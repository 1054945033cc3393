"""Where each value sits in a host's config file: JSON with comments, YAML and TOML read with spans. Pure.

`mockmcp wrap` must leave every byte it does not change as a person wrote it (comments, order,
quoting), so it never writes a parsed config out again: each reader returns the data and a map from
a value's place (keys and indexes) to its span `(start, end)` in the text, and only spans are replaced.
JSON/JSONC: a small reader (comments, trailing commas); YAML: PyYAML's composer marks; TOML: `tomllib`
for the values, a scan of `key = value` lines under `[table]` headers for the spans.

A config may come with a repository, so it is read as untrusted text: no value nests deeper than `DEEPEST`
levels (the readers recurse; no host's config comes near), and YAML's aliases may not make it hold more than
`MOST_VALUES` values once expanded (a billion fit in a few hundred bytes of `&a [*b, *b, ...]`), nor a value
hold itself. Each is refused with its line, before anything recurses or expands.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from mockmcp.errors import ConfigError

__all__ = ["DEEPEST", "MOST_VALUES", "Place", "Span", "read_json", "read_toml", "read_yaml"]

DEEPEST = 100  # levels of nesting a config may have
MOST_VALUES = 100_000  # values a YAML config may hold, its aliases expanded

Place = tuple[str | int, ...]
Span = tuple[int, int]
Spans = dict[Place, Span]


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORDS = {"true": True, "false": False, "null": None}


class _Json:
    def __init__(self, text: str, path: str | None) -> None:
        self.text, self.path, self.pos = text, path, 0
        self.spans: Spans = {}
        self.depth = 0

    def fail(self, problem: str, pos: int | None = None) -> ConfigError:
        where = self.pos if pos is None else pos
        return ConfigError(problem, path=self.path, line=_line(self.text, where), fix="fix the file's syntax")

    def skip(self) -> None:
        """Whitespace and comments (and a byte-order mark at the start)."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("a /* comment never ends")
                self.pos = end + 2
            else:
                return

    def value(self, place: Place) -> Any:
        self.skip()
        start, text = self.pos, self.text
        if start >= len(text):
            raise self.fail("the text ends where a value should be")
        char = text[start]
        if char in "{[":
            if len(place) >= DEEPEST:
                raise _too_deep(self.path, _line(text, start))
            value: Any = self.mapping(place) if char == "{" else self.sequence(place)
        elif char == '"':
            value = self.string()
        else:
            found = _NUMBER.match(text, start)
            word = next((w for w in _WORDS if text.startswith(w, start)), None)
            if word is not None:
                value, self.pos = _WORDS[word], start + len(word)
            elif found:
                value, self.pos = json.loads(found.group(0)), found.end()
            else:
                raise self.fail(f"unexpected {char!r} where a value should be")
        self.spans[place] = (start, self.pos)
        return value

    def string(self) -> str:
        text, end = self.text, self.pos + 1
        while True:
            end = text.find('"', end)
            if end < 0:
                raise self.fail("a string never ends")
            backslashes = len(text[:end]) - len(text[:end].rstrip("\\"))
            if backslashes % 2 == 0:
                break
            end += 1
        raw = text[self.pos : end + 1]
        try:
            value: str = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise self.fail(f"a string JSON cannot read ({exc.msg})") from None
        self.pos = end + 1
        return value

    def items(self, close: str) -> bool:
        """After `,` or the opening bracket: whether another item follows (a trailing comma allowed)."""
        self.skip()
        if self.text.startswith(close, self.pos):
            self.pos += 1
            return False
        return True

    def after_item(self, close: str) -> bool:
        self.skip()
        if self.text.startswith(",", self.pos):
            self.pos += 1
            return self.items(close)
        if self.text.startswith(close, self.pos):
            self.pos += 1
            return False
        raise self.fail(f"expected `,` or `{close}`")

    def mapping(self, place: Place) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        more = self.items("}")
        while more:
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a key in double quotes")
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail(f"expected `:` after the key {key!r}")
            self.pos += 1
            out[key] = self.value((*place, key))
            more = self.after_item("}")
        return out

    def sequence(self, place: Place) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        more = self.items("]")
        while more:
            out.append(self.value((*place, len(out))))
            more = self.after_item("]")
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
    open_: list[list[Any]] = []  # each collection being read: [its anchor, its values so far]
    total = 0
    # libyaml's parser where there is one: PyYAML's own looks a kilobyte ahead at each `[` of a flow (0.8 s).
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, size = open_.pop()
            if anchor is not None:
                sizes[anchor] = size
            if open_:
                open_[-1][1] += size
            continue
        line = event.start_mark.line + 1
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(open_) >= DEEPEST:
                raise _too_deep(path, line)
            open_.append([event.anchor, 1])
            size = 1
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes and any(each[0] == event.anchor for each in open_):
                problem = f"the alias *{event.anchor} is inside the value it names: that value would hold itself"
                raise ConfigError(problem, path=path, line=line, fix=f"write a value where *{event.anchor} stands")
            size = sizes.get(event.anchor, 1)  # an unknown anchor: the composer says so, with its line
            if open_:
                open_[-1][1] += size
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
            if open_:
                open_[-1][1] += 1
        else:
            continue
        total += size
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


_HEADER = re.compile(r"[ \t]*\[(?!\[)(?P<name>[^\]\n]*)\][ \t]*(?:#.*)?$")
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _toml_keys(text: str) -> list[str] | None:
    """A dotted key (`mcp_servers."my server"`) as its parts; None when it is not one this reader knows."""
    parts, pos, text = [], 0, text.strip()
    while pos < len(text):
        if text[pos] in "\"'":
            end = text.find(text[pos], pos + 1)
            if end < 0:
                return None
            parts.append(json.loads(text[pos : end + 1]) if text[pos] == '"' else text[pos + 1 : end])
            pos = end + 1
        else:
            found = _BARE.match(text, pos)
            if not found:
                return None
            parts.append(found.group(0))
            pos = found.end()
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text):
            if text[pos] != ".":
                return None
            pos += 1
            while pos < len(text) and text[pos] in " \t":
                pos += 1
    return parts


def _toml_value_end(text: str, pos: int) -> int:
    """Where the TOML value starting at pos ends: strings, nested arrays and inline tables, comments in arrays."""
    depth = 0
    while pos < len(text):
        char = text[pos]
        if text.startswith(('"""', "'''"), pos):
            quote = text[pos : pos + 3]
            end = text.find(quote, pos + 3)
            pos = len(text) if end < 0 else end + 3
            while text.startswith(quote[0], pos):  # up to two quotes may close a multi-line string
                pos += 1
        elif char in "\"'":
            end = pos + 1
            while end < len(text) and text[end] != char and text[end] != "\n":
                end += 2 if char == '"' and text[end] == "\\" else 1
            pos = end + 1
        elif char in "[{":
            depth, pos = depth + 1, pos + 1
        elif char in "]}":
            depth, pos = depth - 1, pos + 1
        elif char == "#" and depth:
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif depth == 0 and char in "\n#,":
            break
        else:
            pos += 1
        if depth == 0 and char in "]}\"'":
            return pos
    while pos > 0 and text[pos - 1] in " \t\r":  # a bare value (a number, true) ends before the blanks after it
        pos -= 1
    return pos


def _toml_bounded(text: str, path: str | None) -> None:
    """Refuse TOML whose arrays and inline tables nest deeper than DEEPEST (tomllib recurses into them), by a
    scan of its brackets outside strings and comments."""
    depth, pos = 0, 0
    while pos < len(text):
        char = text[pos]
        if text.startswith(('"""', "'''"), pos):
            end = text.find(text[pos : pos + 3], pos + 3)
            pos = len(text) if end < 0 else end + 3
        elif char in "\"'":
            end = pos + 1
            while end < len(text) and text[end] not in (char, "\n"):
                end += 2 if char == '"' and text[end] == "\\" else 1
            pos = end + 1
        elif char == "#":
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        else:
            depth += (char in "[{") - (char in "]}")
            if depth > DEEPEST:
                raise _too_deep(path, _line(text, pos))
            pos += 1


def _toml_load(text: str, path: str | None) -> Any:
    _toml_bounded(text, path)
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
    key_line = re.compile(
        r"[ \t]*(?P<key>(?:[A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*')(?:[ \t]*\.[ \t]*"
        r"(?:[A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*'))*)[ \t]*=[ \t]*"
    )
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        header = _HEADER.match(line)
        if header:
            table = _toml_keys(header.group("name")) or ["\0"]
            pos = end + 1
            continue
        found = key_line.match(text, pos, end)
        if found:
            keys = _toml_keys(found.group("key")) or ["\0"]
            start = found.end()
            stop = _toml_value_end(text, start)
            spans[tuple(table + keys)] = (start, stop)
            nl = text.find("\n", stop)
            pos = len(text) if nl < 0 else nl + 1
            continue
        pos = end + 1
    return data, spans
