"""A server's contract (the tools, prompts and resources its listings offer) and its changes in tiers. Pure.

A change is `breaking` when a host written against the old contract can fail against the new one (what it
calls is gone, a call it makes is refused, what it reads is missing, a tool it trusted is no longer safe),
`dangerous` when it still works but may behave otherwise (what a model reads changed), `minor` when only
something new came. Each kind of change has a stable rule id (`RULES`) that CI and comments can name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from mockmcp._wire import protocol
from mockmcp.cassette.model import Cassette
from mockmcp.engine.matching import canonical, short

__all__ = ["Change", "RULES", "TIERS", "at_least", "changes", "contract", "required_names"]

BREAKING, DANGEROUS, MINOR = "breaking", "dangerous", "minor"
TIERS = (BREAKING, DANGEROUS, MINOR)  # worst first

# Every rule id, its tier and what it means: the one table docs, renderers and `--fail-on` read.
RULES: dict[str, tuple[str, str]] = {
    "tool-removed": (BREAKING, "a tool the recording lists is no longer offered"),
    "prompt-removed": (BREAKING, "a prompt the recording lists is no longer offered"),
    "resource-removed": (BREAKING, "a resource (or resource template) the recording lists is no longer offered"),
    "required-argument-added": (BREAKING, "an argument is required now: a new one, or one that was optional"),
    "argument-type-changed": (BREAKING, "an argument's type changed"),
    "argument-enum-narrowed": (BREAKING, "an argument takes fewer values than before"),
    "output-field-removed": (BREAKING, "a field of a tool's outputSchema is gone"),
    "read-only-hint-removed": (BREAKING, "readOnlyHint went from true to false"),
    "destructive-hint-added": (BREAKING, "destructiveHint went from false to true (left out, it is true)"),
    "description-changed": (DANGEROUS, "a description changed (of a tool, prompt, resource or argument)"),
    "default-changed": (DANGEROUS, "an argument's default changed"),
    "annotation-changed": (DANGEROUS, "an annotation changed, other than the two breaking hints"),
    "argument-removed": (DANGEROUS, "an argument is gone: a host that still sends it may be refused"),
    "field-changed": (DANGEROUS, "another field of an item changed (a title, a MIME type, a schema keyword)"),
    "tool-added": (MINOR, "a tool is offered that the recording does not list"),
    "prompt-added": (MINOR, "a prompt is offered that the recording does not list"),
    "resource-added": (MINOR, "a resource (or resource template) is offered that the recording does not list"),
    "optional-argument-added": (MINOR, "a new argument that is not required"),
    "argument-enum-widened": (MINOR, "an argument takes more values than before"),
    "output-field-added": (MINOR, "a tool's outputSchema has a new field"),
}

# Each listing, the kind of item it offers, and the rule-id stem of its additions and removals.
_KINDS = {
    protocol.TOOLS_LIST: ("tool", "tool"),
    "prompts/list": ("prompt", "prompt"),
    "resources/list": ("resource", "resource"),
    "resources/templates/list": ("resource template", "resource"),
}
# The spec's defaults of the two hints whose change is breaking.
_HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True}
_DEPTH = 8  # how deep nested object schemas are compared (a schema of its own is not followed further)


class Change(NamedTuple):
    """One change of the contract: its rule, what it is about (`tool get_time`), and what changed."""

    rule: str
    subject: str
    detail: str

    @property
    def tier(self) -> str:
        return RULES[self.rule][0]


def at_least(tier: str, changes: tuple[Change, ...]) -> tuple[Change, ...]:
    """The changes of `tier` or worse (`TIERS` is worst first)."""
    worst = TIERS[: TIERS.index(tier) + 1]
    return tuple(change for change in changes if change.tier in worst)


Contract = dict[str, dict[str, dict[str, Any]] | None]  # listing method -> name -> item (None: never listed)


def contract(cassette: Cassette) -> Contract:
    """What each listing of the cassette offers, by name (the last listing of a name wins); None for a listing
    the cassette never answered with its list (it says nothing of it)."""
    exchanges = [(i.message, i.response) for i in cassette.interactions]
    found: Contract = {}
    for method, (_field, key) in protocol.LISTINGS.items():
        items = protocol.listed(exchanges, method)
        found[method] = None if items is None else {item[key]: item for item in items}
    return found


def changes(recorded: Contract, other: Contract) -> tuple[Change, ...]:
    """How the other contract differs from the recorded one, listing by listing, item by item, worst first;
    a listing only one side answered is not compared."""
    found: list[Change] = []
    for method, (kind, stem) in _KINDS.items():
        old, new = recorded.get(method), other.get(method)
        if old is None or new is None:
            continue
        for name in old.keys() - new.keys():
            found.append(Change(f"{stem}-removed", f"{kind} {name}", "offered by the recording, not any more"))
        for name in new.keys() - old.keys():
            found.append(Change(f"{stem}-added", f"{kind} {name}", "offered now, not in the recording"))
        for name in old.keys() & new.keys():
            found.extend(_item_changes(f"{kind} {name}", old[name], new[name]))
    return tuple(sorted(found, key=lambda c: (TIERS.index(c.tier), c.subject, c.rule, c.detail)))


def _item_changes(subject: str, old: dict[str, Any], new: dict[str, Any]) -> Iterator[Change]:
    for key in sorted((old.keys() | new.keys()) - {"_meta"}):
        before, after = old.get(key), new.get(key)
        if canonical(before) == canonical(after):
            continue
        if key == "description":
            yield Change("description-changed", subject, _was(key, before, after))
        elif key == "annotations":
            yield from _annotation_changes(subject, before, after)
        elif key == "inputSchema":
            yield from _input_changes(subject, _schema(before), _schema(after), "")
        elif key == "outputSchema":
            yield from _output_changes(subject, _schema(before), _schema(after), "")
        elif key == "arguments":
            yield from _prompt_argument_changes(subject, before, after)
        else:
            yield Change("field-changed", subject, _was(key, before, after))


def _annotation_changes(subject: str, before: Any, after: Any) -> Iterator[Change]:
    old, new = (value if isinstance(value, dict) else {} for value in (before, after))
    for hint in sorted(old.keys() | new.keys()):
        a, b = old.get(hint, _HINT_DEFAULTS.get(hint)), new.get(hint, _HINT_DEFAULTS.get(hint))
        if canonical(a) == canonical(b):
            continue
        said = _was(f"annotations.{hint}", old.get(hint), new.get(hint))
        if hint == "readOnlyHint" and a is True and b is not True:
            yield Change("read-only-hint-removed", subject, said)
        elif hint == "destructiveHint" and a is False and b is not False:
            yield Change("destructive-hint-added", subject, said)
        else:
            yield Change("annotation-changed", subject, said)


def _input_changes(subject: str, old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[Change]:
    """An inputSchema's changes, property by property (nested objects too, to a depth)."""
    old_props, new_props = _properties(old), _properties(new)
    old_required, new_required = set(required_names(old)), set(required_names(new))
    for name in sorted(new_props.keys() - old_props.keys()):
        rule = "required-argument-added" if name in new_required else "optional-argument-added"
        yield Change(rule, subject, f"argument `{path}{name}` added")
    for name in sorted(old_props.keys() - new_props.keys()):
        yield Change("argument-removed", subject, f"argument `{path}{name}` removed")
    for name in sorted(old_props.keys() & new_props.keys()):
        where = f"argument `{path}{name}`"
        if name in new_required and name not in old_required:
            yield Change("required-argument-added", subject, f"{where} is required now")
        a, b = old_props[name], new_props[name]
        if _type(a) != _type(b):
            yield Change("argument-type-changed", subject, f"{where}: type {_type(a)} -> {_type(b)}")
        yield from _enum_changes(subject, where, a.get("enum"), b.get("enum"))
        for key, rule in (("default", "default-changed"), ("description", "description-changed")):
            if canonical(a.get(key)) != canonical(b.get(key)):
                yield Change(rule, subject, f"{where}: {_was(key, a.get(key), b.get(key))}")
        if path.count(".") < _DEPTH and (_properties(a) or _properties(b)):
            yield from _input_changes(subject, a, b, f"{path}{name}.")
        yield from _other_keywords(subject, where, a, b, {"type", "enum", "default", "description", "properties"})


def _enum_changes(subject: str, where: str, before: Any, after: Any) -> Iterator[Change]:
    old = None if not isinstance(before, list) else {canonical(value) for value in before}
    new = None if not isinstance(after, list) else {canonical(value) for value in after}
    if old == new:
        return
    if new is not None and (old is None or old - new):
        yield Change("argument-enum-narrowed", subject, f"{where}: enum {_json(before)} -> {_json(after)}")
    else:
        yield Change("argument-enum-widened", subject, f"{where}: enum {_json(before)} -> {_json(after)}")


def _output_changes(subject: str, old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[Change]:
    """An outputSchema's fields: one gone is breaking (a host reads it), one new is minor."""
    old_props, new_props = _properties(old), _properties(new)
    for name in sorted(old_props.keys() - new_props.keys()):
        yield Change("output-field-removed", subject, f"output field `{path}{name}` removed")
    for name in sorted(new_props.keys() - old_props.keys()):
        yield Change("output-field-added", subject, f"output field `{path}{name}` added")
    for name in sorted(old_props.keys() & new_props.keys()):
        a, b = old_props[name], new_props[name]
        if path.count(".") < _DEPTH and (_properties(a) or _properties(b)):
            yield from _output_changes(subject, a, b, f"{path}{name}.")
        yield from _other_keywords(subject, f"output field `{path}{name}`", a, b, {"properties"})
    if not path:
        yield from _other_keywords(subject, "outputSchema", old, new, {"properties", "$defs"})


def _other_keywords(subject: str, where: str, a: dict[str, Any], b: dict[str, Any], seen: set[str]) -> Iterator[Change]:
    for key in sorted((a.keys() | b.keys()) - seen):
        if canonical(a.get(key)) != canonical(b.get(key)):
            yield Change("field-changed", subject, f"{where}: {_was(key, a.get(key), b.get(key))}")


def _prompt_argument_changes(subject: str, before: Any, after: Any) -> Iterator[Change]:
    """A prompt's arguments, a list of {name, description, required}, compared by name."""
    old, new = (
        {arg["name"]: arg for arg in value if isinstance(arg, dict) and isinstance(arg.get("name"), str)}
        if isinstance(value, list)
        else {}
        for value in (before, after)
    )
    for name in sorted(new.keys() - old.keys()):
        rule = "required-argument-added" if new[name].get("required") is True else "optional-argument-added"
        yield Change(rule, subject, f"argument `{name}` added")
    for name in sorted(old.keys() - new.keys()):
        yield Change("argument-removed", subject, f"argument `{name}` removed")
    for name in sorted(old.keys() & new.keys()):
        a, b = old[name], new[name]
        if b.get("required") is True and a.get("required") is not True:
            yield Change("required-argument-added", subject, f"argument `{name}` is required now")
        if canonical(a.get("description")) != canonical(b.get("description")):
            said = _was("description", a.get("description"), b.get("description"))
            yield Change("description-changed", subject, f"argument `{name}`: {said}")
        yield from _other_keywords(subject, f"argument `{name}`", a, b, {"name", "required", "description"})


def _schema(value: Any) -> dict[str, Any]:
    """A JSON Schema with its local `$ref`s to `$defs` written in place (to _DEPTH), so fields compare by content."""
    if not isinstance(value, dict):
        return {}
    defs = value.get("$defs") if isinstance(value.get("$defs"), dict) else {}
    return _inlined(value, defs, 0)


def _inlined(value: Any, defs: dict[str, Any], depth: int) -> Any:
    if isinstance(value, list):
        return [_inlined(item, defs, depth) for item in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs and depth < _DEPTH:
        return _inlined(defs[ref[8:]], defs, depth + 1)
    return {key: item if key == "$defs" else _inlined(item, defs, depth) for key, item in value.items()}


def _properties(schema: Any) -> dict[str, dict[str, Any]]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}


def required_names(schema: dict[str, Any]) -> list[str]:
    """The names a JSON Schema object requires, in its order (none where `required` is no list: hand-edited)."""
    required = schema.get("required")
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def _type(schema: dict[str, Any]) -> str:
    """A property's type as compared: `type`, else its `anyOf`/`oneOf` alternatives' types ("any" for neither)."""
    if "type" in schema:
        return _json(schema["type"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(sorted(_type(alt) for alt in schema[key] if isinstance(alt, dict)))
    return "any"


def _was(key: str, before: Any, after: Any) -> str:
    if before is None:
        return f"{key} added ({_json(after)})"
    if after is None:
        return f"{key} removed (was {_json(before)})"
    return f"{key} {_json(before)} -> {_json(after)}"


def _json(value: Any) -> str:
    return value if isinstance(value, str) and value.isidentifier() else short(value, 80)
