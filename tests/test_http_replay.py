"""`mockmcp replay --http`: the official SDK's Streamable HTTP client against the replay, both eras,
and the HTTP rules a server must keep (sessions, headers, status codes, origin, loopback)."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MOCKMCP, NOTES_SESSION, SHIPPED, child_env, served, streams_seen
from mcp import Client
from sdk_host import connect, full_session, text_of
from test_causal_sdk import Tap, calling, transport

LEGACY = SHIPPED / "notes-session.yaml"  # both recorded over stdio
MODERN = SHIPPED / "notes-session-2026.yaml"


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "cassette"), [("legacy", LEGACY), ("auto", MODERN)], ids=["handshake", "stateless"])
async def test_the_sdk_http_client_sees_the_recorded_session(mode: str, cassette: Path, tmp_path: Path) -> None:
    logs: list[Any] = []

    with served(cassette, tmp_path) as server:
        assert server.url.startswith("http://127.0.0.1:"), "loopback unless told otherwise"
        with anyio.fail_after(30):
            async with connect(server.url, mode, logs=logs) as client:
                seen = await full_session(client)
        report = server.stop()
    assert {key: seen[key] for key in NOTES_SESSION} == NOTES_SESSION  # progress, elicitation, sampling, roots over SSE
    assert logs == ["counted 1", "counted 2"]
    assert report["misses"] == [] and report["unplayed"] == [] and report["mismatches"] == []


@pytest.mark.anyio
async def test_concurrent_clients_each_get_a_session_of_their_own(tmp_path: Path) -> None:
    results: list[str] = []
    with served(LEGACY, tmp_path) as server:

        async def one() -> None:
            async with Client(server.url, mode="legacy") as client:
                results.append(text_of(await client.call_tool("read_file", {"path": "notes.txt"})))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(one)
        report = server.stop()
    assert results == ["remember to buy milk"] * 4
    assert report["repeats"] == []  # fresh play counts per live session


def post(
    port: int, body: Any, headers: dict[str, str] | None = None, path: str = "/mcp", method: str = "POST"
) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    connection.request(method, path, body=data, headers={**base, **(headers or {})})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "read_file", "arguments": {"path": "notes.txt"}, "_meta": MODERN_META},
}
MODERN_HEADERS = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "read_file"}


def test_the_http_rules(tmp_path: Path) -> None:
    with served(LEGACY, tmp_path) as server:
        port = server.port
        status, headers, body = post(port, INIT)
        assert status == 200 and headers["content-type"].startswith("application/json")
        session = headers["mcp-session-id"]
        assert json.loads(body)["result"]["serverInfo"]["name"] == "notes"
        with_session = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        assert post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, with_session)[0] == 202
        assert post(port, LIST, with_session)[0] == 200
        assert post(port, LIST)[0] == 400  # no session id after initialize
        assert post(port, LIST, {"mcp-session-id": "nope"})[0] == 404
        assert post(port, LIST, {**with_session, "content-type": "text/plain"})[0] == 415
        assert post(port, LIST, {**with_session, "accept": "application/json"})[0] == 406
        status, _, body = post(port, b"{not json", with_session)
        assert status == 400 and json.loads(body)["error"]["code"] == -32700
        assert post(port, LIST, {**with_session, "mcp-protocol-version": "1999-01-01"})[0] == 400
        assert post(port, LIST, with_session, method="PUT")[0] == 405
        assert post(port, None, with_session, method="GET")[0] == 405  # no unsolicited messages in this cassette
        assert post(port, LIST, with_session, path="/other")[0] == 404
        assert post(port, LIST, {**with_session, "origin": "https://evil.example"})[0] == 403
        assert post(port, LIST, {**with_session, "origin": "http://localhost:3000"})[0] == 200
        assert post(port, LIST, {**with_session, "host": f"evil.example:{port}"})[0] == 421
        assert post(port, None, with_session, method="DELETE")[0] == 200
        assert post(port, LIST, with_session)[0] == 404  # the session has ended
        server.stop()


def test_the_stateless_headers_must_agree_with_the_body(tmp_path: Path) -> None:
    with served(MODERN, tmp_path) as server:
        status, headers, body = post(server.port, MODERN_CALL, MODERN_HEADERS)
        assert status == 200 and "mcp-session-id" not in headers
        assert json.loads(body)["result"]["content"][0]["text"] == "remember to buy milk"
        for wrong in ({"mcp-method": "tools/list"}, {"mcp-name": "other"}, {"mcp-protocol-version": "2025-11-25"}):
            status, _, body = post(server.port, MODERN_CALL, {**MODERN_HEADERS, **wrong})
            assert status == 400 and json.loads(body)["error"]["code"] == -32020, wrong
        encoded = {**MODERN_HEADERS, "mcp-name": "=?base64?cmVhZF9maWxl?="}  # "read_file"
        assert post(server.port, MODERN_CALL, encoded)[0] == 200
        server.stop()


SLOW = """\
version: 1
interactions:
- request: {method: initialize}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: slow, version: '1'}}}
- notification: {method: notifications/initialized}
- request: {method: tools/list}
  response: {result: {tools: [{name: slow, inputSchema: {type: object}}, {name: fast, inputSchema: {type: object}}]}}
- request: {method: tools/call, params: {name: slow, arguments: {}}}
  delay: 1.5
  response: {result: {content: [{type: text, text: slow}], isError: false}}
- request: {method: tools/call, params: {name: fast, arguments: {}}}
  response: {result: {content: [{type: text, text: fast}], isError: false}}
- server:
  - notification: {method: notifications/tools/list_changed}
"""


@pytest.mark.anyio
async def test_a_delayed_reply_holds_up_nothing_and_unsolicited_messages_use_the_get_stream(tmp_path: Path) -> None:
    path = tmp_path / "slow.yaml"
    path.write_text(SLOW)
    order: list[str] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if "list_changed" in repr(message) or "ToolListChanged" in repr(type(message)):
            changed.set()

    with served(path, tmp_path) as server:
        tap = Tap(transport(server.url))
        with anyio.fail_after(30):
            async with Client(tap, mode="legacy", message_handler=on_message) as client:
                await client.list_tools()

                async def call(name: str) -> None:
                    result = await client.call_tool(name, {})
                    order.append(text_of(result))

                async with anyio.create_task_group() as group:
                    group.start_soon(call, "slow")
                    await tap.passed("out", calling("slow")).wait()
                    group.start_soon(call, "fast")
                await changed.wait()  # sent after the last call, on the session's GET stream
        server.stop()
    assert order == ["fast", "slow"]


def test_without_the_http_extra_the_error_says_what_to_install(tmp_path: Path) -> None:
    blocker = tmp_path / "h11.py"
    blocker.write_text("raise ImportError('h11 is not installed here')\n")
    env = {**child_env(), "PYTHONPATH": f"{tmp_path}:{child_env()['PYTHONPATH']}"}
    proc = subprocess.run(
        [*MOCKMCP, "replay", str(LEGACY), "--http", "0"], capture_output=True, text=True, timeout=30, env=env
    )
    assert proc.returncode == 2 and "pip install 'mockmcp[http]'" in proc.stderr


SLOW_MODERN = """\
version: 1
interactions:
- request: {method: tools/call, params: {name: slow, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}}
  delay: 0.5
  response: {result: {content: [{type: text, text: slow}], resultType: complete}}
- request: {method: tools/call, params: {name: fast, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}}
  response: {result: {content: [{type: text, text: fast}], resultType: complete}}
"""


def test_stateless_clients_may_use_the_same_id_at_once_and_bad_posts_get_400(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "slow.yaml"
    path.write_text(SLOW_MODERN)
    answers: dict[str, Any] = {}

    def call(name: str) -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "_meta": MODERN_META}}
        headers = {**MODERN_HEADERS, "mcp-name": name}
        status, _headers, text = post(server.port, body, headers)
        events = [line[6:] for line in text.splitlines() if line.startswith("data: ")] or [text]
        answers[name] = (status, json.loads(events[-1]))

    with served(path, tmp_path) as server:
        slow = threading.Thread(target=call, args=("slow",))
        slow.start()
        call("fast")
        slow.join(10)
        status, _, body = post(server.port, 42)
        assert status == 400 and json.loads(body)["error"]["code"] == -32600
        server.stop()
    assert answers["fast"][1]["id"] == 1 and answers["fast"][1]["result"]["content"][0]["text"] == "fast"
    assert answers["slow"][1]["id"] == 1 and answers["slow"][1]["result"]["content"][0]["text"] == "slow"


def test_a_dropped_get_stream_can_be_opened_again(tmp_path: Path) -> None:
    import socket as sockets

    path = tmp_path / "slow.yaml"
    path.write_text(SLOW)
    with served(path, tmp_path) as server:
        _status, headers, _ = post(server.port, INIT)
        session = headers["mcp-session-id"]
        raw = sockets.create_connection(("127.0.0.1", server.port), timeout=10)
        raw.sendall(
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n".encode()  # noqa: E501 (a literal message, as on the wire)
        )
        assert raw.recv(1024).startswith(b"HTTP/1.1 200")
        raw.close()  # the client drops its stream
        import time

        deadline = time.monotonic() + 10
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            connection.request("GET", "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session})
            response = connection.getresponse()
            if response.status == 200 or time.monotonic() > deadline:
                break
            connection.close()
            time.sleep(0.2)  # a poll of the condition itself: replay tells no one when it has seen the drop
        assert response.status == 200
        connection.close()
        server.stop()


def test_a_signal_storm_never_stops_the_report(tmp_path: Path) -> None:
    """The plugin stops an HTTP replay with SIGTERM; signals that keep coming never cost the report."""
    import signal
    import time

    with served(LEGACY, tmp_path) as server:
        deadline = time.monotonic() + 20
        while server.proc.poll() is None and time.monotonic() < deadline:  # signals without pause, until it ends
            server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(20)
        assert json.loads(server.report.read_text())["interactions"] > 0
        # Once the report is written, a signal may still end the exiting process: as a signal's, or cleanly.
        assert server.proc.returncode in (0, -signal.SIGTERM)


# The session `streams_seen` opens (initialize is matched on its method alone), then a call that logs on
# its own stream and asks on the GET stream.
ASKS_ON_GET = """
version: 1
meta: {http: {framing: sse, get_stream: true}}
interactions:
- request: {id: 1, method: initialize}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: asks, version: '1'}}
- notification: {method: notifications/initialized}
- request: {id: 2, method: tools/call, params: {name: confirm, arguments: {}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: asking}}
  - request: {id: 0, method: elicitation/create, params: {mode: form, message: Sure?, requestedSchema: {type: object}}}
    response: {result: {action: accept, content: {}}}
    stream: get
  response: {result: {content: [{type: text, text: done}]}}
"""
CONFIRM = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "confirm", "arguments": {}}}


@pytest.mark.parametrize("get", [True, False])
def test_a_question_recorded_on_the_get_stream_is_asked_there_when_the_host_has_it_open(
    get: bool, tmp_path: Path
) -> None:
    """`stream: get` sends that server item on the session's GET stream; the log before it stays on
    the call's stream, as recorded. A host without a GET stream open gets it on the call's, with a note."""
    path = tmp_path / "asks.yaml"
    path.write_text(ASKS_ON_GET)
    with served(path, tmp_path) as server:
        seen = streams_seen(server.url, CONFIRM, {"result": {"action": "accept", "content": {}}}, get=get)
        server.proc.send_signal(signal.SIGTERM)
        _out, err = server.proc.communicate(timeout=20)
    sse = "text/event-stream"
    if get:
        assert seen == {"get": ["elicitation/create"], "post": ["notifications/message", "reply"], "type": sse}
    else:
        assert seen == {"get": [], "post": ["notifications/message", "elicitation/create", "reply"], "type": sse}
    fell_back = "elicitation/create was recorded on the GET stream; the host has no GET stream open, so it went on the "
    assert (fell_back + "stream of its request 7" in err) is not get
    report = json.loads(server.report.read_text())
    assert report["misses"] == [] and report["mismatches"] == [] and report["withheld"] == []
