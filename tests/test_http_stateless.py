"""2026-07-28 over `mockmcp replay --http`: the clients of the shared stateless session see only their own ids."""

from __future__ import annotations

import http.client
import json
import signal
import time
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
    cassette.write_text(
        json.dumps({"version": 1, "interactions": [{"request": call, "response": answer, "delay": 30}]})
    )
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "slow",
    }
    with served(cassette, tmp_path) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", **call, "id": 7}), headers=headers)
        time.sleep(0.3)  # the call waits on its delay
        connection.close()  # the client gives up on it
        time.sleep(0.3)
        server.proc.send_signal(signal.SIGTERM)
        _, stderr = server.proc.communicate(timeout=20)
    assert "the host cancelled request 7 (interactions[0]); it will not be answered" in stderr  # its own id
