"""What a server of the recorded revision says where the cassette is silent: `core.emulation`, row by row.

Pure functions, literal JSON-RPC: a ping per era; an opening of the era the cassette never recorded
(-32022 with the recorded versions, or -32601); how the live host's capabilities differ from the
recording's, in words; -32021 for a stateless answer asking what the request did not declare; the
note on an `initialize` asking another protocol version. The engine's own tests (tests/test_eras.py,
tests/test_replay_engine.py) show the same rules through `Replay`.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp.cassette.model import Interaction
from mockmcp.engine import emulation

V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
INIT_RESULT = {"result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "n"}}}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}


def request(message: dict[str, Any], response: dict[str, Any] | None = None) -> Interaction:
    return Interaction("request", message, response=response or {"result": {}})


def call(version: str, id: Any = 2) -> Interaction:
    params = {"name": "t", "_meta": {V: version}}
    return request({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})


HANDSHAKE = (request(INIT, INIT_RESULT),)
STATELESS = (request(DISCOVER, {"result": {"supportedVersions": ["2026-07-28"]}}), call("2026-07-28"))
BOTH = HANDSHAKE + STATELESS


@pytest.mark.parametrize(
    ("message", "answer", "noted"),
    [
        ({"jsonrpc": "2.0", "id": 3, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "result": {}}, False),
        (
            {"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {"_meta": {V: "2026-07-28"}}},
            {"jsonrpc": "2.0", "id": "p", "error": {"code": -32601, "message": "Method not found", "data": "ping"}},
            True,
        ),
    ],
    ids=["handshake-era", "stateless-era"],
)
def test_a_ping_is_answered_as_a_server_of_its_era_answers_it(
    message: dict[str, Any], answer: dict[str, Any], noted: bool
) -> None:
    got, note = emulation.ping(message)
    assert got == answer
    assert (note is not None) == noted
    if note is not None:
        assert note.startswith("mockmcp: the host sent ping in the 2026-07-28 era, which has no ping")


@pytest.mark.parametrize(
    ("interactions", "eras"),
    [
        (HANDSHAKE, ["handshake"]),
        (STATELESS, ["stateless"]),
        (STATELESS + HANDSHAKE, ["handshake", "stateless"]),  # handshake first, whatever the order
        ((request(DISCOVER, {"error": {"code": -32601, "message": "no"}}),), []),  # a refused probe shows no era
    ],
    ids=["handshake", "stateless", "both", "refused-probe"],
)
def test_the_recorded_eras(interactions: tuple[Interaction, ...], eras: list[str]) -> None:
    assert emulation.recorded_eras(interactions) == eras


@pytest.mark.parametrize(
    ("message", "interactions", "code", "data"),
    [
        (INIT, STATELESS, -32022, {"supported": ["2026-07-28"], "requested": "2025-06-18"}),
        ({**INIT, "params": {}}, STATELESS, -32022, {"supported": ["2026-07-28"]}),
        (
            {**INIT, "params": {"protocolVersion": 7}},  # a requested version that is not a string is not echoed
            (call("2027-01-01"), call("2026-07-28", 3)),
            -32022,
            {"supported": ["2026-07-28", "2027-01-01"]},  # every recorded version, sorted
        ),
        (DISCOVER, HANDSHAKE, -32601, None),  # the miss's own -32601, with its explanation
        (INIT, BOTH, None, None),  # both eras recorded: an ordinary miss
        (DISCOVER, BOTH, None, None),
        (INIT, HANDSHAKE, None, None),  # the cassette's own era: an ordinary miss
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, STATELESS, None, None),  # not an opening
    ],
    ids=[
        "initialize-to-stateless",
        "initialize-naming-no-version",
        "every-recorded-version",
        "discover-to-handshake",
        "initialize-to-both",
        "discover-to-both",
        "initialize-to-handshake",
        "not-an-opening",
    ],
)
def test_an_opening_of_the_other_era_is_refused_as_a_server_of_the_recorded_era_refuses_it(
    message: dict[str, Any], interactions: tuple[Interaction, ...], code: int | None, data: dict[str, Any] | None
) -> None:
    refusal = emulation.other_era(message, interactions, "cassettes/x.yaml")
    if code is None:
        assert refusal is None
        return
    assert refusal is not None and refusal.code == code
    assert "cassettes/x.yaml holds only" in refusal.reason
    if data is None:
        assert refusal.error is None
    else:
        assert refusal.error == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32022, "message": "Unsupported protocol version", "data": data},
        }


@pytest.mark.parametrize(
    ("recorded", "live", "words"),
    [
        ({"roots": {}}, {"roots": {}}, ""),
        ({}, {"sampling": {}, "roots": {}}, "declares roots, sampling, which the recording's host did not"),
        ({"elicitation": {}}, {}, "does not declare elicitation, which the recording's host did"),
        ({"roots": {"listChanged": True}}, {"roots": {}}, "declares roots otherwise than the recording's host"),
        (
            {"roots": {}, "sampling": {}},
            {"sampling": {"tools": {}}, "elicitation": {}},
            "declares elicitation, which the recording's host did not; does not declare roots, which the "
            "recording's host did; declares sampling otherwise than the recording's host",
        ),
    ],
    ids=["alike", "added", "removed", "changed", "all-three"],
)
def test_how_capabilities_differ_in_words(recorded: dict[str, Any], live: dict[str, Any], words: str) -> None:
    assert emulation.capability_differences(recorded, live) == words


def test_a_capability_difference_is_reported_with_the_interaction_and_noted_with_what_follows() -> None:
    text, note = emulation.capability_note("declares roots, which the recording's host did not", 4, "initialize")
    assert text == "the host declares roots, which the recording's host did not (interactions[4] initialize)"
    assert note.startswith(f"mockmcp: {text}; its answers were recorded for the other capabilities")


def input_required(*asks: dict[str, Any]) -> dict[str, Any]:
    requests = {f"ask{n}": ask for n, ask in enumerate(asks)}
    return {"result": {"resultType": "input_required", "inputRequests": requests, "requestState": "s"}}


ELICIT = {"method": "elicitation/create", "params": {"message": "sure?"}}
ELICIT_URL = {"method": "elicitation/create", "params": {"mode": "url", "url": "https://x"}}
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": []}}


@pytest.mark.parametrize(
    ("declared", "response", "refused"),
    [
        ({}, {"result": {"content": []}}, None),  # asks nothing
        ({"elicitation": {}}, input_required(ELICIT), None),
        ({}, input_required(ELICIT), ("elicitation/create", "elicitation.form", {"elicitation": {"form": {}}})),
        ({"elicitation": {}}, input_required(ELICIT_URL), ("elicitation/create", "elicitation.url", None)),
        ({"elicitation": {}}, input_required(ELICIT, SAMPLE), ("sampling/createMessage", "sampling", None)),
        ({}, {"error": {"code": -32603, "message": "x"}}, None),
        ({}, None, None),  # no recorded response (a dropped one)
    ],
    ids=["nothing-asked", "declared", "undeclared", "url-mode", "the-first-missing", "an-error", "no-response"],
)
def test_a_stateless_answer_asking_what_was_not_declared_is_answered_32021(
    declared: dict[str, Any], response: Any, refused: tuple[str, str, dict[str, Any] | None] | None
) -> None:
    found = emulation.undeclared("r", declared, response)
    if refused is None:
        assert found is None
        return
    assert found is not None
    method, missing, error = found
    assert (method, missing) == refused[:2]
    assert error["id"] == "r" and error["error"]["code"] == -32021
    assert error["error"]["message"] == f"Client did not declare the {missing} capability"
    if refused[2] is not None:
        assert error["error"]["data"] == {"requiredCapabilities": refused[2]}


@pytest.mark.parametrize(
    ("asked", "recorded", "start", "kept"),
    [
        ({"protocolVersion": "2025-06-18"}, {"protocolVersion": "2025-06-18"}, None, False),
        ({"protocolVersion": "2024-11-05"}, {"protocolVersion": "2025-06-18"}, "older than the '2025-06-18'", True),
        ({"protocolVersion": "2025-11-25"}, {"protocolVersion": "2025-06-18"}, "the cassette recorded", False),
        ({"protocolVersion": "1999-01-01"}, {"protocolVersion": "2025-06-18"}, "the cassette recorded", False),
        ({}, {"protocolVersion": "2025-06-18"}, "the cassette recorded", False),
        ({"protocolVersion": "2024-11-05"}, {}, None, False),  # the recording named none
        (None, {"protocolVersion": "2025-06-18"}, None, False),  # no params to read
    ],
    ids=["same", "older", "newer", "unknown", "none-asked", "none-recorded", "no-params"],
)
def test_an_initialize_asking_another_version_is_noted_and_an_older_one_reported(
    asked: Any, recorded: Any, start: str | None, kept: bool
) -> None:
    found = emulation.version_note(asked, recorded, 0)
    if start is None:
        assert found is None
        return
    assert found is not None
    text, report = found
    assert start in text and report == kept


def _answered(version: str) -> dict[str, Any]:
    return {"result": {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}


@pytest.mark.parametrize(
    ("asked", "recorded", "answered"),
    [
        ({"protocolVersion": "2024-11-05"}, _answered("2025-11-25"), "2024-11-05"),  # the SDK server's answer
        ({"protocolVersion": "2025-03-26"}, _answered("2025-06-18"), "2025-03-26"),
        ({"protocolVersion": "2025-11-25"}, _answered("2025-11-25"), None),  # the recorded answer's
        ({"protocolVersion": "2025-11-25"}, _answered("2025-06-18"), None),  # newer: the server answers its own
        ({"protocolVersion": "2024-10-07"}, _answered("2025-11-25"), None),  # one mockmcp does not know
        ({"protocolVersion": "2026-07-28"}, _answered("2025-11-25"), None),  # another era
        ({"protocolVersion": "2024-11-05"}, {"error": {"code": -32602, "message": "no"}}, None),
        ({}, _answered("2025-11-25"), None),
        (None, _answered("2025-11-25"), None),
    ],
    ids=["oldest", "older", "same", "newer", "unknown", "stateless", "refused", "none-asked", "no-params"],
)
def test_an_initialize_asking_an_older_version_is_answered_in_it(asked: Any, recorded: Any, answered: Any) -> None:
    assert emulation.negotiated(asked, recorded) == answered


@pytest.mark.parametrize(
    ("method", "refused", "expected"),
    [
        ("tools/call", emulation.Refusal(-32022, "other era"), emulation.Refusal(-32022, "other era")),
        ("tools/call", None, (-32099, "no recorded interaction matches this tools/call request", None)),
        ("prompts/get", None, (-32601, "the cassette never recorded the method 'prompts/get'", None)),
    ],
    ids=["as-the-server-refuses", "a-recorded-method", "a-method-never-recorded"],
)
def test_a_request_no_recording_answers_is_refused(method: str, refused: Any, expected: tuple[Any, ...]) -> None:
    assert emulation.refusal(method, refused, frozenset({"tools/call", "initialize"})) == expected


def test_the_live_hosts_capabilities_are_taken_in_and_each_difference_noted_once() -> None:
    capabilities = emulation.Capabilities()
    assert capabilities.missing(SAMPLE) is None  # nothing declared yet: server requests go out as recorded
    recorded: dict[str, Any] = {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}}}
    live: dict[str, Any] = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}}
    differs = (
        "declares roots, which the recording's host did not; does not declare sampling, which the recording's host did"
    )
    text = f"the host {differs} (interactions[0] initialize)"
    [(note, kept)] = capabilities.take("initialize", live, live["capabilities"], recorded, 0)
    assert note.startswith(f"mockmcp: {text}; ") and kept == text
    assert capabilities.missing(SAMPLE) == "sampling"
    assert capabilities.take("initialize", live, live["capabilities"], recorded, 0) == []  # noted once
    assert capabilities.take("initialize", recorded, recorded["capabilities"], recorded, 0) == []  # alike
    assert capabilities.missing(SAMPLE) is None


def test_a_request_declaring_nothing_leaves_what_the_host_declared() -> None:
    capabilities = emulation.Capabilities()
    capabilities.take("initialize", {"capabilities": {}}, {}, {"capabilities": {}}, 0)
    assert capabilities.take("tools/list", None, None, None, 1) == [] and capabilities.missing(SAMPLE) == "sampling"
    older = {"protocolVersion": "2024-11-05", "capabilities": {}}
    [(note, kept)] = capabilities.take(
        "initialize", older, {}, {"protocolVersion": "2025-06-18", "capabilities": {}}, 0
    )
    assert note.startswith("mockmcp: the host asks for protocol version '2024-11-05', older") and kept == note[9:]
