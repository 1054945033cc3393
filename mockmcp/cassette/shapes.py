"""MCP's message shapes: the keys each params and result object may hold, by method, and near misses.

Theory of operation. A cassette edited by hand can say `iserror: true` for `isError: true`: the
YAML is valid, replay serves it, and the host sees a success, so the injected tool error silently
vanishes. The loader cannot refuse such a key (a real server may send fields the specification
does not name, and a recording keeps them), so `mockmcp lint` walks each recorded message against
the shapes below: a key that is one edit or a change of case away from a known one (`iserror`,
`isErorr`, `structuredcontent`) is almost surely a typo, and an error with "did you mean"; any
other unknown key a warning. The same `near` serves the cassette's own keys (`respnse`) in
validation, and the JSON Schema (`schema`) is built from these tables and validation's.

The tables hold the keys of every revision from 2024-11-05 to 2026-07-28 (checked against the
specification and the official SDK's types): a key a revision added is known in all of them, so
a recording of any revision passes, and only typos and inventions stand out. A shape maps each
known key to the shape its value has when that is checked too: another shape's name for a
mapping, `[name]` for a list of such mappings, or None (free-form, or a scalar).
"""

from __future__ import annotations

from mockmcp.namedtuple import NamedTuple
from mockmcp.protocol import Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = [
    "CONTENT_TYPES",
    "ERROR",
    "META_KEYS",
    "PARAMS",
    "RESULTS",
    "SHAPES",
    "Unknown",
    "near",
    "shape_of",
    "unknown_keys",
]

Shape = dict[str, "str | None"]

_ICONS = "[icon]"
SHAPES: dict[str, Shape] = {
    "implementation": dict.fromkeys(("name", "title", "version", "description", "websiteUrl", "icons")),
    "client_capabilities": dict.fromkeys(("experimental", "sampling", "elicitation", "roots", "extensions", "tasks")),
    "server_capabilities": dict.fromkeys(
        ("experimental", "logging", "prompts", "resources", "tools", "completions", "extensions", "tasks")
    ),
    "icon": dict.fromkeys(("src", "mimeType", "sizes", "theme")),
    "annotations": dict.fromkeys(("audience", "priority", "lastModified")),
    "tool": {
        **dict.fromkeys(("name", "title", "description", "inputSchema", "outputSchema", "execution", "_meta")),
        "annotations": "tool_annotations",
        "icons": _ICONS,
    },
    "tool_annotations": dict.fromkeys(("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")),
    "prompt": {**dict.fromkeys(("name", "title", "description", "_meta")), "arguments": "[prompt_argument]"},
    "prompt_argument": dict.fromkeys(("name", "title", "description", "required")),
    "prompt_message": {"role": None, "content": "content"},
    "resource": {
        **dict.fromkeys(("name", "title", "uri", "description", "mimeType", "size", "_meta")),
        "annotations": "annotations",
        "icons": _ICONS,
    },
    "resource_template": {
        **dict.fromkeys(("name", "title", "uriTemplate", "description", "mimeType", "_meta")),
        "annotations": "annotations",
        "icons": _ICONS,
    },
    "resource_contents": dict.fromkeys(("uri", "mimeType", "text", "blob", "_meta")),
    "completion": dict.fromkeys(("values", "total", "hasMore")),
    "root": dict.fromkeys(("uri", "name", "_meta")),
}

# Content blocks, by their `type`; a type not listed here is not checked.
CONTENT_TYPES: dict[str, Shape] = {
    "text": {"type": None, "text": None, "annotations": "annotations", "_meta": None},
    "image": {"type": None, "data": None, "mimeType": None, "annotations": "annotations", "_meta": None},
    "audio": {"type": None, "data": None, "mimeType": None, "annotations": "annotations", "_meta": None},
    "resource_link": {"type": None, **SHAPES["resource"]},
    "resource": {"type": None, "resource": "resource_contents", "annotations": "annotations", "_meta": None},
}

ERROR: Shape = dict.fromkeys(("code", "message", "data"))

# What every params and every result may hold besides its own keys: `_meta`, and in 2026-07-28 the
# multi-round-trip keys (a retry's `inputResponses` and `requestState`; an `input_required` result).
_PARAMS: Shape = {"_meta": "meta"}
_RETRY: Shape = dict.fromkeys(("inputResponses", "requestState"))
_RESULT: Shape = {"_meta": "meta", **dict.fromkeys(("resultType", "inputRequests", "requestState"))}
_CACHED: Shape = dict.fromkeys(("ttlMs", "cacheScope", "nextCursor"))

PARAMS: dict[str, Shape] = {
    "initialize": {
        **_PARAMS,
        "protocolVersion": None,
        "capabilities": "client_capabilities",
        "clientInfo": "implementation",
    },
    "server/discover": _PARAMS,
    "ping": _PARAMS,
    "tools/list": {**_PARAMS, "cursor": None},
    "tools/call": {**_PARAMS, **_RETRY, **dict.fromkeys(("name", "arguments", "task"))},
    "prompts/list": {**_PARAMS, "cursor": None},
    "prompts/get": {**_PARAMS, **_RETRY, **dict.fromkeys(("name", "arguments"))},
    "resources/list": {**_PARAMS, "cursor": None},
    "resources/templates/list": {**_PARAMS, "cursor": None},
    "resources/read": {**_PARAMS, **_RETRY, "uri": None},
    "resources/subscribe": {**_PARAMS, "uri": None},
    "resources/unsubscribe": {**_PARAMS, "uri": None},
    "completion/complete": {**_PARAMS, **dict.fromkeys(("ref", "argument", "context"))},
    "logging/setLevel": {**_PARAMS, "level": None},
    "sampling/createMessage": {
        **_PARAMS,
        **dict.fromkeys(
            (
                "messages",
                "modelPreferences",
                "systemPrompt",
                "includeContext",
                "temperature",
                "maxTokens",
                "stopSequences",
                "metadata",
                "tools",
                "toolChoice",
                "task",
            )
        ),
    },
    "elicitation/create": {
        **_PARAMS,
        **dict.fromkeys(("mode", "message", "requestedSchema", "url", "elicitationId", "task")),
    },
    "roots/list": _PARAMS,
    "notifications/initialized": _PARAMS,
    "notifications/cancelled": {**_PARAMS, **dict.fromkeys(("requestId", "reason"))},
    "notifications/progress": {**_PARAMS, **dict.fromkeys(("progressToken", "progress", "total", "message"))},
    "notifications/message": {**_PARAMS, **dict.fromkeys(("level", "logger", "data"))},
    "notifications/resources/updated": {**_PARAMS, "uri": None},
    "notifications/tools/list_changed": _PARAMS,
    "notifications/prompts/list_changed": _PARAMS,
    "notifications/resources/list_changed": _PARAMS,
    "notifications/roots/list_changed": _PARAMS,
}

RESULTS: dict[str, Shape] = {
    "initialize": {
        **_RESULT,
        "protocolVersion": None,
        "capabilities": "server_capabilities",
        "serverInfo": "implementation",
        "instructions": None,
    },
    "server/discover": {
        **_RESULT,
        **_CACHED,
        "supportedVersions": None,
        "capabilities": "server_capabilities",
        "instructions": None,
    },
    "ping": _RESULT,
    "tools/list": {**_RESULT, **_CACHED, "tools": "[tool]"},
    "tools/call": {**_RESULT, "content": "[content]", "structuredContent": None, "isError": None, "task": None},
    "prompts/list": {**_RESULT, **_CACHED, "prompts": "[prompt]"},
    "prompts/get": {**_RESULT, "description": None, "messages": "[prompt_message]"},
    "resources/list": {**_RESULT, **_CACHED, "resources": "[resource]"},
    "resources/templates/list": {**_RESULT, **_CACHED, "resourceTemplates": "[resource_template]"},
    "resources/read": {**_RESULT, **_CACHED, "contents": "[resource_contents]"},
    "resources/subscribe": _RESULT,
    "resources/unsubscribe": _RESULT,
    "completion/complete": {**_RESULT, "completion": "completion"},
    "logging/setLevel": _RESULT,
    "sampling/createMessage": {**_RESULT, **dict.fromkeys(("role", "content", "model", "stopReason"))},
    "elicitation/create": {**_RESULT, **dict.fromkeys(("action", "content"))},
    "roots/list": {**_RESULT, "roots": "[root]"},
}

# The `_meta` keys MCP itself defines; any other key is the sender's own (a reverse-DNS prefix), so
# only a near miss of one of these is reported.
META_KEYS = (
    "progressToken",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/serverInfo",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/subscriptionId",
    "io.modelcontextprotocol/related-task",
)


class Unknown(NamedTuple):
    """A key no shape knows: where it is, in what (`a tools/call result`), the known keys, a near miss."""

    place: Place
    key: str
    what: str
    known: tuple[str, ...]
    near: str | None


def unknown_keys(value: Any, shape: Shape, place: Place, what: str) -> Iterator[Unknown]:
    """Every key in value (and, by the shape, in what it holds) that the shape does not know, in order."""
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        key = str(key)
        if key not in shape:
            yield Unknown(place + (key,), key, what, tuple(shape), near(key, shape))
            continue
        child = shape[key]
        if child == "meta" and isinstance(item, dict):
            for name in item:
                miss = near(str(name), META_KEYS)
                if miss is not None and str(name) not in META_KEYS:
                    yield Unknown(place + (key, str(name)), str(name), "`_meta`", META_KEYS, miss)
        elif child is not None and child.startswith("[") and isinstance(item, list):
            for index, element in enumerate(item):
                yield from _nested(element, child[1:-1], place + (key, index))
        elif child is not None:
            yield from _nested(item, child, place + (key,))


def _nested(value: Any, name: str, place: Place) -> Iterator[Unknown]:
    shape = shape_of(name, value)
    if shape is not None:
        label = f"a {value['type']} content block" if name == "content" else _LABELS.get(name, f"a {name}")
        yield from unknown_keys(value, shape, place, label)


_LABELS = {
    "implementation": "clientInfo or serverInfo",
    "client_capabilities": "the client's capabilities",
    "server_capabilities": "the server's capabilities",
    "tool_annotations": "a tool's annotations",
    "prompt_argument": "a prompt argument",
    "prompt_message": "a prompt message",
    "resource_template": "a resource template",
    "resource_contents": "a resource's contents",
}


def shape_of(name: str, value: Any) -> Shape | None:
    """The known keys of a value of the named shape (a content block's by its `type`), or None if unchecked."""
    if name == "content":
        kind = value.get("type") if isinstance(value, dict) else None
        return CONTENT_TYPES.get(kind) if isinstance(kind, str) else None
    if name == "meta":
        return None  # open: see `META_KEYS`
    return SHAPES.get(name)


def near(key: str, known: Any) -> str | None:
    """The known key that key is a near miss of (a change of case, or one edit: a letter added, left out,
    changed, or two swapped), or None."""
    for candidate in known:
        if key != candidate and (key.lower() == candidate.lower() or _one_edit(key, candidate)):
            return str(candidate)
    return None


def _one_edit(one: str, other: str) -> bool:
    if abs(len(one) - len(other)) > 1 or min(len(one), len(other)) < 3:
        return False
    if len(one) == len(other):
        diffs = [i for i, (a, b) in enumerate(zip(one, other, strict=True)) if a != b]
        swapped = len(diffs) == 2 and diffs[1] == diffs[0] + 1 and one[diffs[0]] == other[diffs[1]]
        return len(diffs) == 1 or (swapped and one[diffs[1]] == other[diffs[0]])
    short, long = sorted((one, other), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
