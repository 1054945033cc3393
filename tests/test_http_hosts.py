"""Who may reach the HTTP shells: Host and Origin on replay bound to every interface and on the
recording proxy, `--allow-host`, and the proxy's answer when its target never answers."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import h11
import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env, serve_each_connection

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@contextmanager
def started(*args: str, silent: str = "") -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A mockmcp command that prints its URL on its first stderr line, and that URL; stopped by SIGTERM.

    `silent`: a recording proxy whose target answered nothing, which must exit 2 writing no cassette, and
    say this (why the target did not answer)."""
    proc = subprocess.Popen([*MOCKMCP, *args], stderr=subprocess.PIPE, text=True, env=child_env(), cwd=ROOT)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"(http://\S+/mcp)", line)
        assert found, line
        yield proc, found.group(1)
        proc.send_signal(signal.SIGTERM)
        _out, said = proc.communicate(timeout=30)
        if silent:
            assert proc.returncode == 2 and "the server answered none of the" in said and silent in said, said
        else:
            assert proc.returncode == 0, said
    finally:
        proc.kill()
        proc.wait(10)


def proxying_to(out: Path, target: str) -> list[str]:
    """`mockmcp record`'s arguments for a recording proxy to target, recording afresh into out."""
    return ["record", "--record-mode", "rewrite", "-o", str(out), "--http-target", target]


@contextmanager
def running(*args: str, silent: str = "") -> Iterator[str]:
    with started(*args, silent=silent) as (_proc, url):
        yield url


def post(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """POST an initialize to url (with these headers too): the status and the body."""
    return post_answer(url, headers)[:2]


def post_answer(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    """`post`, and the answer's headers by lower-case name."""
    found = re.match(r"http://([^/]+):(\d+)(/\S*)", url)
    assert found
    connection = http.client.HTTPConnection(found.group(1), int(found.group(2)), timeout=20)
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    connection.request("POST", found.group(3), body=json.dumps(INIT).encode(), headers={**base, **(headers or {})})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text, {name.lower(): value for name, value in response.getheaders()}


def test_replay_on_every_interface_serves_the_machine_s_own_names_and_those_allowed(tmp_path: Path) -> None:
    cassette = str(SHIPPED / "notes-session.yaml")
    with running("replay", cassette, "--http", "0.0.0.0:0", "--allow-host", "mcp.test") as url:
        assert url.startswith("http://127.0.0.1:")  # a URL a client can use, not 0.0.0.0
        port = url.split(":")[2].split("/")[0]
        assert post(url)[0] == 200
        assert post(url, {"host": f"{socket.gethostname()}:{port}"})[0] == 200
        assert post(url, {"host": f"mcp.test:{port}", "origin": "http://mcp.test"})[0] == 200
        status, text = post(url, {"host": f"evil.example:{port}"})
        assert status == 421 and "--allow-host" in text
        assert post(url, {"origin": "https://evil.example"})[0] == 403


def test_the_proxy_checks_host_and_origin_before_reaching_the_target(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as target:  # accepts connections, never answers
        port = target.getsockname()[1]
        out = tmp_path / "out.yaml"
        command = proxying_to(out, f"http://127.0.0.1:{port}/mcp")
        with running(*command, "--upstream-timeout", "0.5", silent="did not answer within 0.5 s") as url:
            assert url.startswith("http://127.0.0.1:")  # loopback unless told otherwise
            proxy_port = url.split(":")[2].split("/")[0]
            status, text = post(url, {"host": f"rebound.example:{proxy_port}"})
            assert status == 421 and "rebound.example" in text
            assert post(url, {"origin": "https://evil.example"})[0] == 403
            target.settimeout(0.2)
            try:  # neither refused request reached the target
                target.accept()[0].close()
                reached = True
            except TimeoutError:
                reached = False
            assert not reached
            status, text = post(url)  # a target that never answers: 504, not a hung request
            assert status == 504 and "0.5 s" in text


def test_a_recording_whose_target_is_down_writes_no_cassette_and_says_why(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as free:
        port = free.getsockname()[1]  # nothing listens there once it is closed
    down = f"http://127.0.0.1:{port}/mcp"
    out = tmp_path / "out.yaml"
    command = proxying_to(out, down)
    why = f"could not reach {down}: cannot connect to 127.0.0.1:{port}: Connection refused"
    with running(*command, silent=why) as url:
        assert post(url)[0] == 502
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no cassette, no journal


class _CountingTarget:
    """A plain HTTP/1.1 server that answers every request with a JSON body and counts connections; a
    request whose body says "stream" gets an SSE stream of 128 MiB instead, in comment events that
    carry no message (`streamed` counts the bytes of it the socket took); a GET gets the head of an
    SSE stream that sends nothing (`get_closed` is set once the other side closes it)."""

    def __init__(
        self,
        tls: ssl.SSLContext | None = None,
        body: bytes = b'{"jsonrpc":"2.0","id":1,"result":{}}',
        extra: list[tuple[str, str]] | None = None,
        reason: bytes = b"",
    ) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.tls, self.body = tls, body
        self.extra, self.reason = extra or [], reason  # more headers, and the status line's reason, of every answer
        self.asked: list[list[tuple[bytes, bytes]]] = []  # each request's headers as they arrived
        self.streamed = 0
        self.get_closed = threading.Event()
        serve_each_connection(self.listener, self._counted)

    def _counted(self, sock: socket.socket) -> None:
        self.connections += 1
        self._serve(sock)

    def _serve(self, sock: socket.socket) -> None:
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_side=True)
            except OSError:
                sock.close()
                return
        conn = h11.Connection(h11.SERVER)
        asked = b""
        with sock:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    try:
                        data = sock.recv(1 << 16)
                    except OSError:
                        return
                    if not data:
                        return
                    conn.receive_data(data)
                elif isinstance(event, h11.Request) and event.method == b"GET":
                    sse = [("content-type", "text/event-stream"), *self.extra]
                    sock.sendall(conn.send(h11.Response(status_code=200, headers=sse, reason=self.reason)) or b"")
                    try:
                        while sock.recv(1 << 16):
                            pass
                    except OSError:
                        pass
                    self.get_closed.set()
                    return
                elif isinstance(event, h11.Request):
                    self.asked.append(list(event.headers.raw_items()))
                elif isinstance(event, h11.Data):
                    asked += event.data
                elif isinstance(event, h11.EndOfMessage) and b'"stream"' in asked:
                    sse = [("content-type", "text/event-stream")]
                    sock.sendall(conn.send(h11.Response(status_code=200, headers=sse)) or b"")
                    event_data = b": " + b"x" * (1 << 20) + b"\n\n"
                    try:
                        for _ in range(128):
                            sock.sendall(conn.send(h11.Data(data=event_data)) or b"")
                            self.streamed += len(event_data)
                        sock.sendall(conn.send(h11.EndOfMessage()) or b"")
                    except OSError:
                        return  # the proxy cut the stream
                    conn.start_next_cycle()
                    asked = b""
                elif isinstance(event, h11.EndOfMessage):
                    asked = b""
                    body = self.body
                    headers = [("content-type", "application/json"), ("content-length", str(len(body))), *self.extra]
                    out = conn.send(h11.Response(status_code=200, headers=headers, reason=self.reason)) or b""
                    sock.sendall(out + (conn.send(h11.Data(data=body)) or b"") + (conn.send(h11.EndOfMessage()) or b""))
                    conn.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed):
                    return


@contextmanager
def proxying(target: _CountingTarget, tmp_path: Path) -> Iterator[str]:
    """`mockmcp record --http-target` in front of target (recording to out.yaml), and its URL; the
    target stops listening afterwards."""
    try:
        out = tmp_path / "out.yaml"
        with running(*proxying_to(out, f"http://127.0.0.1:{target.port}/mcp")) as url:
            yield url
    finally:
        target.listener.close()


def test_the_proxy_keeps_its_connection_to_the_target_for_the_next_request(tmp_path: Path) -> None:
    target = _CountingTarget()
    with proxying(target, tmp_path) as url:
        for _ in range(5):
            assert post(url)[0] == 200
    assert target.connections == 1  # a new TCP connection per request cost each call a round trip more


def raw_exchange(url: str, request: bytes, until: bytes) -> bytes:
    """What comes back on a socket to url for request's bytes, read until `until` is in it."""
    found = re.match(r"http://([^/]+):(\d+)", url)
    assert found
    with socket.create_connection((found.group(1), int(found.group(2))), timeout=20) as sock:
        sock.sendall(request)
        answer = b""
        while until not in answer:
            data = sock.recv(1 << 16)
            assert data, answer
            answer += data
    return answer


def test_the_proxy_passes_the_status_reason_and_repeated_headers_as_they_came(tmp_path: Path) -> None:
    cookies = [("set-cookie", "a=1"), ("set-cookie", "b=2")]
    target = _CountingTarget(extra=cookies, reason=b"Fine Thanks")
    with proxying(target, tmp_path) as url:
        host = url.split("/")[2]
        body = json.dumps(INIT).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
            "accept: application/json, text/event-stream\r\nx-trace: one\r\nx-trace: two\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        )
        answer = raw_exchange(url, head.encode() + body, b'"result"')  # a JSON body, whole
        assert answer.startswith(b"HTTP/1.1 200 Fine Thanks\r\n")
        assert b"set-cookie: a=1\r\nset-cookie: b=2\r\n" in answer.lower()
        assert [v for k, v in target.asked[-1] if k.lower() == b"x-trace"] == [b"one", b"two"]
        get = f"GET /mcp HTTP/1.1\r\nhost: {host}\r\naccept: text/event-stream\r\n\r\n"
        answer = raw_exchange(url, get.encode(), b"\r\n\r\n")  # an SSE stream's head
        assert answer.startswith(b"HTTP/1.1 200 Fine Thanks\r\n")
        assert b"set-cookie: a=1\r\nset-cookie: b=2\r\n" in answer.lower()


def test_many_clients_waiting_on_a_slow_target_cost_the_proxy_no_thread(tmp_path: Path) -> None:
    """The proxy serves every client and every connection to the target on one event loop."""
    clients = 20
    with socket.create_server(("127.0.0.1", 0), backlog=clients * 2) as target:  # accepts, never answers
        out = tmp_path / "out.yaml"
        command = proxying_to(out, f"http://127.0.0.1:{target.getsockname()[1]}/mcp")
        with started(*command, "--upstream-timeout", "20", silent="(the host got 502 Bad Gateway)") as (proc, url):
            threads = len(os.listdir(f"/proc/{proc.pid}/task"))
            answers: list[int] = []
            waiting = [threading.Thread(target=lambda: answers.append(post(url)[0])) for _ in range(clients)]
            for thread in waiting:
                thread.start()
            target.settimeout(10)
            upstream = [target.accept()[0] for _ in range(clients)]  # every request reached the target
            assert len(os.listdir(f"/proc/{proc.pid}/task")) == threads  # and none of them took a thread
            for sock in upstream:
                sock.close()  # the target hangs up: each client gets its 502 at once
            for thread in waiting:
                thread.join(20)
            assert answers == [502] * clients


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_an_https_target_is_reached_over_tls_and_its_answer_comes_back_whole(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    text = "x" * 300_000  # many TLS records: more than one read's worth
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": text}}).encode()
    target = _CountingTarget(tls, body)
    try:
        out = tmp_path / "out.yaml"
        command = proxying_to(out, f"https://127.0.0.1:{target.port}/mcp")
        proc = subprocess.Popen(
            [*MOCKMCP, *command],
            stderr=subprocess.PIPE,
            text=True,
            env={**child_env(), "SSL_CERT_FILE": str(cert)},  # the proxy trusts the target's certificate
            cwd=ROOT,
        )
        try:
            assert proc.stderr is not None
            found = re.search(r"(http://\S+/mcp)", proc.stderr.readline())
            assert found
            for _ in range(2):
                status, answer = post(found.group(1))
                assert status == 200 and json.loads(answer)["result"]["text"] == text
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=30)
            assert proc.returncode == 0, err
        finally:
            proc.kill()
            proc.wait(10)
        assert target.connections == 1 and text in out.read_text()
    finally:
        target.listener.close()


@pytest.mark.slow
def test_a_client_that_reads_slowly_holds_back_its_own_stream_and_no_one_else(tmp_path: Path) -> None:
    target = _CountingTarget()
    with proxying(target, tmp_path) as url:
        port = int(url.split(":")[2].split("/")[0])
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.settimeout(30)
        slow.connect(("127.0.0.1", port))
        body = b'{"jsonrpc":"2.0","id":5,"method":"stream"}'
        slow.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        deadline = time.monotonic() + 30
        while target.streamed < 4 << 20 and time.monotonic() < deadline:  # a poll: the stream is under way
            time.sleep(0.05)
        assert target.streamed >= 4 << 20, f"the stream never got under way: {target.streamed} bytes in 30 s"
        assert post(url)[0] == 200  # another client is answered meanwhile
        # Time, not a wait for something: were the proxy still reading the target for the client that does not
        # read, half a second more would carry far more than the buffers hold.
        time.sleep(0.5)
        # The proxy stopped reading the target for the client that does not read: of the 128 MiB
        # no more went than the sockets' buffers (at most 32 MiB each way here) and the proxy's 1 MiB hold.
        assert target.streamed < 64 << 20
        received = 0
        while chunk := slow.recv(1 << 20):  # to the end of the answer, when the proxy closes
            received += len(chunk)
        slow.close()
        assert target.streamed == 128 * ((1 << 20) + 4)  # read in the end, all of it
        assert received > 128 << 20


def test_a_get_stream_the_client_left_is_closed_at_the_target_too(tmp_path: Path) -> None:
    target = _CountingTarget()
    with proxying(target, tmp_path) as url:
        port = int(url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            assert client.recv(1 << 16).startswith(b"HTTP/1.1 200 ")
        # the server's stream sends nothing more, yet the proxy closes it as its client left
        assert target.get_closed.wait(30)


UNPARSEABLE = [  # (what is changed in a good POST, the status it gets): a URL no parser takes is refused
    ("host: [::1", b"421"),
    ("origin: http://[::1", b"403"),
    ("target //[/mcp", b"400"),
]


def _post_with(url: str, change: str) -> bytes:
    host = url.split("/")[2]
    body = json.dumps(INIT).encode()
    target, extra = "/mcp", ""
    if change.startswith("host: "):
        host = change.removeprefix("host: ")
    elif change.startswith("target "):
        target = change.removeprefix("target ")
    else:
        extra = change + "\r\n"
    head = (
        f"POST {target} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\n{extra}content-length: {len(body)}\r\n\r\n"
    )
    return raw_exchange(url, head.encode() + body, b"\r\n\r\n")


def test_a_request_no_url_parser_takes_is_refused_and_both_servers_go_on(tmp_path: Path) -> None:
    target = _CountingTarget()
    with (
        running("replay", "--http", "127.0.0.1:0", str(SHIPPED / "notes.yaml")) as replay,
        proxying(target, tmp_path) as proxy,
    ):
        for url in (replay, proxy):
            for change, status in UNPARSEABLE:
                assert _post_with(url, change).startswith(b"HTTP/1.1 " + status), (url, change)
            assert post(url)[0] == 200  # still serving: and each exits 0 when stopped (`started`)


def test_replay_over_http_goes_on_serving_when_nobody_reads_its_stderr() -> None:
    """A note for each session (here: an initialize asking an older version than recorded) must never block
    the loop that serves every session, whoever reads stderr (this test reads its first line only)."""
    with started("replay", "--http", "127.0.0.1:0", str(SHIPPED / "notes.yaml")) as (proc, url):
        older = json.dumps({**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}}).encode()
        found = re.match(r"http://([^/]+):(\d+)", url)
        assert found
        connection = http.client.HTTPConnection(found.group(1), int(found.group(2)), timeout=20)
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        for _ in range(800):  # notes of ~200 bytes each: far more than a pipe holds
            connection.request("POST", "/mcp", older, headers)
            response = connection.getresponse()
            response.read()
            assert response.status == 200
        connection.close()
        assert proc.stderr is not None
        assert b"older" in os.read(proc.stderr.fileno(), 1 << 16)  # the notes were there, unread till now


def test_a_target_that_sends_its_head_and_then_stalls_gets_the_client_a_504_not_a_wait_for_ever(tmp_path: Path) -> None:
    answered = threading.Event()  # the test is over: the target may go
    with socket.create_server(("127.0.0.1", 0)) as target:
        port = target.getsockname()[1]

        def head_then_nothing() -> None:
            conn, _ = target.accept()
            conn.recv(1 << 16)
            conn.sendall(b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc"')
            answered.wait(60)  # and nothing more, however long the proxy takes to give up
            conn.close()

        threading.Thread(target=head_then_nothing, daemon=True).start()
        out = tmp_path / "out.yaml"
        command = proxying_to(out, f"http://127.0.0.1:{port}/mcp")
        stall = "stopped sending an answer for 0.5 s (the host got 504 Gateway Timeout)"
        try:
            with running(*command, "--upstream-timeout", "0.5", silent=stall) as url:
                started = time.monotonic()
                status, text = post(url)
                assert status == 504 and "stopped sending its answer for 0.5 s" in text
                assert time.monotonic() - started < 30  # the target stalls for 60 s: this is the timeout's doing
        finally:
            answered.set()


def test_a_redirect_to_the_target_names_the_proxy_so_a_client_that_follows_it_is_still_recorded(
    tmp_path: Path,
) -> None:
    target = _CountingTarget()
    target.extra = [("location", f"http://127.0.0.1:{target.port}/mcp/v2?x=1")]
    with proxying(target, tmp_path) as url:
        status, _text, headers = post_answer(url)
        assert status == 200 and headers["location"] == url.rsplit("/", 1)[0] + "/mcp/v2?x=1"
    target = _CountingTarget(extra=[("location", "https://elsewhere.example/mcp")])  # another origin: as it came
    (tmp_path / "elsewhere").mkdir()  # a cassette of its own: a second recording into out.yaml would add to it
    with proxying(target, tmp_path / "elsewhere") as url:
        assert post_answer(url)[2]["location"] == "https://elsewhere.example/mcp"


def test_a_stream_its_client_left_is_read_on_for_the_upstream_timeout_at_most(tmp_path: Path) -> None:
    """What the target sends on a request's stream after its client left is still recorded, but a stream that
    goes on without end would grow the journal without end (and hold a stop for ever): cut after the timeout."""
    target = _CountingTarget()
    out = tmp_path / "out.yaml"
    command = proxying_to(out, f"http://127.0.0.1:{target.port}/mcp")
    try:
        with started(*command, "--upstream-timeout", "0.5") as (proc, url):
            port = int(url.split(":")[2].split("/")[0])
            assert post(url)[0] == 200  # a session the cassette can hold
            body = b'{"jsonrpc":"2.0","id":5,"method":"stream"}'
            with socket.create_connection(("127.0.0.1", port), timeout=10) as leaving:
                leaving.sendall(
                    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                leaving.recv(1)  # the stream has begun; then the client leaves it
            # Time that must pass, not a wait for something: the upstream timeout (0.5 s) expires while the
            # target still sends, and the proxy cuts the stream (it says so only when it stops).
            time.sleep(1.5)
            assert proc.poll() is None
        assert target.streamed < 128 * ((1 << 20) + 4)  # not read to its end
    finally:
        target.listener.close()
