"""The cassette format as a JSON Schema (draft-07, what YAML editors support best), for completion and mistakes.

Emitted, not written: each row of `validation.CASSETTE` becomes a property by its kind (`_EMIT`), the rules that
are not one field's add what JSON Schema can say of them, and MCP's keys (offered by method, never required) come
from `shapes`. Within a format version the schema only gains keys, so an older cassette stays valid against it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mockmcp._wire.protocol import REVISIONS
from mockmcp._wire.words import NAME_PATTERN
from mockmcp.cassette import shapes
from mockmcp.cassette.model import ANY_TIMES, MATCHERS, NOTIFICATION, RAW, REQUEST
from mockmcp.cassette.validation import CASSETTE, MATCHER, REQUEST_ONLY, Field

__all__ = ["MODELINE", "SCHEMA_URL", "schema", "text"]

SCHEMA_URL = "https://raw.githubusercontent.com/mockmcp/mockmcp/main/docs/cassette.schema.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA_URL}"


def text() -> str:
    """The schema as the JSON text `mockmcp schema` prints and docs/cassette.schema.json holds."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a cassette, as plain data."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_URL,
        "title": "mockmcp cassette",
        **_property(CASSETTE),
        "definitions": {**_rules(), **_messages(), **_shapes()},
    }


def _rules() -> dict[str, Any]:
    """An interaction and a server item: their rows, and the rules beside them (`validation._interaction`...)."""
    interaction = CASSETTE.rows[2].rows[0]
    by_method = _by_method((REQUEST, "method"), ("response", "result"), shapes.RESULTS, "result")
    return {
        "interaction": {
            **_table(interaction),
            "anyOf": [{"required": [key]} for key in (REQUEST, NOTIFICATION, "server")],
            "not": {"required": [REQUEST, NOTIFICATION]},
            "dependencies": {key: [REQUEST] for key in (*REQUEST_ONLY, "response")},
            "allOf": by_method,
        },
        "server_item": {
            **_table(interaction.rows[7].rows[0]),
            "oneOf": [{"required": [kind]} for kind in (NOTIFICATION, REQUEST, RAW)],
            "dependencies": {"response": [REQUEST], "took": ["response"]},
            "allOf": by_method,
        },
    }


def _messages() -> dict[str, Any]:
    """The messages a cassette holds (`validation._message`, `validation.response`), and a match rule's matcher."""
    error = {"code": {"type": "integer"}, "message": {"type": "string"}}
    return {
        "request": _message(identified=True),
        "notification": {**_message(identified=False), "not": {"required": ["id"]}},
        "response": {
            "type": "object",
            "properties": {
                "result": {"description": "what the server answered"},
                "error": {"type": "object", "properties": _keys(shapes.ERROR) | error, "required": list(error)},
            },
            "oneOf": [{"required": ["result"]}, {"required": ["error"]}],
        },
        "matcher": {
            "oneOf": [
                {"enum": list(MATCHERS)},
                *({**_table(Field("", "table", rows=(one,))), "required": [one.name]} for one in MATCHER.rows),
            ]
        },
    }


def _shapes() -> dict[str, Any]:
    """The keys of MCP's values (`shapes`): a tool, a content block (of any type), `_meta`."""
    content = {key: child for shape in shapes.CONTENT_TYPES.values() for key, child in shape.items()}
    scopes = tuple(f"content:{kind}" for kind in shapes.CONTENT_TYPES)
    return {
        **{name: {"type": "object", "properties": _keys(shape, (name,))} for name, shape in shapes.SHAPES.items()},
        "content": {
            "type": "object",
            "properties": _keys(content, scopes) | {"type": {"type": "string", "enum": list(shapes.CONTENT_TYPES)}},
        },
        "meta": {"type": "object", "properties": {key: {} for key in shapes.META_KEYS}},
    }


def _property(row: Field) -> dict[str, Any]:
    emitted = _EMIT[row.kind](row)
    return {**emitted, "description": row.doc} if row.doc else emitted


def _typed(name: str, row: Field, **more: Any) -> dict[str, Any]:
    return {"type": [name, "null"] if row.null else name, **more}


def _table(row: Field) -> dict[str, Any]:
    fragment = _typed("object", row, properties={child.name: _property(child) for child in row.rows})
    required = [child.name for child in row.rows if child.required]
    if required:
        fragment["required"] = required
    if row.kind != "open":
        fragment["additionalProperties"] = False
    return fragment


def _int(row: Field) -> dict[str, Any]:
    return {"type": "integer", **dict(zip(("minimum", "maximum"), row.values, strict=False))}


def _choice(row: Field) -> dict[str, Any]:
    if len(row.values) == 1 and not row.null:
        return {"const": row.values[0]}
    return {"enum": [*row.values, *([None] if row.null else [])]}


def _list(row: Field) -> dict[str, Any]:
    fragment = _typed("array", row, items=_property(row.rows[0]))
    return {**fragment, "uniqueItems": True} if row.values else fragment


_EMIT: dict[str, Callable[[Field], dict[str, Any]]] = {
    "open": _table,
    "table": _table,
    "list": _list,
    "int": _int,
    "times": lambda row: {"anyOf": [_int(row), {"const": ANY_TIMES}]},
    "seconds": lambda row: _typed("number", row, minimum=0, **({"maximum": row.values[0]} if row.values else {})),
    "choice": _choice,
    "flag": lambda row: _typed("boolean", row),
    "string": lambda row: _typed("string", row),
    "text": lambda row: _typed("string", row),
    "regex": lambda row: {"type": "string", "format": "regex"},
    "name": lambda row: {"type": "string", "pattern": f"^{NAME_PATTERN}$"},
    "path": lambda row: {"type": "string"},
    "exit": lambda row: {"oneOf": [_property(row.rows[0]), _table(row)]},
    "message": lambda row: {"$ref": f"#/definitions/{row.name}"},
    "response": lambda row: {"$ref": "#/definitions/response"},
    "match": lambda row: {"type": "object", "additionalProperties": {"$ref": "#/definitions/matcher"}},
    "interaction": lambda row: {"$ref": "#/definitions/interaction"},
    "server_item": lambda row: {"$ref": "#/definitions/server_item"},
    "answer": _table,
}


def _message(identified: bool) -> dict[str, Any]:
    by_method = _by_method(("method",), ("params",), shapes.PARAMS, "params")
    properties: dict[str, Any] = {"method": {"type": "string"}, "params": {"type": ["object", "array"]}}
    if identified:
        properties["id"] = {"type": ["string", "integer"]}
    return {"type": "object", "properties": properties, "required": ["method"], "allOf": by_method}


def _by_method(method: tuple[str, ...], value: tuple[str, ...], table: dict[str, Any], scope: str) -> list[Any]:
    """For each method of the table (at the path `method`), the keys the value at the path `value` may hold."""
    return [
        {
            "if": {**_at(method, {"const": name}), "required": [method[0]]},
            "then": _at(value, {"type": "object", "properties": _keys(shape, (f"{scope}:{name}",))}),
        }
        for name, shape in table.items()
    ]


def _at(path: tuple[str, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    for key in reversed(path):
        leaf = {"properties": {key: leaf}}
    return leaf


def _keys(shape: shapes.Shape, scopes: tuple[str, ...] = ()) -> dict[str, Any]:
    """A shape's keys as schema properties; a key not every revision defines says which do (`shapes.SPANS`)."""
    properties: dict[str, Any] = {}
    for key, child in shape.items():
        if child is None:
            properties[key] = {}
        elif child.startswith("["):
            properties[key] = {"type": "array", "items": {"$ref": f"#/definitions/{child[1:-1]}"}}
        else:
            properties[key] = {"$ref": f"#/definitions/{child}"}
        revisions = shapes.defined_in(scopes, key)
        if revisions != REVISIONS:
            properties[key]["description"] = f"MCP {shapes.revision_span(revisions)}"
    return properties
