"""What a real server of the recorded revision says where the cassette is silent. Pure functions.

A live host may ping, open in the other era, declare other capabilities or ask an older protocol version
than the recording's host; a real server answers those by the rules of its revision. Each function takes
the live message and the recording and says what such a server answers and what to note; the engine sends
it and keeps the report (each rule a table row: tests/test_emulation.py).
"""

from __future__ import annotations

from mockmcp._wire import jsonrpc, protocol
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp.cassette.model import CLOSED_WORLD, REQUEST, answered_tools
from mockmcp.engine.matching import canonical

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container
    from typing import Any

    from mockmcp.cassette.model import Cassette, Interaction

__all__ = ["CLOSED", "CLOSED_FIXES", "Capabilities", "Refusal", "capability_differences", "capability_note"]
__all__ += ["closed_world", "negotiated", "other_era", "ping", "recorded_eras", "refusal", "undeclared", "version_note"]


class Refusal(NamedTuple):
    """How a server refuses a request the cassette never recorded: the error code, the reason (for the
    miss it is), and the error response (None: the miss's own, which carries its explanation)."""

    code: int
    reason: str
    error: dict[str, Any] | None = None


def refusal(method: str, refused: Refusal | None, recorded: Container[str]) -> Refusal:
    """How replay refuses a request no recording answers: as `refused` says, else "no match" for a `recorded`
    method, else "method not found", as a server that never heard of the method answers."""
    if refused is not None:
        return refused
    if method in recorded:
        return Refusal(jsonrpc.NO_MATCH, f"no recorded interaction matches this {method} request")
    return Refusal(jsonrpc.METHOD_NOT_FOUND, f"the cassette never recorded the method {method!r}")


CLOSED = "the cassette is a closed world"  # `meta.closed_world`: a tool it does not answer is no near miss
CLOSED_FIXES = (
    "if the host should not call this tool, the test found what it is for: fix the host",
    "if it may, add an interaction answering it (`mockmcp stub` writes one per tool), or leave the world open: "
    "take out `meta.closed_world` (or --closed-world, the marker's closed_world=True)",
)


def closed_world(message: dict[str, Any], cassette: Cassette) -> Refusal | None:
    """In a closed world (`meta.closed_world`), a call of a tool no recording answers: refused at once with the
    tools the cassette answers (None otherwise: one it answers, asked otherwise, is an ordinary miss, explained)."""
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    if message["method"] != "tools/call" or cassette.meta.get(CLOSED_WORLD) is not True:
        return None
    answered = answered_tools(cassette)
    if answered is None or name in answered:
        return None
    tools = ", ".join(answered) or "none"
    said = f"mockmcp: closed world: no tool {name!r} is answered here; the cassette answers: {tools}"
    error = jsonrpc.error_response(message["id"], jsonrpc.NO_MATCH, said, {"tool": name, "answered": answered})
    return Refusal(jsonrpc.NO_MATCH, f"{CLOSED}, and answers no tool {name!r}; it answers: {tools}", error)


def ping(message: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The answer to a ping the cassette never recorded (no miss), and a note (None: nothing to note): `{}`
    in the handshake era; -32601 in 2026-07-28, which has no `ping`, as the SDK's server answers it."""
    if not protocol.speaks_stateless(message):
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}, None
    error = jsonrpc.error_response(message["id"], jsonrpc.METHOD_NOT_FOUND, "Method not found", protocol.PING)
    note = (
        f"mockmcp: the host sent ping in the {protocol.STATELESS_VERSION} era, which has no ping; "
        "answered -32601 as a server of that revision does"
    )
    return error, note


def recorded_eras(interactions: tuple[Interaction, ...]) -> list[str]:
    """The eras the cassette's sessions speak, handshake first."""
    exchanges = ((i.message, i.response) for i in interactions if i.kind == REQUEST)
    return list(protocol.session_eras(exchanges))


def other_era(message: dict[str, Any], interactions: tuple[Interaction, ...], where: str) -> Refusal | None:
    """How a server of the cassette's only era refuses an opening of the other (None: not the case), so that
    a client in auto mode moves on: `initialize` -32022 with the versions recorded (it probes
    `server/discover`), `server/discover` -32601 (it falls back to `initialize`). A miss all the same."""
    method = message["method"]
    if method not in (protocol.INITIALIZE, protocol.DISCOVER):
        return None
    eras = recorded_eras(interactions)
    if method == protocol.INITIALIZE and eras == [protocol.STATELESS]:
        versions = sorted({v for i in interactions if (v := protocol.protocol_version(i.message)) is not None})
        requested = params.get("protocolVersion") if isinstance(params := message.get("params"), dict) else None
        reason = (
            f"the host opened with initialize (the handshake era), and {where} holds only "
            f"{protocol.STATELESS_VERSION} sessions; answered {protocol.UNSUPPORTED_VERSION} with the versions it "
            "recorded, as a server of that revision does (a client in auto mode then probes server/discover)"
            + _recorded_by(interactions)
        )
        data: dict[str, Any] = {"supported": versions or [protocol.STATELESS_VERSION]}
        if isinstance(requested, str):
            data["requested"] = requested
        error = jsonrpc.error_response(
            message["id"], protocol.UNSUPPORTED_VERSION, "Unsupported protocol version", data
        )
        return Refusal(protocol.UNSUPPORTED_VERSION, reason, error)
    if method == protocol.DISCOVER and eras == [protocol.HANDSHAKE]:
        reason = (
            f"the host probed server/discover (the {protocol.STATELESS_VERSION} era), and {where} holds only "
            "handshake-era sessions; answered -32601, as a server of that era does (the host then falls back "
            "to initialize)" + _recorded_by(interactions)
        )
        return Refusal(jsonrpc.METHOD_NOT_FOUND, reason)
    return None


def _recorded_by(interactions: tuple[Interaction, ...]) -> str:
    """Which host recorded the cassette (from the clientInfo its requests named), and what to do: a cassette
    answers in the era its host spoke, so the host under test records its own session into it."""
    hosts = sorted({h for i in interactions if i.kind == REQUEST and (h := protocol.client_info(i.method, i.params))})
    by = f"the cassette was recorded by the host {', '.join(hosts)}" if hosts else "the cassette was recorded by a host"
    # In no front end's words: the fixes after it say how where the user is (a shell, pytest, a test helper).
    fix = "record the host you test into it, in the record mode new_episodes (how to fix, below); or, when its "
    fix += "server speaks both eras, say so in the cassette (`meta.server_eras: [handshake, stateless]`): it is then "
    fix += "answered in the host's era"
    return f"; {by}, which spoke the other era: {fix}"


def capability_differences(recorded: dict[str, Any], live: dict[str, Any]) -> str:
    """How the live host's capabilities differ from the recording's host's, in words ("" when alike)."""
    added, removed = sorted(set(live) - set(recorded)), sorted(set(recorded) - set(live))
    changed = sorted(name for name in set(live) & set(recorded) if canonical(live[name]) != canonical(recorded[name]))
    parts = (
        (added, "declares {}, which the recording's host did not"),
        (removed, "does not declare {}, which the recording's host did"),
        (changed, "declares {} otherwise than the recording's host"),
    )
    return "; ".join(text.format(", ".join(names)) for names, text in parts if names)


def capability_note(differences: str, index: int, method: str) -> tuple[str, str]:
    """What the report says of capabilities that differ from those of interactions[index], and the note:
    a server may answer a host by what it declared, so the recorded answers may not be what it would say."""
    text = f"the host {differences} (interactions[{index}] {method})"
    note = (
        f"mockmcp: {text}; its answers were recorded for the other capabilities, and server requests "
        "the host did not declare a capability for are withheld"
    )
    return text, note


def undeclared(request_id: Any, declared: dict[str, Any], response: Any) -> tuple[str, str, dict[str, Any]] | None:
    """A stateless-era answer whose `inputRequests` ask what the live request did not declare: the method
    asked, the capability missing, and the -32021 error a server answers instead (None: it may go out)."""
    result = response.get("result") if isinstance(response, dict) else None
    asks = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(asks, dict):
        return None
    for ask in asks.values():
        missing = protocol.missing_capability(declared, ask)
        if missing is not None:
            break
    else:
        return None
    data = {"requiredCapabilities": protocol.required_capabilities(missing)}
    text = f"Client did not declare the {missing} capability"
    return ask["method"], missing, jsonrpc.error_response(request_id, protocol.MISSING_CAPABILITY, text, data)


class Capabilities:
    """What the live host declared (initialize's capabilities, or the last stateless request's), held against
    what the recording's host declared; the one stateful rule here, as a host declares once for a session."""

    __slots__ = ("_canonical", "_noted", "declared")

    def __init__(self) -> None:
        self.declared: dict[str, Any] | None = None  # None until it declares any: server requests go as recorded
        self._noted: set[str] = set()  # differences from the recording already noted
        self._canonical: dict[int, str] = {}  # interaction -> its declared capabilities, canonical

    def missing(self, message: dict[str, Any]) -> str | None:
        """The capability a server request needs that the live host did not declare (None: it may go out)."""
        return None if self.declared is None else protocol.missing_capability(self.declared, message)

    def take(
        self, method: str, params: Any, declared: dict[str, Any] | None, recorded: Any, index: int
    ) -> list[tuple[str, str | None]]:
        """What to note of how the live request differs from interactions[index]'s `recorded` params (its
        `initialize`'s protocol version, its `declared` capabilities once each, taken in), and what of it the
        report keeps (None: nothing)."""
        notes: list[tuple[str, str | None]] = []
        version = version_note(params, recorded, index) if method == protocol.INITIALIZE else None
        if version is not None:
            notes.append((f"mockmcp: {version[0]}", version[0] if version[1] else None))
        if declared is None:
            return notes
        self.declared = declared
        recorded = protocol.client_capabilities(method, recorded)
        if recorded is None:
            return notes
        text = self._canonical.get(index)
        if text is None:  # each recording's capabilities are made canonical once, not on every request
            text = self._canonical[index] = canonical(recorded)
        differences = "" if text == canonical(declared) else capability_differences(recorded, declared)
        if differences and differences not in self._noted:
            self._noted.add(differences)
            text, note = capability_note(differences, index, method)
            notes.append((note, text))
        return notes


def negotiated(params: Any, response: Any) -> str | None:
    """The protocol version a live `initialize` is answered in where it is not the recorded answer's: an older
    handshake revision the host asks for, which a server that answered a newer one speaks as well and answers in,
    as the official SDKs' servers do (None: the recorded answer's)."""
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    result = response.get("result") if isinstance(response, dict) else None
    answered = result.get("protocolVersion") if isinstance(result, dict) else None
    handshake = protocol.REVISIONS[: protocol.REVISIONS.index(protocol.STATELESS_VERSION)]
    if asked in handshake and answered in handshake and handshake.index(asked) < handshake.index(answered):
        return str(asked)
    return None


def version_note(params: Any, recorded: Any, index: int) -> tuple[str, bool] | None:
    """What to note of an `initialize` asking another protocol version than interactions[index] recorded,
    and whether the report keeps it too (an older version, whose server may offer less); None: the same."""
    if not isinstance(params, dict):
        return None
    wanted = recorded.get("protocolVersion") if isinstance(recorded, dict) else None
    asked = params.get("protocolVersion")
    if wanted is None or asked == wanted:
        return None
    revisions = protocol.REVISIONS
    if asked in revisions and wanted in revisions and revisions.index(asked) < revisions.index(wanted):
        text = (
            f"the host asks for protocol version {asked!r}, older than the {wanted!r} the recording's host "
            f"asked for (interactions[{index}]): a server that speaks {asked!r} answers in it, and may offer "
            "less; the answers are the recorded ones, of the newer version (initialize's says the version the "
            "server would answer in)"
        )
        return text, True
    return (
        f"the host asks for protocol version {asked!r}, the cassette recorded {wanted!r}; answering as recorded",
        False,
    )
