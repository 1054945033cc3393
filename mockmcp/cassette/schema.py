"""The cassette format as a JSON Schema, for editors: completion of keys, and mistakes flagged while typing.

Theory of operation. The schema is built, not written: its keys are the very tuples validation
checks (`TOP_KEYS`, `INTERACTION_KEYS`, `SERVER_KEYS`, `EXIT_KEYS`, `REQUEST_ONLY`; a test holds
the schema's properties equal to them, in order),
its choices from the model (`AFTER`, `EXIT_WHEN`), and the keys of MCP's params and results (which
an editor offers inside `request` and `response`, by method) from `shapes`; a test checks that it
accepts every shipped cassette and refuses what validation refuses. So the schema cannot drift
from the loader. It is JSON Schema draft-07, the draft YAML editors support best
(yaml-language-server in VS Code and others, JetBrains IDEs). Unknown keys inside messages are
allowed, as the loader allows them (a server may send fields the specification does not name);
`mockmcp lint` is what reports them.

Every cassette mockmcp writes starts with a `# yaml-language-server: $schema=...` line naming
`SCHEMA_URL`, so an editor with the YAML extension finds it without any set-up. That address is
`docs/cassette.schema.json` in the project's repository, as pyproject.toml's `Repository` names it
(a test holds the two together), on its main branch: within a format version the schema only ever
gains keys, so a cassette written by an older mockmcp stays valid against it; a new format version
would get a file of its own.
"""

from __future__ import annotations

import json
from typing import Any

from mockmcp.cassette import shapes
from mockmcp.cassette.model import (
    AFTER,
    ANY_TIMES,
    CUT,
    EXIT_WHEN,
    EXPECTS,
    FORMAT_VERSION,
    MATCHER_ARGUMENTS,
    MATCHERS,
    NOTIFICATION,
    RAW,
    REQUEST,
)
from mockmcp.cassette.validation import (
    EXIT_KEYS,
    FRAMINGS,
    HTTP_KEYS,
    META_MATCH_KEYS,
    REQUEST_ONLY,
    SESSION_ERRORS,
    STREAMS,
)
from mockmcp.protocol import REVISIONS
from mockmcp.words import JSON_TYPES, NAME_PATTERN

__all__ = ["MODELINE", "SCHEMA_URL", "schema", "text"]

SCHEMA_URL = "https://raw.githubusercontent.com/mockmcp/mockmcp/main/docs/cassette.schema.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA_URL}"

_SECONDS = {"type": ["number", "null"], "minimum": 0}
_DESCRIPTIONS = {
    "at": "seconds since the session began (informative; used by --timing recorded)",
    "request": "a request the client sent: method, optional params, optional id (kept for reference)",
    "notification": "a notification the client sent: method, optional params, no id",
    "match": "match rules: a params path, then how its value is compared (any, type, subset, unordered, regex)",
    "delay": "seconds to wait before replaying this interaction",
    "times": "how many times this interaction is played before the next recording of the request takes over; "
    "`any`: as often as the host asks (never a repeat, so --strict allows it)",
    "after": "once the last recording of a request has played its `times`: repeat it, or answer unmatched",
    "server": "what the server sent because of the client message, in order",
    "drop": "true never sends the reply; cut: the answer breaks off there instead (over Streamable HTTP, the "
    "request's stream is cut after the server messages before it)",
    "raw_response": "this exact line is sent instead of the reply; {{id}} becomes the caller's id",
    "response": "the server's answer: `result` or `error`",
    "exit": "end the session here: `exit: 1` after the reply, or `{status: 1, when: before}` instead of it",
    "took": "seconds from request to response (informative; used by --timing recorded)",
    "session": "which recorded session the interaction belongs to, in a cassette of several",
    "expect": "fault: a deliberate fault, written by hand; lint keeps quiet about its warnings",
}


def text() -> str:
    """The schema as the JSON text `mockmcp schema` prints and docs/cassette.schema.json holds."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a cassette, as plain data."""
    interaction_properties: dict[str, Any] = {
        "at": _SECONDS,
        "request": {"$ref": "#/definitions/request"},
        "notification": {"$ref": "#/definitions/notification"},
        "match": {"type": "object", "additionalProperties": {"$ref": "#/definitions/matcher"}},
        "delay": _SECONDS,
        "times": {"anyOf": [{"type": "integer", "minimum": 1}, {"const": ANY_TIMES}]},
        "after": {"enum": list(AFTER)},
        "server": {"type": ["array", "null"], "items": {"$ref": "#/definitions/server_item"}},
        "drop": {"enum": [True, False, CUT]},
        "raw_response": {"type": ["string", "null"]},
        "response": {"$ref": "#/definitions/response"},
        "exit": {
            "oneOf": [
                {"$ref": "#/definitions/status"},
                {
                    "type": "object",
                    "properties": dict(
                        zip(EXIT_KEYS, ({"$ref": "#/definitions/status"}, {"enum": list(EXIT_WHEN)}), strict=True)
                    ),
                    "required": ["status"],
                    "additionalProperties": False,
                },
            ]
        },
        "took": _SECONDS,
        "session": {"type": "integer", "minimum": 0},
        "expect": {"enum": list(EXPECTS)},
    }
    for key, description in _DESCRIPTIONS.items():
        interaction_properties[key] = {**interaction_properties[key], "description": description}
    server_properties = {
        "at": _SECONDS,
        "notification": {"$ref": "#/definitions/notification"},
        "request": {"$ref": "#/definitions/request"},
        "response": {"$ref": "#/definitions/response"},
        "raw": {"type": "string", "description": "a line sent exactly as written"},
        "stream": {
            "enum": [*STREAMS, None],
            "description": "get: sent on the session's GET stream (Streamable HTTP); absent: on the request's own",
        },
        "took": {**_SECONDS, "description": "seconds from this server request to the host's answer (informative)"},
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_URL,
        "title": "mockmcp cassette",
        "description": "A recorded MCP session, both directions, in order (docs/cassette-format.md).",
        "type": "object",
        "properties": {  # TOP_KEYS
            "version": {
                "const": FORMAT_VERSION,
                "description": f"the cassette format; this mockmcp reads {FORMAT_VERSION}",
            },
            "meta": {
                "type": ["object", "null"],
                "description": "facts about the recording; `redact`, `substitute` and `match` are used by matching, "
                "`http` by replay over HTTP",
                "properties": {
                    "http": {"$ref": "#/definitions/http"},
                    "substitute": {
                        "type": ["array", "null"],
                        "description": "the names of the placeholders ${NAME} standing for values of the machine "
                        "that recorded; replay is given each one's value on its own machine",
                        "items": {"type": "string", "pattern": f"^{NAME_PATTERN}$"},
                        "uniqueItems": True,
                    },
                    "match": {
                        "type": ["object", "null"],
                        "description": "match rules for the whole cassette",
                        "properties": dict(
                            zip(
                                META_MATCH_KEYS,
                                (
                                    {
                                        "type": ["array", "null"],
                                        "items": {"type": "string"},
                                        "description": "params paths left out of matching, as --ignore does",
                                    },
                                ),
                                strict=True,
                            )
                        ),
                        "additionalProperties": False,
                    },
                },
            },
            "interactions": {"type": "array", "items": {"$ref": "#/definitions/interaction"}},
        },
        "required": ["version", "interactions"],
        "additionalProperties": False,
        "definitions": {
            "interaction": {
                "type": "object",
                "properties": interaction_properties,
                "additionalProperties": False,
                "anyOf": [{"required": ["request"]}, {"required": ["notification"]}, {"required": ["server"]}],
                "not": {"required": ["request", "notification"]},
                "dependencies": {key: ["request"] for key in (*REQUEST_ONLY, "response")},
                "allOf": _by_method("request", "response", shapes.RESULTS),
            },
            "server_item": {
                "type": "object",
                "properties": server_properties,
                "additionalProperties": False,
                "oneOf": [{"required": [kind]} for kind in (NOTIFICATION, REQUEST, RAW)],
                "dependencies": {"response": ["request"], "took": ["response"]},
                "allOf": _by_method("request", "response", shapes.RESULTS),
            },
            "request": _message(identified=True),
            "notification": {**_message(identified=False), "not": {"required": ["id"]}},
            "response": {
                "type": "object",
                "properties": {
                    "result": {"description": "what the server answered"},
                    "error": {
                        "type": "object",
                        "properties": _keys(shapes.ERROR)
                        | {"code": {"type": "integer"}, "message": {"type": "string"}},
                        "required": ["code", "message"],
                    },
                },
                "oneOf": [{"required": ["result"]}, {"required": ["error"]}],
            },
            "status": {"type": "integer", "minimum": 0, "maximum": 255},
            "matcher": {
                "oneOf": [
                    {"enum": list(MATCHERS)},
                    *(
                        {
                            "type": "object",
                            "properties": {kind: argument},
                            "required": [kind],
                            "additionalProperties": False,
                        }
                        for kind, argument in zip(
                            MATCHER_ARGUMENTS,
                            (
                                {"type": "string", "description": "a pattern the whole string matches"},
                                {"enum": list(JSON_TYPES)},
                            ),
                            strict=True,
                        )
                    ),
                ]
            },
            "http": {
                "type": ["object", "null"],
                "description": "how the recorded Streamable HTTP server framed its answers; replay does the same",
                "properties": dict(
                    zip(
                        HTTP_KEYS,
                        (
                            {"enum": [*FRAMINGS, None], "description": "json: a JSON body if it can; sse: SSE"},
                            {"type": ["boolean", "null"], "description": "its SSE events carried ids"},
                            {"type": ["boolean", "null"], "description": "each stream began with an id alone"},
                            {"type": ["boolean", "null"], "description": "it offered a GET stream (false: 405)"},
                            {
                                "type": ["object", "null"],
                                "properties": {name: {"$ref": "#/definitions/http_error"} for name in SESSION_ERRORS},
                                "additionalProperties": False,
                            },
                            {
                                "type": ["array", "null"],
                                "description": "the HTTP status of a lone reply holding each JSON-RPC error code",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "code": {"type": "integer"},
                                        "status": {"type": "integer", "minimum": 400, "maximum": 599},
                                    },
                                    "required": ["code", "status"],
                                    "additionalProperties": False,
                                },
                            },
                        ),
                        strict=True,
                    )
                ),
                "additionalProperties": False,
            },
            "http_error": {
                "type": "object",
                "properties": {
                    "status": {"type": "integer", "minimum": 400, "maximum": 599},
                    "error": {
                        "type": "object",
                        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
                        "required": ["code", "message"],
                    },
                    "without_id": {
                        "type": ["boolean", "null"],
                        "description": "its body had no `id` member (JSON-RPC's is null)",
                    },
                },
                "required": ["status", "error"],
                "additionalProperties": False,
            },
            **{name: {"type": "object", "properties": _keys(shape, (name,))} for name, shape in shapes.SHAPES.items()},
            "content": {
                "type": "object",
                "properties": _keys(
                    {key: child for shape in shapes.CONTENT_TYPES.values() for key, child in shape.items()},
                    ("content", "resource"),
                )
                | {"type": {"type": "string", "enum": list(shapes.CONTENT_TYPES)}},
            },
            "meta": {"type": "object", "properties": {key: {} for key in shapes.META_KEYS}},
        },
    }


def _message(identified: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "method": {"type": "string"},
        "params": {"type": ["object", "array"]},
    }
    if identified:
        properties["id"] = {"type": ["string", "integer"]}
    return {
        "type": "object",
        "properties": properties,
        "required": ["method"],
        "allOf": [
            {
                "if": {"properties": {"method": {"const": method}}, "required": ["method"]},
                "then": {
                    "properties": {
                        "params": {"type": "object", "properties": _keys(shape, ("params", f"params:{method}"))}
                    }
                },
            }
            for method, shape in shapes.PARAMS.items()
        ],
    }


def _by_method(message: str, answer: str, results: dict[str, shapes.Shape]) -> list[dict[str, Any]]:
    """For each method, the keys its result may hold, offered inside `response.result` (never required)."""
    return [
        {
            "if": {"properties": {message: {"properties": {"method": {"const": method}}}}, "required": [message]},
            "then": {
                "properties": {
                    answer: {
                        "properties": {
                            "result": {"type": "object", "properties": _keys(shape, ("result", f"result:{method}"))}
                        }
                    }
                }
            },
        }
        for method, shape in results.items()
    ]


def _keys(shape: shapes.Shape, scopes: tuple[str, ...] = ()) -> dict[str, Any]:
    """A shape's keys as schema properties: a nested shape by reference, a list of them as an array of it;
    a key not every protocol revision defines says which do (`shapes.SPANS`, by the shape's scopes)."""
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
