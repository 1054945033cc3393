"""The recording proxy and answers longer than it keeps: every byte reaches the client as it comes, what the
proxy holds stays bounded, and the cassette keeps the call with an error standing in for the answer, which
replay (over HTTP and over stdio) answers at once. One target over real sockets, the proxy on a thread of
this process with its bounds lowered (so a few MiB stand for hundreds); the rules alone in memory."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import MOCKMCP, ROOT, child_env, serve_each_connection, served, sse_messages

from mockmcp._wire import jsonrpc
from mockmcp._wire.words import RecordMode
from mockmcp.cassette import store
from mockmcp.cassette.model import CUT
from mockmcp.engine.redact import Redactor
from mockmcp.http._loop import PAUSE_READING
from mockmcp.http._record import ProxyOptions, RecordingProxy
from mockmcp.http._sse import SseEvents
from mockmcp.options import Bounds
from mockmcp.record._journal import Journal, saved
from mockmcp.record._recorder import CLIENT, SERVER, Recorder, Unkept

LIMIT = 256 << 10  # the most of one message the proxy keeps, in these tests (`Bounds.kept_bytes`)
WHOLE = Bounds().whole_bytes  # a body up to this goes whole
# What the proxy may hold beyond the kept part of one message and its client's pause: a read from the target
# (256 KiB) past the pause, and its framing.
SLACK = 512 << 10
BIG = 6 << 20  # the answer's text: far over the limit, and over WHOLE
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x" * BIG}}


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
    JSON body, an SSE stream of one event, or (`sse-log`) the big text as a log message on the call's stream,
    then a small reply; on keep-alive connections. A `gated` target keeps the last `held` bytes (64 KiB) of the big
    answer until `go` is set (by a client that has read part of it already)."""

    def __init__(self, framing: str, gated: bool = False, held: int = 64 << 10) -> None:
        self.framing, self.gated, self.held, self.go = framing, gated, held, threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/mcp"
        serve_each_connection(self.listener, self._serve)

    def _serve(self, sock: socket.socket) -> None:
        with sock, sock.makefile("rb") as reading:
            sock.settimeout(20)
            try:
                while head := self._head(reading):
                    body = reading.read(int(head.get("content-length", "0")))
                    answer = self._answer(json.loads(body) if body else None)
                    if self.gated and len(answer) > BIG:
                        sock.sendall(answer[: -self.held])
                        self.go.wait(60)  # longer than the client waits: the proxy must pass on what came
                        answer = answer[-self.held :]
                    sock.sendall(answer)
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
        if self.framing.startswith("sse"):
            sent = [answer]
            if self.framing == "sse-log" and request["params"].get("name") == "big":
                sent = [json.dumps(LOG).encode(), answer_of(call(request["id"], "small"))]
            events = b"".join(b"event: message\r\ndata: " + data + b"\r\n\r\n" for data in sent)
            return head + b"content-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s" % (len(events), events)
        head += b"content-type: application/json\r\n"
        if self.framing == "json":
            return head + b"content-length: %d\r\n\r\n%s" % (len(answer), answer)
        pieces = [answer[at : at + 100_000] for at in range(0, len(answer), 100_000)]
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
        return head + b"transfer-encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"


PATIENT = Bounds(upstream_timeout=20)  # the product's bounds, but a shorter upstream timeout


@contextmanager
def proxy_in_front_of(target: str, out: Path, bounds: Bounds = PATIENT) -> Iterator[RecordingProxy]:
    """The recording proxy on a thread, recording into out; on leaving, it stops as `mockmcp record` does
    (the answers under way, then the journal closed: `saved` makes the cassette)."""
    journal = Journal.fresh(str(out), RecordMode.ALL, Redactor(), [target])
    proxy = RecordingProxy(target, ("127.0.0.1", 0), journal, Redactor(), ProxyOptions(bounds=bounds))
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.stop_accepting()
        thread.join(20)
        proxy.finish_answers(10)
        journal.close()


def post(
    connection: http.client.HTTPConnection, message: dict[str, Any], session: str | None, read: int | None = None
) -> tuple[Any, bytes]:
    """POST a message (in that session), and read its answer (its first `read` bytes only, when given)."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session:
        headers["mcp-session-id"] = session
    connection.request("POST", "/mcp", json.dumps(message), headers)
    response = connection.getresponse()
    return response, response.read(read)


def initialized(port: int) -> tuple[http.client.HTTPConnection, str | None]:
    """A connection to the proxy on that port, and the session it opened (initialize, then initialized)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    response, _ = post(connection, INIT, None)
    session = response.getheader("mcp-session-id")
    post(connection, INITIALIZED, session)
    return connection, session


def messages(response: Any, body: bytes) -> list[Any]:
    if response.getheader("content-type", "").startswith("text/event-stream"):
        return sse_messages(body.decode())
    return [json.loads(body)] if body else []


def session_through(url: str, go: threading.Event | None = None) -> tuple[list[Any], bytes]:
    """initialize, initialized, tools/call big, tools/call small, on one connection: the calls' messages, and
    the big call's body as it came (with `go`: a MiB of it read first, then `go` set)."""
    host, port = url.split("/")[2].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        response, _ = post(connection, INIT, None)
        session = response.getheader("mcp-session-id")
        post(connection, INITIALIZED, session)
        if go is None:
            response, big = post(connection, call(2, "big"), session)
        else:
            response, part = post(connection, call(2, "big"), session, read=1 << 20)
            go.set()
            big = part + response.read()
        answers = messages(response, big)
        response, small = post(connection, call(3, "small"), session)
        return answers + messages(response, small), big
    finally:
        connection.close()


def recorded_through_the_proxy(
    framing: str, out: Path, limit: int = LIMIT, gated: bool = False
) -> tuple[list[Any], bytes, int, list[str]]:
    """`session_through` the proxy in front of a `_Target` in that framing (`gated` or not), with the proxy's
    limit at `limit`: what the host got (as `session_through`), the most the proxy held of an answer after a
    piece of it (`RecordingProxy.peak`), the notes."""
    target = _Target(framing, gated)
    try:
        with proxy_in_front_of(target.url, out, Bounds(upstream_timeout=20, kept_bytes=limit)) as proxy:
            live, big = session_through(proxy.url, target.go if gated else None)
    finally:
        target.listener.close()
    return live, big, proxy.peak, saved(str(out), "stopped")


@pytest.mark.parametrize("framing", ["json", "chunked", "sse"])
def test_an_answer_over_the_limit_reaches_the_host_whole_and_the_cassette_holds_the_call_answered_by_an_error(
    framing: str, tmp_path: Path
) -> None:
    out = tmp_path / "big.yaml"
    live, big, peak, notes = recorded_through_the_proxy(framing, out)

    # The host got every byte, as the target sent it.
    expected = answer_of(call(2, "big"))
    assert framing == "sse" or big == expected
    assert live[0] == json.loads(expected) and live[1]["result"]["content"][0]["text"] == "small"
    # What the proxy held at once stayed bounded: the kept part of one message and one pause's worth for
    # the client, never the answer.
    assert 0 < peak <= LIMIT + PAUSE_READING + SLACK

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
    lines = [INIT, INITIALIZED, call(7, "big")]
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


@pytest.mark.parametrize("framing", ["json", "sse"])
def test_an_answer_not_kept_is_filed_where_it_began_so_replay_answers_it_before_what_the_host_sent_meanwhile(
    framing: str, tmp_path: Path
) -> None:
    """A host that gives up on a long answer (as the SDK's client gives up on an SSE event over 1 MiB) goes on
    with other requests before the answer's end. Its stand-in is filed at the answer's start, before those
    requests, so replay answers it at once; filed at its end, replay would hold it back until the host sent
    what it sent meanwhile, which a host waiting for the answer never does."""
    target = _Target(framing, gated=True)
    out = tmp_path / "gave-up.yaml"
    try:
        with proxy_in_front_of(target.url, out, Bounds(upstream_timeout=20, kept_bytes=LIMIT)) as proxy:
            host, port = proxy.url.split("/")[2].rsplit(":", 1)
            first = http.client.HTTPConnection(host, int(port), timeout=30)
            other = http.client.HTTPConnection(host, int(port), timeout=30)
            response, _ = post(first, INIT, None)
            session = response.getheader("mcp-session-id")
            post(first, INITIALIZED, session)
            response, _part = post(first, call(2, "big"), session, read=1 << 20)  # and no further: it gave up
            answered, small = post(other, call(3, "small"), session)
            target.go.set()
            response.read()
            first.close()
            other.close()
    finally:
        target.listener.close()
    saved(str(out), "stopped")
    big, later = store.load(str(out)).interactions[2:4]
    assert big.response is not None and big.response["error"]["code"] == jsonrpc.NOT_RECORDED
    assert messages(answered, small)[0]["result"]["content"][0]["text"] == "small"
    assert big.at is not None and big.took is not None and later.at is not None
    assert big.at + big.took <= later.at  # the stand-in came before the request the host sent meanwhile


# --- the rules alone, in memory ---------------------------------------------------------------------------

# An SSE stream, the limit, and what `SseEvents.events` gives: (id, data), or for an event over the limit
# (id, its size in bytes) in place of its data.
OVER: dict[str, tuple[bytes, int, list[tuple[str | None, bytes | int]]]] = {
    "under the limit": (b"id: 1\ndata: abc\n\n", 16, [("1", b"abc")]),
    "one over it, between two under": (
        b"data: a\n\nid: 2\ndata: " + b"x" * 40 + b"\n\ndata: b\n\n",
        16,
        [(None, b"a"), ("2", 6 + 6 + 40), (None, b"b")],
    ),
    "its id after its data, past the limit, is not known": (b"data: " + b"x" * 40 + b"\nid: 3\n\n", 16, [(None, 52)]),
    "its id within the limit is": (b"id: 3\nid:4\ndata: " + b"x" * 40 + b"\n\n", 16, [("4", 6 + 5 + 6 + 40)]),
    "CRLF line ends count as one byte": (
        b"data: " + b"x" * 40 + b"\r\n\r\ndata: c\r\n\r\n",
        16,
        [(None, 46), (None, b"c")],
    ),
    "several data lines": (b"data: " + b"x" * 10 + b"\ndata: " + b"y" * 10 + b"\n\n", 16, [(None, 16 + 1 + 16)]),
    "a comment over the limit is unread, so counted": (
        b": " + b"x" * 40 + b"\n\ndata: d\n\n",
        16,
        [(None, 42), (None, b"d")],
    ),
}


@pytest.mark.parametrize("name", list(OVER))
def test_an_sse_event_over_the_limit_is_its_size_however_the_chunks_fall(name: str) -> None:
    stream, limit, expected = OVER[name]
    assert SseEvents(limit).events(stream) == expected
    for cut in range(len(stream) + 1):
        events = SseEvents(limit)
        assert events.events(stream[:cut]) + events.events(stream[cut:]) == expected
    events, seen = SseEvents(limit), []
    for at in range(len(stream)):  # a byte at a time: never more than the limit and a chunk held
        seen += events.events(stream[at : at + 1])
        assert events.held() <= limit + 1
    assert seen == expected


CALL = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big"}}'
REPLY = b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'
CANCEL = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}'
# What the journal says of a session, as Recorder calls: ("line", direction, line) or ("unkept", stream, get,
# reply) for a server message of 1000 bytes over a limit of 100; then the call's answer in the cassette and
# the facts kept for the note.
UNKEPT: dict[str, tuple[list[tuple[Any, ...]], Any, list[Unkept]]] = {
    "the call's reply": (
        [("line", CLIENT, CALL), ("unkept", 2, False, True)],
        "stand-in",
        [Unkept(1000, 100, 1.0, 2, "tools/call", False, True)],
    ),
    "a message on its stream before its reply": (
        [("line", CLIENT, CALL), ("unkept", 2, False, False), ("line", SERVER, REPLY)],
        {"result": {"content": []}},
        [Unkept(1000, 100, 1.0, 2, "tools/call", False, False)],
    ),
    "on the GET stream, during the call": (
        [("line", CLIENT, CALL), ("unkept", None, True, False), ("line", SERVER, REPLY)],
        {"result": {"content": []}},
        [Unkept(1000, 100, 1.0, None, None, True, False)],
    ),
    "the reply of a call the host cancelled": (
        [("line", CLIENT, CALL), ("line", CLIENT, CANCEL), ("unkept", 2, False, True)],
        "stand-in",
        [Unkept(1000, 100, 1.0, 2, "tools/call", False, True)],
    ),
    "a reply to no request": ([("unkept", 9, False, True)], None, [Unkept(1000, 100, 1.0, 9, None, False, False)]),
}


@pytest.mark.parametrize("name", list(UNKEPT))
def test_a_message_not_kept_answers_its_call_with_an_error_only_when_it_was_the_reply(name: str) -> None:
    fed, answer, facts = UNKEPT[name]
    recorder = Recorder()
    for step in fed:
        if step[0] == "line":
            recorder.feed(step[1], step[2], 0.5)
        else:
            recorder.unkept(1000, 100, 1.0, *step[1:])
    calls = [i for i in recorder.cassette().interactions if i.method == "tools/call"]
    assert recorder.unkept_messages == facts
    if answer is None:
        assert calls == []
        return
    [got] = [call.response for call in calls]
    if answer == "stand-in":
        error = got["error"]
        assert (error["code"], error["data"]) == (jsonrpc.NOT_RECORDED, {"size": 1000, "limit": 100})
        assert (
            "this tools/call request (id 2 when recorded)" in error["message"]
            and "1,000 bytes, more than the 100" in error["message"]
        )
        # Passed on, never "whole": the host may have refused it (the SDK client leaves past 1 MiB of an event).
        assert "(passed on to the host as it came, not kept)" in error["message"]
        assert calls[0].took == 0.5
    else:
        assert got == answer


def test_the_notes_say_where_each_message_not_kept_was_and_how_to_fix_it(tmp_path: Path) -> None:
    """Through the journal, as `mockmcp record` and `mockmcp recover` alike save a recording: the stand-in's
    place in the cassette, or the stream and time of a message the cassette does not hold."""
    out = tmp_path / "c.yaml"
    journal = Journal.fresh(str(out), RecordMode.ALL, Redactor(), ["http://x/mcp"])
    journal.append(CLIENT, 0.1, [json.dumps(INIT).encode()], 1)
    journal.append(SERVER, 0.2, [answer_of(INIT)], 1)
    journal.append(CLIENT, 0.3, [CALL], 1)
    journal.unkept(0.4, 5_000_000, 1_000_000, 1, None, True)  # on the GET stream
    journal.unkept(0.5, 7_000_000, 1_000_000, 1, 2, False, reply=True)
    journal.close()
    notes = saved(str(out), "stopped")
    recorded = store.load(str(out))
    assert recorded.interactions[1].response["error"]["code"] == jsonrpc.NOT_RECORDED
    assert notes[:2] == [
        f"{out}: a server message on the GET stream, 0.4 s into the recording, was 5,000,000 bytes, "
        "over the 1,000,000 a recording keeps of one message: it is not in the cassette, and replay does not send "
        "it; to record it, have the server send less in one message (a page at a time, say)",
        f"{out}: interactions[1].response: the answer to tools/call request 2 was 7,000,000 bytes, "
        "over the 1,000,000 a recording keeps of one message: the cassette holds an error (-32098) in its place, "
        "which replay answers with; to record it, have the server send less in one message (a page at a time, "
        "say), or write the answer there by hand",
    ]


@pytest.mark.parametrize("framing", ["json", "chunked"])
def test_a_body_under_the_limit_but_over_whole_goes_on_as_it_comes_and_is_recorded_whole(
    framing: str, tmp_path: Path
) -> None:
    """The target holds back the end of its answer until the host has read a MiB of it: the host can only have
    done so if the proxy passed the answer on before its end."""
    out = tmp_path / "kept.yaml"
    _live, big, _peak, notes = recorded_through_the_proxy(framing, out, limit=2 * BIG, gated=True)
    assert big == answer_of(call(2, "big")) and len(big) > WHOLE
    assert not any("over the" in note for note in notes)
    [answer] = [i.response for i in store.load(str(out)).interactions if i.method == "tools/call"][:1]
    assert answer == {"result": json.loads(big)["result"]}


def test_a_message_over_the_limit_before_the_reply_on_its_stream_is_said_and_the_reply_recorded(tmp_path: Path) -> None:
    out = tmp_path / "log.yaml"
    live, _big, peak, notes = recorded_through_the_proxy("sse-log", out)
    assert live == [LOG, json.loads(answer_of(call(2, "small"))), json.loads(answer_of(call(3, "small")))]
    assert 0 < peak <= LIMIT + PAUSE_READING + SLACK
    recorded = store.load(str(out))
    big_call = recorded.interactions[2]
    assert big_call.server == () and big_call.response == {"result": {"content": [{"type": "text", "text": "small"}]}}
    [note] = [n for n in notes if "over the" in n]
    assert note.startswith(f"{out}: a server message on the stream of tools/call request 2, ")
    assert "it is not in the cassette, and replay does not send it" in note


def test_a_body_that_stalls_after_part_of_it_went_to_the_host_cuts_the_hosts_connection(tmp_path: Path) -> None:
    """Before any of the body has gone, a stall gets the host a 504 (tests/test_http_hosts.py); once part of
    it has (a body longer than WHOLE goes as it comes), no status can be said any more: the host's connection
    is cut, as the target's was, rather than left waiting."""
    sent, done = 2 * WHOLE, threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as target:

        def part_then_nothing() -> None:
            conn, _ = target.accept()
            with conn:
                conn.recv(1 << 16)
                head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % (2 * sent)
                conn.sendall(head + b"x" * sent)
                done.wait(20)  # and nothing more until the test is over

        threading.Thread(target=part_then_nothing, daemon=True).start()
        try:
            with proxy_in_front_of(
                f"http://127.0.0.1:{target.getsockname()[1]}/mcp", tmp_path / "c.yaml", Bounds(upstream_timeout=0.5)
            ) as proxy:
                connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
                connection.request("POST", "/mcp", json.dumps(call(2, "big")), {"content-type": "application/json"})
                response = connection.getresponse()
                assert response.status == 200
                with pytest.raises(http.client.IncompleteRead) as cut:
                    response.read()
                connection.close()
        finally:
            done.set()
    assert len(cut.value.partial) == sent
    assert (
        proxy.trouble is not None
        and "stopped sending an answer for 0.5 s (the host's connection was cut)" in proxy.trouble
    )


def _stalling_target(listener: socket.socket, done: threading.Event, whole: bool) -> None:
    """initialize answered; tools/call: a head, part of a body (over WHOLE, or under it), then nothing."""

    def serve(sock: socket.socket) -> None:
        with sock, sock.makefile("rb") as reading:
            while True:
                line = reading.readline()
                if not line:
                    return
                fields = {}
                while (h := reading.readline().strip()) != b"":
                    name, _, value = h.decode().partition(":")
                    fields[name.lower()] = value.strip()
                body = reading.read(int(fields.get("content-length", "0")))
                message = json.loads(body) if body else None
                if message is None or "id" not in message:
                    sock.sendall(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                    continue
                head = b"HTTP/1.1 200 OK\r\nmcp-session-id: s1\r\ncontent-type: application/json\r\n"
                if message["method"] == "initialize":
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "s", "version": "1"},
                    }
                    answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                    sock.sendall(head + b"content-length: %d\r\n\r\n%s" % (len(answer), answer))
                    continue
                sent = 2 * WHOLE if not whole else 1000
                sock.sendall(head + b"content-length: %d\r\n\r\n" % (2 * sent) + b"x" * sent)
                done.wait(20)
                return

    serve_each_connection(listener, serve)


def _record_stall(tmp_path: Path, whole: bool) -> tuple[int | None, object]:
    done = threading.Event()
    out = tmp_path / "c.yaml"
    with socket.create_server(("127.0.0.1", 0)) as target:
        _stalling_target(target, done, whole)
        status: int | None = None
        try:
            with proxy_in_front_of(
                f"http://127.0.0.1:{target.getsockname()[1]}/mcp", out, Bounds(upstream_timeout=0.5)
            ) as proxy:
                connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
                response, _ = post(connection, INIT, None)
                session = response.getheader("mcp-session-id")
                post(connection, INITIALIZED, session)
                try:
                    response, _ = post(connection, call(2, "big"), session)
                    status = response.status
                except http.client.IncompleteRead:
                    status = None  # the host's connection was cut
                connection.close()
        finally:
            done.set()
    saved(str(out), "stopped")
    [called] = [i for i in store.load(str(out)).interactions if i.method == "tools/call"]
    return status, called


def test_a_body_that_stalls_after_part_of_it_went_is_recorded_as_cut(tmp_path: Path) -> None:
    """Live, the host's connection was cut mid-body: the cassette replays a cut (`drop: cut`), not a request
    left open for ever (`drop: true`)."""
    status, called = _record_stall(tmp_path, whole=False)
    assert status is None
    assert called.drop == CUT, called


def test_a_host_that_reads_a_long_body_slowly_gets_it_whole(tmp_path: Path) -> None:
    """The target sends its whole 16 MiB answer at once; the host reads its head, then takes longer than the
    upstream timeout before reading the rest. The proxy's reading from the target waits for the host meanwhile
    (its buffer full): that is no target that stopped sending, and the host gets the answer whole."""
    size = 16 << 20
    with socket.create_server(("127.0.0.1", 0)) as target:

        def whole_at_once(sock: socket.socket) -> None:
            with sock:
                sock.recv(1 << 16)
                head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % size
                try:
                    sock.sendall(head + b"x" * size)
                    sock.recv(1)
                except OSError:
                    pass

        serve_each_connection(target, whole_at_once)
        with proxy_in_front_of(
            f"http://127.0.0.1:{target.getsockname()[1]}/mcp", tmp_path / "c.yaml", Bounds(upstream_timeout=0.5)
        ) as proxy:
            connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
            connection.request("POST", "/mcp", json.dumps(call(2, "big")), {"content-type": "application/json"})
            response = connection.getresponse()
            time.sleep(1.5)  # a host busy elsewhere for longer than the upstream timeout
            body = response.read()
            connection.close()
    assert len(body) == size, proxy.trouble


def test_an_event_of_exactly_the_limit_is_kept_however_the_chunks_fall() -> None:
    """An event of exactly `limit` bytes is kept, whether its blank line comes in the chunk of its last line or
    in the next one."""

    def given(*chunks: bytes) -> list:
        events = SseEvents(8)
        return [event for chunk in chunks for event in events.events(chunk)]

    assert given(b"data: ab\n\n") == [(None, b"ab")]
    assert given(b"data: ab\n", b"\n") == [(None, b"ab")]
    assert given(b"data: ab\r", b"\n\r\n") == [(None, b"ab")]


# A proxy that keeps 256 KiB of a message, and reads 1 MiB of an answer its client left (for the cassette).
GIVE_UP = Bounds(upstream_timeout=20, kept_bytes=256 << 10, after_gone_bytes=1 << 20)


def test_a_reply_over_the_limit_that_the_host_refused_is_still_answered_in_the_cassette(tmp_path: Path) -> None:
    """The SDK's host gives up on an SSE event over 1 MiB and closes the stream. The proxy reads on for the
    cassette, but only `after_gone_bytes` (64 MiB; 1 MiB here) of it: a reply longer than that is left mid-event,
    and is still said (a note) and kept as what the host saw, an answer that broke off, not a call left open.
    The target holds its last 2 MiB back until the host has gone on, so that however slow the machine, the proxy
    cannot have read the reply whole before it saw the host leave."""
    target = _Target("sse", gated=True, held=2 << 20)
    out = tmp_path / "c.yaml"
    try:
        with proxy_in_front_of(target.url, out, GIVE_UP) as proxy:
            connection, session = initialized(proxy.port)
            post(connection, call(2, "big"), session, read=1 << 20)  # the host reads a MiB, then gives up
            connection.close()
            other = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
            post(other, call(3, "small"), session)
            other.close()
            target.go.set()
    finally:
        target.listener.close()
    notes = saved(str(out), "stopped")
    [big] = [i for i in store.load(str(out)).interactions if i.method == "tools/call"][:1]
    error = (big.response or {}).get("error") or {}
    assert error.get("code") == jsonrpc.NOT_RECORDED or big.drop == CUT, (big.drop, big.response, notes)
    # The message not kept is said, as what it was: more than the proxy read of it before it stopped.
    assert any("more than" in note and "over the" in note for note in notes), notes


def test_a_reply_the_host_gave_up_on_is_cut_where_the_host_left_not_where_the_proxy_stopped_reading(
    tmp_path: Path,
) -> None:
    """The host leaves a reply over its limit and goes on with its next call; the proxy reads on and cuts the reply
    only later, past `after_gone_bytes` (1 MiB here; the target holds 2 MiB back until the next call is answered).
    The cut is filed where the host left, before its next call, so that replay cuts the reply at once: filed where
    the proxy stopped, replay would hold the reply open until the recorded moment, waiting for a next call the
    replaying host, still waiting for the reply, cannot send."""
    target = _Target("sse", gated=True, held=2 << 20)
    out = tmp_path / "c.yaml"
    try:
        with proxy_in_front_of(target.url, out, GIVE_UP) as proxy:
            connection, session = initialized(proxy.port)
            # Most of what came before the held part: what is left of it is under after_gone_bytes.
            post(connection, call(2, "big"), session, read=BIG - (2 << 20) - (512 << 10))
            connection.close()
            other = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=20)
            post(other, call(3, "small"), session)
            other.close()
            target.go.set()  # the held part comes: over after_gone_bytes since the host left, the proxy cuts
    finally:
        target.listener.close()
    notes = saved(str(out), "stopped")
    big, small = [i for i in store.load(str(out)).interactions if i.method == "tools/call"]
    assert big.drop == CUT, (big.drop, big.response, notes)
    assert big.at is not None and big.took is not None and small.at is not None
    assert big.at + big.took <= small.at, (big.at, big.took, small.at)


def test_the_note_on_a_stand_in_points_at_the_one_this_recording_wrote(tmp_path: Path) -> None:
    """`--record-mode new_episodes` adds a recording's session numbered after the cassette's last: the note on its
    stand-in names the stand-in this recording wrote, never one an earlier recording left."""
    init = json.dumps(INIT).encode()
    init_reply = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"},
            },
        }
    ).encode()

    def record(path: str, mode: RecordMode, extra: bool) -> list[str]:
        journal = Journal.fresh(path, mode, Redactor(), ["http://127.0.0.1:1/mcp"])
        journal.append(CLIENT, 0.0, [init], 1, None, False, None)
        journal.append(SERVER, 0.1, [init_reply], 1, None, False, None)
        journal.append(CLIENT, 0.2, [json.dumps(INITIALIZED).encode()], 1, None, False, None)
        journal.append(CLIENT, 0.3, [json.dumps(call(2, "big")).encode()], 1, None, False, None)
        journal.unkept(0.4, 1 << 30, 1 << 24, 1, 2, False, reply=True)
        if extra:
            journal.append(CLIENT, 0.5, [json.dumps(call(3, "small")).encode()], 1, None, False, None)
            reply = {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}
            journal.append(SERVER, 0.6, [json.dumps(reply).encode()], 1, 3, False, None)
        journal.close()
        return saved(path, "stopped")

    path = str(tmp_path / "c.yaml")
    record(path, RecordMode.ALL, extra=False)
    notes = record(path, RecordMode.NEW, extra=True)
    written = store.load(path).interactions
    last = max(y.session for y in written)
    mine = [
        i
        for i, x in enumerate(written)
        if x.session == last and ((x.response or {}).get("error") or {}).get("code") == jsonrpc.NOT_RECORDED
    ]
    [note] = [note for note in notes if "over the" in note]
    assert mine and f"interactions[{mine[0]}].response" in note and f"of session {last}" in note, (mine, notes)
