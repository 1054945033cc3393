"""The legacy HTTP+SSE transport (2024-11-05): `mockmcp replay --http` serves `GET /sse` beside Streamable HTTP, and
`mockmcp record --http-target .../sse` records a real SDK SSE server; the SDK's `sse_client`, fastmcp's SSE
transport and the TypeScript SDK's `SSEClientTransport` (two hosts at once) see the same session directly, through
the recording proxy and on replay, and so do
an SSE entry of a config `wrap` wraps and the SDK's `sse_client` under interception (the paths' rules:
tests/test_sse_endpoint.py, in memory)."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NOTES_SESSION, ROOT, SHIPPED, child_env, notes_over_http, recording, recording_proxy, served
from fastmcp import Client as FastmcpClient
from mcp.client.sse import sse_client
from sdk_host import connect, full_session
from test_wrap_hosts import serving, wrap

import mockmcp
from mockmcp.cassette import store
from mockmcp.record._journal import journal_path

NOTES = SHIPPED / "notes-session.yaml"
SSE_SERVER = ROOT / "tests" / "servers" / "sse_notes.py"


async def sse_session(url: str) -> dict[str, Any]:
    """What a host using the SDK's `sse_client` sees of the notes server's whole session at url."""
    logs: list[Any] = []
    with anyio.fail_after(60):
        async with connect(sse_client(url), "legacy", logs=logs) as client:
            seen = await full_session(client)
    return {**seen, "logs": logs}


@pytest.mark.anyio
async def test_two_sdk_sse_clients_at_once_each_see_the_recorded_session(tmp_path: Any) -> None:
    seen: list[dict[str, Any]] = []
    logs: list[list[Any]] = [[], []]
    with served(NOTES, tmp_path) as server:
        sse = server.url.removesuffix("/mcp") + "/sse"

        async def one(n: int) -> None:
            async with connect(sse_client(sse), "legacy", logs=logs[n]) as client:
                seen.append(await full_session(client))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(one, 0)
                group.start_soon(one, 1)
        report = server.stop()
    for session in seen:
        assert {key: session[key] for key in NOTES_SESSION} == NOTES_SESSION  # progress, sampling, roots on the stream
    assert logs == [["counted 1", "counted 2"]] * 2
    assert report["misses"] == [] and report["unplayed"] == [] and report["repeats"] == []


@pytest.mark.anyio
async def test_a_real_sse_server_directly_through_the_proxy_and_on_replay_the_host_sees_the_same(
    tmp_path: Any, http_server: Callable[..., str]
) -> None:
    target = http_server(SSE_SERVER).removesuffix("/mcp") + "/sse"
    direct = await sse_session(target)
    assert {key: direct[key] for key in NOTES_SESSION} == NOTES_SESSION and direct["logs"] == ["counted 1", "counted 2"]
    out = tmp_path / "sse.yaml"
    with recording(target, out) as url:
        assert url.endswith("/sse")
        through = await sse_session(url)
    assert through == direct
    recorded = store.load(str(out))
    assert recorded.meta["server"] == [target]
    assert not any(item.stream for i in recorded.interactions for item in i.server), "one stream: no GET stream"
    assert all("/messages/" not in str(i.message) for i in recorded.interactions), "the endpoint event is no message"
    with served(out, tmp_path) as server:
        replayed = await sse_session(server.url.removesuffix("/mcp") + "/sse")
        report = server.stop()
    assert replayed == direct
    assert report["misses"] == [] and report["unplayed"] == []


@pytest.mark.anyio
async def test_wrap_records_an_sse_entry_of_a_config_then_replays_it_with_the_server_gone(
    tmp_path: Any, http_server: Callable[..., str]
) -> None:
    target = http_server(SSE_SERVER).removesuffix("/mcp") + "/sse"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"type": "sse", "url": target}}}))
    derived = wrap(config, tmp_path / "recording.json")["mcpServers"]["old"]
    assert derived["type"] == "sse" and derived["url"].startswith("http://127.0.0.1:")
    assert derived["url"].endswith("/sse")
    with serving(tmp_path / "recording.json"):
        recorded = await sse_session(derived["url"])
    assert {key: recorded[key] for key in NOTES_SESSION} == NOTES_SESSION
    assert store.load(str(tmp_path / "cassettes" / "old.yaml")).meta["server"] == [target]

    config.write_text(config.read_text().replace(target, "http://127.0.0.1:9/sse"))  # the server is gone
    derived = wrap(config, tmp_path / "replaying.json", "--replay")["mcpServers"]["old"]
    with serving(tmp_path / "replaying.json"):
        replayed = await sse_session(derived["url"])
    assert replayed == recorded


async def fastmcp_sessions(url: str, clients: int = 2) -> list[dict[str, Any]]:
    """What each of several fastmcp hosts at once sees at url (fastmcp takes a URL ending in /sse for SSE)."""
    seen: list[dict[str, Any]] = [{"logs": [], "progress": []} for _ in range(clients)]

    async def one(mine: dict[str, Any]) -> None:
        async def log(message: Any) -> None:
            mine["logs"].append(message.data)

        async def progress(value: float, total: float | None, message: str | None) -> None:
            mine["progress"].append((value, total, message))

        async with FastmcpClient(url, log_handler=log, progress_handler=progress) as client:
            mine["tools"] = sorted(tool.name for tool in await client.list_tools())
            mine["read"] = (await client.call_tool("read_file", {"path": "notes.txt"})).content[0].text
            mine["count"] = (await client.call_tool("count_slowly", {"n": 2})).content[0].text

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for mine in seen:
                group.start_soon(one, mine)
    return seen


@pytest.mark.anyio
async def test_fastmcp_sse_hosts_two_at_once_see_the_same_directly_through_the_proxy_and_on_replay(
    tmp_path: Any, http_server: Callable[..., str]
) -> None:
    target = http_server(SSE_SERVER).removesuffix("/mcp") + "/sse"
    direct = await fastmcp_sessions(target)
    assert direct[0] == direct[1] and direct[0]["read"] == "remember to buy milk"
    assert direct[0]["logs"] == ["counted 1", "counted 2"]
    assert direct[0]["count"] == "counted to 2" and direct[0]["progress"] == [
        (1.0, 2.0, "step 1"),
        (2.0, 2.0, "step 2"),
    ]
    out = tmp_path / "fastmcp.yaml"
    with recording(target, out) as url:
        through = await fastmcp_sessions(url)
    assert through == direct
    assert len({i.session for i in store.load(str(out)).interactions}) == 2
    with served(out, tmp_path) as server:
        replayed = await fastmcp_sessions(server.url.removesuffix("/mcp") + "/sse")
        report = server.stop()
    assert replayed == direct
    assert report["misses"] == [] and report["repeats"] == []


def intercepted_sse_session(url: str, folder: Any, mode: str) -> dict[str, Any]:
    """The SDK's `sse_client` at url while mockmcp intercepts (record mode `mode`), and the verdict."""

    async def go() -> dict[str, Any]:
        with anyio.fail_after(60), mockmcp.intercepting(folder, mode) as interception:
            seen = await sse_session(url)
        return {**seen, "verdict": interception.verdict()}

    return anyio.run(go)


def test_the_sdks_sse_client_is_intercepted_recorded_then_replayed_with_the_server_gone(tmp_path: Any) -> None:
    folder = tmp_path / "cassettes"
    with notes_over_http(SSE_SERVER) as url:
        target = url.removesuffix("/mcp") + "/sse"
        recorded = intercepted_sse_session(target, folder, "once")
    [cassette] = folder.glob("*.yaml")
    assert cassette.name.endswith("-sse.yaml") and store.load(str(cassette)).meta["server"] == [target]
    replayed = intercepted_sse_session(target, folder, "none")  # the server is gone: replayed, or refused
    assert recorded.pop("verdict") is None and replayed.pop("verdict") is None
    assert {key: recorded[key] for key in NOTES_SESSION} == NOTES_SESSION
    assert replayed == recorded


def node_hosts(url: str, hosts: int = 2) -> list[dict[str, Any]]:
    """What each of several TypeScript SDK hosts at once (`SSEClientTransport`, tests/node/sse_host.mjs) saw at url."""
    script = ROOT / "tests" / "node" / "sse_host.mjs"
    running = [
        subprocess.Popen(["node", str(script), url], stdout=subprocess.PIPE, text=True, env=child_env())
        for _ in range(hosts)
    ]
    seen = []
    for host in running:
        out, _err = host.communicate(timeout=60)
        assert host.returncode == 0, out
        # Not compared: that client runs a notification's handler a microtask later, and a response's at once, so
        # progress that comes in one read with its reply finds its handler gone ("unknown token"), even from the
        # real server directly: which progress it shows depends on how the bytes fell.
        del (found := json.loads(out))["progress"]
        seen.append(found)
    return seen


@pytest.mark.skipif(shutil.which("node") is None, reason="the TypeScript SDK's host runs on node, not installed")
def test_typescript_sse_hosts_two_at_once_see_on_replay_what_they_saw_through_the_proxy(
    tmp_path: Any, http_server: Callable[..., str]
) -> None:
    target = http_server(SSE_SERVER).removesuffix("/mcp") + "/sse"
    out = tmp_path / "typescript.yaml"
    with recording(target, out) as url:
        through = node_hosts(url)
    assert through[0] == through[1] and through[0]["read"] == "remember to buy milk"
    assert through[0]["logs"] == ["counted 1", "counted 2"] and through[0]["count"] == "counted to 2"
    with served(out, tmp_path) as server:
        replayed = node_hosts(server.url.removesuffix("/mcp") + "/sse")
        report = server.stop()
    assert replayed == through
    assert report["misses"] == [] and report["repeats"] == []


@pytest.mark.anyio
async def test_a_stop_waits_for_the_answer_a_legacy_sse_session_still_has_to_send(
    tmp_path: Any, http_server: Callable[..., str]
) -> None:
    """SIGTERM while a call is under way: the proxy waits for its answer on the session's stream before it saves
    (a POST was answered 202 long before). The host's transport breaks when the proxy goes: what it raises on
    leaving is not this test's concern."""
    target = http_server(ROOT / "tests" / "servers" / "sleepy.py", "--sse").removesuffix("/mcp") + "/sse"
    out = tmp_path / "slow.yaml"
    journal = Path(journal_path(str(out)))
    with recording_proxy(target, out) as (proxy, url), anyio.fail_after(60), contextlib.suppress(Exception):
        async with connect(sse_client(url), "legacy") as client, anyio.create_task_group() as calls:
            calls.start_soon(client.call_tool, "wait", {"seconds": 1.5})
            while b"tools/call" not in (journal.read_bytes() if journal.exists() else b""):
                await anyio.sleep(0.02)  # until the proxy has passed the call on
            proxy.send_signal(signal.SIGTERM)  # while the call is under way
            _out, said = await anyio.to_thread.run_sync(lambda: proxy.communicate(timeout=30))
            calls.cancel_scope.cancel()
    assert proxy.returncode == 0, said
    [call] = [i for i in store.load(str(out)).interactions if i.method == "tools/call"]
    assert call.response is not None and call.response["result"]["content"] == [{"type": "text", "text": "waited 1.5"}]
