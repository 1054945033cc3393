"""`mockmcp record --http-target`: a reverse proxy in front of a real SDK server over Streamable HTTP."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NOTES_SESSION, ROOT, SHIPPED, recording, recording_proxy, served, streams_seen
from mcp import Client
from sdk_host import connect, elicit, full_session, sampling, text_of

from mockmcp.cassette import store as cassette
from mockmcp.engine.redact import Redactor
from mockmcp.http._record import RecordingProxy
from mockmcp.record._journal import Journal

pytestmark = pytest.mark.anyio


async def host_session(url: str, mode: str) -> dict[str, Any]:
    logs: list[Any] = []

    with anyio.fail_after(60):
        async with connect(url, mode, logs=logs) as client:
            seen = await full_session(client)
    return {**seen, "logs": logs}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_recorded_through_the_proxy_then_replayed_the_host_sees_the_same(
    mode: str, tmp_path: Path, http_server: Callable[..., str]
) -> None:
    out = tmp_path / "notes.yaml"
    with recording(http_server(), out) as url:
        live = await host_session(url, mode)
    assert {key: live[key] for key in NOTES_SESSION} == NOTES_SESSION
    recorded = cassette.load(str(out))
    assert recorded.meta["server"] == [http_server()]
    # The handshake-era SDK server streams every answer; the 2026-07-28 one sends a lone reply as JSON.
    assert recorded.meta["http"]["framing"] == ("sse" if mode == "legacy" else "json")
    with served(out, tmp_path) as server:
        replayed = await host_session(server.url, mode)
        report = server.stop()
    assert replayed == live
    assert (
        report["misses"] == [] if mode == "legacy" else all(m["method"] == "server/discover" for m in report["misses"])
    )


def test_a_json_error_answering_a_get_is_not_recorded_as_a_message(tmp_path: Path) -> None:
    """A target without a GET stream answers GET 405 with a JSON-RPC error body (id null): that is the HTTP
    layer's answer, not a message of the session, and must not become the answer of a call in flight."""
    target_cassette = SHIPPED / "notes-session.yaml"  # replayed, it offers no GET stream
    out = tmp_path / "get.yaml"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    with served(target_cassette, tmp_path) as target, recording(target.url, out) as url:
        port = int(url.split(":")[2].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        accept = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        connection.request("POST", "/mcp", body=json.dumps(init), headers=accept)
        response = connection.getresponse()
        session = response.getheader("mcp-session-id")
        assert response.status == 200 and session
        response.read()
        connection.request("GET", "/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session})
        refused = connection.getresponse()
        assert refused.status == 405 and b"Method Not Allowed" in refused.read()
        connection.close()
    recorded = cassette.load(str(out))
    assert "Method Not Allowed" not in out.read_text()
    assert [i.method for i in recorded.interactions] == ["initialize"]


@pytest.mark.slow
def test_authorization_headers_never_reach_the_cassette(tmp_path: Path, http_server: Callable[..., str]) -> None:
    out = tmp_path / "auth.yaml"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    with recording(http_server(), out) as url:
        port = int(url.split(":")[2].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request(
            "POST",
            "/mcp",
            body=json.dumps(init),
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "authorization": "Bearer secret-token-0123456789",
            },
        )
        response = connection.getresponse()
        assert response.status == 200 and b"notes" in response.read()
        connection.close()
    text = out.read_text()
    assert "initialize" in text and "secret-token" not in text and "Bearer" not in text


SLEEPY = ROOT / "tests" / "servers" / "sleepy.py"
BIG = 2_000_000  # over the SDK client's 1 MiB limit for one SSE event: it gives up on the stream


async def big_then_read(url: str) -> tuple[bool, str]:
    """Asks for a BIG answer, which the SDK client refuses, then reads a note in the same session: whether the
    big call was refused, and the note."""
    with anyio.fail_after(60):
        async with Client(url, mode="legacy") as client:
            try:
                with anyio.fail_after(10):
                    await client.call_tool("big", {"size": BIG})
                refused = False
            except Exception:  # whatever the SDK raises for it
                refused = True
            return refused, text_of(await client.call_tool("read_file", {"path": "notes.txt"}))


@pytest.fixture(scope="module")
def big_recording(tmp_path_factory: pytest.TempPathFactory, http_server: Callable[..., str]) -> Path:
    """`big_then_read` recorded through the proxy once, for the two tests that read it. The proxy is stopped
    as soon as the host is done: it still reads the big answer to its end before it saves."""
    out = tmp_path_factory.mktemp("big") / "big.yaml"
    with recording(http_server(), out) as url:
        assert anyio.run(big_then_read, url) == (True, "remember to buy milk")
    return out


# The two tests of the big answer read one recording: one worker runs them and makes it (`--dist loadgroup`).
big_shared = pytest.mark.xdist_group("http-record-big")


@pytest.mark.slow
@big_shared
def test_an_answer_the_client_refused_is_still_journaled(big_recording: Path) -> None:
    recorded = cassette.load(str(big_recording))
    calls = [i for i in recorded.interactions if i.message and i.message.get("method") == "tools/call"]
    assert [c.message["params"]["name"] for c in calls] == ["big", "read_file"]
    big = calls[0].response
    assert big is not None and len(big["result"]["content"][0]["text"]) == BIG


@big_shared
async def test_replay_frames_answers_as_the_recorded_server_did_so_a_refused_event_is_refused_again(
    big_recording: Path, tmp_path: Path
) -> None:
    """The SDK server answers every request with an SSE stream: recorded as `meta.http`, replay does
    the same, so an answer over the SDK client's 1 MiB event limit fails on replay as it did live
    (tests/test_http_framing.py: without the field, a lone reply goes as one JSON body, which it takes)."""
    recorded = cassette.load(str(big_recording))
    # The SDK client opens its GET stream on its own time: whether the session lasted until then varies.
    assert recorded.meta["http"] in ({"framing": "sse", "get_stream": True}, {"framing": "sse"})
    with served(big_recording, tmp_path) as server:
        assert await big_then_read(server.url) == (True, "remember to buy milk")
        report = server.stop()
    assert report["misses"] == []


async def both_asking(url: str) -> tuple[dict[str, str], list[str]]:
    """Two tool calls at once, one making the server sample the host's model, the other elicit from
    its user; neither question is answered until both were asked, so both calls are in flight."""
    asked = {"sampling": anyio.Event(), "elicitation": anyio.Event()}
    order: list[str] = []

    async def ask(name: str, other: str) -> None:
        order.append(name)
        asked[name].set()
        with anyio.fail_after(10):  # replay must ask the other question too, with its call still open
            await asked[other].wait()

    async def sample(ctx: Any, params: Any) -> Any:
        await ask("sampling", "elicitation")
        return await sampling(ctx, params)

    async def confirm(ctx: Any, params: Any) -> Any:
        await ask("elicitation", "sampling")
        return await elicit(ctx, params)

    seen: dict[str, str] = {}
    with anyio.fail_after(60):
        async with Client(url, mode="legacy", sampling_callback=sample, elicitation_callback=confirm) as client:

            async def call(name: str, arguments: dict[str, Any]) -> None:
                seen[name] = text_of(await client.call_tool(name, arguments))

            async with anyio.create_task_group() as group:
                group.start_soon(call, "summarize", {"path": "notes.txt"})
                group.start_soon(call, "delete_file", {"path": "todo.md"})
    return seen, order


async def test_two_calls_each_asking_the_host_on_its_own_stream_keep_their_own_questions(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    out = tmp_path / "asking.yaml"
    with recording(http_server(), out) as url:
        live, _ = await both_asking(url)
    assert live == {"summarize": "milk", "delete_file": "deleted todo.md"}
    calls = {
        i.message["params"]["name"]: [item.message["method"] for item in i.server]
        for i in cassette.load(str(out)).interactions
        if i.method == "tools/call"
    }
    assert calls == {"summarize": ["sampling/createMessage"], "delete_file": ["elicitation/create"]}
    with served(out, tmp_path) as server:
        replayed, order = await both_asking(server.url)
        report = server.stop()
    assert replayed == live and sorted(order) == ["elicitation", "sampling"]
    assert report["misses"] == []


async def test_a_question_on_the_get_stream_reaches_the_host_through_the_proxy_and_on_replay(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    """The server asks without naming the call that needs the answer, so the SDK sends it on the
    session's GET stream while the call's POST waits: the proxy passes it on at once, records it
    with the call in flight, and replay asks it again."""
    out = tmp_path / "get.yaml"
    questions: list[str] = []

    async def confirm(_ctx: Any, params: Any) -> Any:
        questions.append(params.message)
        return await elicit(_ctx, params)

    async def call(url: str) -> str:
        with anyio.fail_after(30):
            async with Client(url, mode="legacy", elicitation_callback=confirm) as client:
                return text_of(await client.call_tool("confirm", {"what": "delete"}))

    with recording(http_server(ROOT / "tests" / "servers" / "get_stream.py"), out) as url:
        live = await call(url)
    assert live == "delete: accept {'confirm': True}"
    [asked] = [i for i in cassette.load(str(out)).interactions if i.method == "tools/call"]
    answer = {"result": {"action": "accept", "content": {"confirm": True}}}
    assert [(item.kind, item.message["method"], item.response) for item in asked.server] == [
        ("notification", "notifications/message", None),
        ("notification", "notifications/message", None),
        ("request", "elicitation/create", answer),
    ]
    with served(out, tmp_path) as server:
        assert await call(server.url) == live
        report = server.stop()
    assert questions == ["Really delete?"] * 2 and report["misses"] == []


@pytest.mark.slow
@pytest.mark.parametrize("framing", ["sse", "json"])
def test_what_the_server_sent_on_its_get_stream_comes_on_the_get_stream_again_on_replay(
    framing: str, tmp_path: Path, http_server: Callable[..., str]
) -> None:
    """Watched by hand on both streams: the server logs once on the call's stream (not in JSON, where
    the SDK drops it), then logs and asks on the GET stream; through the proxy and on replay of what
    it recorded, each comes where it came, and the call is answered with SSE or JSON alike."""
    out = tmp_path / "get.yaml"
    params = {"name": "confirm", "arguments": {"what": "x"}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    answer = {"result": {"action": "accept", "content": {"confirm": True}}}
    target = http_server(ROOT / "tests" / "servers" / "get_stream.py", *(["--json"] if framing == "json" else []))
    with recording(target, out) as url:
        live = streams_seen(url, call, answer)
    on_its_stream = ["notifications/message"] if framing == "sse" else []
    assert live == {
        "get": ["notifications/message", "elicitation/create"],
        "post": [*on_its_stream, "reply"],
        "type": "text/event-stream" if framing == "sse" else "application/json",
    }
    [asked] = [i for i in cassette.load(str(out)).interactions if i.method == "tools/call"]
    assert [(item.message["params"].get("data"), item.stream) for item in asked.server] == [
        *[("x needs a confirmation", None)] * len(on_its_stream),
        ("asking about x", "get"),
        (None, "get"),
    ]
    with served(out, tmp_path) as server:
        assert streams_seen(server.url, call, answer) == live
        report = server.stop()
    assert report["misses"] == [] and report["mismatches"] == []


async def two_clients_at_once(url: str, modes: tuple[str, str]) -> dict[str, list[str]]:
    """Two SDK clients connected at the same moment, each reading its own files, their calls interleaved."""
    plans = {"first": ["notes.txt", "todo.md"], "second": ["todo.md", "nope.txt"]}
    seen: dict[str, list[str]] = {name: [] for name in plans}
    both = anyio.Event()
    connected = 0

    async def one(name: str, mode: str) -> None:
        nonlocal connected
        async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
            connected += 1
            if connected == 2:
                both.set()
            await both.wait()  # both sessions are open before either calls
            for path in plans[name]:
                seen[name].append(text_of(await client.call_tool("read_file", {"path": path})))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for name, mode in zip(plans, modes, strict=True):
                group.start_soon(one, name, mode)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("modes", [("legacy", "legacy"), ("legacy", "auto")], ids=["handshake", "both-eras"])
async def test_a_server_without_session_ids_two_clients_at_once_each_replays_what_it_saw(
    modes: tuple[str, str], tmp_path: Path, http_server: Callable[..., str]
) -> None:
    """A stateless SDK server issues no Mcp-Session-Id: the proxy tells the handshake clients apart by
    the connection that carried each one's initialize, and keeps a 2026-07-28 client out of them, and
    replay serves both eras at once from one index (end to end; each rule of `core.attribution` has
    its rows in test_attribution.py)."""
    out = tmp_path / "stateless.yaml"
    with recording(http_server(ROOT / "tests" / "servers" / "stateless_notes.py"), out) as url:
        live = await two_clients_at_once(url, modes)
    assert live == {
        "first": ["remember to buy milk", "# Todo\n\n- write tests\n- ship it\n"],
        "second": ["# Todo\n\n- write tests\n- ship it\n", "Error executing tool read_file: no such file: nope.txt"],
    }
    recorded = cassette.load(str(out))
    sessions: dict[int, list[str]] = {}
    for interaction in recorded.interactions:
        if interaction.method == "tools/call":
            sessions.setdefault(interaction.session, []).append(interaction.message["params"]["arguments"]["path"])
    assert sorted(sessions.values()) == [["notes.txt", "todo.md"], ["todo.md", "nope.txt"]]
    with served(out, tmp_path) as server:
        replayed = await two_clients_at_once(server.url, modes)
        report = server.stop()
    assert replayed == live and report["misses"] == []


def post(url: str, message: dict[str, Any]) -> tuple[int, Any]:
    """A 2026-07-28 request POSTed as the SDK client sends it; the HTTP status and the JSON answer."""
    place = re.match(r"http://([^/]+)(/.*)", url)
    assert place is not None
    connection = http.client.HTTPConnection(place[1], timeout=30)
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": message["method"],
    }
    if "uri" in message["params"]:
        headers["mcp-name"] = message["params"]["uri"]
    connection.request("POST", place[2], json.dumps(message), headers)
    answer = connection.getresponse()
    return answer.status, json.loads(answer.read())


def test_an_error_reply_keeps_its_http_status_through_the_proxy_and_on_replay(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    """A 2026-07-28 SDK server answers an unknown resource with 400 (its code's status): the proxy
    passes it on, the cassette keeps that status for the code, and replay answers it the same."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    read = {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "other://x", "_meta": meta}}
    out = tmp_path / "errors.yaml"
    target = http_server()
    direct = post(target, read)
    with recording(target, out) as url:
        proxied = post(url, read)
    assert direct[0] == 400 and proxied == direct
    recorded = cassette.load(str(out))
    assert recorded.meta["http"]["error_status"] == [{"code": -32602, "status": 400}]
    assert [i.method for i in recorded.interactions] == ["resources/read"]  # a session's answer, no session error
    with served(out, tmp_path) as server:
        assert post(server.url, read) == direct
        report = server.stop()
    assert report["misses"] == []


def test_a_message_on_one_line_is_journaled_as_it_came_one_over_lines_as_one_line_and_redaction_applies(
    tmp_path: Path,
) -> None:
    """`RecordingProxy.record`: a body or event already on one line is written as it came (the
    journal's reader parses each line), one spread over lines becomes one compact line, anything not
    JSON is kept whole, its lines and all (one event, one message); with redaction the secret is gone
    from every one of them."""
    path = tmp_path / "j.journal"
    journal = Journal(str(path), {})
    redactor = Redactor.build((), (r"sk-[a-z0-9]+",), {})
    plain = RecordingProxy("http://127.0.0.1:9/mcp", ("127.0.0.1", 0), journal, Redactor())
    redacting = RecordingProxy("http://127.0.0.1:9/mcp", ("127.0.0.1", 0), journal, redactor)
    one_line = b' {"jsonrpc": "2.0", "id": 1, "result": {"key": "sk-abc123"}}\r\n'
    spread = b'{\n  "jsonrpc": "2.0",\n  "id": 2,\n  "result": {"key": "sk-abc123"}\n}\n'
    try:
        plain.record("server", 0, one_line)
        plain.record("server", 0, spread, stream=2)
        plain.record("server", 0, b"not json\nat all\n")
        redacting.record("server", 0, one_line)
        redacting.record("server", 0, spread)
    finally:
        plain.socket.close()
        redacting.socket.close()
        journal.close()
    journaled = [json.loads(line)["l"] for line in path.read_bytes().splitlines()[1:]]
    assert journaled[:3] == [
        '{"jsonrpc": "2.0", "id": 1, "result": {"key": "sk-abc123"}}',
        '{"jsonrpc":"2.0","id":2,"result":{"key":"sk-abc123"}}',
        "not json\nat all",
    ]
    assert [json.loads(line)["result"]["key"] for line in journaled[3:]] == ["[REDACTED]"] * 2


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_second_signal_during_the_drain_cuts_it_short_and_the_cassette_is_still_saved_whole(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    """SIGINT stops the proxy, which waits for the answers under way (a 30 s call); SIGTERM a second later cuts
    that wait short: the recording is saved all the same, the call left unanswered, and the exit status says
    which signal ended it (it was 143 with no message, and only the journal, before)."""
    out = tmp_path / "c.yaml"
    with recording_proxy(http_server(SLEEPY), out) as (proxy, url):
        said, first = "", ""
        # The host's transport breaks when the proxy goes: what it raises on leaving is not this test's concern
        # (what the test expects is checked after the block).
        with anyio.fail_after(60), contextlib.suppress(Exception):
            async with Client(url, mode="legacy") as client:
                first = text_of(await client.call_tool("wait", {"seconds": 0}))

                async def slow_call() -> None:
                    with contextlib.suppress(Exception):  # the proxy leaves it unanswered when cut short
                        await client.call_tool("wait", {"seconds": 30})

                async with anyio.create_task_group() as calls:
                    calls.start_soon(slow_call)
                    await anyio.sleep(0.5)  # the call is under way
                    proxy.send_signal(signal.SIGINT)
                    await anyio.sleep(1.0)
                    proxy.send_signal(signal.SIGTERM)
                    _out, said = await anyio.to_thread.run_sync(lambda: proxy.communicate(timeout=30))
                    calls.cancel_scope.cancel()
    assert first == "waited 0.0"
    assert proxy.returncode == 128 + signal.SIGTERM, said
    assert "still coming from the target when asked again to stop are left out" in said
    recorded = cassette.load(str(out)).interactions
    calls_recorded = [i for i in recorded if i.method == "tools/call"]
    assert [i.params["arguments"] for i in calls_recorded] == [{"seconds": 0}, {"seconds": 30}]
    assert calls_recorded[0].response is not None and calls_recorded[1].drop  # unanswered: kept with drop
