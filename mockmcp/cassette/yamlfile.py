"""The YAML dialect of cassettes: JSON's data model in a file people can read and edit, and the line each place
starts on. Loading takes JSON's scalars only (`2025-11-25`, `yes`, `012` stay strings) and refuses aliases and
duplicate keys; dumping quotes what another reader could take for something else, writes multi-line strings as
blocks and keeps key order. Off the launch path: a load served from the cache never imports PyYAML.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml

from mockmcp._wire.jsonrpc import depth
from mockmcp._wire.words import Place

__all__ = ["Refused", "compose", "dump", "line_in", "line_of", "lines", "load", "nodes", "shallow_lines"]

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader whose implicit scalars are JSON's. It refuses aliases (a billion values fit in 624 bytes of
    them) and duplicate keys; tags JSON has no value for load, and validation refuses them with their place."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # The constructor meets a node a second time only through an alias (or a merge key, `<<`).
        if node in self.constructed_objects or node in self.recursive_objects:
            problem = (
                "an alias (`*name`) repeats the value anchored here (`&name`); cassettes hold no anchors or aliases"
            )
            raise Refused(problem, "write the value out in full where it is used, without `&name`", node.start_mark)
        try:
            return super().construct_object(node, deep)
        except ValueError as exc:  # a scalar its tag cannot hold (`!!float .inf x`, an int of 5000 digits)
            problem = f"this value cannot be read ({exc})"
            raise Refused(problem, "correct or quote that value", node.start_mark) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # YAML keeps the last of two equal keys: a hand-injected `error:` above the recorded `response:`
        # would silently be lost.
        first: dict[str, int] = {}
        for key, _value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            line = key.start_mark.line + 1
            if key.value in first:
                problem = (
                    f"duplicate key {key.value!r} (lines {first[key.value]} and {line}): YAML would keep "
                    "only the last one, and lose the first without a word"
                )
                raise Refused(problem, "remove one of them, or merge the two", key.start_mark)
            first[key.value] = line
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


class _LastKeyWins(_Loader):
    """The loader that keeps the last of two equal keys, as YAML itself does."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        return _BaseLoader.construct_mapping(self, node, deep)  # type: ignore[no-any-return]


class Refused(yaml.constructor.ConstructorError):
    """Well-formed YAML that a cassette cannot hold, with its place (`problem_mark`) and how to fix it."""

    def __init__(self, problem: str, fix: str, mark: yaml.Mark) -> None:
        super().__init__(None, None, problem, mark)
        self.fix = fix


_Loader.yaml_implicit_resolvers = {}
_NUMBER = list("-+0123456789")
_IMPLICIT = [  # JSON's scalars, by their first characters ("": an empty plain scalar, which is null)
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("int", r"^[-+]?(?:0|[1-9][0-9]*)$", _NUMBER),
    ("float", r"^[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)$", _NUMBER),
]
for _tag, _pattern, _first in _IMPLICIT:
    _Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), _first)


class _Dumper(_BaseDumper):  # type: ignore[misc,valid-type]
    """Safe dumper with readable strings; keeps the standard resolvers so ambiguous strings are quoted."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # A block for lines or long prose; the emitter quotes instead where a block would not round-trip.
    style = "|" if "\n" in value else ">" if len(value) > 100 and " " in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _is_small_flat(items: list[Any]) -> bool:
    """Short collections of short scalars read best on one line: `[path]`, `{name: mcp, version: 1.0}`."""
    room = 60  # one pass that stops at the first item that cannot fit: this runs for every collection dumped
    for item in items:
        if not (item is None or isinstance(item, (str, int, float))) or (isinstance(item, str) and "\n" in item):
            return False
        room -= len(str(item)) + 2
        if room < 0:
            return False
    return True


class _BlockDict(dict[Any, Any]):
    """A mapping dumped in block style however small (`dump(block=True)`); `_BlockList` likewise."""


class _BlockList(list[Any]):
    pass


def _represent(dumper: yaml.SafeDumper, value: dict[Any, Any] | list[Any]) -> yaml.Node:
    if isinstance(value, dict):
        flat = type(value) is dict and bool(value) and _is_small_flat([*value.keys(), *value.values()])
        return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=flat)
    flat = type(value) is list and bool(value) and _is_small_flat(value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat)


# The dumper quotes a string its resolvers would read as another type; its standard (YAML 1.1)
# resolvers miss some of ours, such as `1e3` (a float here), so it knows ours too.
for _tag, _pattern, _first in _IMPLICIT:
    _Dumper.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), _first)
_Dumper.add_representer(str, _represent_str)
for _type in (dict, list, _BlockDict, _BlockList):
    _Dumper.add_representer(_type, _represent)


def load(text: str, last_key_wins: bool = False) -> Any:
    """Parse YAML text into plain data. Raises yaml.YAMLError with a mark on a syntax error, and Refused for what
    a cassette cannot hold (a duplicate key too, unless `last_key_wins`: lint reads on and says where both are)."""
    return yaml.load(text, Loader=_LastKeyWins if last_key_wins else _Loader)


def dump(data: Any, block: bool = False) -> str:
    """Serialize plain data as readable YAML, keys in the given order; `block`: the top level in block style
    however small (how `yamledit` writes into a block)."""
    old = sys.getrecursionlimit()  # room for PyYAML's representer on deep data (validation bounds the depth)
    sys.setrecursionlimit(max(old, 1000 + 4 * depth(data)))  # four frames a level
    try:
        top = (_BlockDict if isinstance(data, dict) else _BlockList)(data) if block else data
        return yaml.dump(top, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    finally:
        sys.setrecursionlimit(old)


def compose(text: str) -> yaml.Node | None:
    """The YAML node tree of text (with positions), or None when the text does not parse."""
    try:
        node: yaml.Node | None = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    return node


def nodes(root: yaml.Node | None) -> list[tuple[Place, yaml.Node]]:
    """Every value node with its place, in document order (mapping keys stay in their parents)."""
    found: list[tuple[Place, yaml.Node]] = []
    seen: set[int] = set()  # an alias is the node it names: visit it once (and survive `&a [*a]`)
    stack: list[tuple[Place, yaml.Node]] = [] if root is None else [((), root)]
    while stack:
        place, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append((place, node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(reversed([(place + (str(key.value),), value) for key, value in node.value]))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed([(place + (index,), item) for index, item in enumerate(node.value)]))
    return found


def lines(found: list[tuple[Place, yaml.Node]]) -> dict[Place, int]:
    """Where each place starts (1-based line; a mapping entry's is its key's), from one parse, so lint stays
    linear. Under a duplicated key the last one wins, as when the cassette is loaded."""
    index = {place: node.start_mark.line + 1 for place, node in found}
    # A mapping entry is where its key is: a block value starts a line below (`response:` then `result:`).
    for place, node in found:
        if isinstance(node, yaml.MappingNode):
            index.update((place + (str(key.value),), key.start_mark.line + 1) for key, _value in node.value)
    return index


def line_in(index: dict[Place, int], place: Place) -> int | None:
    """The line of place in the index, or of its deepest parent that is there; None for an empty index."""
    for end in range(len(place), -1, -1):
        if place[:end] in index:
            return index[place[:end]]
    return None


def line_of(text: str, place: Place) -> int | None:
    """The 1-based line where `place` (or its deepest existing parent) starts in the YAML text."""
    return line_in(lines(nodes(compose(text))), place)


def shallow_lines(text: str, deepest: int) -> dict[Place, int]:
    """Where each place at most `deepest` levels down starts, as `lines` tells it, from YAML's events alone (a
    tenth of the node tree's time on a large cassette). Text that does not parse gives what came before the error."""
    found: dict[Place, int] = {}
    # Each open collection: [place, is a mapping, next sequence index, key awaited, the current key, key's line].
    stack: list[list[Any]] = []
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            place, line = _event_place(stack, event)
            if place is None:
                continue
            if len(place) <= deepest:
                found[place] = line
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append([place, isinstance(event, yaml.MappingStartEvent), 0, True, None, 0])
    except yaml.YAMLError:
        pass
    return found


def _event_place(stack: list[list[Any]], event: yaml.NodeEvent) -> tuple[Place | None, int]:
    """The place and line of the node an event starts (None for a mapping's key, which names the next one)."""
    line = event.start_mark.line + 1
    if not stack:
        return (), line
    parent = stack[-1]
    if not parent[1]:
        parent[2] += 1
        return (*parent[0], parent[2] - 1), line
    if parent[3]:  # a key: its value's place is named after it, and starts on its line
        parent[3], parent[4], parent[5] = False, str(getattr(event, "value", "")), line
        return (None, line) if isinstance(event, yaml.ScalarEvent) else ((*parent[0], "?"), line)
    parent[3] = True
    return (*parent[0], parent[4]), parent[5]
