"""JSON-RPC batches over `mockmcp replay --http`: answered as revision 2025-03-26 says, refused in the others."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import yaml
from conftest import SHIPPED, served

LEGACY = SHIPPED / "notes-session.yaml"
BASE = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post(port: int, body: Any, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", "/mcp", body=json.dumps(body).encode(), headers={**BASE, **(headers or {})})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def initialize(port: int, version: str) -> dict[str, str]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    status, headers, _ = post(port, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert status == 200
    return {"mcp-session-id": headers["mcp-session-id"]}


LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
READ = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "read_file", "arguments": {"path": "notes.txt"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_a_2025_03_26_session_gets_its_batch_answered_as_one_array(tmp_path: Path) -> None:
    with served(LEGACY, tmp_path) as server:
        session = initialize(server.port, "2025-03-26")
        assert post(server.port, [INITIALIZED], session)[0] == 202  # no request in it: nothing to answer
        status, headers, body = post(server.port, [LIST, INITIALIZED, READ, {"id": 9}], session)
        assert status == 200 and headers["content-type"].startswith("application/json")
        answers = {a["id"]: a for a in json.loads(body)}
        assert set(answers) == {2, 3, 9}  # the invalid member gets its -32600 too
        assert answers[3]["result"]["content"][0]["text"] == "remember to buy milk"
        assert "tools" in answers[2]["result"] and answers[9]["error"]["code"] == -32600
        status, _, body = post(server.port, [], session)
        assert status == 400 and json.loads(body)["error"]["code"] == -32600  # an empty batch


def test_sessions_of_later_revisions_get_400_for_a_batch(tmp_path: Path) -> None:
    with served(LEGACY, tmp_path) as server:
        session = initialize(server.port, "2025-11-25")
        status, _, body = post(server.port, [LIST], session)
        assert status == 400 and "2025-03-26" in json.loads(body)["error"]["message"]
        status, _, _ = post(server.port, [LIST], {**session, "mcp-protocol-version": "2025-06-18"})
        assert status == 400


def test_a_batch_waiting_on_a_delay_is_still_answered_as_the_recorded_server_framed_it(tmp_path: Path) -> None:
    """A server answering JSON answers a batch with one JSON array, however long its members take."""
    recorded = yaml.safe_load(LEGACY.read_text())
    for interaction in recorded["interactions"]:
        if interaction.get("request", {}).get("method") == "tools/call" and "notes.txt" in str(interaction["request"]):
            interaction["delay"] = 0.3
    slow = tmp_path / "slow.yaml"
    slow.write_text(yaml.safe_dump(recorded))
    with served(slow, tmp_path) as server:
        session = initialize(server.port, "2025-03-26")
        status, headers, body = post(server.port, [LIST, READ], session)
        assert status == 200 and headers["content-type"].startswith("application/json")
        answers = {a["id"]: a for a in json.loads(body)}
        assert answers[3]["result"]["content"][0]["text"] == "remember to buy milk" and "tools" in answers[2]["result"]
