"""Rewriting a cassette's YAML text in place: only what changed is written again, so comments stay.

Old and new data are compared from the root down over `compose`'s nodes; each entry whose value differs is
replaced by the dump of its new value where it stands (flow collections, and changes the text cannot take in
place, replace the enclosing entry). The result is parsed back and compared: should it differ, `rewrite` gives
None and the caller writes afresh, so an edit can lose comments but never data.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

import yaml

from mockmcp.cassette import yamlfile

__all__ = ["canonical", "rewrite", "same"]


class _Whole(Exception):
    """This collection cannot be patched in place: replace the entry that holds it."""


def rewrite(text: str, data: Any, old: Any) -> str | None:
    """The text of data, written as an edit of text, whose data is old (None if it does not parse); None when
    the text cannot be edited into data."""
    if not text.endswith("\n"):
        text += "\n"
    root = yamlfile.compose(text)
    if root is None or not isinstance(root, yaml.MappingNode) or root.flow_style or not isinstance(old, dict):
        return None
    edits: list[tuple[int, int, str]] = []
    try:
        _mapping(text, root, old, data, edits)
    except _Whole:
        return None
    new = text
    for start, end, replacement in sorted(edits, reverse=True):
        new = new[:start] + replacement + new[end:]
    try:
        if same(yamlfile.load(new), data):
            return new
    except yaml.YAMLError:
        pass
    return None


def same(one: Any, other: Any) -> bool:
    """Equal as JSON data: types exact (`1`, `1.0` and `true` differ), key order aside."""
    return canonical(one) == canonical(other)


def canonical(value: Any) -> str:
    """value as JSON text that two values equal as JSON data (types exact, key order aside) share."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def _block(node: yaml.Node) -> bool:
    return isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style


def _mapping(text: str, node: yaml.MappingNode, old: dict[Any, Any], new: dict[Any, Any], edits: list[Any]) -> None:
    pairs = {key.value: (key, value) for key, value in node.value if isinstance(key, yaml.ScalarNode)}
    if set(map(str, old)) != set(old) or set(map(str, new)) != set(new) or len(pairs) != len(old):
        raise _Whole  # keys that are not plain strings, or duplicated: nothing to edit safely
    if not new:
        raise _Whole  # an empty mapping is `{}`, which a block cannot say
    for name, (key, value) in pairs.items():
        if name not in new:
            start = _line_start(text, key.start_mark.index)
            if text[start : key.start_mark.index].strip():
                raise _Whole  # `- key: ...`: the item's first key carries its dash
            edits.append((start, _line_after(text, _value_end(text, value)), ""))
        elif not same(old[name], new[name]):
            _entry(text, key, value, old[name], new[name], edits)
    added = {name: item for name, item in new.items() if name not in old}
    if added:
        column = node.value[0][0].start_mark.column
        edits.append(_append(text, _value_end(text, node.value[-1][1]), " " * column + _dumped(added, column)))


def _entry(text: str, key: yaml.Node | None, value: yaml.Node, old: Any, new: Any, edits: list[Any]) -> None:
    """Edit the value of one mapping entry (or, with no key, one sequence item): in place where both are block
    collections of its kind (an item: mappings only), else whole."""
    mark = len(edits)
    try:
        if _block(value) and isinstance(old, dict) and isinstance(new, dict) and isinstance(value, yaml.MappingNode):
            _mapping(text, value, old, new, edits)
            return
        lists = isinstance(old, list) and isinstance(new, list)
        if key is not None and lists and _block(value) and isinstance(value, yaml.SequenceNode):
            _sequence(text, value, old, new, edits)
            return
    except _Whole:
        del edits[mark:]  # what the attempt edited inside is replaced with the rest
    if key is None:
        dash = _dash(text, value)
        rendered = _dumped([new], _column(text, dash))
        edits.append((dash, _value_end(text, value), rendered))
        return
    start, end = key.start_mark.index, _value_end(text, value)
    rendered = _dumped({key.value: new}, key.start_mark.column)
    # A comment after the key (`response:   # why it fails`), before its block, stays on the key's line.
    between = text[key.end_mark.index : value.start_mark.index]
    comment = between.split("\n", 1)[0] if "\n" in between else ""
    if "#" in comment:
        first, newline, rest = rendered.partition("\n")
        rendered = f"{first}  {comment[comment.index('#') :].rstrip()}{newline}{rest}"
    edits.append((start, end, rendered))


def _sequence(text: str, node: yaml.SequenceNode, old: list[Any], new: list[Any], edits: list[Any]) -> None:
    """Keep equal items; edit in place the items that are the same one changed (same first entry: the same
    request with another answer); remove and insert the rest."""
    if len(node.value) != len(old) or not new:
        raise _Whole  # (an empty list is `[]`, which a block cannot say)
    for tag, i1, i2, j1, j2 in _opcodes(old, new, canonical):
        if tag == "equal":
            continue
        for tag2, a1, a2, b1, b2 in _opcodes(old[i1:i2], new[j1:j2], _head):
            if tag2 == "equal" or (tag2 == "replace" and a2 - a1 == b2 - b1):
                for offset in range(a2 - a1):
                    index = i1 + a1 + offset
                    _entry(text, None, node.value[index], old[index], new[j1 + b1 + offset], edits)
                continue
            for gone in node.value[i1 + a1 : i1 + a2]:
                edits.append((_line_start(text, _dash(text, gone)), _line_after(text, _value_end(text, gone)), ""))
            if b1 < b2:
                edits.append(_insert_items(text, node, i1 + a2, new[j1 + b1 : j1 + b2]))


def _opcodes(old: list[Any], new: list[Any], key: Any) -> Sequence[tuple[str, int, int, int, int]]:
    matcher = difflib.SequenceMatcher(None, [key(x) for x in old], [key(x) for x in new], autojunk=False)
    return matcher.get_opcodes()


def _head(item: Any) -> str:
    """What names a list item: a mapping's first entry (an interaction's request), else the whole item."""
    if isinstance(item, dict) and item:
        first = next(iter(item))
        return canonical({first: item[first]})
    return canonical(item)


def _insert_items(text: str, node: yaml.SequenceNode, index: int, items: list[Any]) -> tuple[int, int, str]:
    """New items before node.value[index], or after the last one."""
    column = _column(text, _dash(text, node.value[0]))
    rendered = " " * column + _dumped(items, column)
    if index < len(node.value):
        start = _line_start(text, _dash(text, node.value[index]))
        return start, start, rendered + "\n"
    return _append(text, _value_end(text, node.value[-1]), rendered)


def _append(text: str, end: int, rendered: str) -> tuple[int, int, str]:
    """An edit putting rendered lines after the line end is on (before the comments that follow it)."""
    after = _line_after(text, end)
    return after, after, ("" if text[:after].endswith("\n") else "\n") + rendered + "\n"


def _dash(text: str, value: yaml.Node) -> int:
    """Where the `-` of a block sequence item is."""
    return text.rfind("-", 0, value.start_mark.index)


def _value_end(text: str, value: yaml.Node) -> int:
    """Where the value's own text ends: a block's end mark runs on to the next token, over trailing blank and
    comment-only lines (which belong to what follows)."""
    end = value.end_mark.index
    if not (_block(value) or (isinstance(value, yaml.ScalarNode) and value.style in ("|", ">"))):
        return end
    while True:
        stripped = len(text[:end].rstrip())
        start = _line_start(text, stripped)
        if not (stripped and text[start:stripped].lstrip().startswith("#")):
            return stripped
        end = start


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_after(text: str, index: int) -> int:
    """The start of the line after the one index is on (or the end of the text)."""
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _column(text: str, index: int) -> int:
    return index - _line_start(text, index)


def _dumped(value: Any, column: int) -> str:
    """value in block style, every line but the first indented by column (the first goes where the old text was)."""
    first, *rest = yamlfile.dump(value, block=True).rstrip("\n").split("\n")
    return "\n".join([first, *(" " * column + line if line else line for line in rest)])
