"""MCP's vocabulary on top of JSON-RPC, written once: names, error codes, revisions, eras, `_meta` keys.

Every function takes plain JSON values as they are on the wire or in a cassette and never fails on an odd shape
(a hand-edited cassette may hold anything): a fact not there is None or empty. The two eras: up to 2025-11-25 an
`initialize` handshake names the version for the session (*handshake*); from 2026-07-28 every request names its
own in `_meta` and a host may probe with `server/discover` (*stateless*). On the launch path.
"""

from __future__ import annotations

from collections.abc import Iterable

from mockmcp._wire.jsonrpc import is_valid_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CANCELLED",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "CODES",
    "DISCOVER",
    "HANDSHAKE",
    "INITIALIZE",
    "INPUT_REQUIRED",
    "INVALID_HEADER",
    "LISTEN",
    "LISTINGS",
    "MINTED_KEYS",
    "MISSING_CAPABILITY",
    "NAMED_BY",
    "PING",
    "PROGRESS",
    "PROGRESS_TOKEN",
    "PROTOCOL_VERSION_KEY",
    "READ_METHODS",
    "RESOURCE_NOT_FOUND",
    "RESULT_TYPES",
    "REVISIONS",
    "SERVER_INFO_KEY",
    "SESSION_HEADER",
    "SESSION_IDLE",
    "SPEC_PREFIX",
    "STATELESS",
    "STATELESS_VERSION",
    "SUBSCRIPTION_ID_KEY",
    "TOOLS_LIST",
    "UNSET_WHEN_EMPTY",
    "UNSUPPORTED_VERSION",
    "URL_ELICITATION_REQUIRED",
    "as_era_requires",
    "cancelled_request",
    "client_capabilities",
    "client_info",
    "listed",
    "meta",
    "missing_capability",
    "offered_tools",
    "params_era",
    "progress_token",
    "protocol_version",
    "read_only_tools",
    "required_capabilities",
    "session_eras",
    "speaks_stateless",
    "without_progress_token",
]

# Error codes MCP adds to JSON-RPC's (in its range for implementations, -32000..-32099).
RESOURCE_NOT_FOUND = -32002  # handshake era: resources/read of a URI the server does not have
INVALID_HEADER = -32020  # 2026-07-28 over HTTP: the routing headers disagree with the body
MISSING_CAPABILITY = -32021  # 2026-07-28: the request needs a client capability the client did not declare
UNSUPPORTED_VERSION = -32022  # 2026-07-28: a protocol version the server does not speak; data.supported lists its own
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 on: the request needs the user to visit a URL first (data.elicitations)
CODES = frozenset(
    {RESOURCE_NOT_FOUND, INVALID_HEADER, MISSING_CAPABILITY, UNSUPPORTED_VERSION, URL_ELICITATION_REQUIRED}
)

HANDSHAKE = "handshake"  # the era of `initialize` (up to 2025-11-25)
STATELESS = "stateless"  # the era of per-request versions (2026-07-28)
STATELESS_VERSION = "2026-07-28"  # the first (and so far only) revision of the stateless era
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", STATELESS_VERSION)
INITIALIZE = "initialize"
DISCOVER = "server/discover"
PING = "ping"  # a method of the handshake era only: 2026-07-28 servers answer it -32601
TOOLS_LIST = "tools/list"
CANCELLED = "notifications/cancelled"  # params.requestId: the sender no longer wants that request answered
LISTEN = "subscriptions/listen"  # 2026-07-28: a stream of notifications, answered only when it ends (if ever)
PROGRESS = "notifications/progress"  # params: progressToken, progress, total?, message?
PROGRESS_TOKEN = "progressToken"  # in a request's params._meta, and in the params of its progress
SESSION_HEADER = "mcp-session-id"  # Streamable HTTP's handshake-era session, lower case as headers are compared

# MCP's own `_meta` keys; in the stateless era they travel on every message and change with every host.
SPEC_PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = SPEC_PREFIX + "protocolVersion"
SUBSCRIPTION_ID_KEY = SPEC_PREFIX + "subscriptionId"  # on a notification: the listen request it belongs to
SERVER_INFO_KEY = SPEC_PREFIX + "serverInfo"  # in the result of server/discover
CLIENT_CAPABILITIES_KEY = SPEC_PREFIX + "clientCapabilities"  # on every stateless-era request
CLIENT_INFO_KEY = SPEC_PREFIX + "clientInfo"  # on every stateless-era request; `initialize` has params.clientInfo
# A 2026-07-28 result's `resultType`: the answer itself, or a request for the client's input.
INPUT_REQUIRED = "input_required"
RESULT_TYPES = ("complete", INPUT_REQUIRED)
# Seconds a Streamable HTTP session may stay idle before the server ends it (the SDK server's default).
SESSION_IDLE = 1800.0
# The 2026-07-28 results that carry cache hints (`ttlMs`, `cacheScope`), and the hints of one not cached.
_CACHED_RESULTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read")
_NOT_CACHED = {"ttlMs": 0, "cacheScope": "private"}

# Where servers put values they mint for the client to echo back (cursors, request state, tasks, elicitations).
MINTED_KEYS = frozenset({"nextCursor", "requestState", "taskId", "elicitationId"})

# The param that names what a request asks for (a tool, a prompt): a request naming one no recording
# names is a new request, not a changed one.
NAMED_BY: dict[str, str] = {"tools/call": "name", "prompts/get": "name"}

# Optional params that say "none given" whether left out, null or empty (servers read `arguments or {}`;
# the SDK sends `arguments: {}` where fastmcp leaves it out), by method ("*": every method). An empty
# cursor string was minted by the server, and counts; everything else counts as sent.
UNSET_WHEN_EMPTY: dict[str, tuple[str, ...]] = {
    "*": ("_meta",),
    "tools/call": ("arguments",),
    "prompts/get": ("arguments",),
    **dict.fromkeys(
        ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "tasks/list"), ("cursor",)
    ),
}


def meta(holder: Any) -> dict[str, Any]:
    """The `_meta` mapping of params or of a result; an empty dict when there is none (or not a mapping)."""
    found = holder.get("_meta") if isinstance(holder, dict) else None
    return found if isinstance(found, dict) else {}


def _params(message: Any) -> dict[str, Any]:
    params = message.get("params") if isinstance(message, dict) else None
    return params if isinstance(params, dict) else {}


def cancelled_request(params: Any) -> str | int | None:
    """The request a `notifications/cancelled` names by its params' `requestId`; None for a value no request's id
    can be, which the SDK ignores as no id at all."""
    request = params.get("requestId") if isinstance(params, dict) else None
    return request if is_valid_id(request) else None


def progress_token(message: Any) -> Any:
    """The `params._meta.progressToken` a request asks progress under, or None."""
    return meta(_params(message)).get(PROGRESS_TOKEN)


def without_progress_token(method: Any, params: Any) -> Any:
    """A notification's params as two recordings can compare them: a progress one's without its token."""
    if method == PROGRESS and isinstance(params, dict):
        return {key: value for key, value in params.items() if key != PROGRESS_TOKEN}
    return params


def protocol_version(message: Any) -> str | None:
    """The protocol version a stateless-era message names in its `_meta`, or None."""
    version = meta(_params(message)).get(PROTOCOL_VERSION_KEY)
    return version if isinstance(version, str) else None


def params_era(params: Any) -> str:
    """The era a message's params speak: STATELESS when their `_meta` names a protocol version, else HANDSHAKE."""
    return STATELESS if PROTOCOL_VERSION_KEY in meta(params) else HANDSHAKE


def speaks_stateless(message: Any, header: str | None = None) -> bool:
    """Whether one message speaks the stateless era or probes for it; over HTTP the MCP-Protocol-Version
    `header` tells by its value (older revisions send it too)."""
    if header == STATELESS_VERSION or PROTOCOL_VERSION_KEY in meta(_params(message)):
        return True
    return isinstance(message, dict) and message.get("method") == DISCOVER


def _result(response: Any) -> dict[str, Any] | None:
    result = response.get("result") if isinstance(response, dict) else None
    return result if isinstance(result, dict) else None


def as_era_requires(method: str, response: Any) -> Any:
    """The response to a stateless-era `method` request with what that era requires and a hand-written answer
    may leave out: `resultType: complete`, and a list's or read's cache hints as the SDK's servers default them."""
    result = _result(response)
    if result is None:
        return response
    required = {"resultType": RESULT_TYPES[0], **(_NOT_CACHED if method in _CACHED_RESULTS else {})}
    if required.keys() <= result.keys():
        return response
    return {**response, "result": {**required, **result}}


def session_eras(exchanges: Iterable[tuple[Any, Any]]) -> dict[str, str | None]:
    """The eras (client message, response) pairs show evidence of, handshake first, each with its version
    (None: unknown): an answered `initialize`; a message that `speaks_stateless` (a probe only if answered)."""
    eras: dict[str, str | None] = {}
    for message, response in exchanges:
        method = message.get("method") if isinstance(message, dict) else None
        result = _result(response)
        if method == INITIALIZE and result is not None:
            version = result.get("protocolVersion")
            if eras.get(HANDSHAKE) is None:
                eras[HANDSHAKE] = version if isinstance(version, str) else None
        stateless = speaks_stateless(message) and (method != DISCOVER or result is not None)
        if stateless and eras.get(STATELESS) is None:
            eras[STATELESS] = protocol_version(message)
    return dict(sorted(eras.items(), key=lambda era: era[0] != HANDSHAKE))


def offered_tools(exchanges: Iterable[tuple[Any, Any]]) -> frozenset[str] | None:
    """The tools a session's `tools/list` answers offer (every page counts); None when it has no such answer."""
    listed = _listed_tools(exchanges)
    return None if listed is None else frozenset(tool["name"] for tool in listed)


def read_only_tools(exchanges: Iterable[tuple[Any, Any]]) -> frozenset[str]:
    """The tools a session's `tools/list` answers mark `annotations.readOnlyHint: true`."""
    return frozenset(
        tool["name"]
        for tool in _listed_tools(exchanges) or ()
        if isinstance(hints := tool.get("annotations"), dict) and hints.get("readOnlyHint") is True
    )


def _listed_tools(exchanges: Iterable[tuple[Any, Any]]) -> list[dict[str, Any]] | None:
    return listed(exchanges, TOOLS_LIST)


# What a server offers, and where: each listing method -> the result's list, and the key that names an item.
LISTINGS: dict[str, tuple[str, str]] = {
    TOOLS_LIST: ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}


def listed(exchanges: Iterable[tuple[Any, Any]], method: str) -> list[dict[str, Any]] | None:
    """The items a session's answers to a listing method (`LISTINGS`) offer, every page, in order; None when no
    answer of it holds the list."""
    field, key = LISTINGS[method]
    found: list[dict[str, Any]] | None = None
    for message, response in exchanges:
        items = (_result(response) or {}).get(field)
        if isinstance(message, dict) and message.get("method") == method and isinstance(items, list):
            found = found or []
            found.extend(item for item in items if isinstance(item, dict) and isinstance(item.get(key), str))
    return found


# Client requests that change nothing on a server (a tools/call does unless its tool is read-only).
READ_METHODS = frozenset(
    {INITIALIZE, DISCOVER, PING, *_CACHED_RESULTS, "prompts/get", "completion/complete", "tasks/list", "tasks/get"}
)


# The server-to-client requests, each with the client capability it needs (a server must not send one the
# client did not declare; in the stateless era it answers -32021 instead).
_SERVER_REQUEST_CAPABILITIES = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}


def client_capabilities(method: Any, params: Any) -> dict[str, Any] | None:
    """The capabilities a client request declares (`initialize`'s for the session, a stateless-era request's
    in its `_meta`); None when it declares none (not the same as `{}`)."""
    return _declared(method, params, "capabilities", CLIENT_CAPABILITIES_KEY)


def client_info(method: Any, params: Any) -> str | None:
    """The host a client request names (as for capabilities), as `name version`; None when it names none."""
    found = _declared(method, params, "clientInfo", CLIENT_INFO_KEY) or {}
    if not isinstance(found.get("name"), str):
        return None
    version = found.get("version")
    return f"{found['name']} {version}" if isinstance(version, str) else found["name"]


def _declared(method: Any, params: Any, key: str, meta_key: str) -> dict[str, Any] | None:
    """What `initialize` declares in `params[key]` for its session, or a stateless-era request in its `_meta`."""
    found = params.get(key) if method == INITIALIZE and isinstance(params, dict) else None
    found = meta(params).get(meta_key) if found is None else found
    return found if isinstance(found, dict) else None


def missing_capability(capabilities: Any, request: Any) -> str | None:
    """The capability a server-to-client request needs that `capabilities` does not declare, or None:
    `roots`, `sampling`, `sampling.tools`, `elicitation.form`, `elicitation.url` (a bare `elicitation: {}`
    declares form but not URL, as the SDK's servers read it)."""
    method = request.get("method") if isinstance(request, dict) else None
    name = _SERVER_REQUEST_CAPABILITIES.get(method) if isinstance(method, str) else None
    if name is None:
        return None
    declared = capabilities if isinstance(capabilities, dict) else {}
    if not isinstance(declared.get(name), dict):
        if name == "elicitation":
            return "elicitation.url" if _params(request).get("mode") == "url" else "elicitation.form"
        return name
    sub = declared[name]
    if name == "sampling" and _params(request).get("tools") and not isinstance(sub.get("tools"), dict):
        return "sampling.tools"
    if name == "elicitation":
        if _params(request).get("mode") == "url":
            return None if isinstance(sub.get("url"), dict) else "elicitation.url"
        return None if "form" in sub or "url" not in sub else "elicitation.form"
    return None


def required_capabilities(name: str) -> dict[str, Any]:
    """A `missing_capability` name as declared: `elicitation.form` -> `{"elicitation": {"form": {}}}`."""
    top, _, sub = name.partition(".")
    return {top: {sub: {}} if sub else {}}
