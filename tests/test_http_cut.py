"""An answer the server breaks off, over Streamable HTTP: recorded through the proxy and replayed, the
SDK's host sees the same both times, and the session goes on where the SDK goes on.

The target (tests/servers/breaks_off.py) breaks two answers off after their heads: an SSE stream
after a log message (the SDK's host: `MCPError`, "SSE stream ended without a response"; with event
ids, after trying to resume the stream with `Last-Event-ID`; the session goes on), and a JSON body
(the SDK's client fails as a whole, `httpx2.RemoteProtocolError`). Without the cut kept, replay
would hold the first stream open for ever, and the host would wait where, live, it saw its stream
break.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from conftest import ROOT, child_env, recording, served
from mcp.shared.exceptions import MCPError
from sdk_host import connect, text_of

from mockmcp.cassette import store

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BREAKS_OFF = ROOT / "tests" / "servers" / "breaks_off.py"
VERSION = "2026-07-28"


@contextmanager
def breaks_off(*options: str) -> Iterator[str]:
    """The target that breaks answers off (with these options), on a port the system picks: its URL."""
    server = subprocess.Popen(
        [sys.executable, str(BREAKS_OFF), "--http", "0", *options], stdout=subprocess.PIPE, text=True, env=child_env()
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().split()[-1]
    finally:
        server.kill()
        server.wait(10)


def leaves(error: BaseException) -> list[str]:
    """The exceptions an exception (group) holds, by type and message."""
    grouped = getattr(error, "exceptions", None)  # an exception group (not a builtin before Python 3.11)
    if isinstance(grouped, tuple):
        return [leaf for inner in grouped for leaf in leaves(inner)]
    return [f"{type(error).__name__}: {error}"]


async def calls(url: str, names: list[str]) -> tuple[list[Any], list[Any], list[str]]:
    """Call the tools in order in one session, each within 10 s: what each call gave (its text, or its
    error's type, code and message), the log messages, and what ended the session when it failed."""
    seen: list[Any] = []
    logs: list[Any] = []
    ended: list[str] = []
    try:
        with anyio.fail_after(30):
            async with connect(url, "legacy", logs=logs) as host:
                for name in names:
                    try:
                        with anyio.fail_after(10):
                            seen.append(text_of(await host.call_tool(name, {})))
                    except MCPError as error:
                        seen.append(("MCPError", error.error.code, error.error.message))
    except BaseException as error:
        ended = leaves(error)
    return seen, logs, ended


def record_then_replay(names: list[str], out: Path, tmp_path: Path, *options: str) -> tuple[Any, Any]:
    """The host's calls live through the recording proxy (the target given these options), then on replay of
    what it recorded."""
    with breaks_off(*options) as target, recording(target, out) as url:
        live = anyio.run(calls, url, names)
    with served(out, tmp_path) as server:
        replayed = anyio.run(calls, server.url, names)
        report = server.stop()
    assert not report["misses"]
    return live, replayed


# Without event ids the SDK's host gives up on a broken stream at once; with them it tries to resume it with
# `Last-Event-ID` (a GET, twice, a second apart), and gives up when the server refuses.
BROKEN = {
    "no event ids": ((), "SSE stream ended without a response"),
    "event ids": (("--ids",), "SSE stream ended and reconnection attempts were exhausted"),
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_stream_broken_off_after_a_message_breaks_off_there_on_replay_and_the_session_goes_on(
    kind: str, tmp_path: Path
) -> None:
    options, why = BROKEN[kind]
    out = tmp_path / "halfway.yaml"
    live, replayed = record_then_replay(["whole", "halfway", "whole"], out, tmp_path, *options)
    assert live == (["whole", ("MCPError", -32000, why), "whole"], ["halfway"], [])
    assert replayed == live
    [call] = [i for i in store.load(str(out)).interactions if i.params and i.params.get("name") == "halfway"]
    assert (call.drop, [item.message["method"] for item in call.server], call.response) == (
        "cut",
        ["notifications/message"],
        None,
    )


def test_a_stream_that_ends_without_its_reply_is_kept_as_cut_and_the_host_sees_the_same_on_replay(
    tmp_path: Path,
) -> None:
    """A stream the server ends as a stream ends, its reply never sent: the SDK's host gives up on the call as
    on a stream broken off; replay, which would otherwise hold the stream open for ever, breaks it off."""
    out = tmp_path / "ends.yaml"
    live, replayed = record_then_replay(["ends", "whole"], out, tmp_path)
    assert live == ([("MCPError", -32000, "SSE stream ended without a response"), "whole"], ["halfway"], [])
    assert replayed == live
    [call] = [i for i in store.load(str(out)).interactions if i.params and i.params.get("name") == "ends"]
    assert (call.drop, call.response) == ("cut", None)


def test_a_call_the_proxy_answered_for_a_server_gone_fails_at_once_on_replay_too(tmp_path: Path) -> None:
    """The server dies on a call: the proxy answers it, and the calls after it, 502 itself (the SDK's host: an
    error for each call). Kept unanswered, replay would hold those calls for ever; each is kept answered by an
    error saying what happened, which replay answers at once."""
    out = tmp_path / "dies.yaml"
    live, replayed = record_then_replay(["whole", "dies", "whole"], out, tmp_path)
    gone = ("MCPError", -32603, "Server returned an error response")
    assert live == (["whole", gone, gone], [], [])
    seen, logs, ended = replayed
    assert (seen[0], logs, ended) == ("whole", [], [])
    assert [(kind, code) for kind, code, _message in seen[1:]] == [("MCPError", -32098)] * 2
    assert all("the host got HTTP 502 from the recording proxy" in message for _kind, _code, message in seen[1:])
    dies = [i for i in store.load(str(out)).interactions if i.params and i.params.get("name") == "dies"]
    assert [(i.drop, i.response and i.response["error"]["data"]) for i in dies] == [(False, {"status": 502})]


def test_a_json_body_broken_off_is_cut_with_nothing_on_replay(tmp_path: Path) -> None:
    out = tmp_path / "at_once.yaml"
    live, replayed = record_then_replay(["whole", "at_once"], out, tmp_path)
    seen, _logs, ended = live
    assert seen == ["whole"] and ended and all(leaf.startswith("RemoteProtocolError: ") for leaf in ended), live
    assert replayed == live
    [call] = [i for i in store.load(str(out)).interactions if i.params and i.params.get("name") == "at_once"]
    assert call.drop == "cut" and call.took is not None


def test_a_2026_request_whose_stream_broke_off_is_kept_as_cut_not_as_cancelled_by_its_client(tmp_path: Path) -> None:
    """In the 2026-07-28 revision a client cancels a request by closing its stream; the proxy, cutting the
    client's connection as the target cut its own, must not take that close for the client's cancel."""
    out = tmp_path / "modern.yaml"
    call = {
        "jsonrpc": "2.0",
        "id": "c-1",
        "method": "tools/call",
        "params": {"name": "halfway", "arguments": {}, "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
    }
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with breaks_off() as target, recording(target, out) as url:
        where = urlsplit(url)
        connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
        connection.request("POST", where.path, body=json.dumps(call), headers=headers)
        answer = connection.getresponse()
        assert answer.getheader("content-type") == "text/event-stream"
        with pytest.raises(http.client.IncompleteRead) as broken:
            answer.read()
        assert b'"data": "halfway"' in broken.value.partial  # what came before the cut, then the cut
        connection.close()
        # an answered call too: a recording in which the server answered nothing is no cassette
        connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
        whole = {**call, "id": "c-2", "params": {**call["params"], "name": "whole"}}
        connection.request("POST", where.path, body=json.dumps(whole), headers=headers)
        assert b'"whole"' in connection.getresponse().read()
        connection.close()
    cut, answered = store.load(str(out)).interactions  # and no notifications/cancelled between them
    assert (cut.drop, len(cut.server), answered.drop) == ("cut", 1, False)
