"""The recording proxy and answers longer than it keeps: every byte reaches the client as it comes, what the
proxy holds stays bounded, and the cassette keeps the call with an error standing in for the answer, which
replay (over HTTP and over stdio) answers at once. One target over real sockets, the proxy on a thread of
this process with its limit lowered (so a few MiB stand for hundreds); the rules alone in memory."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import MOCKMCP, ROOT, child_env, serve_each_connection, served, sse_messages

from mockmcp import jsonrpc
from mockmcp.cassette import store
from mockmcp.core.redact import Redactor
from mockmcp.shells import http_record
from mockmcp.shells.http_loop import PAUSE_READING
from mockmcp.shells.http_record import RecordingProxy
from mockmcp.shells.journal import Journal, saved
from mockmcp.words import RecordMode

LIMIT = 256 << 10  # the proxy's KEPT_LIMIT in these tests
BIG = 6 << 20  # the answer's text: far over the limit, and over WHOLE
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: int, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def answer_of(request: dict[str, Any]) -> bytes:
    """The target's JSON-RPC answer to a request: tool `big` answers BIG bytes of text."""
    if request["method"] == "initialize":
        info = {"name": "big", "version": "1"}
        result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
    else:
        text = "x" * BIG if request["params"]["name"] == "big" else "small"
        result = {"content": [{"type": "text", "text": text}]}
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()


class _Target:
    """A Streamable HTTP server of one tool that answers in `framing`: a JSON body with its length, a chunked
    JSON body, or an SSE stream of one event; on keep-alive connections."""

    def __init__(self, framing: str) -> None:
        self.framing = framing
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/mcp"
        serve_each_connection(self.listener, self._serve)

    def _serve(self, sock: socket.socket) -> None:
        with sock, sock.makefile("rb") as reading:
            sock.settimeout(20)
            try:
                while head := self._head(reading):
                    body = reading.read(int(head.get("content-length", "0")))
                    sock.sendall(self._answer(json.loads(body) if body else None))
            except (OSError, ValueError):
                pass

    @staticmethod
    def _head(reading: Any) -> dict[str, str]:
        fields: dict[str, str] = {}
        if not reading.readline():
            return fields
        while (line := reading.readline().strip()) != b"":
            name, _, value = line.decode().partition(":")
            fields[name.lower()] = value.strip()
        return fields or {"request": "without headers"}

    def _answer(self, request: dict[str, Any] | None) -> bytes:
        if request is None:  # a GET: no stream offered
            return b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n"
        if "id" not in request:
            return b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
        answer = answer_of(request)
        head = b"HTTP/1.1 200 OK\r\nmcp-session-id: s1\r\n"
        if self.framing == "sse":
            event = b"event: message\r\ndata: " + answer + b"\r\n\r\n"
            return head + b"content-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(event), event)
        head += b"content-type: application/json\r\n"
        if self.framing == "json":
            return head + b"content-length: %d\r\n\r\n%s" % (len(answer), answer)
        pieces = [answer[at : at + 100_000] for at in range(0, len(answer), 100_000)]
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
        return head + b"transfer-encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"


@contextmanager
def proxy_in_front_of(target: str, out: Path) -> Iterator[tuple[RecordingProxy, list[int]]]:
    """The recording proxy on a thread, recording into out, and the most bytes it held at once (what its
    exchanges kept of a body or an SSE event, and what waited for its client), after each piece it read; on
    leaving, it stops and the cassette is saved (its notes in the list's place... see `stop`)."""
    journal = Journal.fresh(str(out), RecordMode.ALL, Redactor(), [target])
    proxy = RecordingProxy(target, ("127.0.0.1", 0), journal, Redactor(), timeout=20)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    held: list[int] = [0]
    try:
        yield proxy, held
    finally:
        proxy.stop_accepting()
        thread.join(20)
        proxy.finish_answers(10)
        journal.close()


def held_by(exchange: Any) -> int:
    pending = len(exchange.events._pending) if exchange.events is not None else 0
    return len(exchange.body) + pending + len(exchange.client.out)


def post(connection: http.client.HTTPConnection, message: dict[str, Any], session: str | None) -> tuple[Any, bytes]:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session:
        headers["mcp-session-id"] = session
    connection.request("POST", "/mcp", json.dumps(message), headers)
    response = connection.getresponse()
    return response, response.read()


def messages(response: Any, body: bytes) -> list[Any]:
    if response.getheader("content-type", "").startswith("text/event-stream"):
        return sse_messages(body.decode())
    return [json.loads(body)] if body else []


def session_through(url: str) -> tuple[list[Any], bytes]:
    """initialize, initialized, tools/call big, tools/call small, on one connection: the calls' messages, and
    the big call's body as it came."""
    host, port = url.split("/")[2].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        response, _ = post(connection, INIT, None)
        session = response.getheader("mcp-session-id")
        post(connection, INITIALIZED, session)
        response, big = post(connection, call(2, "big"), session)
        answers = messages(response, big)
        response, small = post(connection, call(3, "small"), session)
        return answers + messages(response, small), big
    finally:
        connection.close()


@pytest.mark.parametrize("framing", ["json", "chunked", "sse"])
def test_an_answer_over_the_limit_reaches_the_host_whole_and_the_cassette_holds_the_call_answered_by_an_error(
    framing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_record, "KEPT_LIMIT", LIMIT)
    most: list[int] = []
    relayed = http_record._Exchange.data

    def data(exchange: Any, chunk: bytes) -> None:
        relayed(exchange, chunk)
        most.append(held_by(exchange))

    monkeypatch.setattr(http_record._Exchange, "data", data)
    target, out = _Target(framing), tmp_path / "big.yaml"
    try:
        with proxy_in_front_of(target.url, out) as (proxy, _held):
            live, big = session_through(proxy.url)
    finally:
        target.listener.close()
    notes = saved(str(out), "stopped")

    # The host got every byte, as the target sent it.
    expected = answer_of(call(2, "big"))
    assert framing == "sse" or big == expected
    assert live[0] == json.loads(expected) and live[1]["result"]["content"][0]["text"] == "small"
    # What the proxy held at once stayed bounded: the kept part of one message and one pause's worth for
    # the client, never the answer.
    assert len(most) > BIG // (64 << 10) and max(most) <= LIMIT + PAUSE_READING + (256 << 10)

    recorded = store.load(str(out))
    assert [i.method for i in recorded.interactions] == ["initialize", "notifications/initialized", *["tools/call"] * 2]
    stand_in = recorded.interactions[2].response
    assert stand_in is not None and stand_in["error"]["code"] == jsonrpc.NOT_RECORDED
    size = stand_in["error"]["data"]["size"]
    assert size >= BIG and f"{size:,} bytes" in stand_in["error"]["message"]
    assert recorded.interactions[3].response == {"result": {"content": [{"type": "text", "text": "small"}]}}
    [note] = [n for n in notes if "over the" in n]
    assert note.startswith(f"{out}: interactions[2].response: the answer to tools/call request 2 was")
    assert f"{size:,} bytes, over the {LIMIT:,}" in note and "have the server send less" in note

    # Replay answers the call at once with the stand-in, under the live id, over HTTP and over stdio.
    with served(out, tmp_path) as server:
        replayed, _ = session_through(server.url)
        report = server.stop()
    assert report["misses"] == []
    assert replayed[0]["error"] == stand_in["error"] and replayed[1] == live[1]
    lines = [INIT, INITIALIZED, {**call(7, "big")}]
    stdio = subprocess.run(
        [*MOCKMCP, "replay", str(out)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
        cwd=ROOT,
    )
    answered = [json.loads(line) for line in stdio.stdout.splitlines()]
    assert answered[-1] == {"jsonrpc": "2.0", "id": 7, "error": stand_in["error"]}
    lint = subprocess.run([*MOCKMCP, "lint", str(out)], capture_output=True, text=True, timeout=60, env=child_env())
    assert lint.returncode == 0, lint.stdout + lint.stderr
