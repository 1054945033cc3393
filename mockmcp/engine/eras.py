"""A recording of one era as a host of the other era gets it, from a server that spoke both. Pure.

A server of both eras (the SDK's 2.x line) answers a handshake host and a 2026-07-28 host the same things in two
dialects: `initialize` or `server/discover`; results without or with `resultType`, cache hints and its
`serverInfo`; a server request (elicitation, sampling, roots) or an `input_required` round trip. So a cassette
of one era serves the other's host once each message is said in the other dialect: one rule per message kind
below (each a table row in tests/test_eras_translation.py), applied by `translated` to a whole cassette once.
The engine serves the translation from the host's first request on, as it serves a recording of that era
(`replay.Replay`). It keeps interactions[i] where the recording has it: what a dialect folds away stays with no
time, never matched nor expected to play (`folded`); the rounds a server request splits into come after.
What cannot be said in the other dialect is listed in docs/cassette-format.md ("Both eras, one cassette").
"""

from __future__ import annotations

from mockmcp._wire import protocol
from mockmcp.cassette.model import NOTIFICATION, REQUEST, SERVER, Cassette, Interaction, ServerItem
from mockmcp.engine.emulation import recorded_eras

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SERVER_ERAS", "for_host", "handshake_opening", "handshake_params", "handshake_result", "host_era"]
__all__ += ["in_words", "input_required", "recorded", "retry_params", "rounds", "served", "server_requests"]
__all__ += ["stateless_opening", "stateless_params", "stateless_result", "translated", "translated_eras"]

SERVER_ERAS = "server_eras"  # meta: the eras the recorded server speaks, where its messages cannot say so
# What a host of 2026-07-28 answers in a retry; only these become server requests of the handshake era.
ASKED = ("elicitation/create", "sampling/createMessage", "roots/list")
_FOLDED = ("notifications/initialized", protocol.PING, "logging/setLevel")  # a stateless host never sends them
_STATELESS_ONLY = ("resultType", "ttlMs", "cacheScope")  # result fields of 2026-07-28 alone
_HANDSHAKE = protocol.REVISIONS[:-1]


def host_era(message: Any) -> str:
    """The era a host's request speaks (an opening or not)."""
    return protocol.STATELESS if protocol.speaks_stateless(message) else protocol.HANDSHAKE


def recorded(cassette: Cassette) -> set[str]:
    """The eras the cassette's sessions speak, as their messages (or `meta.era`, for a recipe) show them."""
    eras = set(recorded_eras(cassette.interactions))
    stated = cassette.meta.get("era")
    return eras or ({stated} if stated in (protocol.HANDSHAKE, protocol.STATELESS) else set())


def served(cassette: Cassette) -> list[str]:
    """The eras a host may open in, handshake first: those recorded; the handshake where a recorded discovery lists
    a handshake revision; those `meta.server_eras` states (a server whose messages never name its other era)."""
    eras = recorded(cassette)
    for interaction in cassette.interactions:
        result = (interaction.response or {}).get("result") if interaction.method == protocol.DISCOVER else None
        listed = result.get("supportedVersions") if isinstance(result, dict) else None
        if isinstance(listed, list) and set(listed) & set(_HANDSHAKE):
            eras.add(protocol.HANDSHAKE)
    stated = cassette.meta.get(SERVER_ERAS)
    eras |= {era for era in (protocol.HANDSHAKE, protocol.STATELESS) if isinstance(stated, list) and era in stated}
    return sorted(eras, key=lambda era: era != protocol.HANDSHAKE)


def translated_eras(cassette: Cassette) -> list[str]:
    """The eras whose hosts the cassette serves translated: those its server speaks (`served`) when it recorded
    only the other one."""
    spoken = recorded(cassette)
    return [era for era in served(cassette) if era not in spoken] if len(spoken) == 1 else []


def in_words(cassette: Cassette) -> str:
    """Which eras' hosts the cassette serves, for lint ("": it shows no era)."""
    spoken, translated = recorded(cassette), translated_eras(cassette)
    names = {protocol.HANDSHAKE: "the handshake era", protocol.STATELESS: f"the {protocol.STATELESS_VERSION} era"}
    if not spoken:
        return ""
    if not translated:
        both = len(spoken) > 1
        return "serves hosts of both eras" if both else f"serves hosts of {names[next(iter(spoken))]} only"
    why = "as its server speaks both" + (f" (meta.{SERVER_ERAS})" if SERVER_ERAS in cassette.meta else "")
    return (
        f"serves hosts of both eras: {names[next(iter(spoken))]} as recorded, {names[translated[0]]} translated, {why}"
    )


def _meta_without(holder: dict[str, Any], keys: Any) -> dict[str, Any]:
    """holder without the `_meta` keys `keys` accepts, and without `_meta` once it is empty."""
    meta = {key: value for key, value in protocol.meta(holder).items() if not keys(key)}
    rest = {key: value for key, value in holder.items() if key != "_meta"}
    return {**rest, "_meta": meta} if meta else rest


# --- the opening -------------------------------------------------------------------------------------------------


def handshake_opening(message: dict[str, Any], response: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A `server/discover` exchange as the `initialize` one its server has with a handshake host: the host's
    declared capabilities and name as params; the server's capabilities, name and instructions, in the newest
    handshake revision the discovery lists (else the newest there is; `emulation.negotiated` answers an older one
    a host asks for)."""
    meta = protocol.meta(message.get("params"))
    params = {"protocolVersion": _HANDSHAKE[-1], "capabilities": meta.get(protocol.CLIENT_CAPABILITIES_KEY) or {}}
    params["clientInfo"] = meta.get(protocol.CLIENT_INFO_KEY) or {}
    result = response["result"]
    listed = [v for v in _HANDSHAKE if v in (result.get("supportedVersions") or ())]
    answer = {"protocolVersion": (listed or _HANDSHAKE)[-1], "capabilities": result.get("capabilities") or {}}
    answer["serverInfo"] = protocol.meta(result).get(protocol.SERVER_INFO_KEY) or {}
    if "instructions" in result:
        answer["instructions"] = result["instructions"]
    opened = {"jsonrpc": "2.0", "id": message.get("id"), "method": protocol.INITIALIZE, "params": params}
    return opened, {**response, "result": answer}


def stateless_opening(message: dict[str, Any], response: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An `initialize` exchange as the `server/discover` one its server has with a 2026-07-28 host: the versions it
    lists are that era's (as the SDK's servers list them), its capabilities, instructions and name as answered."""
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = {protocol.PROTOCOL_VERSION_KEY: protocol.STATELESS_VERSION}
    meta |= {protocol.CLIENT_CAPABILITIES_KEY: params.get("capabilities") or {}}
    meta |= {protocol.CLIENT_INFO_KEY: params.get("clientInfo") or {}}
    result = response["result"]
    answer = {"supportedVersions": [protocol.STATELESS_VERSION], "capabilities": result.get("capabilities") or {}}
    if "instructions" in result:
        answer["instructions"] = result["instructions"]
    answer |= {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    answer["_meta"] = {protocol.SERVER_INFO_KEY: result.get("serverInfo") or {}}
    opened = {"jsonrpc": "2.0", "id": message.get("id"), "method": protocol.DISCOVER, "params": {"_meta": meta}}
    return opened, {**response, "result": answer}


# --- every other request and its result ------------------------------------------------------------------------


def handshake_params(params: Any) -> Any:
    """A client message's params without the `_meta` keys MCP puts on every 2026-07-28 message."""
    if not isinstance(params, dict) or not protocol.meta(params):
        return params
    return _meta_without(params, lambda key: key.startswith(protocol.SPEC_PREFIX))


def stateless_params(params: Any) -> dict[str, Any]:
    """A client message's params with the protocol version a 2026-07-28 host names on every message."""
    params = params if isinstance(params, dict) else {}
    return {**params, "_meta": {**protocol.meta(params), protocol.PROTOCOL_VERSION_KEY: protocol.STATELESS_VERSION}}


def handshake_result(response: Any) -> Any:
    """A response without the result fields of 2026-07-28 alone, and without the server's name it stamps there."""
    result = response.get("result") if isinstance(response, dict) else None
    if not isinstance(result, dict):
        return response
    result = _meta_without(result, lambda key: key == protocol.SERVER_INFO_KEY)
    return {**response, "result": {key: value for key, value in result.items() if key not in _STATELESS_ONLY}}


def stateless_result(method: str, response: Any, server_info: Any) -> Any:
    """A response with what 2026-07-28 requires of it (`protocol.as_era_requires`), and the server's name in its
    `_meta` where the handshake named it (`server_info`: initialize's `serverInfo`), as the SDK's servers stamp it."""
    response = protocol.as_era_requires(method, response)
    result = response.get("result") if isinstance(response, dict) else None
    if not isinstance(result, dict) or server_info is None:
        return response
    return {**response, "result": {**result, "_meta": {**protocol.meta(result), protocol.SERVER_INFO_KEY: server_info}}}


# --- a server request, and the input_required round trip ---------------------------------------------------------


def server_requests(response: Any, first_id: int) -> list[tuple[str, dict[str, Any]]]:
    """The server requests an `input_required` result stands for, by their keys in `inputRequests`, numbered
    from `first_id` ([]: not such a result, or it asks what no server request asks)."""
    result = response.get("result") if isinstance(response, dict) else None
    asks = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(asks, dict) or result.get("resultType") != protocol.INPUT_REQUIRED:
        return []
    if not all(isinstance(ask, dict) and ask.get("method") in ASKED for ask in asks.values()):
        return []
    found = []
    for n, (key, ask) in enumerate(asks.items()):
        request = {"jsonrpc": "2.0", "id": first_id + n, "method": ask["method"]}
        found.append((key, request if ask.get("params") is None else {**request, "params": ask["params"]}))
    return found


def input_required(request: dict[str, Any], state: str, server_info: Any) -> dict[str, Any]:
    """A server request as the `input_required` result a 2026-07-28 host gets instead, keyed by its method, with
    `state` as the `requestState` the host echoes in its retry."""
    ask = {key: value for key, value in request.items() if key in ("method", "params")}
    result = {"resultType": protocol.INPUT_REQUIRED, "inputRequests": {request["method"]: ask}, "requestState": state}
    if server_info is not None:
        result["_meta"] = {protocol.SERVER_INFO_KEY: server_info}
    return {"result": result}


def retry_params(params: Any, key: str, answer: Any, state: str) -> dict[str, Any]:
    """A retry's params: the request's own, the host's answer under its key, the server's `requestState`."""
    return {**(params if isinstance(params, dict) else {}), "inputResponses": {key: answer}, "requestState": state}


def rounds(interactions: tuple[Interaction, ...]) -> dict[int, list[int]]:
    """`input_required` rounds: the first interaction of each round trip -> all of its rounds, in order (a retry
    is the next request of the same method and session with `inputResponses`, and the server's `requestState`)."""
    found: dict[int, list[int]] = {}
    first_of: dict[int, int] = {}
    for n, item in enumerate(interactions):
        result = (item.response or {}).get("result")
        if not isinstance(result, dict) or result.get("resultType") != protocol.INPUT_REQUIRED:
            continue
        for m in range(n + 1, len(interactions)):
            retry = interactions[m]
            params = retry.params if isinstance(retry.params, dict) else {}
            if retry.session != item.session or retry.method != item.method or "inputResponses" not in params:
                continue
            if "requestState" in result and params.get("requestState") != result["requestState"]:
                continue
            first = first_of.setdefault(n, n)
            first_of[m] = first
            found.setdefault(first, [n]).append(m)
            break
    return found


# --- a whole cassette --------------------------------------------------------------------------------------------


def translated(cassette: Cassette, era: str) -> tuple[Cassette, frozenset[int]]:
    """The cassette as a server of both eras says it to a host of `era`, and the interactions folded away."""
    if era == protocol.HANDSHAKE:
        interactions, folded = _to_handshake(cassette.interactions)
    else:
        interactions, folded = _to_stateless(cassette.interactions)
    meta = {**cassette.meta, "era": era}
    return Cassette(tuple(interactions), meta, cassette.path), frozenset(folded)


def _folded(interaction: Interaction) -> Interaction:
    return interaction._replace(at=None, took=None, server=tuple(item._replace(at=None) for item in interaction.server))


def _to_handshake(interactions: tuple[Interaction, ...]) -> tuple[list[Interaction], set[int]]:
    out, folded, asked = list(interactions), set(), 1
    chains = rounds(interactions)
    for i, interaction in enumerate(interactions):
        if i in folded or interaction.message is None:
            continue
        message = {**interaction.message, "params": handshake_params(interaction.params)}
        message = {k: v for k, v in message.items() if v is not None or k != "params"}
        response, server = handshake_result(interaction.response), list(interaction.server)
        if interaction.method == protocol.DISCOVER and isinstance((interaction.response or {}).get("result"), dict):
            message, response = handshake_opening(interaction.message, interaction.response or {})
        took = interaction.took
        for previous, retry in zip(chains.get(i, ()), chains.get(i, ())[1:], strict=False):
            before, after = interactions[previous], interactions[retry]
            answers = after.params.get("inputResponses") or {}
            at = None if before.at is None or before.took is None else round(before.at + before.took, 4)
            for key, request in server_requests(before.response, asked):
                asked += 1
                server.append(ServerItem(REQUEST, request, {"result": answers.get(key)}, at))
            server.extend(after.server)
            response, folded = handshake_result(after.response), folded | {retry}
            ended = None if after.at is None or after.took is None else after.at + after.took
            took = None if ended is None or interaction.at is None else round(ended - interaction.at, 4)
            out[retry] = _folded(after)
        out[i] = interaction._replace(message=message, response=response, server=tuple(server), took=took)
    return out, folded


def _to_stateless(interactions: tuple[Interaction, ...]) -> tuple[list[Interaction], set[int]]:
    out, folded, rounds_after = list(interactions), set(), []
    info = next(
        (i.response["result"].get("serverInfo") for i in interactions if i.method == protocol.INITIALIZE and _ok(i)),
        None,
    )
    for i, interaction in enumerate(interactions):
        if interaction.kind == SERVER or interaction.message is None:
            continue
        if interaction.method in _FOLDED:
            out[i] = _folded(interaction)
            folded.add(i)
            continue
        if interaction.method == protocol.INITIALIZE and _ok(interaction):
            message, response = stateless_opening(interaction.message, interaction.response or {})
            out[i] = interaction._replace(message=message, response=response)
            continue
        message = {**interaction.message, "params": stateless_params(interaction.params)}
        if interaction.kind == NOTIFICATION:
            out[i] = interaction._replace(message=message)
            continue
        split = _split(interaction._replace(message=message), info, i)
        out[i], more = split[0], split[1:]
        rounds_after.extend(more)
    return out + rounds_after, folded


def _ok(interaction: Interaction) -> bool:
    return isinstance((interaction.response or {}).get("result"), dict)


def _split(interaction: Interaction, info: Any, index: int) -> list[Interaction]:
    """A request whose server asked the host: one round per server request, each answered `input_required` with
    it, the host's recorded answer in the next round's retry; then the server's answer. A server's ping (2026-07-28
    has none), and a question its host answered with an error (`inputResponses` hold results), are left out."""
    method, params = interaction.method or "", interaction.params
    current, server, found = interaction, [], []
    for item in interaction.server:
        answered = (item.response or {}).get("result") if item.kind == REQUEST else None
        if item.kind != REQUEST or item.message.get("method") not in ASKED or answered is None:
            if item.kind != REQUEST:
                server.append(item)
            continue
        state = f"mockmcp-{index}-{len(found) + 1}"
        response = input_required(item.message, state, info)
        took = None if item.at is None or current.at is None else round(item.at - current.at, 4)
        found.append(current._replace(server=tuple(server), response=response, took=took))
        retry = {**interaction.message, "params": retry_params(params, item.message["method"], answered, state)}
        at = item.at if item.took is None or item.at is None else round(item.at + item.took, 4)
        current, server = interaction._replace(message=retry, at=at, server=()), []
    took = interaction.took
    if found and interaction.at is not None and interaction.took is not None and current.at is not None:
        took = round(interaction.at + interaction.took - current.at, 4)
    last = current._replace(server=tuple(server), response=stateless_result(method, interaction.response, info))
    return [*found, last._replace(took=took)] if found else [last]


_MEMO: dict[tuple[int, str], tuple[Cassette, tuple[Cassette, frozenset[int]] | None]] = {}


def for_host(era: str, cassette: Cassette) -> tuple[Cassette, frozenset[int]] | None:
    """The translation a host of `era` is served (None: the cassette recorded that era, or its server never
    spoke it, and it is served as recorded). Decided and made once per cassette, as its index is
    (`selection.Recordings`): every live session of a server asks it."""
    memo = _MEMO.get((id(cassette), era))
    if memo is None or memo[0] is not cassette:
        if len(_MEMO) >= 16:
            del _MEMO[next(iter(_MEMO))]
        made = translated(cassette, era) if era in translated_eras(cassette) else None
        memo = _MEMO[(id(cassette), era)] = (cassette, made)
    return memo[1]
