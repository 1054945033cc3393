"""Replay over HTTP frames its answers as the recorded server did (`meta.http`): JSON or SSE, event
ids, a priming event, a GET stream, the shape of session errors. The pure rules are table rows on
`core.streamable`; the rest is the official SDK client, and raw HTTP, against `mockmcp replay --http`."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from conftest import served, sse_messages
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sdk_host import text_of

from mockmcp.cassette import store as cassettes
from mockmcp.cassette import validation
from mockmcp.cassette.files import journal_path
from mockmcp.errors import CassetteError
from mockmcp.http._streamable import (
    Framing,
    error_status_seen,
    framing_seen,
    priming_event,
    session_error,
    session_error_seen,
    sse_event,
)
from mockmcp.record._journal import Journal, finish

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "framed", "version": "1"},
}
TOOL = {"name": "big", "inputSchema": {"type": "object"}}
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "big", "arguments": {}}}
REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/progress"}
SIZE = 2_000_000  # over the SDK client's 1 MiB limit for one SSE event
FRAMED = {
    "framing": "sse",
    "event_ids": True,
    "priming": True,
    "get_stream": True,
    "session_errors": {"unknown": {"status": 404, "error": {"code": -32001, "message": "Session not found"}}},
}


def write(tmp_path: Path, http: dict[str, Any] | None) -> Path:
    """A cassette of one session: initialize, then a tool whose text is SIZE bytes."""
    big = {"content": [{"type": "text", "text": "x" * SIZE}], "isError": False}
    data = {
        "version": 1,
        "meta": {} if http is None else {"http": http},
        "interactions": [
            {"request": {k: v for k, v in INIT.items() if k != "jsonrpc"}, "response": {"result": INIT_RESULT}},
            {"notification": {"method": "notifications/initialized"}},
            {"request": {"id": 2, "method": "tools/list"}, "response": {"result": {"tools": [TOOL]}}},
            {"request": {k: v for k, v in CALL.items() if k != "jsonrpc"}, "response": {"result": big}},
        ],
    }
    path = tmp_path / "framed.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


# --- the pure rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "status", "message", "events", "known", "facts"),
    [
        (b"POST", 200, REQUEST, (False, False, True), None, {"framing": "sse"}),
        (b"POST", 200, REQUEST, (True, True, True), None, {"framing": "sse", "event_ids": True, "priming": True}),
        (b"POST", 200, REQUEST, (True, False, True), "json", {"framing": "sse", "event_ids": True}),
        (b"POST", 200, REQUEST, (False, False, False), None, {}),  # messages before the reply: SSE in any framing
        (b"POST", 200, REQUEST, None, None, {"framing": "json"}),
        (b"POST", 200, REQUEST, None, "sse", {}),  # once SSE, always SSE: the stricter for a host
        (b"POST", 200, [NOTE, REQUEST], None, None, {"framing": "json"}),  # a batch
        (b"POST", 202, {"method": "notifications/initialized"}, None, None, {}),  # no request: no reply
        (b"POST", 404, REQUEST, None, None, {}),  # an error says nothing of the framing
        (b"GET", 200, None, (False, False, False), None, {"get_stream": True}),
        (b"GET", 405, None, None, None, {"get_stream": False}),
        (b"GET", 400, None, None, None, {}),
        (b"DELETE", 200, None, None, None, {}),
    ],
)
def test_what_an_answer_shows_of_the_framing(
    method: bytes, status: int, message: Any, events: tuple[bool, bool, bool] | None, known: str | None, facts: Any
) -> None:
    assert framing_seen(method, status, message, events, known) == facts


UNKNOWN = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}'
MISSING = b'{"jsonrpc":"2.0","id":"server-error","error":{"code":-32000,"message":"Bad Request: No valid session ID"}}'


@pytest.mark.parametrize(
    ("asked", "status", "body", "seen"),
    [
        ({"mcp-session-id": "x"}, 404, UNKNOWN, {"unknown": {"status": 404, "error": json.loads(UNKNOWN)["error"]}}),
        ({}, 400, MISSING, {"missing": {"status": 400, "error": json.loads(MISSING)["error"]}}),
        ({}, 404, UNKNOWN, {}),  # no session named: not a session error
        # A session named and turned away about it with 400, as the TypeScript SDK's example servers do.
        ({"mcp-session-id": "x"}, 400, MISSING, {"unknown": {"status": 400, "error": json.loads(MISSING)["error"]}}),
        ({}, 400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', {}),
        ({"mcp-session-id": "x"}, 404, b"Not Found", {}),  # not JSON-RPC: nothing to replay
        ({"mcp-session-id": "x"}, 404, b'{"error":{"code":"a","message":"m"}}', {}),
        ({}, 200, MISSING, {}),  # only a 400 or a 404 is one (a 2xx body is not even parsed)
        ({"mcp-session-id": "x"}, 202, UNKNOWN, {}),
    ],
)
def test_which_answers_are_session_errors(asked: dict[str, str], status: int, body: bytes, seen: Any) -> None:
    assert session_error_seen(asked, status, body) == seen


def test_session_errors_answer_as_recorded_else_as_the_sdk_does() -> None:
    recorded = Framing.of({"http": FRAMED})
    assert session_error(recorded, "unknown") == (404, UNKNOWN + b"\n", "application/json", ())
    sdk = session_error(Framing(), "missing")
    assert sdk.status == 400
    assert json.loads(sdk.body) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Bad Request: Missing session ID"},
    }
    assert session_error(recorded, "missing") == sdk  # the recording saw only the other one


def test_sse_events_with_and_without_ids() -> None:
    assert sse_event(b'{"a":1}\n') == b'event: message\ndata: {"a":1}\n\n'
    assert sse_event(b"one\ntwo", "7") == b"event: message\nid: 7\ndata: one\ndata: two\n\n"
    assert priming_event("1") == b"id: 1\ndata: \n\n"


def test_framing_of_a_cassette_without_the_field_is_the_old_default() -> None:
    assert Framing.of({}) == Framing(False, False, False, None, None)
    assert Framing.of({"http": FRAMED}) == Framing(True, True, True, True, FRAMED["session_errors"])


@pytest.mark.parametrize(
    ("http", "place", "says"),
    [
        ("sse", "meta.http", "expected a mapping"),
        ({"framing": "SSE"}, "meta.http.framing", "json or sse"),
        ({"framng": "sse"}, "meta.http.framng", "did you mean `framing`"),
        ({"event_ids": "yes"}, "meta.http.event_ids", "true or false"),
        ({"session_errors": {"gone": {}}}, "meta.http.session_errors.gone", "unknown key"),
        ({"session_errors": {"unknown": {"status": 200, "error": {}}}}, "session_errors.unknown.status", "400-599"),
        ({"session_errors": {"missing": {"status": 400, "error": {"code": 1}}}}, "error.message", "string"),
        ({"error_status": {"-32602": 400}}, "meta.http.error_status", "a list of {code, status}"),
        ({"error_status": [{"code": -32602, "status": 200}]}, "meta.http.error_status[0].status", "400-599"),
        ({"error_status": [{"code": "x", "status": 400}]}, "meta.http.error_status[0].code", "integer"),
    ],
)
def test_a_wrong_http_field_is_refused_where_it_is(http: Any, place: str, says: str) -> None:
    with pytest.raises(CassetteError) as caught:
        validation.from_data({"version": 1, "meta": {"http": http}, "interactions": []})
    assert place in caught.value.render() and says in caught.value.render()


# --- the SDK client and raw HTTP against replay ------------------------------------------------


async def big_call(url: str) -> str:
    """The big tool's text as the SDK client gets it, or why the client refused the answer."""
    with anyio.fail_after(30):
        async with Client(url, mode="legacy") as client:
            try:
                with anyio.fail_after(10):
                    return text_of(await client.call_tool("big", {}))
            except Exception as exc:  # whatever the SDK raises for it
                return f"refused: {exc}"


@pytest.mark.anyio
@pytest.mark.parametrize(("http", "refused"), [(FRAMED, True), ({"framing": "json"}, False), (None, False)])
async def test_an_answer_too_big_for_one_event_fails_only_where_the_server_sent_events(
    http: dict[str, Any] | None, refused: bool, tmp_path: Path
) -> None:
    with served(write(tmp_path, http), tmp_path) as server:
        text = await big_call(server.url)
        server.stop()
    assert ("byte limit" in text) if refused else (text == "x" * SIZE)


def raw(port: int, method: str, body: Any = None, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    connection.request(
        method, "/mcp", body=None if body is None else json.dumps(body), headers={**base, **(headers or {})}
    )
    return connection.getresponse()


def test_the_wire_as_the_recorded_server_framed_it(tmp_path: Path) -> None:
    with served(write(tmp_path, FRAMED), tmp_path) as server:
        answer = raw(server.port, "POST", INIT)
        session = answer.getheader("mcp-session-id") or ""
        assert answer.status == 200 and answer.getheader("content-type") == "text/event-stream"
        text = answer.read().decode()
        assert text.startswith("id: 1\ndata: \n\nevent: message\nid: 2\ndata: {")  # priming, then the reply
        assert json.loads(text.split("data: ")[2])["result"]["serverInfo"]["name"] == "framed"
        stream = raw(server.port, "GET", headers={"mcp-session-id": session})  # offered, though nothing comes on it
        assert stream.status == 200 and stream.getheader("content-type") == "text/event-stream"
        stream.close()
        gone = raw(server.port, "POST", CALL, {"mcp-session-id": "nope"})
        assert (gone.status, json.loads(gone.read())) == (404, json.loads(UNKNOWN))  # as recorded
        missing = raw(server.port, "POST", CALL)
        assert missing.status == 400
        assert json.loads(missing.read())["error"] == {"code": -32600, "message": "Bad Request: Missing session ID"}
        deleted = raw(server.port, "DELETE", headers={"mcp-session-id": session})
        assert deleted.status == 200
        after = raw(server.port, "POST", CALL, {"mcp-session-id": session})
        assert (after.status, json.loads(after.read())) == (404, json.loads(UNKNOWN))
        server.stop()


def test_a_server_that_offered_no_get_stream_gets_405(tmp_path: Path) -> None:
    with served(write(tmp_path, {"framing": "json", "get_stream": False}), tmp_path) as server:
        answer = raw(server.port, "POST", INIT)
        assert answer.status == 200 and answer.getheader("content-type") == "application/json"
        session = answer.getheader("mcp-session-id") or ""
        answer.read()
        refused = raw(server.port, "GET", headers={"mcp-session-id": session})
        assert refused.status == 405 and "offered no GET stream" in json.loads(refused.read())["error"]["message"]
        server.stop()


@pytest.mark.parametrize(
    ("http", "content_type"),
    [({"framing": "json"}, "application/json"), (None, "application/json"), ({"framing": "sse"}, "text/event-stream")],
)
def test_a_slow_lone_reply_is_framed_as_a_quick_one(
    http: dict[str, Any] | None, content_type: str, tmp_path: Path
) -> None:
    """A server that answers a lone reply with JSON does so however long it takes: the answer
    begins when the reply is known (or a message comes first), not at once as a stream."""
    path = write(tmp_path, http)
    data = json.loads(path.read_text())
    data["interactions"][2]["delay"] = 0.3  # tools/list
    path.write_text(json.dumps(data))
    with served(path, tmp_path) as server:
        answer = raw(server.port, "POST", INIT)
        session = answer.getheader("mcp-session-id") or ""
        answer.read()
        slow = raw(server.port, "POST", {**REQUEST, "id": 5}, {"mcp-session-id": session})
        assert (slow.status, slow.getheader("content-type")) == (200, content_type)
        body = slow.read().decode()
        [reply] = [json.loads(body)] if content_type == "application/json" else sse_messages(body)
        assert reply == {"jsonrpc": "2.0", "id": 5, "result": {"tools": [TOOL]}}
        server.stop()


def test_a_client_resuming_with_last_event_id_gets_the_rest_of_that_stream(tmp_path: Path) -> None:
    """A recorded server with event ids had an event store: a client that lost a request's stream
    and comes back with GET and Last-Event-ID gets what that stream sent after the id, then the rest."""
    path = write(tmp_path, FRAMED)
    data = json.loads(path.read_text())
    data["interactions"][2]["delay"] = 0.5  # tools/list: the reply comes after the client has left
    path.write_text(json.dumps(data))
    with served(path, tmp_path) as server:
        answer = raw(server.port, "POST", INIT)
        session = {"mcp-session-id": answer.getheader("mcp-session-id") or ""}
        answer.read()
        left = raw(server.port, "POST", {**REQUEST, "id": 5}, session)
        priming = [left.readline(), left.readline(), left.readline()]  # id, empty data, the event's end
        assert priming[1:] == [b"data: \n", b"\n"] and priming[0].startswith(b"id: ")
        left.close()  # the connection is gone; the reply is not sent yet
        last = priming[0][4:].strip().decode()
        resumed = raw(server.port, "GET", headers={**session, "last-event-id": last})
        assert resumed.status == 200 and resumed.getheader("content-type") == "text/event-stream"
        body = resumed.read().decode()  # the stream ends after the reply, as the request's own did
        assert sse_messages(body) == [{"jsonrpc": "2.0", "id": 5, "result": {"tools": [TOOL]}}]
        again = raw(server.port, "GET", headers={**session, "last-event-id": body.split("id: ")[-1].split()[0]})
        assert (again.status, sse_messages(again.read().decode())) == (200, [])  # nothing after the reply
        unknown = raw(server.port, "GET", headers={**session, "last-event-id": "no-such-event"})
        assert (unknown.status, unknown.read()) == (200, b"")  # an empty stream, as the SDK's event store answers
        server.stop()


@pytest.mark.anyio
async def test_the_sdk_client_resumes_a_stream_it_gave_up_on_and_gets_its_answer(tmp_path: Path) -> None:
    """The SDK client leaves a stream quiet past its read timeout and resumes it with Last-Event-ID."""
    path = write(tmp_path, FRAMED)
    data = json.loads(path.read_text())
    data["interactions"][2]["delay"] = 1.0  # tools/list, quiet for longer than the client waits to read
    path.write_text(json.dumps(data))
    with served(path, tmp_path) as server:
        impatient = httpx2.AsyncClient(timeout=httpx2.Timeout(10, read=0.3))
        with anyio.fail_after(20):
            async with Client(streamable_http_client(server.url, http_client=impatient), mode="legacy") as client:
                assert [tool.name for tool in (await client.list_tools()).tools] == ["big"]
        server.stop()


# --- the journal keeps what the proxy learnt ---------------------------------------------------


def test_framing_learnt_while_recording_reaches_the_cassette_and_a_later_recording_updates_it(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    line = json.dumps(INIT, separators=(",", ":"))
    answer = json.dumps({"jsonrpc": "2.0", "id": 1, "result": INIT_RESULT}, separators=(",", ":"))

    def record(mode: str, *learnt: dict[str, Any]) -> None:
        handle = Journal(journal_path(str(out)), {"mode": mode, "meta": {"server": ["x"]}})
        handle.append("client", 0.0, [line.encode()])
        for facts in learnt:  # a later line wins
            handle.meta({"http": facts})
        handle.append("server", 0.1, [answer.encode()])
        handle.close()
        finish(str(out))

    record("all", {"framing": "json"}, {"framing": "sse", "get_stream": True})
    assert cassettes.load(str(out)).meta["http"] == {"framing": "sse", "get_stream": True}
    record("new", {"framing": "sse", "event_ids": True})
    assert cassettes.load(str(out)).meta["http"] == {"framing": "sse", "event_ids": True}


# A handshake-era server (the TypeScript SDK's) asked server/discover without a session by an auto host.
NOT_INITIALIZED = b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}'
MODERN_META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
DISCOVER = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": MODERN_META}


@pytest.mark.parametrize(
    ("message", "body", "seen"),
    [
        (  # the TypeScript SDK writes its id last: replay writes it back so
            DISCOVER,
            NOT_INITIALIZED,
            {"missing": {"status": 400, "error": json.loads(NOT_INITIALIZED)["error"], "id_last": True}},
        ),
        # The 2026-07-28 header check is about the headers, not the session.
        (DISCOVER, b'{"jsonrpc":"2.0","id":0,"error":{"code":-32020,"message":"header mismatch"}}', {}),
        # A 2026-07-28 server's own error for the request (a 400 under the request's id) is the session's.
        (DISCOVER, b'{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"Unknown resource: x"}}', {}),
        # initialize needs no session: its 400 is about something else.
        (INIT, NOT_INITIALIZED, {}),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, NOT_INITIALIZED, {}),
    ],
)
def test_a_request_turned_away_for_want_of_a_session_is_a_session_error_whatever_its_words(
    message: Any, body: bytes, seen: Any
) -> None:
    assert session_error_seen({}, 400, body, message) == seen


def test_a_request_turned_away_before_the_session_is_no_interaction(tmp_path: Path) -> None:
    """The proxy journals a request as it passes; when the server turns it away for want of a
    session, it journals that too, and the cassette keeps no interaction for it (only the shape)."""
    path = tmp_path / "c.yaml"
    journal = Journal(journal_path(str(path)), {})
    journal.append("client", 0.1, [json.dumps(DISCOVER).encode()], 1)
    journal.refused(0, 1)
    journal.meta({"http": {"session_errors": session_error_seen({}, 400, NOT_INITIALIZED, DISCOVER)}})
    journal.append("client", 0.2, [json.dumps(INIT).encode()], 0)
    journal.append("server", 0.3, [json.dumps({"jsonrpc": "2.0", "id": 1, "result": INIT_RESULT}).encode()], 0)
    journal.close()
    cassette, _recovered, _notes = finish(str(path))
    assert [i.method for i in cassette.interactions] == ["initialize"]
    assert (
        cassette.meta["http"]["session_errors"]["missing"]["error"]["message"] == "Bad Request: Server not initialized"
    )


def test_a_handshake_only_server_that_turned_a_sessionless_request_away_does_so_on_replay(tmp_path: Path) -> None:
    """Not an SSE stream that never ends: the recorded 400, whole, as the real server answered."""
    missing = session_error_seen({}, 400, NOT_INITIALIZED, DISCOVER)
    with served(write(tmp_path, {"framing": "json", "session_errors": missing}), tmp_path) as server:
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}  # as the SDK sends
        answer = raw(server.port, "POST", DISCOVER, headers)
        assert (answer.status, answer.getheader("content-type")) == (400, "application/json")
        assert json.loads(answer.read())["error"] == missing["missing"]["error"]
        assert raw(server.port, "POST", INIT).status == 200  # the handshake goes on as recorded
        report = server.stop()
    assert report["misses"] == []


# A 2026-07-28 SDK server answers a request's own error, alone as JSON, with the status its code maps to.
UNKNOWN_RESOURCE = {"code": -32602, "message": "Unknown resource: other://x"}
READ = {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "other://x", **MODERN_META}}


@pytest.mark.parametrize(
    ("status", "body", "known", "seen"),
    [
        (400, {"id": 5, "error": UNKNOWN_RESOURCE}, None, {"error_status": [{"code": -32602, "status": 400}]}),
        (400, {"id": 5, "error": UNKNOWN_RESOURCE}, [{"code": -32602, "status": 400}], {}),  # known already
        (
            404,
            {"id": 5, "error": {"code": -32601, "message": "Method not found"}},
            [{"code": -32602, "status": 400}],
            {"error_status": [{"code": -32601, "status": 404}, {"code": -32602, "status": 400}]},
        ),
        (400, {"id": "5", "error": UNKNOWN_RESOURCE}, None, {}),  # not the request's own answer
        (200, {"id": 5, "error": UNKNOWN_RESOURCE}, None, {}),  # no status of its own
        (400, {"id": 5, "result": {}}, None, {}),
    ],
)
def test_which_error_replies_came_with_an_http_status(status: int, body: Any, known: Any, seen: Any) -> None:
    assert error_status_seen(status, json.dumps({"jsonrpc": "2.0", **body}).encode(), READ, known) == seen


def stateless_cassette(tmp_path: Path, http: dict[str, Any]) -> Path:
    path = tmp_path / "errors.yaml"
    read = {k: v for k, v in READ.items() if k != "jsonrpc"}
    call = {"id": 6, "method": "tools/call", "params": {"name": "read_file", "arguments": {}, **MODERN_META}}
    interactions = [
        {"request": read, "response": {"error": UNKNOWN_RESOURCE}},
        {"request": call, "response": {"result": {"content": [], "isError": True, "resultType": "complete"}}},
    ]
    path.write_text(json.dumps({"version": 1, "meta": {"http": http}, "interactions": interactions}))
    return path


@pytest.mark.parametrize(("recorded", "status"), [([{"code": -32602, "status": 400}], 400), (None, 200)])
def test_an_error_reply_goes_with_the_status_the_recorded_server_gave_it(
    recorded: Any, status: int, tmp_path: Path
) -> None:
    with served(stateless_cassette(tmp_path, {"framing": "json", "error_status": recorded}), tmp_path) as server:
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "resources/read", "mcp-name": "other://x"}
        answer = raw(server.port, "POST", READ, headers)
        assert (answer.status, json.loads(answer.read())["error"]) == (status, UNKNOWN_RESOURCE)
        call = {"jsonrpc": "2.0", "id": 6, "method": "tools/call"}
        call["params"] = {"name": "read_file", "arguments": {}, **MODERN_META}
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "read_file"}
        tool_error = raw(server.port, "POST", call, headers)  # a tool that failed is a result: 200
        assert tool_error.status == 200 and json.loads(tool_error.read())["result"]["isError"] is True
        report = server.stop()
    assert report["misses"] == []


@pytest.mark.parametrize("delay", [0.0, 0.3], ids=["at once", "after a delay"])
def test_a_server_dying_mid_answer_is_heard_until_it_dies(delay: float, tmp_path: Path) -> None:
    """The `exit` knob over HTTP: what the server said before it died reaches the host, then the cut."""
    path = write(tmp_path, {"framing": "json"})
    data = json.loads(path.read_text())
    words = {"method": "notifications/message", "params": {"level": "info", "data": "last words"}}
    dying = {"id": 9, "method": "tools/call", "params": {"name": "dying", "arguments": {}}}
    data["interactions"].append(
        {"request": dying, "server": [{"notification": words}], "exit": {"status": 1, "when": "before"}, "delay": delay}
    )
    path.write_text(json.dumps(data))
    with served(path, tmp_path) as server:
        answer = raw(server.port, "POST", INIT)
        session = answer.getheader("mcp-session-id") or ""
        answer.read()
        body = json.dumps({"jsonrpc": "2.0", **dying}).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(head.encode() + body)
            heard = b""
            while data_in := sock.recv(1 << 16):  # until the server cuts the connection
                heard += data_in
        assert heard.startswith(b"HTTP/1.1 200 ") and b"text/event-stream" in heard
        assert b'"last words"' in heard and not heard.endswith(b"0\r\n\r\n")  # the stream never ended
        assert raw(server.port, "POST", CALL, {"mcp-session-id": session}).status == 404  # the session is gone
