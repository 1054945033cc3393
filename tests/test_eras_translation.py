"""A recording of one era as a host of the other era gets it (`engine.eras`), row by row, in literal JSON-RPC.

Each message kind is one rule: the opening (`server/discover` <-> `initialize`), a client message's params, a
result, an `input_required` round trip <-> a server request; then which eras a cassette can serve, the
translation of whole round trips, and the engine serving it: a server of both eras answers the other era's
host, a server of one era still refuses it with the recorded versions. The SDK hosts' side is in
tests/test_eras_sdk.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.model import Cassette, Interaction, ServerItem
from mockmcp.engine import eras
from mockmcp.engine.actions import Send
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay

V, CAPS, INFO = (f"io.modelcontextprotocol/{key}" for key in ("protocolVersion", "clientCapabilities", "clientInfo"))
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
HOST = {V: "2026-07-28", CAPS: {"elicitation": {}}, INFO: {"name": "host", "version": "1"}}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": HOST}}
DISCOVERED = {
    "result": {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": True}},
        "instructions": "Notes.",
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {SERVER_INFO: {"name": "notes", "version": ""}},
    }
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": HOST[INFO]},
}
INITIALIZED = {
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": True}},
        "serverInfo": {"name": "notes", "version": ""},
        "instructions": "Notes.",
    }
}


def test_a_discovery_is_the_initialize_its_server_has_with_a_handshake_host() -> None:
    assert eras.handshake_opening(DISCOVER, DISCOVERED) == (INITIALIZE, INITIALIZED)


def test_an_initialize_is_the_discovery_its_server_has_with_a_2026_host() -> None:
    assert eras.stateless_opening(INITIALIZE, INITIALIZED) == (DISCOVER, DISCOVERED)


def test_a_discovery_listing_handshake_revisions_answers_in_the_newest_it_lists() -> None:
    listed = {"result": {**DISCOVERED["result"], "supportedVersions": ["2025-03-26", "2025-06-18", "2026-07-28"]}}
    assert eras.handshake_opening(DISCOVER, listed)[1]["result"]["protocolVersion"] == "2025-06-18"


@pytest.mark.parametrize(
    ("stateless", "handshake"),
    [
        ({"name": "t", "_meta": {**HOST, "progressToken": 5}}, {"name": "t", "_meta": {"progressToken": 5}}),
        ({"uri": "notes://a", "_meta": {**HOST, "io.modelcontextprotocol/logLevel": "info"}}, {"uri": "notes://a"}),
        ({"_meta": HOST}, {}),  # tools/list: an empty params is none given (`protocol.UNSET_WHEN_EMPTY`)
    ],
    ids=["progress-token-kept", "mcp-keys-dropped", "nothing-left"],
)
def test_a_client_message_loses_the_meta_keys_mcp_puts_on_every_2026_message(
    stateless: dict[str, Any], handshake: dict[str, Any]
) -> None:
    assert eras.handshake_params(stateless) == handshake


@pytest.mark.parametrize(
    ("handshake", "stateless"),
    [
        (None, {"_meta": {V: "2026-07-28"}}),
        ({"name": "t", "_meta": {"progressToken": 5}}, {"name": "t", "_meta": {"progressToken": 5, V: "2026-07-28"}}),
    ],
    ids=["no-params", "progress-token-kept"],
)
def test_a_client_message_names_the_2026_version(handshake: Any, stateless: dict[str, Any]) -> None:
    assert eras.stateless_params(handshake) == stateless


NAMED = {SERVER_INFO: {"name": "notes", "version": ""}}


@pytest.mark.parametrize(
    ("method", "handshake", "stateless"),
    [
        (
            "tools/call",
            {"result": {"content": [{"type": "text", "text": "hi"}], "isError": False}},
            {"result": {"resultType": "complete", "content": [{"type": "text", "text": "hi"}], "isError": False,
                        "_meta": NAMED}},
        ),
        (
            "resources/read",
            {"result": {"contents": []}},
            {"result": {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "contents": [], "_meta": NAMED}},
        ),
        (
            "prompts/get",
            {"result": {"messages": [], "_meta": {"mine": 1}}},
            {"result": {"resultType": "complete", "messages": [], "_meta": {"mine": 1, **NAMED}}},
        ),
        ("tools/call", {"error": {"code": -32602, "message": "bad"}}, {"error": {"code": -32602, "message": "bad"}}),
    ],
    ids=["tool-result", "cached-result", "own-meta-kept", "error-as-it-is"],
)  # fmt: skip
def test_a_result_with_and_without_the_fields_of_2026(method: str, handshake: Any, stateless: Any) -> None:
    assert eras.stateless_result(method, handshake, NAMED[SERVER_INFO]) == stateless
    assert eras.handshake_result(stateless) == handshake


ASK = {"method": "elicitation/create", "params": {"message": "Delete?", "requestedSchema": {"type": "object"}}}
ROUND = {
    "result": {
        "resultType": "input_required",
        "inputRequests": {"elicitation/create": ASK},
        "requestState": "mockmcp-5-1",
        "_meta": NAMED,
    }
}


def test_a_server_request_is_the_input_required_result_a_2026_host_gets() -> None:
    request = {"jsonrpc": "2.0", "id": 1, **ASK}
    assert eras.input_required(request, "mockmcp-5-1", NAMED[SERVER_INFO]) == ROUND
    assert eras.server_requests(ROUND, 1) == [("elicitation/create", request)]


@pytest.mark.parametrize(
    ("response", "requests"),
    [
        (
            {"result": {"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list"}, "b": ASK}}},
            [("a", {"jsonrpc": "2.0", "id": 7, "method": "roots/list"}), ("b", {"jsonrpc": "2.0", "id": 8, **ASK})],
        ),
        ({"result": {"resultType": "complete", "content": []}}, []),
        ({"result": {"resultType": "input_required", "inputRequests": {"a": {"method": "tasks/get"}}}}, []),
    ],
    ids=["two-asked-numbered-on", "complete", "asks-what-no-server-request-asks"],
)
def test_an_input_required_result_stands_for_server_requests(response: Any, requests: list[Any]) -> None:
    assert eras.server_requests(response, 7) == requests


def test_a_retry_carries_the_answer_under_its_key_and_the_request_state() -> None:
    params = eras.retry_params({"name": "delete"}, "elicitation/create", {"action": "accept"}, "mockmcp-5-1")
    assert params == {
        "name": "delete",
        "inputResponses": {"elicitation/create": {"action": "accept"}},
        "requestState": "mockmcp-5-1",
    }


# --- whole cassettes -------------------------------------------------------------------------------------------


def request(message: dict[str, Any], response: dict[str, Any], at: float, **fields: Any) -> Interaction:
    return Interaction("request", message, response=response, at=at, took=0.01, **fields)


def call(id: int, params: dict[str, Any], era: str) -> dict[str, Any]:
    params = eras.stateless_params(params) if era == "stateless" else params
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


DONE = {"result": {"content": [{"type": "text", "text": "deleted"}], "isError": False}}
ANSWER = {"action": "accept", "content": {"confirm": True}}
PROGRESS = ServerItem("notification", {"method": "notifications/progress", "params": {"progressToken": 2}}, at=0.2)
STATELESS = (
    request(DISCOVER, DISCOVERED, 0.0),
    request(call(2, {"name": "delete"}, "stateless"), ROUND, 0.1, server=(PROGRESS,)),
    request(
        call(3, eras.retry_params({"name": "delete"}, "elicitation/create", ANSWER, "mockmcp-5-1"), "stateless"),
        eras.stateless_result("tools/call", DONE, NAMED[SERVER_INFO]),
        0.3,
    ),
)
HANDSHAKE = (
    request(INITIALIZE, INITIALIZED, 0.0),
    Interaction("notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}, at=0.05),
    request(
        call(2, {"name": "delete"}, "handshake"),
        DONE,
        0.1,
        server=(PROGRESS, ServerItem("request", {"jsonrpc": "2.0", "id": 1, **ASK}, {"result": ANSWER}, at=0.2)),
    ),
)


def test_a_round_trip_is_one_request_with_a_server_request_to_a_handshake_host() -> None:
    cassette, folded = eras.translated(Cassette(STATELESS, {}), "handshake")
    assert folded == {2}  # the retry: played as part of interactions[1], never matched on its own
    opening, asked, retry = cassette.interactions
    assert (opening.message, opening.response) == (INITIALIZE, INITIALIZED)
    assert asked.message == call(2, {"name": "delete"}, "handshake") and asked.response == DONE
    assert asked.server == (
        PROGRESS,
        ServerItem("request", {"jsonrpc": "2.0", "id": 1, **ASK}, {"result": ANSWER}, 0.11),
    )
    assert asked.took == 0.21 and retry.at is None  # the round trip's end; the retry takes no part in the timeline


def test_a_server_request_is_a_round_trip_to_a_2026_host() -> None:
    cassette, folded = eras.translated(Cassette(HANDSHAKE, {}), "stateless")
    assert folded == {1}  # notifications/initialized: a 2026 host never sends it
    opening, _initialized, asked, retry = cassette.interactions
    assert (opening.message, opening.response) == (DISCOVER, DISCOVERED)
    state = "mockmcp-2-1"
    assert asked.message == call(2, {"name": "delete"}, "stateless") and asked.server == (PROGRESS,)
    assert asked.response == {"result": {**ROUND["result"], "requestState": state}}
    assert retry.message == call(
        2, eras.retry_params({"name": "delete"}, "elicitation/create", ANSWER, state), "stateless"
    )
    assert retry.response == eras.stateless_result("tools/call", DONE, NAMED[SERVER_INFO]) and retry.at == 0.2


@pytest.mark.parametrize(
    ("interactions", "meta", "served"),
    [
        (STATELESS, {}, ["stateless"]),
        (STATELESS, {"server_eras": ["handshake", "stateless"]}, ["handshake", "stateless"]),
        (HANDSHAKE, {"server_eras": ["stateless", "odd", {}]}, ["handshake", "stateless"]),
        ((request(DISCOVER, {"result": {"supportedVersions": ["2025-06-18", "2026-07-28"]}}, 0.0),), {},
         ["handshake", "stateless"]),
        ((), {"era": "stateless"}, ["stateless"]),
    ],
    ids=["one-era", "stated", "stated-with-odd-values", "discovery-lists-a-handshake-revision", "recipe"],
)  # fmt: skip
def test_the_eras_a_cassette_serves(
    interactions: tuple[Interaction, ...], meta: dict[str, Any], served: list[str]
) -> None:
    assert eras.served(Cassette(interactions, meta)) == served


# --- the engine ------------------------------------------------------------------------------------------------


def replies(cassette: Cassette, *messages: dict[str, Any]) -> list[Any]:
    engine = Replay(cassette, Matcher.build())
    sent = [a for m in messages for a in engine.receive(json.dumps(m).encode()) if isinstance(a, Send)]
    return [json.loads(action.data) for action in sent]


BOTH = {"server_eras": ["handshake", "stateless"]}
LEGACY = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    call(9, {"name": "delete"}, "handshake"),
    {"jsonrpc": "2.0", "id": 1, "result": ANSWER},
]


def test_a_server_of_both_eras_answers_a_handshake_host_from_a_2026_recording() -> None:
    assert replies(Cassette(STATELESS, BOTH), *LEGACY) == [
        {"jsonrpc": "2.0", "id": 1, **INITIALIZED},
        {"jsonrpc": "2.0", "id": 1, **ASK},  # no progress: the host asked none
        {"jsonrpc": "2.0", "id": 9, **DONE},
    ]


def test_a_server_of_both_eras_answers_a_2026_host_from_a_handshake_recording() -> None:
    retry = eras.retry_params({"name": "delete"}, "elicitation/create", ANSWER, "mockmcp-2-1")
    done = eras.stateless_result("tools/call", DONE, NAMED[SERVER_INFO])
    live = (DISCOVER, call(2, {"name": "delete"}, "stateless"), call(3, retry, "stateless"))
    assert replies(Cassette(HANDSHAKE, BOTH), *live) == [
        {"jsonrpc": "2.0", "id": 1, **DISCOVERED},
        {"jsonrpc": "2.0", "id": 2, "result": {**ROUND["result"], "requestState": "mockmcp-2-1"}},
        {"jsonrpc": "2.0", "id": 3, **done},
    ]  # fmt: skip


def test_a_server_of_one_era_still_refuses_the_other_with_the_recorded_versions() -> None:
    [refused] = replies(Cassette(STATELESS, {}), INITIALIZE)
    assert refused["error"]["code"] == -32022
    assert refused["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    [refused] = replies(Cassette(HANDSHAKE, {}), DISCOVER)
    assert refused["error"]["code"] == -32601


def test_a_host_answer_that_differs_is_checked_as_in_its_own_era() -> None:
    # Handshake host: a mismatch (the round trip goes on), as a differing answer to a recorded server request is.
    engine = Replay(Cassette(STATELESS, BOTH), Matcher.build())
    declined = [*LEGACY[:3], {"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}]
    for message in declined:
        engine.receive(json.dumps(message).encode())
    assert [m.method for m in engine.report.mismatches] == ["elicitation/create"] and not engine.report.misses
    # 2026-07-28 host: a miss, as a retry whose inputResponses no recording holds is in that era.
    engine = Replay(Cassette(HANDSHAKE, BOTH), Matcher.build())
    retry = eras.retry_params({"name": "delete"}, "elicitation/create", {"action": "decline"}, "mockmcp-2-1")
    for message in (DISCOVER, call(2, {"name": "delete"}, "stateless"), call(3, retry, "stateless")):
        engine.receive(json.dumps(message).encode())
    assert [miss.method for miss in engine.report.misses] == ["tools/call"] and not engine.report.mismatches


def test_a_servers_ping_and_a_question_answered_with_an_error_are_left_out_for_a_2026_host() -> None:
    ping = ServerItem("request", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"result": {}}, at=0.15)
    refused = ServerItem(
        "request", {"jsonrpc": "2.0", "id": 2, **ASK}, {"error": {"code": -1, "message": "no"}}, at=0.2
    )
    asked = request(call(2, {"name": "delete"}, "handshake"), DONE, 0.1, server=(ping, PROGRESS, refused))
    cassette, _folded = eras.translated(Cassette((HANDSHAKE[0], asked), {}), "stateless")
    assert len(cassette.interactions) == 2  # no round trip
    assert cassette.interactions[1].server == (PROGRESS,)
    assert cassette.interactions[1].response == eras.stateless_result("tools/call", DONE, NAMED[SERVER_INFO])


def test_live_sessions_of_one_server_take_the_translated_recorded_sessions_in_turn() -> None:
    from mockmcp.engine.selection import Recordings

    def session(n: int, text: str) -> tuple[Interaction, ...]:
        answer = {"result": {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": False}}
        return tuple(
            item._replace(session=n)
            for item in (request(DISCOVER, DISCOVERED, 0.0), request(call(2, {"name": "t"}, "stateless"), answer, 0.1))
        )

    cassette = Cassette(session(0, "first") + session(1, "second"), BOTH)
    shared = Recordings(cassette, Matcher.build())  # as over HTTP, or one transport entered again
    texts = []
    for _ in range(2):
        engine = Replay(cassette, Matcher.build(), recordings=shared)
        sent = [
            a for m in (INITIALIZE, call(9, {"name": "t"}, "handshake")) for a in engine.receive(json.dumps(m).encode())
        ]
        texts.append(json.loads([a for a in sent if isinstance(a, Send)][-1].data)["result"]["content"][0]["text"])
    assert texts == ["first", "second"]
