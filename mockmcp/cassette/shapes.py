"""MCP's message shapes: the keys each params and result object may hold, by method, and near misses.

A real server may send keys of its own, so an unknown key is no error; but one a single edit or a change of
case from a known one (`iserror: true`) is almost surely a typo, which the host would not read. The tables
hold every revision's keys (from the specification's schemas and the official SDK's types); `SPANS` says
which revisions define a key not all of them do. Given no revision, every key of every one is known.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from mockmcp._wire.protocol import (
    CANCELLED,
    CLIENT_CAPABILITIES_KEY,
    DISCOVER,
    INITIALIZE,
    INPUT_REQUIRED,
    LISTEN,
    PING,
    PROGRESS,
    PROGRESS_TOKEN,
    PROTOCOL_VERSION_KEY,
    RESULT_TYPES,
    REVISIONS,
    SERVER_INFO_KEY,
    SPEC_PREFIX,
    STATELESS_VERSION,
    SUBSCRIPTION_ID_KEY,
)
from mockmcp._wire.words import Place, yaml_type

__all__ = [
    "CONTENT_TYPES",
    "ERROR",
    "META_KEYS",
    "NOT_AN_OBJECT",
    "OPENINGS",
    "PARAMS",
    "RESULTS",
    "SHAPES",
    "SPANS",
    "Unknown",
    "answer_flaws",
    "defined_in",
    "near",
    "result_label",
    "revision_note",
    "revision_span",
    "unknown_keys",
]

Shape = dict[str, "str | None"]
_REQUIRED: dict[str, tuple[str, ...]] = {}  # by shape name, `result:METHOD` or `content:TYPE`: the `!` keys
# The revisions that define a key not every revision does, as (first, last), by scope: a name of `SHAPES`,
# `content:TYPE`, `params:METHOD` or `result:METHOD` (from the tables' words), or `content_type`, `meta`, `method`.
SPANS: dict[str, dict[str, tuple[str, str]]] = {}
_LAST = REVISIONS[-1]
_TASKS = ("2025-11-25", "2025-11-25")  # tasks came with 2025-11-25 and went with 2026-07-28
_MRTR = (STATELESS_VERSION, STATELESS_VERSION)  # 2026-07-28: multi-round-trip requests, result caching
_SINCE = {"@0326": ("2025-03-26", _LAST), "@0618": ("2025-06-18", _LAST), "@1125": ("2025-11-25", _LAST)}
_WORD_SPANS = {**_SINCE, "@tasks": _TASKS, "@2026": _MRTR}


def _shapes(scope: str, words: dict[str, str]) -> dict[str, Shape]:
    """Shapes by name, each from its words: `key`, `key:name` (a value of the named shape), `key:[name]` (a
    list of them); `key!` is a key the official SDK requires (a host refuses a value without it: `_REQUIRED`);
    `key@0618` a key of 2025-06-18 and later (`@0326`, `@1125` alike), `@tasks` of 2025-11-25 alone, `@2026`
    of 2026-07-28 alone (`SPANS`)."""
    table = {}
    for name, text in words.items():
        shape: Shape = {}
        for word in text.split():
            head, _, child = word.partition(":")
            key, at, span = head.partition("@")
            shape[key.rstrip("!")] = child or None
            if key.endswith("!"):
                _REQUIRED[scope + name] = (*_REQUIRED.get(scope + name, ()), key.rstrip("!"))
            if at:
                SPANS.setdefault(scope + name, {})[key.rstrip("!")] = _WORD_SPANS[at + span]
        table[name] = shape
    return table


_NAMED = "name! title@0618"
_ICONS = "icons@1125:[icon]"
_RESOURCE = f"{_NAMED} uri! description mimeType size _meta@0618 annotations:annotations {_ICONS}"
SHAPES: dict[str, Shape] = _shapes("", {
    "implementation": f"{_NAMED} version! description@1125 websiteUrl@1125 icons@1125",
    "client_capabilities": "experimental sampling elicitation@0618 roots extensions@2026 tasks@tasks",
    "server_capabilities": "experimental logging prompts resources tools completions@0326 extensions@2026 tasks@tasks",
    "icon": "src! mimeType sizes theme",
    "annotations": "audience priority lastModified@0618",
    "tool": f"{_NAMED} description inputSchema! outputSchema@0618 execution@tasks _meta@0618 "
    f"annotations@0326:tool_annotations {_ICONS}",
    "tool_annotations": "title readOnlyHint destructiveHint idempotentHint openWorldHint",
    "prompt": f"{_NAMED} description _meta@0618 arguments:[prompt_argument] {_ICONS}",
    "prompt_argument": f"{_NAMED} description required",
    "prompt_message": "role! content!:content",
    "resource": _RESOURCE,
    "resource_template": f"{_NAMED} uriTemplate! description mimeType _meta@0618 annotations:annotations {_ICONS}",
    "resource_contents": "uri! mimeType text blob _meta@0618",
    "completion": "values! total hasMore",
    "root": "uri! name _meta@0618",
})  # fmt: skip

# Content blocks, by their `type`; a type not listed here is not checked.
_BLOCK = "annotations:annotations _meta@0618"
CONTENT_TYPES: dict[str, Shape] = _shapes("content:", {
    "text": f"type text! {_BLOCK}",
    "image": f"type data! mimeType! {_BLOCK}",
    "audio": f"type data! mimeType! {_BLOCK}",
    "resource_link": f"type {_RESOURCE}",
    "resource": f"type resource!:resource_contents {_BLOCK}",
})  # fmt: skip
CONTENT_TYPE = "content type"  # what an `Unknown` that is a content block's `type`, not a key, is
ERROR: Shape = dict.fromkeys(("code", "message", "data"))

# What every params and every result may hold besides its own keys: `_meta`, and in 2026-07-28 the
# multi-round-trip keys (a retry's `inputResponses` and `requestState`; an `input_required` result).
_PARAMS, _RETRY = "_meta:meta", "inputResponses@2026 requestState@2026"
_RESULT, _CACHED = "_meta:meta resultType@2026 inputRequests@2026 requestState@2026", "ttlMs@2026 cacheScope@2026"
_SAMPLING = "messages modelPreferences systemPrompt includeContext temperature maxTokens stopSequences metadata"
PARAMS: dict[str, Shape] = _shapes("params:", {
    "initialize": f"{_PARAMS} protocolVersion capabilities:client_capabilities clientInfo:implementation",
    "server/discover": _PARAMS,
    "ping": _PARAMS,
    "tools/list": f"{_PARAMS} cursor",
    "tools/call": f"{_PARAMS} {_RETRY} name arguments task@tasks",
    "prompts/list": f"{_PARAMS} cursor",
    "prompts/get": f"{_PARAMS} {_RETRY} name arguments",
    "resources/list": f"{_PARAMS} cursor",
    "resources/templates/list": f"{_PARAMS} cursor",
    "resources/read": f"{_PARAMS} {_RETRY} uri",
    "resources/subscribe": f"{_PARAMS} uri",
    "resources/unsubscribe": f"{_PARAMS} uri",
    "completion/complete": f"{_PARAMS} ref argument context@0618",
    "logging/setLevel": f"{_PARAMS} level",
    "sampling/createMessage": f"{_PARAMS} {_SAMPLING} tools@1125 toolChoice@1125 task@tasks",
    "elicitation/create": f"{_PARAMS} mode@1125 message requestedSchema url@1125 elicitationId@1125 task@tasks",
    "roots/list": _PARAMS,
    "notifications/initialized": _PARAMS,
    CANCELLED: f"{_PARAMS} requestId reason",
    PROGRESS: f"{_PARAMS} {PROGRESS_TOKEN} progress total message@0326",
    "notifications/message": f"{_PARAMS} level logger data",
    "notifications/resources/updated": f"{_PARAMS} uri",
    **{f"notifications/{kind}/list_changed": _PARAMS for kind in ("tools", "prompts", "resources", "roots")},
})  # fmt: skip
RESULTS: dict[str, Shape] = _shapes("result:", {
    "initialize": f"{_RESULT} protocolVersion! capabilities!:server_capabilities serverInfo!:implementation "
    "instructions",
    "server/discover": f"{_RESULT} ttlMs cacheScope nextCursor supportedVersions! capabilities!:server_capabilities "
    "instructions",
    "ping": _RESULT,
    "tools/list": f"{_RESULT} {_CACHED} nextCursor tools!:[tool]",
    "tools/call": f"{_RESULT} content!:[content] structuredContent@0618 isError task@tasks",
    "prompts/list": f"{_RESULT} {_CACHED} nextCursor prompts!:[prompt]",
    "prompts/get": f"{_RESULT} description messages!:[prompt_message]",
    "resources/list": f"{_RESULT} {_CACHED} nextCursor resources!:[resource]",
    "resources/templates/list": f"{_RESULT} {_CACHED} nextCursor resourceTemplates!:[resource_template]",
    "resources/read": f"{_RESULT} {_CACHED} nextCursor contents!:[resource_contents]",
    "resources/subscribe": _RESULT,
    "resources/unsubscribe": _RESULT,
    "completion/complete": f"{_RESULT} completion!:completion",
    "logging/setLevel": _RESULT,
    "sampling/createMessage": f"{_RESULT} role content model stopReason",
    "elicitation/create": f"{_RESULT} action content",
    "roots/list": f"{_RESULT} roots:[root]",
})  # fmt: skip

# The `_meta` keys MCP itself defines; any other key is the sender's own (a reverse-DNS prefix), so
# only a near miss of one of these is reported.
META_KEYS = (
    PROGRESS_TOKEN, PROTOCOL_VERSION_KEY, SPEC_PREFIX + "clientInfo", CLIENT_CAPABILITIES_KEY, SERVER_INFO_KEY,
    SPEC_PREFIX + "logLevel", SUBSCRIPTION_ID_KEY, SPEC_PREFIX + "related-task",
)  # fmt: skip


# Not keys of a shape, but judged the same way: a content block's `type`, a `_meta` key MCP defines, a
# message's `method` (what PROTOCOL's eras say: no `initialize`, `ping`, `logging/setLevel` or
# server-to-client request in 2026-07-28; tasks only in 2025-11-25).
_HANDSHAKE = (REVISIONS[0], REVISIONS[REVISIONS.index(STATELESS_VERSION) - 1])
_TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status")
_HANDSHAKE_METHODS = (INITIALIZE, PING, "logging/setLevel", "notifications/initialized", "sampling/createMessage")
SPANS["content_type"] = {"audio": _SINCE["@0326"], "resource_link": _SINCE["@0618"]}
SPANS["meta"] = {
    **dict.fromkeys((key for key in META_KEYS if key.startswith(SPEC_PREFIX)), _MRTR),
    f"{SPEC_PREFIX}related-task": _TASKS,
}
SPANS["method"] = {
    **dict.fromkeys((*_HANDSHAKE_METHODS, "roots/list"), _HANDSHAKE),
    "elicitation/create": ("2025-06-18", "2025-11-25"),
    "notifications/elicitation/complete": _SINCE["@1125"],
    **dict.fromkeys(_TASK_METHODS, _TASKS),
    **dict.fromkeys((DISCOVER, LISTEN), _MRTR),
}


def defined_in(scopes: tuple[str, ...], key: str) -> tuple[str, ...]:
    """The revisions that define key in a shape of these scopes (every revision when none limits it)."""
    for scope in scopes:
        span = SPANS.get(scope, {}).get(key)
        if span is not None:
            return REVISIONS[REVISIONS.index(span[0]) : REVISIONS.index(span[1]) + 1]
    return REVISIONS


def revision_span(revisions: tuple[str, ...]) -> str:
    """`2026-07-28`, `2025-06-18 and later`, `2025-03-26 to 2025-11-25`: revisions in a row, in words."""
    if len(revisions) == 1:
        return revisions[0]
    if revisions[-1] == REVISIONS[-1]:
        return f"{revisions[0]} and later"
    return f"{revisions[0]} to {revisions[-1]}"


def revision_note(revisions: tuple[str, ...], noun: str = "key") -> str:
    """`a 2026-07-28 key`, `a key of 2025-06-18 and later`, `a method of 2025-03-26 to 2025-11-25`."""
    return f"a {revisions[0]} {noun}" if len(revisions) == 1 else f"a {noun} of {revision_span(revisions)}"


# A session's opening answer in each era: `initialize`'s in the handshake era, `server/discover`'s in
# 2026-07-28. A key of one written into the other is no typo but the eras mixed up; for each method,
# the revisions that answer it and its keys that belong to the other's, with what this one says instead.
OPENINGS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    INITIALIZE: (REVISIONS[: REVISIONS.index(STATELESS_VERSION)], {"supportedVersions": "protocolVersion"}),
    DISCOVER: (
        (STATELESS_VERSION,),
        {"protocolVersion": "supportedVersions", "serverInfo": f'_meta["{SERVER_INFO_KEY}"]'},
    ),
}


class Unknown(NamedTuple):
    """A key no shape knows (where, in what, the known keys, a near miss), or one of other revisions than the
    message's own (`revisions` names them)."""

    place: Place
    key: str
    what: str
    known: tuple[str, ...]
    near: str | None
    revisions: tuple[str, ...] = ()
    noun: str = "key"  # what `key` is: a key, or a content block's `type` ("content type")

    def typo(self) -> tuple[str, str] | None:
        """(what is wrong, how to fix it) when no host reads past this: a near miss of a key MCP defines, or a
        content `type` no revision defines (a host refuses the whole answer); None for a key merely unknown
        (a server may send keys of its own) or of another revision."""
        if self.revisions or (self.near is None and self.noun != CONTENT_TYPE):
            return None
        if self.noun == CONTENT_TYPE:
            hint = f"did you mean `{self.near}`? " if self.near else ""
            problem = f"unknown content type {self.key!r}: a host refuses the whole message"
            return problem, f"{hint}use one of: {', '.join(self.known)}"
        return (
            f"unknown key {self.key!r} in {self.what}; did you mean `{self.near}`?",
            f"rename it `{self.near}`: as it is, no host reads it",
        )


def unknown_keys(
    value: Any, shape: Shape, place: Place, what: str, revision: str | None = None, scopes: tuple[str, ...] = ()
) -> Iterator[Unknown]:
    """Every key in value (and, by the shape, in what it holds) that the shape does not know, in order; with a
    `revision`, also a key that revision does not define (`scopes` name the shape in `SPANS`)."""
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        key = str(key)
        if key not in shape:
            yield Unknown(place + (key,), key, what, tuple(shape), near(key, shape))
        elif revisions := _elsewhere(revision, scopes, key):
            known = tuple(name for name in shape if not _elsewhere(revision, scopes, name))
            yield Unknown(place + (key,), key, what, known, None, revisions)
        elif shape[key] == "meta" and isinstance(item, dict):
            for name in map(str, item):
                if name in META_KEYS and (revisions := _elsewhere(revision, ("meta",), name)):
                    yield Unknown(place + (key, name), name, "`_meta`", META_KEYS, None, revisions)
                elif name not in META_KEYS and (miss := near(name, META_KEYS)) is not None:
                    yield Unknown(place + (key, name), name, "`_meta`", META_KEYS, miss)
        elif (child := shape[key]) is not None and child.startswith("[") and isinstance(item, list):
            for index, element in enumerate(item):
                yield from _nested(element, child[1:-1], place + (key, index), revision)
        elif child is not None and child != "meta":
            yield from _nested(item, child, place + (key,), revision)


def _elsewhere(revision: str | None, scopes: tuple[str, ...], key: str) -> tuple[str, ...]:
    """The revisions that define key, when `revision` (one of `REVISIONS`) is not one of them; else ()."""
    revisions = defined_in(scopes, key) if revision in REVISIONS else (revision,)
    return () if revision in revisions else revisions


def _nested(value: Any, name: str, place: Place, revision: str | None) -> Iterator[Unknown]:
    """The unknown keys of a value of the named shape (a content block's by its `type`; `meta` is open)."""
    if name != "content":
        if name in SHAPES:
            yield from unknown_keys(value, SHAPES[name], place, _LABELS.get(name, f"a {name}"), revision, (name,))
        return
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):
        return
    if kind not in CONTENT_TYPES:
        known = tuple(CONTENT_TYPES)
        yield Unknown(place + ("type",), kind, "a content block", known, near(kind, known), (), CONTENT_TYPE)
    elif revisions := _elsewhere(revision, ("content_type",), kind):
        known = tuple(one for one in CONTENT_TYPES if not _elsewhere(revision, ("content_type",), one))
        yield Unknown(place + ("type",), kind, "a content block", known, None, revisions, CONTENT_TYPE)
    else:
        label, scopes = _a(f"{kind} content block"), (f"content:{kind}",)
        yield from unknown_keys(value, CONTENT_TYPES[kind], place, label, revision, scopes)


_LABELS = {
    "content": "a content block",
    "implementation": "clientInfo or serverInfo",
    "client_capabilities": "the client's capabilities",
    "server_capabilities": "the server's capabilities",
    "tool_annotations": "a tool's annotations",
    "prompt_argument": "a prompt argument",
    "prompt_message": "a prompt message",
    "resource_template": "a resource template",
    "resource_contents": "a resource's contents",
}


def result_label(method: str) -> str:
    """`a tools/call result`, `an initialize result`: how findings name the result of a method."""
    return _a(f"{method} result")


def _a(words: str) -> str:
    return f"{'an' if words[:1] in 'aeiou' else 'a'} {words}"


# --- answers a host can read ------------------------------------------------------------------------
#
# The `!` keys and the rules below say what a host built on the official SDK refuses (a `content` missing,
# a block of type `txt`) or reads otherwise (`isError: "yes"` taken as true), in every revision. Loading
# refuses such an answer; `record` keeps a real server's as the exact line it sent (`raw_response`).

_EXAMPLES = {  # how to write a required key that is missing, where a plain `KEY: ...` says too little
    "content": "`content: [{type: text, text: ...}]` (`content: []` if the tool says nothing)",
    "inputSchema": "`inputSchema: {type: object}`",
    "serverInfo": "`serverInfo: {name: ..., version: ...}`",
    "capabilities": "`capabilities: {}`",
}
NOT_AN_OBJECT = (
    "a result must be an object (every MCP result is one)",
    "write it as `key: value` lines; `result: {}` for none",
)
_ON_PURPOSE = "; to send it so on purpose (a host's error handling), write the whole reply as `raw_response`"


class Flaw(NamedTuple):
    """Why a host cannot read an answer as MCP means it: where, what, how to fix."""

    place: Place
    problem: str
    fix: str


def answer_flaws(method: str, result: Any, place: Place) -> list[Flaw]:
    """What makes `result`, the answer to a `method` request at `place`, one a host cannot read as meant, in the
    order of the text (the first is what loading says). A 2026-07-28 `input_required` result is held only to its
    keys: what it asks for comes before the answer."""
    shape = RESULTS.get(method)
    if shape is None:
        return []
    what = result_label(method)
    if not isinstance(result, dict):
        return [Flaw(place, *NOT_AN_OBJECT)]
    kind = result.get("resultType", RESULT_TYPES[0])
    if kind not in RESULT_TYPES:  # no telling what the rest should hold
        fix = f"use one of: {', '.join(RESULT_TYPES)}"
        return [Flaw(place + ("resultType",), f"unknown `resultType` {kind!r}", fix)]
    found = [
        Flaw(unknown.place, *typo)
        for unknown in unknown_keys(result, shape, place, what, None, ("result", f"result:{method}"))
        if (typo := unknown.typo()) is not None
    ]
    if kind != INPUT_REQUIRED:
        if method == "tools/call" and not isinstance(result.get("isError", False), bool):
            problem = f"`isError` must be true or false, not {result['isError']!r} (a host reads it as it likes)"
            fix = "write `isError: true` (the tool ran and failed) or `isError: false`"
            found.append(Flaw(place + ("isError",), problem, fix))
        found += _holds(result, shape, f"result:{method}", place, what)
    return sorted(found, key=lambda flaw: _position(result, flaw.place[len(place) :]))


def _position(value: Any, steps: Place) -> tuple[int, ...]:
    """Where the place `steps` below value comes in the text (a place above another comes first)."""
    position = []
    for step in steps:  # every flaw's place is in the value: a missing key's flaw is placed where it is missing
        position.append(list(value).index(step) if isinstance(value, dict) else step)
        value = value[step]
    return tuple(position)


def _holds(value: dict[str, Any], shape: Shape, name: str, place: Place, what: str) -> Iterator[Flaw]:
    """The required keys of a value of the named shape, and the values it holds of shapes of their own."""
    # The other era's opening answer's keys, by the key of this one they stand for (`protocolVersion` written
    # where a server/discover result says `supportedVersions`).
    swapped = {instead: other for other, instead in OPENINGS.get(name.removeprefix("result:"), ((), {}))[1].items()}
    for key in _REQUIRED.get(name, ()):
        if key in value or any(near(str(other), (key,)) for other in value):  # a typo says it already
            continue
        fix = f"add {_EXAMPLES.get(key, f'`{key}: ...`')}{_ON_PURPOSE}"
        if swapped.get(key) in value:
            fix = f"`{swapped[key]}` is the other era's opening answer's key: write `{key}` instead"
        yield Flaw(place, f"{what} needs `{key}`", fix)
    for key, child in shape.items():
        if child is None or child == "meta" or key not in value:
            continue
        item = value[key]
        if not child.startswith("["):
            yield from _value(item, child, place + (key,))
        elif not isinstance(item, list):
            yield Flaw(place + (key,), f"`{key}` is a list, not {yaml_type(item)}", f"write `{key}: [...]`")
        else:
            for index, element in enumerate(item):
                yield from _value(element, child[1:-1], place + (key, index))


def _value(value: Any, name: str, place: Place) -> Iterator[Flaw]:
    what = _LABELS.get(name, f"a {name}")
    if not isinstance(value, dict):
        yield Flaw(place, f"{what} is a mapping, not {yaml_type(value)}", "write it as `key: value` lines")
        return
    if name != "content":
        if name == "resource_contents" and "text" not in value and "blob" not in value:
            yield Flaw(place, f"{what} needs `text` or `blob`", f"add `text: ...` (or `blob:` in base64){_ON_PURPOSE}")
        yield from _holds(value, SHAPES[name], name, place, what)
        return
    kind = value.get("type")
    if not isinstance(kind, str):
        yield Flaw(place, "a content block needs a `type` string", "write e.g. `{type: text, text: ...}`")
    elif kind in CONTENT_TYPES:  # an unknown one is a typo (`unknown_keys`)
        if kind == "text" and "text" in value and not isinstance(value["text"], str):
            problem = f"the `text` of a text content block is a string, not {yaml_type(value['text'])}"
            yield Flaw(place + ("text",), problem, "quote it")
        yield from _holds(value, CONTENT_TYPES[kind], f"content:{kind}", place, _a(f"{kind} content block"))


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
