"""The protocol era takes part in replay, as it does for a real server (literal JSON-RPC through the engine).

- a 2026-07-28 request never gets a handshake-era answer, nor the other way round: a miss whose
  story says the recording is of the other era (and `record --record-mode new_episodes` then adds the new era's
  answers, as the two no longer "match": tests/test_record.py);
- a cassette of 2026-07-28 sessions only, asked `initialize`, answers -32022 with the versions it
  recorded, as a server of that revision does; one of handshake-era sessions only, asked
  `server/discover`, answers -32601 as a server of that era does; both are misses whose story says
  how to record the other era;
- an `initialize` asking an older protocol version than recorded is noted as such (and in the report).
"""

from __future__ import annotations

import json
from typing import Any

from mockmcp._wire import jsonrpc, protocol
from mockmcp.cassette import model
from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Note, Replay, Send

HANDSHAKE = """
version: 1
meta: {server: [python, notes_server.py]}
interactions:
- request: {id: 1, method: initialize, params: {protocolVersion: '2025-06-18', capabilities: {}}}
  response: {result: {protocolVersion: '2025-06-18', capabilities: {tools: {}}, serverInfo: {name: n, version: '1'}}}
- notification: {method: notifications/initialized}
- request: {id: 2, method: tools/list}
  response: {result: {tools: [{name: read_file, inputSchema: {type: object}}]}}
"""

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
STATELESS = """
version: 1
meta: {server: [python, notes_server.py]}
interactions:
- request:
    id: 1
    method: server/discover
    params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  response: {result: {supportedVersions: ['2026-07-28'], capabilities: {tools: {}}, resultType: complete}}
- request:
    id: 2
    method: tools/list
    params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  response: {result: {tools: [{name: read_file, inputSchema: {type: object}}], resultType: complete}}
"""


def replay(text: str) -> Replay:
    return Replay(loads(text), Matcher.build())


def line(id: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def one_reply(actions: list[Any]) -> dict[str, Any]:
    [send] = [action for action in actions if isinstance(action, Send)]
    reply: dict[str, Any] = json.loads(send.data)
    return reply


def noted(actions: list[Any]) -> str:
    return "\n".join(action.text for action in actions if isinstance(action, Note))


def test_a_2026_request_never_gets_a_handshake_era_answer() -> None:
    engine = replay(HANDSHAKE)
    actions = engine.receive(line(7, "tools/list", {"_meta": META}))
    reply = one_reply(actions)
    assert reply["id"] == 7 and reply["error"]["code"] == jsonrpc.NO_MATCH
    [miss] = engine.report.misses
    assert miss.candidates[0].index == 2
    assert "recorded in the handshake era, and this request speaks the stateless era" in noted(actions)
    assert "mockmcp record --record-mode new_episodes -o" in noted(actions)
    # the same request in the recorded era still plays
    assert one_reply(engine.receive(line(8, "tools/list")))["result"] == {
        "tools": [{"name": "read_file", "inputSchema": {"type": "object"}}]
    }


def test_a_handshake_era_request_never_gets_a_2026_answer() -> None:
    engine = replay(STATELESS)
    reply = one_reply(engine.receive(line("a", "tools/list")))
    assert reply["error"]["code"] == jsonrpc.NO_MATCH
    assert one_reply(engine.receive(line("b", "tools/list", {"_meta": META})))["result"]["resultType"] == "complete"


def test_a_2026_cassette_asked_initialize_answers_unsupported_version_with_what_it_speaks() -> None:
    engine = replay(STATELESS)
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}
    actions = engine.receive(line(0, "initialize", params))
    assert one_reply(actions) == {
        "jsonrpc": "2.0",
        "id": 0,
        "error": {
            "code": protocol.UNSUPPORTED_VERSION,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
        },
    }
    text = noted(actions)
    assert "holds only 2026-07-28 sessions" in text and "mockmcp record --record-mode new_episodes -o" in text
    [miss] = engine.report.misses  # the recording has no answer for that era: --strict fails
    assert miss.code == protocol.UNSUPPORTED_VERSION


def test_a_handshake_cassette_probed_with_server_discover_says_it_is_of_the_other_era() -> None:
    engine = replay(HANDSHAKE)
    actions = engine.receive(line(1, "server/discover", {"_meta": META}))
    assert one_reply(actions)["error"]["code"] == jsonrpc.METHOD_NOT_FOUND  # the host falls back to initialize
    text = noted(actions)
    assert "holds only handshake-era sessions" in text and "falls back to initialize" in text
    assert "mockmcp record --record-mode new_episodes -o" in text
    assert len(engine.report.misses) == 1


def test_a_cassette_of_both_eras_answers_each_opening_as_recorded() -> None:
    engine = replay(
        STATELESS
        + """
- session: 1
  request: {id: 1, method: initialize, params: {protocolVersion: '2025-06-18', capabilities: {}}}
  response: {result: {protocolVersion: '2025-06-18', capabilities: {tools: {}}, serverInfo: {name: n, version: '1'}}}
"""
    )
    assert "result" in one_reply(engine.receive(line(1, "initialize", {"protocolVersion": "2025-06-18"})))
    assert "result" in one_reply(engine.receive(line(2, "server/discover", {"_meta": META})))
    assert engine.report.misses == []


def test_an_initialize_asking_an_older_version_than_recorded_is_answered_in_it_and_noted_as_older() -> None:
    engine = replay(HANDSHAKE)
    actions = engine.receive(line(1, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {}}))
    assert one_reply(actions)["result"]["protocolVersion"] == "2024-11-05"  # as the recorded server negotiates
    text = noted(actions)
    assert "'2024-11-05', older than the '2025-06-18'" in text
    assert any("older than" in finding for finding in engine.report.capabilities)


def test_an_initialize_asking_a_newer_version_is_noted_but_not_as_older() -> None:
    engine = replay(HANDSHAKE)
    actions = engine.receive(line(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    assert "the cassette recorded '2025-06-18'; answering as recorded" in noted(actions)
    assert engine.report.capabilities == []


# --- a request written without the era's `_meta` (a recipe) speaks its one-era session's era ------

RECIPE = "- request: {method: tools/call, params: {name: read_file, arguments: {}}}\n"
ANSWER = "  response: {result: {content: [{type: text, text: quota}], isError: true}}\n"


def two_sessions(first: str, second: str) -> str:
    """A cassette of two recorded sessions: `first` (its items of session 1) and `second` (of session 2)."""
    return "version: 1\ninteractions:\n" + first + second.replace("- request:", "- session: 2\n  request:")


WRITTEN_ERAS = [
    # (the cassette, the era each interaction speaks)
    (STATELESS + RECIPE + ANSWER, [protocol.STATELESS] * 3),
    (HANDSHAKE + RECIPE + ANSWER, [protocol.HANDSHAKE] * 4),
    # meta.era says it where no message shows an era
    ("version: 1\nmeta: {era: stateless}\ninteractions:\n" + RECIPE + ANSWER, [protocol.STATELESS]),
    ("version: 1\ninteractions:\n" + RECIPE + ANSWER, [protocol.HANDSHAKE]),
    # a session of both eras: a request without a version is a handshake-era host's
    (
        HANDSHAKE + STATELESS.split("interactions:\n")[1] + RECIPE + ANSWER,
        [protocol.HANDSHAKE] * 3 + [protocol.STATELESS] * 2 + [protocol.HANDSHAKE],
    ),
]


def test_a_request_written_without_a_version_speaks_the_era_of_its_session_when_that_is_only_stateless() -> None:
    for text, expected in WRITTEN_ERAS:
        assert model.written_eras(loads(text)) == expected, text
    # each recorded session by its own messages
    body = HANDSHAKE.split("interactions:\n")[1]
    stateless = STATELESS.split("interactions:\n")[1]
    cassette = loads(two_sessions(body + RECIPE + ANSWER, stateless + RECIPE + ANSWER))
    assert model.written_eras(cassette) == [protocol.HANDSHAKE] * 4 + [protocol.STATELESS] * 3


def test_a_recipe_in_a_2026_session_answers_a_2026_request_with_the_result_type_that_era_requires() -> None:
    engine = replay(STATELESS + RECIPE + ANSWER)
    reply = one_reply(engine.receive(line(7, "tools/call", {"name": "read_file", "arguments": {}, "_meta": META})))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [{"type": "text", "text": "quota"}], "isError": True, "resultType": "complete"},
    }
    # a result type written is kept; a handshake-era host's request is another era's and misses
    kept = ANSWER.replace("isError: true", "isError: true, resultType: input_required, inputRequests: {}")
    engine = replay(STATELESS + RECIPE + kept)
    reply = one_reply(engine.receive(line(8, "tools/call", {"name": "read_file", "arguments": {}, "_meta": META})))
    assert reply["result"]["resultType"] == "input_required"
    handshake_era = {"name": "read_file", "arguments": {}}
    miss = one_reply(replay(STATELESS + RECIPE + ANSWER).receive(line(9, "tools/call", handshake_era)))
    assert miss["error"]["code"] == -32099


def test_a_recorded_2026_answer_without_a_result_type_is_sent_as_recorded() -> None:
    recorded = STATELESS.replace(", resultType: complete}}\n", "}}\n")
    engine = replay(recorded)
    reply = one_reply(engine.receive(line(3, "tools/list", {"_meta": META})))
    assert "resultType" not in reply["result"]


def test_a_list_written_without_a_version_in_a_2026_session_gets_the_cache_hints_a_host_of_that_era_needs() -> None:
    listed = "- request: {method: tools/list}\n  response: {result: {tools: [], ttlMs: 5}}\n"
    engine = replay(STATELESS.split("- request:\n    id: 2")[0] + listed)
    reply = one_reply(engine.receive(line(4, "tools/list", {"_meta": META})))
    assert reply["result"] == {"resultType": "complete", "ttlMs": 5, "cacheScope": "private", "tools": []}
