"""`mockmcp replay --http` under a descriptor limit: connections past it wait, the server keeps serving; GET
streams past the cap end the quietest, and one whose client reads nothing is cut."""

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


# A server recorded offering a GET stream, whose `shout` tool sends a large log on it before it answers.
GET_STREAMED = """version: 1
meta: {http: {get_stream: true}}
interactions:
- request:
    id: 1
    method: initialize
    params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: t, version: '1'}}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}, logging: {}}, serverInfo: {name: s, version: '1'}}
- request: {id: 2, method: tools/call, params: {name: shout, arguments: {}}}
  times: any
  server:
  - notification: {method: notifications/message, params: {level: info, data: %s}}
    stream: get
  response: {result: {content: [{type: text, text: shouted}]}}
""" % ("x" * (64 << 10))


def _post(port: int, body: dict[str, object], session: str | None = None) -> tuple[int, str | None]:
    """POST one message; its status and the session id it names."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    connection.request(
        "POST",
        "/mcp",
        body=json.dumps(body).encode(),
        headers={**headers, "mcp-session-id": session or ""} if session else headers,
    )
    answer = connection.getresponse()
    answer.read()
    connection.close()
    return answer.status, answer.getheader("mcp-session-id")


def _open_get_stream(port: int, session: str, **options: int) -> socket.socket:
    """A GET stream of the session, its head read; `options`: socket options set before it connects."""
    sock = socket.socket()
    for name, value in options.items():
        sock.setsockopt(socket.SOL_SOCKET, getattr(socket, name), value)
    sock.settimeout(20)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: "
        + session.encode()
        + b"\r\n\r\n"
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 200 "), head
    return sock


def test_get_streams_past_the_cap_end_the_quietest_so_new_clients_are_still_served(tmp_path: Path) -> None:
    """64 descriptors: 36 GET streams at most. Sixty sessions each open one and hold it; those ended at the cap
    are closed by their clients (an SDK client opens the next on the same connection); a new client is served."""
    cassette = tmp_path / "get.yaml"
    cassette.write_text(GET_STREAMED)
    with served(cassette, tmp_path, preexec_fn=_low_descriptor_limit) as server:
        proc, port = server.proc, server.port
        streams: list[socket.socket] = []
        ended = 0
        for _ in range(60):
            status, session = _post(port, INIT)
            assert status == 200 and session is not None
            streams.append(_open_get_stream(port, session))
            for sock in select.select(streams, [], [], 0.05)[0]:
                assert sock.recv(4096).endswith(b"0\r\n\r\n")  # the stream's end, cleanly
                streams.remove(sock)
                sock.close()
                ended += 1
        assert ended >= 60 - 36 and len(streams) <= 36
        assert _initialize(port) == 200
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert "GET streams are open, the most this server keeps open at once" in err
        for sock in streams:
            sock.close()


def test_a_get_stream_whose_client_reads_nothing_is_cut_instead_of_growing(tmp_path: Path) -> None:
    cassette = tmp_path / "get.yaml"
    cassette.write_text(GET_STREAMED)
    with served(cassette, tmp_path) as server:
        proc, port = server.proc, server.port
        status, session = _post(port, INIT)
        assert status == 200 and session is not None
        stream = _open_get_stream(port, session, SO_RCVBUF=4096)  # and never read
        shout = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shout", "arguments": {}}}
        for _ in range(200):  # 13 MB of logs for it; every call is answered all the same
            assert _post(port, shout, session)[0] == 200
        stream.settimeout(20)
        while stream.recv(1 << 16):  # what the kernel held, then the end: the server cut it
            pass
        stream.close()
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert "the client of its GET stream left more than 1048576 bytes unread, so the stream was cut" in err
