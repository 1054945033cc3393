"""MCP's vocabulary, written once: eras, reserved `_meta` keys, what a session offers, how places read.

`jsonrpc` owns JSON-RPC's facts (message shapes, error codes); this module owns the facts of MCP
on top of it that more than one part of mockmcp needs (method, header and `_meta` names, error
codes, revisions); mockmcp's own words (record modes, places in a cassette) are `words`'. Every function takes
plain JSON values, as they are on the wire or in a cassette, and never fails on an odd shape: a
hand-edited cassette may hold anything, and a fact that is not there is answered with None or an
empty value.

Theory of operation: the two eras. Up to 2025-11-25 a session starts with the `initialize`
handshake, whose answer names the protocol version for the whole session (the *handshake* era).
From 2026-07-28 there is no handshake: every request names its version in
`params._meta["io.modelcontextprotocol/protocolVersion"]`, and a host may first probe with
`server/discover` (the *stateless* era). A session belongs to the era its evidence shows; a host in
"auto" mode that probes `server/discover`, is refused (-32601) and falls back to `initialize` shows
only the handshake era, because a refused probe is no evidence.

It imports only the standard library: it is on the launch path (docs/architecture.md, "Start-up rules").
"""

from __future__ import annotations

from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CACHED_RESULTS",
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
    "SERVER_REQUEST_CAPABILITIES",
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
    "client_capabilities",
    "client_info",
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

# --- error codes MCP adds to JSON-RPC's (in its range for implementations, -32000..-32099) -----------

RESOURCE_NOT_FOUND = -32002  # handshake era: resources/read of a URI the server does not have
INVALID_HEADER = -32020  # 2026-07-28 over HTTP: the routing headers disagree with the body
MISSING_CAPABILITY = -32021  # 2026-07-28: the request needs a client capability the client did not declare
UNSUPPORTED_VERSION = -32022  # 2026-07-28: a protocol version the server does not speak; data.supported lists its own
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 on: the request needs the user to visit a URL first (data.elicitations)
CODES = frozenset(
    {RESOURCE_NOT_FOUND, INVALID_HEADER, MISSING_CAPABILITY, UNSUPPORTED_VERSION, URL_ELICITATION_REQUIRED}
)

# --- eras and versions -----------------------------------------------------------------------------

HANDSHAKE = "handshake"  # the era of `initialize` (up to 2025-11-25)
STATELESS = "stateless"  # the era of per-request versions (2026-07-28)
STATELESS_VERSION = "2026-07-28"  # the first (and so far only) revision of the stateless era
# Every revision of MCP, oldest first: the handshake era's, then the stateless era's.
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

# MCP reserves the `io.modelcontextprotocol/` prefix for `_meta` keys of its own. In the stateless
# era they travel on every message and change with every host (see `matching` and `drift`).
SPEC_PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = SPEC_PREFIX + "protocolVersion"
SUBSCRIPTION_ID_KEY = SPEC_PREFIX + "subscriptionId"  # on a notification: the listen request it belongs to
SERVER_INFO_KEY = SPEC_PREFIX + "serverInfo"  # in the result of server/discover
CLIENT_CAPABILITIES_KEY = SPEC_PREFIX + "clientCapabilities"  # on every stateless-era request
CLIENT_INFO_KEY = SPEC_PREFIX + "clientInfo"  # on every stateless-era request; `initialize` has params.clientInfo
# A 2026-07-28 result's `resultType`: the answer itself, or a request for the client's input (which the
# client sends with its retry of the same request).
INPUT_REQUIRED = "input_required"
RESULT_TYPES = ("complete", INPUT_REQUIRED)
# How long a Streamable HTTP session may stay idle (no request being served, no GET stream open) before the
# server ends it and its id answers 404: the official SDK server's default.
SESSION_IDLE = 1800.0
# The 2026-07-28 results that carry cache hints (`ttlMs`, `cacheScope`), and the hints of one not cached.
CACHED_RESULTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read")
_NOT_CACHED = {"ttlMs": 0, "cacheScope": "private"}

# Where MCP servers put values they mint for the client to echo back (pagination, 2026-07-28
# multi-round-trip state, 2025-11-25 tasks, URL elicitation).
MINTED_KEYS = frozenset({"nextCursor", "requestState", "taskId", "elicitationId"})

# The param that names what a request asks for (a tool, a prompt): a request naming one no recording
# names is a new request, not a changed one.
NAMED_BY: dict[str, str] = {"tools/call": "name", "prompts/get": "name"}

# Optional params that say "none given" whether they are left out, null or an empty object: each is
# `X | None = None` in the SDK's types (mcp_types), and servers read `arguments or {}`. Hosts differ
# here: the SDK sends `prompts/get {arguments: {}}` where fastmcp leaves `arguments` out. Keyed by
# method; "*" applies to every method. A `cursor` is a string, so in practice only null: an empty
# string is a cursor the server minted, and counts. Everything else (the `arguments` of other
# methods, every value inside `arguments`) is the server's to interpret, and counts as sent.
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


def _params(message: Any) -> Any:
    return message.get("params") if isinstance(message, dict) else None


def progress_token(message: Any) -> Any:
    """The `params._meta.progressToken` a request asks progress under, or None."""
    return meta(_params(message)).get(PROGRESS_TOKEN)


def without_progress_token(method: Any, params: Any) -> Any:
    """A notification's params as two recordings can compare them: a progress notification's without its
    token (the live request's, so it differs run to run); any other params as they are."""
    if method == PROGRESS and isinstance(params, dict):
        return {key: value for key, value in params.items() if key != PROGRESS_TOKEN}
    return params


def protocol_version(message: Any) -> str | None:
    """The protocol version a stateless-era message names in its `_meta`, or None."""
    version = meta(_params(message)).get(PROTOCOL_VERSION_KEY)
    return version if isinstance(version, str) else None


def params_era(params: Any) -> str:
    """The era a request's or notification's params speak: STATELESS when their `_meta` names a protocol
    version (every 2026-07-28 message does), else HANDSHAKE."""
    return STATELESS if PROTOCOL_VERSION_KEY in meta(params) else HANDSHAKE


def speaks_stateless(message: Any, header: str | None = None) -> bool:
    """Whether one message speaks the stateless era (or probes for it).

    True for a `server/discover` probe, for a message whose `_meta` holds the per-request protocol
    version key, and (over HTTP) when the MCP-Protocol-Version `header` names 2026-07-28: older
    revisions send that header too, so only its value tells.
    """
    if header == STATELESS_VERSION:
        return True
    if not isinstance(message, dict):
        return False
    return message.get("method") == DISCOVER or PROTOCOL_VERSION_KEY in meta(message.get("params"))


def _result(response: Any) -> dict[str, Any] | None:
    result = response.get("result") if isinstance(response, dict) else None
    return result if isinstance(result, dict) else None


def as_era_requires(method: str, response: Any) -> Any:
    """A response to a stateless-era `method` request, with what that era requires of a result and a
    hand-written answer may leave out: `resultType` (`complete`: it needs no more input) on every
    result, and on a list's or a read's the cache hints, as the official SDK's servers send them when a
    server says nothing of caching (`ttlMs: 0`, `cacheScope: private`). What the answer says stays."""
    result = _result(response)
    if result is None:
        return response
    required = {"resultType": RESULT_TYPES[0], **(_NOT_CACHED if method in CACHED_RESULTS else {})}
    if required.keys() <= result.keys():
        return response
    return {**response, "result": {**required, **result}}


def session_eras(exchanges: Iterable[tuple[Any, Any]]) -> dict[str, str | None]:
    """The eras a session shows evidence of, handshake first, each with its protocol version (None: unknown).

    `exchanges` are (client message, response) pairs, the response None when there was none.
    Evidence of the handshake era is an answered `initialize` (its result names the version); of
    the stateless era, a message that `speaks_stateless`, unless it is a `server/discover` probe
    the server did not answer with a result.
    """
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
    """The names of the tools a session's `tools/list` answers offer; None when it has no such answer.

    Every answer counts, not only the last: a long list comes in pages (`nextCursor`), each page
    its own tools/list, so the last answer alone would make the tools of the earlier pages look
    unknown. A tool a server stopped offering mid-session (after `list_changed`) still counts as
    offered; what calling it answers shows the change.
    """
    names: set[str] | None = None
    for message, response in exchanges:
        result = _result(response)
        if not isinstance(message, dict) or message.get("method") != TOOLS_LIST or result is None:
            continue
        tools = result.get("tools")
        if isinstance(tools, list):
            names = (names or set()) | {
                tool["name"] for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str)
            }
    return None if names is None else frozenset(names)


# Client requests that change nothing on a server: the opening, ping, and the methods that list, get
# or read what it offers. (A tools/call changes state unless its tool says `readOnlyHint: true`.)
READ_METHODS = frozenset(
    {
        INITIALIZE,
        DISCOVER,
        PING,
        TOOLS_LIST,
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "tasks/list",
        "tasks/get",
    }
)


def read_only_tools(exchanges: Iterable[tuple[Any, Any]]) -> frozenset[str]:
    """The tools a session's `tools/list` answers mark `annotations.readOnlyHint: true` (the tool changes nothing)."""
    names: set[str] = set()
    for message, response in exchanges:
        result = _result(response)
        if not isinstance(message, dict) or message.get("method") != TOOLS_LIST or result is None:
            continue
        tools = result.get("tools")
        for tool in tools if isinstance(tools, list) else ():
            hints = tool.get("annotations") if isinstance(tool, dict) else None
            if isinstance(hints, dict) and hints.get("readOnlyHint") is True and isinstance(tool.get("name"), str):
                names.add(tool["name"])
    return frozenset(names)


# --- client capabilities ---------------------------------------------------------------------------

# The server-to-client requests, each with the client capability it needs: a server must not send
# one the client did not declare (in the handshake era in `initialize`'s `params.capabilities`;
# in the stateless era in every request's `_meta`, where these requests travel inside an
# `input_required` result as `inputRequests`, and a server answers -32021 instead when the
# capability is missing).
SERVER_REQUEST_CAPABILITIES = {
    "roots/list": "roots",
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
}


def client_capabilities(method: Any, params: Any) -> dict[str, Any] | None:
    """The capabilities a client request declares; None when it declares none (not the same as `{}`).

    `initialize` declares them in `params.capabilities` for the whole session; a stateless-era
    request declares them for itself, in `params._meta["io.modelcontextprotocol/clientCapabilities"]`.
    """
    found = params.get("capabilities") if method == INITIALIZE and isinstance(params, dict) else None
    if found is None:
        found = meta(params).get(CLIENT_CAPABILITIES_KEY)
    return found if isinstance(found, dict) else None


def client_info(method: Any, params: Any) -> str | None:
    """The host a client request names, as `name version` (`initialize`'s clientInfo, or a stateless-era
    request's `_meta` one); None when it names none."""
    found = params.get("clientInfo") if method == INITIALIZE and isinstance(params, dict) else None
    if found is None:
        found = meta(params).get(CLIENT_INFO_KEY)
    if not isinstance(found, dict) or not isinstance(found.get("name"), str):
        return None
    version = found.get("version")
    return f"{found['name']} {version}" if isinstance(version, str) else found["name"]


def missing_capability(capabilities: Any, request: Any) -> str | None:
    """The capability a server-to-client request needs that `capabilities` does not declare, or None.

    Named as the capability is: `roots`, `sampling`, `sampling.tools` (a sampling request offering
    tools), `elicitation.form`, `elicitation.url`. As the SDK's servers read them: a bare
    `elicitation: {}` (the shape before modes) declares form elicitation but not URL elicitation.
    """
    method = request.get("method") if isinstance(request, dict) else None
    name = SERVER_REQUEST_CAPABILITIES.get(method) if isinstance(method, str) else None
    if name is None:
        return None
    declared = capabilities if isinstance(capabilities, dict) else {}
    if not isinstance(declared.get(name), dict):
        if name == "elicitation":
            return "elicitation.url" if _params_of(request).get("mode") == "url" else "elicitation.form"
        return name
    sub = declared[name]
    if name == "sampling" and _params_of(request).get("tools") and not isinstance(sub.get("tools"), dict):
        return "sampling.tools"
    if name == "elicitation":
        if _params_of(request).get("mode") == "url":
            return None if isinstance(sub.get("url"), dict) else "elicitation.url"
        return None if "form" in sub or "url" not in sub else "elicitation.form"
    return None


def required_capabilities(name: str) -> dict[str, Any]:
    """A capability name of `missing_capability` as capabilities declare it: `elicitation.form` ->
    `{"elicitation": {"form": {}}}` (the `requiredCapabilities` of a -32021 error's data)."""
    top, _, sub = name.partition(".")
    return {top: {sub: {}} if sub else {}}


def _params_of(message: Any) -> dict[str, Any]:
    params = _params(message)
    return params if isinstance(params, dict) else {}
