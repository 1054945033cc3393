"""Session errors and the GET stream's status, learnt whatever the server answered, and replayed so.

The pure rules get table rows; one test records the TypeScript SDK's example server
(`@modelcontextprotocol/server-everything`, `streamableHttp` mode) through `mockmcp record
--http-target`, then replays the cassette and compares. It finds the npm packages in
`tests/node/node_modules` when that folder exists, else in the folder the environment variable
`MOCKMCP_NODE_MODULES` names, and is skipped, saying why, when neither holds them or `node` is not
installed.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import HANDSHAKE, ROOT, recording, said, served, sse_messages

from mockmcp.cassette import store
from mockmcp.http._streamable import Framing, session_error, session_error_seen

# What the TypeScript SDK's example servers answer a request naming a session they do not hold
# (unknown, or ended by DELETE): no `id` member at all.
TS_UNKNOWN = b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}'
SDK_UNKNOWN = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'
# What the TypeScript SDK's own transport answers a request without a session id: its `id` after the error.
TS_MISSING = (
    b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"},"id":null}'
)
SESSION = {"mcp-session-id": "0b7c"}
LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
TS_ERROR = {"code": -32000, "message": "Bad Request: No valid session ID provided"}


@pytest.mark.parametrize(
    ("asked", "status", "body", "message", "seen"),
    [
        (SESSION, 400, TS_UNKNOWN, LIST, {"unknown": {"status": 400, "error": TS_ERROR, "without_id": True}}),
        (SESSION, 400, TS_UNKNOWN, None, {"unknown": {"status": 400, "error": TS_ERROR, "without_id": True}}),  # GET
        (SESSION, 404, SDK_UNKNOWN, LIST, {"unknown": {"status": 404, "error": json.loads(SDK_UNKNOWN)["error"]}}),
        # The request's own error, under its id, is the session's answer even when it speaks of sessions.
        (SESSION, 400, b'{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad session name"}}', LIST, {}),
        # Turned away, but not about the session (a body that was no JSON).
        (SESSION, 400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', LIST, {}),
        (SESSION, 500, TS_UNKNOWN, LIST, {}),
        (
            {},
            400,
            TS_MISSING,
            LIST,
            {"missing": {"status": 400, "error": json.loads(TS_MISSING)["error"], "id_last": True}},
        ),
    ],
)
def test_an_unknown_session_is_learnt_whether_the_server_says_400_or_404(
    asked: dict[str, str], status: int, body: bytes, message: Any, seen: Any
) -> None:
    assert session_error_seen(asked, status, body, message) == seen


def test_replay_answers_a_session_error_with_the_recorded_status_and_body() -> None:
    [(name, shape)] = session_error_seen(SESSION, 400, TS_UNKNOWN, LIST).items()
    answer = session_error(Framing.of({"http": {"session_errors": {name: shape}}}), "unknown")
    assert (answer.status, json.loads(answer.body)) == (400, json.loads(TS_UNKNOWN))
    python_sdk = session_error(
        Framing.of({"http": {"session_errors": session_error_seen(SESSION, 404, SDK_UNKNOWN)}}), "unknown"
    )
    assert (python_sdk.status, python_sdk.body) == (404, SDK_UNKNOWN + b"\n")
    typescript_sdk = session_error(
        Framing.of({"http": {"session_errors": session_error_seen({}, 400, TS_MISSING)}}), "missing"
    )
    assert (typescript_sdk.status, typescript_sdk.body) == (400, TS_MISSING + b"\n")  # its members in its order


def test_a_without_id_that_is_not_a_flag_is_refused() -> None:
    text = (
        "version: 1\nmeta:\n  http:\n    session_errors:\n      unknown: {status: 400, error: {code: -32000,"
        " message: gone}, without_id: 'yes'}\ninteractions: []\n"
    )
    with pytest.raises(Exception, match=r"meta\.http\.session_errors\.unknown\.without_id.*true or false"):
        store.loads(text)


# --- against real servers -------------------------------------------------------------------------

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def connect(url: str) -> http.client.HTTPConnection:
    where = urlsplit(url)
    return http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=30)


def post(url: str, message: dict[str, Any], session: str | None = None) -> tuple[int, str | None, Any]:
    """POST one message; returns the status, the session id the answer names, and its JSON body (or
    the messages of its SSE stream, or None)."""
    connection = connect(url)
    headers = {**HEADERS, **({"mcp-session-id": session} if session else {})}
    connection.request("POST", urlsplit(url).path, body=json.dumps(message), headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    if response.getheader("content-type", "").startswith("text/event-stream"):
        body: Any = sse_messages(text)
    else:
        body = json.loads(text) if text.strip() else None
    return response.status, response.getheader("mcp-session-id"), body


def get_head(url: str, session: str) -> tuple[int, str, Any]:
    """Open the session's GET stream, read its head and leave (before the server ends it): the status,
    the content type, and the body when it is JSON (a refusal)."""
    connection = connect(url)
    connection.request("GET", urlsplit(url).path, headers={"accept": "text/event-stream", "mcp-session-id": session})
    response = connection.getresponse()
    kind = response.getheader("content-type", "")
    body = json.loads(response.read()) if kind.startswith("application/json") else None
    connection.close()
    return response.status, kind.split(";")[0], body


def session_answers(url: str) -> dict[str, Any]:
    """What a client meets: a session opened, its GET stream (left at once), then a request and a GET
    naming a session the server never issued, and, after DELETE, a request naming the ended one."""
    status, session, _body = post(url, HANDSHAKE)
    assert status == 200 and session
    post(url, INITIALIZED, session)
    seen: dict[str, Any] = {"get": get_head(url, session)}
    seen["unknown_post"] = post(url, LIST, "f00d-unknown")[::2]
    seen["unknown_get"] = get_head(url, "f00d-unknown")
    connection = connect(url)
    connection.request("DELETE", urlsplit(url).path, headers={"mcp-session-id": session})
    connection.getresponse().read()
    connection.close()
    seen["ended_post"] = post(url, LIST, session)[::2]
    return seen


def node_modules() -> Path | None:
    """Where the suite's npm packages are: tests/node/node_modules, else $MOCKMCP_NODE_MODULES."""
    local = ROOT / "tests" / "node" / "node_modules"
    if local.is_dir():
        return local
    named = os.environ.get("MOCKMCP_NODE_MODULES")
    return Path(named) if named else None


# Node's listen() on port 0 takes a port the system picks; this says which, on stderr.
_SAY_PORT = (
    'data:text/javascript,import net from "node:net"; const listen = net.Server.prototype.listen;'
    " net.Server.prototype.listen = function (...args) {"
    ' this.once("listening", () => console.error("mockmcp-test-port " + this.address().port));'
    " return listen.apply(this, args); };"
)


@contextmanager
def everything_over_http() -> Iterator[str]:
    """server-everything in its streamableHttp mode, on a port the system picks: yields its endpoint URL."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    modules = node_modules()
    if modules is None:
        pytest.skip("no npm packages: install them in tests/node/node_modules, or set MOCKMCP_NODE_MODULES")
    entry = modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not entry.is_file():
        pytest.skip(f"@modelcontextprotocol/server-everything is not installed in {modules}")
    server = subprocess.Popen(
        [node, "--import", _SAY_PORT, str(entry), "streamableHttp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PORT": "0"},
    )
    try:
        found = said(server, r"mockmcp-test-port (\d+)", "server-everything")
        yield f"http://127.0.0.1:{found.group(1)}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.slow
def test_the_typescript_sdk_servers_session_errors_and_get_stream_replay_as_recorded(tmp_path: Path) -> None:
    out = tmp_path / "everything.yaml"
    with everything_over_http() as target, recording(target, out, "--http", "127.0.0.1:0") as url:
        live = session_answers(url)
    assert live["get"] == (200, "text/event-stream", None)
    assert live["unknown_post"] == (400, json.loads(TS_UNKNOWN))
    assert live["unknown_get"] == (400, "application/json", json.loads(TS_UNKNOWN))
    assert live["ended_post"] == live["unknown_post"]
    http = store.load(str(out)).meta["http"]
    assert http["get_stream"] is True
    assert http["session_errors"]["unknown"] == {"status": 400, "error": TS_ERROR, "without_id": True}
    with served(out, tmp_path) as replay:
        replayed = session_answers(replay.url)
        replay.stop()
    assert replayed == live


@pytest.mark.slow
def test_a_get_stream_the_client_left_before_its_end_is_recorded_as_offered(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    """The MCP Python SDK's server keeps the GET stream open until the session ends; a client that
    leaves it first still recorded that the server offers one, so replay answers GET 200, not 405."""
    out = tmp_path / "notes.yaml"
    with recording(http_server(), out) as url:
        status, session, _body = post(url, HANDSHAKE)
        assert status == 200 and session
        post(url, INITIALIZED, session)
        live = get_head(url, session)
    assert live == (200, "text/event-stream", None)
    assert store.load(str(out)).meta["http"]["get_stream"] is True
    with served(out, tmp_path) as replay:
        _status, session, _body = post(replay.url, HANDSHAKE)
        post(replay.url, INITIALIZED, session)
        assert get_head(replay.url, session) == live
        replay.stop()


def resume(url: str, session: str, last_event_id: str, answers: int) -> list[Any]:
    """Come back to the session's GET stream with Last-Event-ID; read until `answers` responses have
    come (and what came with them), then leave."""
    connection = connect(url)
    headers = {"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": last_event_id}
    connection.request("GET", urlsplit(url).path, headers=headers)
    response = connection.getresponse()
    assert response.status == 200
    event, messages = "", []
    while sum("id" in message for message in messages) < answers:
        line = response.readline().decode()
        assert line, f"the stream ended after {messages}"
        event += line
        if not line.strip():  # an event is whole
            messages += sse_messages(event)
            event = ""
    connection.close()
    return messages


@pytest.mark.slow
def test_what_the_typescript_sdk_server_sends_again_on_a_resumed_get_stream_is_recorded_once(tmp_path: Path) -> None:
    """server-everything keeps every event and sends all those after Last-Event-ID, of every stream,
    on the resumed GET stream: answers long given, which the recorder must not take for new messages
    (they became raw lines of their own, or went with a call in flight), beside what it had kept for
    a GET stream not open then, which is new (the host sees it only now)."""
    out = tmp_path / "resumed.yaml"
    with everything_over_http() as target, recording(target, out, "--http", "127.0.0.1:0") as url:
        connection = connect(url)
        connection.request("POST", urlsplit(url).path, body=json.dumps(HANDSHAKE), headers=HEADERS)
        response = connection.getresponse()
        session, first = response.getheader("mcp-session-id"), re.search(r"id: (\S+)", response.read().decode())
        connection.close()
        assert session and first
        post(url, INITIALIZED, session)
        post(url, {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}, session)
        again = resume(url, session, first.group(1), 2)
        post(url, LIST, session)
    assert [message["id"] for message in again if "id" in message] == [1, 2]  # answered before: sent again
    new = [{key: value for key, value in m.items() if key != "jsonrpc"} for m in again if "id" not in m]
    made = store.load(str(out))
    assert [(i.method, i.response is not None, i.server) for i in made.interactions if i.method] == [
        ("initialize", True, ()),
        ("notifications/initialized", False, ()),
        ("resources/list", True, ()),
        ("tools/list", True, ()),
    ]
    assert [s.message for i in made.interactions if i.method is None for s in i.server] == new
