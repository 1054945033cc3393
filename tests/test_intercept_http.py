"""Interception of Streamable HTTP: the host's own HTTP client reaches a remote MCP server, and gets a cassette.

The server is the SDK's own (examples/notes_server.py) behind credentials, as a hosted one is
(tests/servers/guarded.py: a bearer token, a `?key=` URL secret, a cookie). The SDK's `Client` records through
interception while it runs, then replays with it stopped and sees the same session; no byte of a credential
reaches the journal or the cassette; the cassette is the one `mockmcp record --http-target` writes for the same
session; a changed argument fails with the miss; any other HTTP request passes untouched; an allowed URL is live.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx
import httpx2
import pytest
from conftest import ROOT, child_env, recording, said
from mcp.client.streamable_http import streamable_http_client
from sdk_host import connect, full_session
from test_pytest_plugin import run

import mockmcp
from mockmcp._wire.credentials import bare_url
from mockmcp._wire.identity import identify
from mockmcp.cassette import store as cassettes
from mockmcp.inprocess import _http
from mockmcp.record._journal import journal_path

GUARDED = ROOT / "tests" / "servers" / "guarded.py"
TOKEN, KEY = "tok-0a1b2c3d4e5f6a7b8c9d", "key-9f8e7d6c5b4a3f2e1d0c"
COOKIE = "session-cookie-5e6f7a8b9c0d"
pytestmark = pytest.mark.timeout(90)
pytest_plugins = ["pytester"]


class Guarded(NamedTuple):
    url: str  # with its ?key=
    relay: Relay

    def stop(self) -> None:
        """The server gone for this test: its address refuses every connection from now on."""
        self.relay.close()


class Relay:
    """A port of its own in front of the module's one guarded server, passing bytes both ways; closed, it
    refuses every connection as a stopped server's port does (and cuts those open). One server start per
    module instead of one per test: it imports the SDK's server, uvicorn and starlette, seconds of CPU."""

    def __init__(self, port: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, args=(port,), daemon=True).start()

    def _accept(self, port: int) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return  # closed
            far = socket.create_connection(("127.0.0.1", port))
            self.open += [near, far]
            for one, other in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(one, other), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(1 << 16):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()
        for each in self.open:
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()


@pytest.fixture(scope="module")
def guarded_port() -> Iterator[int]:
    """The guarded notes server on a port the system picks, for the whole module."""
    env = {**child_env(), "GUARD_TOKEN": TOKEN, "GUARD_KEY": KEY}
    process = subprocess.Popen(
        [sys.executable, str(GUARDED), "--http", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        found = said(process, r"Uvicorn running on http://[^:]+:(\d+)", "the guarded server")
        yield int(found.group(1))
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def guarded(guarded_port: int) -> Iterator[Guarded]:
    """The guarded server at an address of this test's own, which the test may stop (`stop`)."""
    relay = Relay(guarded_port)
    try:
        yield Guarded(f"http://127.0.0.1:{relay.port}/mcp?key={KEY}", relay)
    finally:
        relay.close()


def streamable_http(url: str, client: httpx2.AsyncClient) -> Any:
    return streamable_http_client(url, http_client=client)


def credentials() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}", "cookie": f"c={COOKIE}"})


async def host(url: str, mode: str) -> dict[str, Any]:
    """The SDK's Client over Streamable HTTP with the host's own HTTP client, as a framework builds it."""
    async with credentials() as client, connect(streamable_http(url, client), mode) as session:
        return await full_session(session)


def session_of(url: str, folder: Path, mode: str = "none", era: str = "legacy", **options: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        with anyio.fail_after(30), mockmcp.intercepting(folder, mode, **options) as interception:
            seen = await host(url, era)
        seen["verdict"] = interception.verdict()
        return seen

    return anyio.run(go)


# --- which requests are MCP's ------------------------------------------------------------------------------------

BOTH = "application/json, text/event-stream"
REQUESTS = [
    # the handshake era's initialize: no mcp-* header, only what it accepts
    ("POST", {"accept": BOTH, "content-type": "application/json"}, True),
    # the later ones, the GET stream and the DELETE, name their session
    ("POST", {"accept": BOTH, "mcp-session-id": "abc", "mcp-protocol-version": "2025-11-25"}, True),
    ("GET", {"accept": "text/event-stream", "mcp-session-id": "abc", "mcp-protocol-version": "2025-11-25"}, True),
    ("DELETE", {"mcp-session-id": "abc"}, True),
    # the 2026-07-28 era: every POST names its revision (and its method)
    ("POST", {"accept": BOTH, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}, True),
    # the model's API, and anything else
    ("POST", {"accept": "application/json", "content-type": "application/json"}, False),
    ("POST", {"accept": "text/event-stream", "content-type": "application/json"}, False),
    ("GET", {"accept": BOTH}, False),
    ("GET", {}, False),
]


@pytest.mark.parametrize(("method", "headers", "mcp"), REQUESTS)
def test_only_requests_that_look_like_streamable_http_are_mcp(method: str, headers: dict[str, str], mcp: bool) -> None:
    assert _http.mcp_request(method, headers) is mcp


# The legacy HTTP+SSE transport: its stream's GET by its path; its POSTs by the URL a stream announced.
SSE_REQUESTS = [
    ("GET", "http://127.0.0.1:8000/sse", {"accept": "text/event-stream"}, True),
    ("GET", "https://api.example.com/v1/sse/?key=s3cret", {"accept": "text/event-stream"}, True),
    ("GET", "http://127.0.0.1:8000/events", {"accept": "text/event-stream"}, False),  # any other event stream
    ("GET", "http://127.0.0.1:8000/sse", {"accept": "text/html"}, False),
    ("POST", "http://127.0.0.1:8000/messages/?session_id=ab", {"content-type": "application/json"}, True),
    ("POST", "http://127.0.0.1:8000/other/?session_id=ab", {"content-type": "application/json"}, False),
]


@pytest.mark.parametrize(("method", "url", "headers", "mcp"), SSE_REQUESTS)
def test_only_legacy_sse_streams_and_the_posts_they_announced_are_sse(
    method: str, url: str, headers: dict[str, str], mcp: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_http, "_ANNOUNCED", {"http://127.0.0.1:8000/messages/"})
    assert _http.sse_request(method, url, headers) is mcp


URLS = [
    ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp", "127.0.0.1_8000-mcp"),
    (
        "https://user:s3cret@api.example.com/v1/mcp?key=s3cret#top",
        "https://api.example.com/v1/mcp",
        "api.example.com-v1-mcp",
    ),
    ("https://API.example.com:443/mcp/?token=s3cret", "https://api.example.com:443/mcp/", "api.example.com_443-mcp"),
]


@pytest.mark.parametrize(("url", "bare", "name"), URLS)
def test_a_server_is_its_url_without_credentials_query_or_fragment(url: str, bare: str, name: str) -> None:
    assert bare_url(url) == bare
    assert identify(None, url=bare).name == name and "s3cret" not in " ".join(identify(None, url=bare).words)


# --- the SDK's Client, recorded with the server, replayed without it --------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_recorded_with_the_server_then_replayed_with_it_stopped_the_host_sees_the_same(
    guarded: Guarded, tmp_path: Path, era: str
) -> None:
    folder = tmp_path / "cassettes"
    live = anyio.run(host, guarded.url, era)
    recorded = session_of(guarded.url, folder, "once", era)
    [cassette] = folder.glob("*.yaml")
    assert cassette.name.startswith("127.0.0.1_") and cassette.name.endswith("-mcp.yaml")  # the URL, no query
    guarded.stop()
    replayed = session_of(guarded.url, folder, era=era)
    assert recorded.pop("verdict") is None and replayed.pop("verdict") is None
    assert live == recorded == replayed


def test_a_url_the_server_redirects_records_the_session_once_and_replays_it(guarded: Guarded, tmp_path: Path) -> None:
    slashed = guarded.url.replace("/mcp?", "/mcp/?")  # the server answers 307 to /mcp, and the SDK follows it
    recorded = session_of(slashed, tmp_path, "once")
    [cassette] = tmp_path.glob("*.yaml")
    assert [i.method for i in cassettes.load(str(cassette)).interactions].count("initialize") == 1
    guarded.stop()
    replayed = session_of(slashed, tmp_path)
    assert recorded.pop("verdict") is None and replayed.pop("verdict") is None and replayed == recorded


def test_a_named_url_has_the_cassette_of_its_name_whatever_its_port(guarded: Guarded, tmp_path: Path) -> None:
    recorded = session_of(guarded.url, tmp_path, "once", names={"notes": "127.0.0.1"})
    assert [path.name for path in tmp_path.iterdir()] == ["notes.yaml"]
    guarded.stop()
    elsewhere = re.sub(r":\d+/", ":9/", guarded.url)  # another port: the same name
    replayed = session_of(elsewhere, tmp_path, names={"notes": "127.0.0.1"})
    assert recorded.pop("verdict") is None and replayed.pop("verdict") is None and replayed == recorded


def test_a_client_with_a_transport_of_its_own_is_intercepted_too(guarded: Guarded, tmp_path: Path) -> None:
    session_of(guarded.url, tmp_path, "once")
    guarded.stop()

    async def go() -> tuple[str, str | None]:
        own = httpx2.AsyncHTTPTransport(retries=2)  # a client given its transport, as a framework may build it
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path) as interception:
            client = httpx2.AsyncClient(transport=own)
            async with client, connect(streamable_http(guarded.url, client), "legacy") as session:
                result = await session.call_tool("read_file", {"path": "notes.txt"})
        return result.content[0].text, interception.verdict()

    assert anyio.run(go) == ("remember to buy milk", None)


def test_no_byte_of_a_credential_reaches_the_journal_or_the_cassette(guarded: Guarded, tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    journals: list[str] = []

    async def go() -> None:
        with anyio.fail_after(30), mockmcp.intercepting(folder, "once") as interception:
            await host(guarded.url, "legacy")
            [server] = interception.servers.values()
            journals.append(Path(journal_path(str(server.path))).read_text())  # while it records

    anyio.run(go)
    [cassette] = folder.glob("*.yaml")
    for text in (journals[0], cassette.read_text()):
        assert "remember to buy milk" in text  # what the server said is there
        for secret in (TOKEN, KEY, COOKIE, TOKEN[::-1], "Bearer", "key="):  # TOKEN[::-1]: the server's set-cookie
            assert secret not in text


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_the_cassette_is_the_one_the_recording_proxy_writes_for_the_same_session(
    guarded: Guarded, tmp_path: Path, era: str
) -> None:
    folder = tmp_path / "intercepted"
    session_of(guarded.url, folder, "once", era)
    [intercepted] = folder.glob("*.yaml")
    proxied = tmp_path / "proxied.yaml"
    with recording(guarded.url, proxied) as url:
        anyio.run(host, url + f"?key={KEY}", era)
    one, other = cassettes.load(str(intercepted)), cassettes.load(str(proxied))
    assert one.meta["http"] == other.meta["http"]
    assert [shape(i) for i in one.interactions] == [shape(i) for i in other.interactions]
    assert one.meta["server"] == [guarded.url.split("?")[0]]  # its identity: no query
    # the proxy was given the target with its ?key=: its cassette names the server alike, the key nowhere
    assert other.meta["server"] == one.meta["server"] and KEY not in proxied.read_text()


def shape(interaction: Any) -> Any:
    """An interaction without what differs between two recordings of one session: times, and the 2026-07-28
    server's `requestState`, a sealed token it makes afresh each time."""
    items = [(item.kind, item.message, item.response, item.stream) for item in interaction.server]
    return unsealed((interaction.message, interaction.response, items, interaction.drop))


def unsealed(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: "<state>" if key == "requestState" else unsealed(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [unsealed(value) for value in data]
    return data


def test_a_changed_argument_fails_with_the_miss_explained(guarded: Guarded, tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    session_of(guarded.url, folder, "once")
    guarded.stop()

    errors: list[str] = []

    async def changed() -> str | None:
        with anyio.fail_after(30), mockmcp.intercepting(folder, strict_exit=False) as interception:
            async with credentials() as client, connect(streamable_http(guarded.url, client), "legacy") as session:
                try:
                    await session.call_tool("read_file", {"path": "todo.md"})
                except Exception as exc:  # the SDK raises the error reply to a call
                    errors.append(str(exc))
        return interception.verdict()

    verdict = anyio.run(changed)
    assert errors == ["mockmcp: no recorded interaction matches: tools/call"]  # the error reply to its call
    assert verdict is not None and "tools/call" in verdict and "todo.md" in verdict


def test_a_server_no_cassette_holds_is_never_reached_and_fails_the_verdict(guarded: Guarded, tmp_path: Path) -> None:
    async def go() -> str | None:
        refused = pytest.raises(BaseException)  # (the SDK raises a group around its connection error)
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path, strict_exit=False) as interception, refused:
            await host(guarded.url, "legacy")
        return interception.verdict()

    verdict = anyio.run(go)
    assert verdict is not None and verdict.count("no cassette holds it") == 1 and KEY not in verdict
    assert list(tmp_path.iterdir()) == []


def test_an_allowed_url_reaches_the_real_server(guarded: Guarded, tmp_path: Path) -> None:
    live = anyio.run(host, guarded.url, "legacy")
    seen = session_of(guarded.url, tmp_path, allow=("127.0.0.1",))
    assert seen.pop("verdict") is None and seen == live
    assert list(tmp_path.iterdir()) == []


# --- every other request passes untouched ------------------------------------------------------------------------


class _Plain(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._answer({"method": "GET", "path": self.path})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        self._answer({"method": "POST", "body": json.loads(body), "accept": self.headers["accept"]})

    def _answer(self, data: dict[str, Any]) -> None:
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def plain() -> Iterator[str]:
    """A plain HTTP server (not MCP), as a model's API is."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Plain)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("client", [httpx2.AsyncClient, httpx.AsyncClient])
def test_a_request_that_is_not_mcp_passes_untouched(plain: str, tmp_path: Path, client: Any) -> None:
    async def go() -> list[Any]:
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path) as interception:
            async with client() as http_client:
                got = await http_client.get(plain + "?q=1")
                posted = await http_client.post(plain, json={"model": "m"}, headers={"accept": "application/json"})
        assert interception.servers == {} and interception.verdict() is None
        return [got.json(), posted.json()]

    got, posted = anyio.run(go)
    assert got == {"method": "GET", "path": "/v1/chat?q=1"}
    assert posted == {"method": "POST", "body": {"model": "m"}, "accept": "application/json"}
    assert list(tmp_path.iterdir()) == []


def test_outside_an_interception_the_http_clients_are_their_own() -> None:
    for client in (httpx2.AsyncClient, httpx.AsyncClient):
        assert client._transport_for_url.__module__ in ("httpx2._client", "httpx._client")

    async def go() -> None:
        with mockmcp.intercepting(ROOT / "nowhere"):
            assert httpx2.AsyncClient._transport_for_url.__module__ == _http.__name__

    anyio.run(go)
    assert httpx2.AsyncClient._transport_for_url.__module__ == "httpx2._client"


# --- a framework: openai-agents ----------------------------------------------------------------------------------


def test_openai_agents_streamable_http_server_is_recorded_then_replayed(guarded: Guarded, tmp_path: Path) -> None:
    agents_mcp = pytest.importorskip("agents.mcp", reason="openai-agents is not installed")

    async def agent(path: str) -> tuple[list[str], str]:
        params = {"url": guarded.url, "headers": {"authorization": f"Bearer {TOKEN}"}}
        async with agents_mcp.MCPServerStreamableHttp(params, cache_tools_list=False) as server:
            tools = [tool.name for tool in await server.list_tools()]
            try:
                result = await server.call_tool("read_file", {"path": path})
            except Exception as error:  # the error reply to a call no recording answers
                return tools, str(error)
        return tools, result.content[0].text

    async def run(mode: str, path: str = "notes.txt") -> tuple[tuple[list[str], str], str | None]:
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path, mode, strict_exit=False) as interception:
            seen = await agent(path)
        return seen, interception.verdict()

    recorded, verdict = anyio.run(run, "once")
    assert verdict is None and recorded[1] == "remember to buy milk"
    guarded.stop()
    replayed, verdict = anyio.run(run, "none")
    assert verdict is None and replayed == recorded
    _changed, verdict = anyio.run(run, "none", "todo.md")
    assert verdict is not None and 'arguments.path: recorded "notes.txt", incoming "todo.md"' in verdict
    assert re.fullmatch(r"127\.0\.0\.1_\d+-mcp\.yaml", next(tmp_path.glob("*.yaml")).name)


def test_fastmcp_streamable_http_transport_is_recorded_then_replayed(guarded: Guarded, tmp_path: Path) -> None:
    fastmcp = pytest.importorskip("fastmcp", reason="fastmcp is not installed")
    from fastmcp.client.transports import StreamableHttpTransport

    async def run(mode: str) -> tuple[str, str | None]:
        transport = StreamableHttpTransport(guarded.url, headers={"authorization": f"Bearer {TOKEN}"})
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path, mode) as interception:
            async with fastmcp.Client(transport) as client:
                result = await client.call_tool("read_file", {"path": "notes.txt"})
        return result.content[0].text, interception.verdict()

    assert anyio.run(run, "once") == ("remember to buy milk", None)
    guarded.stop()
    assert anyio.run(run, "none") == ("remember to buy milk", None)


def test_an_mcp_request_through_httpx_the_client_of_mcp_1x_is_replayed_too(guarded: Guarded, tmp_path: Path) -> None:
    """mcp 1.x sends through httpx, 2.x through httpx2: the recorded initialize, POSTed again through httpx."""
    session_of(guarded.url, tmp_path, "once")
    guarded.stop()
    [cassette] = tmp_path.glob("*.yaml")
    initialize = cassettes.load(str(cassette)).interactions[0]
    assert initialize.method == "initialize"

    async def go() -> tuple[Any, str | None]:
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path) as interception:
            async with httpx.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}) as client:
                headers = {"accept": BOTH, "content-type": "application/json"}
                message = {"jsonrpc": "2.0", "id": 1, **initialize.message}
                answered = await client.post(guarded.url, json=message, headers=headers)
                assert answered.status_code == 200 and "mcp-session-id" in answered.headers, answered.text
                text = answered.text
        return text, interception.verdict()

    text, verdict = anyio.run(go)
    body = json.loads(text.split("data: ", 1)[1]) if text.startswith(("event:", "data:", "id:")) else json.loads(text)
    assert body["result"] == initialize.response["result"]
    assert verdict is None


# --- the plugin's marker -----------------------------------------------------------------------------------------

HOST = """
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def read(path):
    async with httpx2.AsyncClient(headers={"authorization": "Bearer TOKEN"}) as http:
        async with Client(streamable_http_client("URL", http_client=http), mode="legacy") as client:
            result = await client.call_tool("read_file", {"path": path})
    return result.content[0].text

@pytest.mark.anyio
@pytest.mark.mockmcp(intercept=True, names={"notes": "127.0.0.1"})
async def test_reads_a_note():
    assert await read("PATH") == "remember to buy milk"
"""


def test_the_marker_records_then_replays_and_a_changed_argument_fails_with_the_miss(
    pytester: pytest.Pytester, guarded: Guarded
) -> None:
    host = HOST.replace("URL", guarded.url).replace("TOKEN", TOKEN)
    pytester.makepyfile(test_host=host.replace("PATH", "notes.txt"))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_reads_a_note" / "notes.yaml"
    assert cassette.exists() and TOKEN not in cassette.read_text() and KEY not in cassette.read_text()
    guarded.stop()
    run(pytester).assert_outcomes(passed=1)
    pytester.makepyfile(test_host=host.replace("PATH", "todo.md"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "no recorded interaction matches" in said and "todo.md" in said


# (`mockmcp run` over Streamable HTTP, on both SDK lines: tests/test_frameworks.py's remote rows.)


# --- beside vcrpy: the model's API frozen by it, the tools by mockmcp ---------------------------------------------


def test_beside_vcrpy_each_freezes_its_own_side(guarded: Guarded, plain: str, tmp_path: Path) -> None:
    vcr = pytest.importorskip("vcr", reason="vcrpy is not installed")
    folder, model = tmp_path / "mcp", str(tmp_path / "model.yaml")
    session_of(guarded.url, folder, "once")
    guarded.stop()

    async def agent(mode: str) -> tuple[Any, str, str | None]:
        with vcr.use_cassette(model, record_mode=mode) as recorded, mockmcp.intercepting(folder) as interception:
            async with credentials() as client:
                answer = (await client.post(plain, json={"model": "m"}, headers={"accept": "application/json"})).json()
                async with connect(streamable_http(guarded.url, client), "legacy") as session:
                    text = (await session.call_tool("read_file", {"path": "notes.txt"})).content[0].text
            assert [request.uri for request in recorded.requests] == [plain]  # vcrpy never saw an MCP request
        return answer, text, interception.verdict()

    first = anyio.run(agent, "once")  # the model's API recorded by vcrpy, the MCP server replayed by mockmcp
    said = {"method": "POST", "body": {"model": "m"}, "accept": "application/json"}
    assert first == (said, "remember to buy milk", None)
    assert anyio.run(agent, "none") == first  # both replayed
