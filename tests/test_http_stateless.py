"""2026-07-28 over `mockmcp replay --http`: the clients of the shared stateless session see only their own ids."""

from __future__ import annotations

import http.client
import json
import queue
import signal
import threading
from pathlib import Path
from typing import Any

from conftest import served
from test_replay_engine import LISTEN  # a listen with two events tagged with its id


def _listen(port: int, listen_id: Any) -> list[dict[str, Any]]:
    """POST subscriptions/listen and read the first two events of its stream."""
    body = {
        "jsonrpc": "2.0",
        "id": listen_id,
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"resourcesUpdated": ["notes://notes.txt"]},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            },
        },
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
    }
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", "/mcp", body=json.dumps(body).encode(), headers=headers)
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("content-type", "").startswith("text/event-stream")
    events: list[dict[str, Any]] = []
    while len(events) < 2:
        line = response.readline()
        assert line, "the stream ended early"
        if line.startswith(b"data:"):
            events.append(json.loads(line[5:]))
    connection.close()
    return events


def test_listen_notifications_carry_the_client_s_own_id_never_an_alias(tmp_path: Path) -> None:
    cassette = tmp_path / "listen.yaml"
    cassette.write_text(LISTEN)
    with served(cassette, tmp_path) as server:
        for listen_id in (11, "listen-1"):  # two clients of the one stateless session
            events = _listen(server.port, listen_id)
            assert [e["method"] for e in events] == [
                "notifications/resources/updated",
                "notifications/tools/list_changed",
            ]
            for event in events:
                assert event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
            assert events[0]["params"]["_meta"]["note"] == "kept"


def test_a_2026_client_closing_its_request_s_stream_cancels_the_request(tmp_path: Path) -> None:
    """At 2026-07-28 closing the response stream is the cancellation (a posted notification is not)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    call = {"id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {}, "_meta": meta}}
    answer = {"result": {"content": [{"type": "text", "text": "done"}], "isError": False, "resultType": "complete"}}
    cassette = tmp_path / "slow.yaml"
    # A server that streams every answer: the stream's head comes at once, so the client knows the call is
    # under way (waiting on its delay) before it gives up on it.
    interactions = [{"request": call, "response": answer, "delay": 30}]
    cassette.write_text(json.dumps({"version": 1, "meta": {"http": {"framing": "sse"}}, "interactions": interactions}))
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "slow",
    }
    with served(cassette, tmp_path) as server:
        said: queue.Queue[str] = queue.Queue()
        assert server.proc.stderr is not None
        threading.Thread(target=lambda: [said.put(line) for line in server.proc.stderr], daemon=True).start()
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", **call, "id": 7}), headers=headers)
        assert connection.getresponse().status == 200  # the stream is open: the call waits on its delay
        connection.close()  # the client gives up on it
        cancelled = "the host cancelled request 7 (interactions[0]); it will not be answered"  # its own id
        lines = [said.get(timeout=10)]
        while cancelled not in lines[-1]:
            lines.append(said.get(timeout=10))  # (queue.Empty after 10 s without it: the test fails)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=20) == 0
