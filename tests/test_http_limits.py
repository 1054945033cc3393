"""`mockmcp replay --http` under a descriptor limit: connections past it wait, the server keeps serving."""

from __future__ import annotations

import http.client
import json
import resource
import select
import signal
import socket
import time
from pathlib import Path

from conftest import SHIPPED, served

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _low_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


def _initialize(port: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    connection.request("POST", "/mcp", body=json.dumps(INIT).encode(), headers=headers)
    status = connection.getresponse().status
    connection.close()
    return status


def test_more_connections_than_descriptors_get_503_and_leave_the_server_serving(tmp_path: Path) -> None:
    with served(SHIPPED / "notes-session.yaml", tmp_path, preexec_fn=_low_descriptor_limit) as server:
        proc, port = server.proc, server.port
        crowd = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(100)]
        for sock in crowd:  # half a request each, never finished: each holds a descriptor of the server's
            sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        # Past the limit, a connection is told 503 at once (the server keeps a descriptor for that).
        told = select.select(crowd, [], [], 10)[0]  # the first told, at once (not after the 10 s)
        answers = [sock.recv(200) for sock in told]
        assert any(answer.startswith(b"HTTP/1.1 503 Service Unavailable") for answer in answers), answers
        for sock in crowd:
            sock.close()
        assert proc.poll() is None, "the server exited"
        deadline = time.monotonic() + 10
        while (status := _initialize(port)) == 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # as a client told 503 tries again: the closed connections free their descriptors
        assert status == 200
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert "out of file descriptors: new connections get 503 until some close" in err  # and said so


MODERN_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {
        "name": "read_file",
        "arguments": {"path": "notes.txt"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}


def test_a_stateless_client_that_pipelines_and_never_reads_stalls_no_one_and_sigterm_still_stops(
    tmp_path: Path,
) -> None:
    with served(SHIPPED / "notes-session-2026.yaml", tmp_path) as server:
        proc, port = server.proc, server.port
        body = json.dumps(MODERN_CALL).encode()
        request = (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            b"Mcp-Method: tools/call\r\nMcp-Name: read_file\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        greedy = socket.create_connection(("127.0.0.1", port), timeout=10)
        greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        greedy.setblocking(False)
        sent = 0
        while sent < 256 << 20:  # requests back to back, answers never read, until the server stops reading them
            try:
                sent += greedy.send(request * 64)
            except BlockingIOError:
                if not select.select([], [greedy], [], 1.0)[1]:
                    break  # for a whole second the server took nothing more: its side is full
        other = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "read_file",
        }
        other.request("POST", "/mcp", body=body, headers=headers)
        answer = other.getresponse()
        assert answer.status == 200 and "remember to buy milk" in answer.read().decode()
        other.close()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
        assert proc.returncode == 0
        greedy.close()
