"""Replay keeps the causal order the real server had, as real hosts see it (issue 22, causal replay).

Each scenario is recorded from a real server (tests/servers/causal.py, an SDK server; and the
TypeScript `server-everything`) through `mockmcp record`, over stdio or the HTTP recording proxy,
by a host built on an official SDK. What that host saw through the recorder is the reference: every
message in and out in the order it came (a tap on the SDK client's transport), and what each call
returned. The same host then replays the cassette with default options and must see the same
events in the same order:

- a call the host cancels after its second progress notification: nothing but that progress before
  the cancel (no `-32800 Request cancelled`, which the SDK's HTTP server sends only after it), and
  no progress after it; one test per transport and era; and server-everything, which goes on
  reporting progress after the cancel: that progress still comes after the cancel;
- progress the server sent after the recorded host's cancel waits for hosts that cancel 0.7 s and 1.2 s
  into the call (a hand-written recording, over stdio and HTTP): its window is the time from the call;
- a host that stops waiting without cancelling gets no `-32800` at all (the real server sends none);
- a fast call answered while a slow one reports progress: the same interleaving;
- five requests written in one write, which the server answers in the order of their delays: the
  answers come in that order;
- two calls in flight, one of which asks the host (`elicitation/create`) first: its question always
  comes before its result (in every round);
- the TypeScript SDK client, which drops progress that arrives in the same read as its result,
  gets every progress notification the server sent.

Each recording is made once per module (a fixture) and shared by the tests that read it; the SDK server
over HTTP is started once (conftest's `http_server`).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, SDK_PYTHON, child_env, recording, served
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import ElicitResult, jsonrpc_message_adapter

from mockmcp.cassette import store

SERVER = [*SDK_PYTHON, str(ROOT / "tests" / "servers" / "causal.py")]
NODE_DIR = ROOT / "tests" / "node"
EVERYTHING = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
# Each interval is the time a host has to act on a progress notification before the next one comes (to
# cancel; to make its fast call), with room for a busy machine. Replayed, the next progress waits for the
# host's fast call no longer than the interval the server took (engine/ordering.py, `gaps`): a host slower
# than that gets it first, so the interleaving holds only for a host about as quick as the recording's.
CANCEL = {"n": 6, "interval": 0.3}  # cancelled after its second progress notification
SLOW = {"n": 5, "interval": 0.4}  # reports progress while a fast call is answered
FAST = {"seconds": 0}
ERAS = [("stdio", "legacy"), ("stdio", "auto"), ("http", "legacy"), ("http", "auto")]

Event = tuple[Any, ...]


def label(tool: str, arguments: dict[str, Any]) -> str:
    """How the events name a call: its tool and arguments (ids differ from run to run)."""
    return f"{tool}({', '.join(f'{key}={value}' for key, value in sorted(arguments.items()))})"


# --- the host's view: a tap on the SDK client's transport ------------------------------------------------


class Tap:
    """A client `Transport` around another: every message in and out is appended to `log` as it passes,
    in the order the host's event loop meets them, as ("in" | "out", message). `passed` waits for a
    message to pass: a test's host waits on that, never on time."""

    def __init__(self, inner: AbstractAsyncContextManager[Any], log: list[tuple[str, Any]] | None = None) -> None:
        self.inner, self.log = inner, [] if log is None else log
        self._opened: AbstractAsyncContextManager[Any] | None = None
        self._waiting: list[tuple[str, Callable[[Any], bool], anyio.Event]] = []

    def passed(self, way: str, wanted: Callable[[Any], bool]) -> anyio.Event:
        """An event set once a message for which `wanted(message)` has passed `way` ("in", or "out": handed
        to the transport, which sends what it is handed in that order)."""
        event = anyio.Event()
        if any(seen == way and wanted(message) for seen, message in self.log):
            event.set()
        else:
            self._waiting.append((way, wanted, event))
        return event

    def went(self, way: str, message: Any) -> None:
        """`message` has passed `way`: set the events waiting for it."""
        for waiting in [each for each in self._waiting if each[0] == way and each[1](message)]:
            waiting[2].set()
            self._waiting.remove(waiting)

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[Any]:
        async with self.inner as (read, write):
            to_host, host_reads = anyio.create_memory_object_stream[Any](100)

            async def inbound() -> None:
                async with to_host:
                    async for item in read:
                        if isinstance(item, SessionMessage):
                            message = item.message.model_dump(mode="json", by_alias=True)
                            self.log.append(("in", message))
                            self.went("in", message)
                        try:
                            await to_host.send(item)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            return  # the host has stopped reading (it is leaving): what came is logged

            async with anyio.create_task_group() as group:
                group.start_soon(inbound)
                try:
                    yield host_reads, _Logged(write, self)
                finally:
                    group.cancel_scope.cancel()

    async def __aenter__(self) -> Any:
        self._opened = self._streams()
        return await self._opened.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._opened is not None
        return await self._opened.__aexit__(*exc)


class _Logged:
    """The write stream the host gets: each message is logged as the host sends it, then passed on."""

    def __init__(self, inner: Any, tap: Tap) -> None:
        self.inner, self.tap = inner, tap

    async def send(self, item: SessionMessage) -> None:
        message = item.message.model_dump(mode="json", by_alias=True)
        self.tap.log.append(("out", message))
        await self.inner.send(item)
        self.tap.went("out", message)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _Logged:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def calling(tool: str) -> Callable[[Any], bool]:
    """For `Tap.passed`: a tools/call of `tool`."""
    return lambda message: message.get("method") == "tools/call" and message["params"]["name"] == tool


def transport(server: list[str] | str | StdioServerParameters) -> AbstractAsyncContextManager[Any]:
    """The SDK's transport to a stdio command (or its parameters) or a Streamable HTTP URL; to mockmcp (a recorder,
    a replay), one that waits for it to end (`patient_stdio`)."""
    if isinstance(server, str):
        return streamable_http_client(server)
    if isinstance(server, list) and server[:3] == stdio():
        return patient_stdio(server)
    if isinstance(server, list):
        server = StdioServerParameters(command=server[0], args=server[1:], env=child_env(), cwd=str(ROOT))
    return stdio_client(server)


@asynccontextmanager
async def patient_stdio(command: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    """A stdio transport that, when the host leaves, closes the command's stdin and waits for it to exit. The SDK's
    own gives a server 2 s, then SIGTERM and 2 s more, then SIGKILL: a recorder on a busy machine could be stopped
    before it saved (a replay before it wrote its report), and a test would hinge on the machine's speed. Both end
    by themselves once the host has left (a recorder once its server has): their exit is the event to wait for."""
    process = await anyio.open_process(command, env=child_env(), cwd=ROOT, stderr=None)
    assert process.stdin is not None and process.stdout is not None
    to_host, host_reads = anyio.create_memory_object_stream[Any](100)
    host_writes, to_server = anyio.create_memory_object_stream[SessionMessage](100)

    async def inbound() -> None:
        assert process.stdout is not None
        rest = b""
        async with to_host:
            async for chunk in process.stdout:
                *lines, rest = (rest + chunk).split(b"\n")
                for line in lines:
                    await to_host.send(SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False)))

    async def outbound() -> None:
        assert process.stdin is not None
        async with to_server:
            async for message in to_server:
                line = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(line.encode())
        await process.stdin.aclose()  # the host has left: the recorder passes the EOF on, and saves

    async with anyio.create_task_group() as group:
        group.start_soon(inbound)
        group.start_soon(outbound)
        try:
            yield host_reads, host_writes
            await host_writes.aclose()
            with anyio.fail_after(60):  # a guard only: the recorder's own grace periods end it well before
                await process.wait()
        finally:
            if process.returncode is None:  # the test failed or was cancelled: nothing is left running
                process.kill()
            group.cancel_scope.cancel()


def events(log: list[tuple[str, Any]]) -> list[Event]:
    """The log as events that do not depend on ids: ("call", L), ("progress", L, n), ("result", L, text),
    ("error", L, code), ("cancel", L), ("ask", L), ("answer", L, action) on the wire, and what the host's
    code saw: ("returned", L, text), ("raised", L, code), ("cancelled", L), ("abandoned", L); L names the
    call (`label`). Requests other than tools/call and their answers are left out."""
    calls: dict[Any, str] = {}
    asks: dict[Any, str] = {}
    out: list[Event] = []
    for way, message in log:
        if way == "host":
            out.append(message)
            continue
        method = message.get("method")
        params = message.get("params") or {}
        if way == "out":
            if method == "tools/call":
                calls[message["id"]] = label(params["name"], params.get("arguments") or {})
                out.append(("call", calls[message["id"]]))
            elif method == "notifications/cancelled" and params.get("requestId") in calls:
                out.append(("cancel", calls[params["requestId"]]))
            elif method is None and message.get("id") in asks:
                out.append(("answer", asks.pop(message["id"]), (message.get("result") or {}).get("action")))
        elif method == "notifications/progress" and params.get("progressToken") in calls:
            out.append(("progress", calls[params["progressToken"]], params["progress"]))
        elif method == "elicitation/create":
            what = re.fullmatch(r"Really (.*)\?", params.get("message", ""))
            asks[message["id"]] = label("confirm", {"what": what.group(1) if what else params.get("message")})
            out.append(("ask", asks[message["id"]]))
        elif method is None and message.get("id") in calls:
            name = calls[message["id"]]
            if message.get("error"):
                out.append(("error", name, message["error"]["code"]))
            else:
                out.append(("result", name, message["result"]["content"][0]["text"]))
    return out


def of(seen: list[Event], *names: str) -> list[Event]:
    return [event for event in seen if event[1] in names]


HOST_CODE = ("returned", "raised", "cancelled", "abandoned")


def wire(seen: list[Event]) -> list[Event]:
    """The events on the wire alone. What the host's code saw is left out: when it comes relative to the
    next message in is up to the host's event loop, not to the server (or replay)."""
    return [event for event in seen if event[0] not in HOST_CODE]


def outcomes(seen: list[Event]) -> list[Event]:
    """What the host's code saw of its calls, in order."""
    return [event for event in seen if event[0] in HOST_CODE]


def first_difference(replayed: list[Event], reference: list[Event]) -> str:
    """Where two event lists part, with a few events before and after, for an assertion's message."""
    pairs = enumerate(zip(replayed, reference, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(replayed), len(reference)))
    window = slice(max(0, at - 3), at + 4)
    return f"they part at event {at}:\n  replayed {replayed[window]}\n  recorded {reference[window]}"


def split_at_cancel(seen: list[Event], name: str) -> tuple[list[Event], list[Event]]:
    """The events of call `name` before the host's cancel, and after it (all before, without a cancel)."""
    mine = of(seen, name)
    cut = mine.index(("cancel", name)) if ("cancel", name) in mine else len(mine)
    return mine[:cut], mine[cut + 1 :]


# --- the hosts ---------------------------------------------------------------------------------------------


async def cancel_after_second_progress(
    client: Client, log: list[Any], tool: str = "steps", arguments: dict[str, Any] = CANCEL
) -> None:
    """Call `tool` and cancel the call (the SDK's way: a cancel scope around call_tool, which sends
    notifications/cancelled) once its second progress notification is in."""
    name = label(tool, arguments)
    scope = anyio.CancelScope()

    async def progress(value: float, _total: float | None, _message: str | None) -> None:
        if value >= 2:
            scope.cancel()

    with scope:
        try:
            result = await client.call_tool(tool, arguments, progress_callback=progress)
        except MCPError as error:
            log.append(("host", ("raised", name, error.error.code)))
        else:
            log.append(("host", ("returned", name, result.content[0].text)))  # type: ignore[union-attr]
    if scope.cancelled_caught:
        log.append(("host", ("cancelled", name)))


async def fast_call_during_slow_one(client: Client, log: list[Any]) -> None:
    """A slow call reporting progress; once its first progress is in, a fast call, answered meanwhile."""
    first = anyio.Event()

    async def progress(_value: float, _total: float | None, _message: str | None) -> None:
        first.set()

    async def call(tool: str, arguments: dict[str, Any], **options: Any) -> None:
        try:
            result = await client.call_tool(tool, arguments, **options)
        except MCPError as error:
            log.append(("host", ("raised", label(tool, arguments), error.error.code)))
        else:
            log.append(("host", ("returned", label(tool, arguments), result.content[0].text)))  # type: ignore[union-attr]
        first.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: call("steps", SLOW, progress_callback=progress))
        await first.wait()
        await call("wait", FAST)


async def cancel_then_overlap(server: list[str] | str, mode: str) -> list[Event]:
    log: list[Any] = []
    with anyio.fail_after(60):
        async with Client(Tap(transport(server), log), mode=mode) as client:
            await client.list_tools()  # once now, not in the middle of the calls (the SDK lists after a first call)
            await cancel_after_second_progress(client, log)
            # Not a wait for something: this host is idle a while, as hosts are, and a late answer to the
            # cancelled call (over HTTP in the handshake era, the SDK server's -32800) comes meanwhile, or
            # later; no check depends on when it comes.
            await anyio.sleep(0.3)
            await fast_call_during_slow_one(client, log)
    return events(log)


def progress_of(value: int) -> Callable[[Any], bool]:
    """For `Tap.passed`: the progress notification `value` (of whichever call)."""
    return lambda message: message.get("method") == "notifications/progress" and message["params"]["progress"] == value


async def abandon_after_second_progress(
    server: list[str] | str, mode: str, until: int | None = None, patience: float = 0.5
) -> list[Event]:
    """A broken host: it calls `steps`, stops waiting after the second progress notification without
    cancelling (no notifications/cancelled), and keeps the connection open until progress `until` has
    come (within 30 s), or, without `until`, `patience` seconds more."""
    log: list[Any] = []
    name = label("steps", CANCEL)
    with anyio.fail_after(60):
        tap = Tap(transport(server), log)
        async with Client(tap, mode=mode) as client:
            await client.list_tools()
            second = anyio.Event()

            async def progress(value: float, _total: float | None, _message: str | None) -> None:
                if value >= 2:
                    second.set()

            async def call() -> None:
                try:
                    await client.session._dispatcher.send_raw_request(
                        "tools/call",
                        {"name": "steps", "arguments": CANCEL},
                        {"on_progress": progress, "cancel_on_abandon": False},
                    )
                except MCPError as error:
                    log.append(("host", ("raised", name, error.error.code)))
                second.set()

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await second.wait()
                group.cancel_scope.cancel()  # stops waiting; sends nothing
            log.append(("host", ("abandoned", name)))
            if until is not None:
                with anyio.move_on_after(30):  # on a busy machine too; the test says what did not come
                    await tap.passed("in", progress_of(until)).wait()
            else:
                # Time, not a wait for something: what must NOT come (an answer to the abandoned call) would
                # come at once, as replay sends whatever it sends at once; half a second more is the window.
                await anyio.sleep(patience)
    return events(log)


def stdio(*args: str) -> list[str]:
    return [sys.executable, "-m", "mockmcp", *args]


async def wait_for_save(out: Path) -> None:
    """The stdio recorder saves after the host leaves: wait for the cassette, and its journal gone."""
    with anyio.fail_after(30):
        while not out.exists() or Path(f"{out}.journal").exists():
            await anyio.sleep(0.02)


@dataclass
class Recorded:
    cassette: Path
    reference: list[Event]  # what the host saw through the recorder
    replayed: list[Event] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)


def record_and_replay(
    host: Callable[[list[str] | str, str], Any], transport_name: str, mode: str, folder: Path, target: Callable[[], str]
) -> Recorded:
    """Record `host`'s session with tests/servers/causal.py over that transport (over HTTP, the server at
    `target()`), then replay it to the same host."""
    out, report = folder / "causal.yaml", folder / "report.json"

    async def run() -> Recorded:
        if transport_name == "stdio":
            reference = await host(stdio("record", "-o", str(out), "--", *SERVER), mode)
            await wait_for_save(out)
            recorded = Recorded(out, reference)
            recorded.replayed = await host(stdio("replay", str(out), "--report", str(report)), mode)
            recorded.report = json.loads(report.read_text())
            return recorded
        with recording(target(), out) as url:
            reference = await host(url, mode)
        recorded = Recorded(out, reference)
        with served(out, folder) as replay:
            recorded.replayed = await host(replay.url, mode)
            recorded.report = replay.stop()
        return recorded

    return anyio.run(run)


class Recordings:
    """Each (transport, era) session recorded and replayed once, on first use; over HTTP, from the one
    tests/servers/causal.py the worker runs (conftest's `http_server`)."""

    def __init__(self, folder: Path, http_server: Callable[..., str]) -> None:
        self.folder = folder
        self.made: dict[tuple[str, str], Recorded] = {}
        self.http_server = lambda: http_server(ROOT / "tests" / "servers" / "causal.py")

    def get(self, transport_name: str, mode: str) -> Recorded:
        if (transport_name, mode) not in self.made:
            folder = self.folder / f"{transport_name}-{mode}"
            folder.mkdir()
            self.made[transport_name, mode] = record_and_replay(
                cancel_then_overlap, transport_name, mode, folder, self.http_server
            )
        return self.made[transport_name, mode]


# The tests that read the shared recordings run on one worker, which makes them once (`--dist loadgroup`,
# pyproject.toml); the module's other tests go wherever there is room.
shared = pytest.mark.xdist_group("causal")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory, http_server: Callable[..., str]) -> Recordings:
    return Recordings(tmp_path_factory.mktemp("causal"), http_server)


# --- 1. cancel ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@shared
@pytest.mark.parametrize(("transport_name", "mode"), ERAS)
def test_a_cancelled_call_gets_nothing_but_its_progress_before_the_cancel_and_no_progress_after(
    recordings: Recordings, transport_name: str, mode: str
) -> None:
    recorded = recordings.get(transport_name, mode)
    name = label("steps", CANCEL)
    before, after = split_at_cancel(recorded.reference, name)
    # What the real server did: two progress notifications, the host's cancel, nothing else but (over
    # HTTP in the handshake era) the SDK server's -32800 after the cancel.
    assert before == [("call", name), ("progress", name, 1), ("progress", name, 2)], recorded.reference
    assert all(event[0] != "progress" for event in after), recorded.reference
    assert ("cancelled", name) in after
    replayed_before, replayed_after = split_at_cancel(recorded.replayed, name)
    assert replayed_before == before, f"before the host's cancel: replayed {replayed_before}, recorded {before}"
    assert ("cancel", name) in recorded.replayed
    assert [event for event in replayed_after if event not in after] == [], f"after the cancel: {replayed_after}"
    assert recorded.report["misses"] == [], recorded.report["misses"]


def needs_node() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the TypeScript SDK host and server-everything cannot run")
    if not EVERYTHING.is_file():
        pytest.skip("tests/node has no node_modules: run `npm ci --prefix tests/node` (.ci/run does)")


@pytest.mark.slow
def test_progress_a_server_sends_after_the_cancel_waits_for_the_cancel(tmp_path: Path) -> None:
    """server-everything (stdio) goes on reporting progress after the host's cancel, and never answers
    the call. Replayed, that progress must not come before the cancel either."""
    needs_node()
    out = tmp_path / "everything.yaml"
    tool, arguments = "trigger-long-running-operation", {"duration": 1, "steps": 5}
    name = label(tool, arguments)

    async def host(server: list[str]) -> list[Event]:
        log: list[Any] = []
        with anyio.fail_after(60):
            tap = Tap(transport(server), log)
            async with Client(tap, mode="legacy") as client:
                await client.list_tools()
                await cancel_after_second_progress(client, log, tool, arguments)
                with anyio.move_on_after(30):  # the server's last progress; if it never comes, the test says so
                    await tap.passed("in", progress_of(arguments["steps"])).wait()
                # Time, not a wait for something: what must not come (an answer to the cancelled call)
                # would come right after the last progress.
                await anyio.sleep(0.3)
        return events(log)

    async def run() -> tuple[list[Event], list[Event]]:
        reference = await host([*stdio("record", "-o", str(out), "--"), "node", str(EVERYTHING), "stdio"])
        await wait_for_save(out)
        return reference, await host(stdio("replay", str(out)))

    reference, replayed = anyio.run(run)
    before, after = split_at_cancel(reference, name)
    assert before == [("call", name), ("progress", name, 1), ("progress", name, 2)], reference
    assert [e for e in after if e[0] == "progress"] == [("progress", name, n) for n in (3, 4, 5)], reference
    replayed_before, replayed_after = split_at_cancel(replayed, name)
    assert replayed_before == before, f"before the host's cancel: replayed {replayed_before}, recorded {before}"
    assert [e for e in replayed_after if e[0] in ("progress", "result", "error")] == [
        e for e in after if e[0] in ("progress", "result", "error")
    ]


@pytest.mark.slow
@shared
@pytest.mark.parametrize("transport_name", ["stdio", "http"])
def test_a_host_that_never_cancels_never_gets_the_late_answer_to_a_cancel(
    recordings: Recordings, transport_name: str, tmp_path: Path
) -> None:
    """The handshake-era SDK server over HTTP answered the cancelled call -32800 after the recording
    host's cancel. A broken host that stops waiting without cancelling gets no -32800 from the real
    server (it goes on reporting progress); replayed, it must not get one either."""
    cassette = recordings.get("http", "legacy").cassette
    recorded = store.load(str(cassette))
    assert any(i.response and i.response.get("error", {}).get("code") == -32800 for i in recorded.interactions), (
        "the recording holds the SDK server's late -32800"
    )
    name = label("steps", CANCEL)

    async def run() -> tuple[list[Event], list[Event]]:
        if transport_name == "stdio":
            direct = await abandon_after_second_progress(SERVER, "legacy", until=3)
            return direct, await abandon_after_second_progress(stdio("replay", str(cassette)), "legacy")
        direct = await abandon_after_second_progress(recordings.http_server(), "legacy", until=3)
        with served(cassette, tmp_path) as replay:
            replayed = await abandon_after_second_progress(replay.url, "legacy")
            replay.stop()
        return direct, replayed

    direct, replayed = anyio.run(run)
    assert ("progress", name, 3) in direct and not [e for e in direct if e[0] in ("error", "raised")], direct
    assert [e for e in of(replayed, name) if e[0] in ("error", "raised", "cancel")] == [], of(replayed, name)
    assert of(replayed, name)[:3] == of(direct, name)[:3]


# --- 2. overlapping calls ----------------------------------------------------------------------------------


@pytest.mark.slow
@shared
@pytest.mark.parametrize(("transport_name", "mode"), ERAS)
def test_a_fast_call_answered_while_a_slow_one_reports_progress_keeps_its_place(
    recordings: Recordings, transport_name: str, mode: str
) -> None:
    recorded = recordings.get(transport_name, mode)
    slow, fast = label("steps", SLOW), label("wait", FAST)
    reference = of(recorded.reference, slow, fast)
    # The scenario happened: the fast answer came between the slow call's first and last progress.
    assert (
        reference.index(("progress", slow, 1))
        < reference.index(("result", fast, "waited 0.0"))
        < reference.index(("progress", slow, SLOW["n"]))
    ), reference
    replayed = of(recorded.replayed, slow, fast)
    assert wire(replayed) == wire(reference), first_difference(wire(replayed), wire(reference))
    assert outcomes(replayed) == outcomes(reference)


# --- 3. a burst of pipelined requests ----------------------------------------------------------------------

BURST = [1.0, 0.25, 0.75, 0.0, 0.5]  # the wait of requests 1..5: the server answers 4, 2, 5, 3, 1, mostly


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def read_messages(proc: subprocess.Popen[bytes], wanted: Callable[[list[Any]], bool], timeout: float) -> list[Any]:
    """Messages from the process's stdout until `wanted(messages)`, within `timeout` seconds."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    buffer, messages = b"", []
    try:
        while not wanted(messages):
            left = deadline - time.monotonic()
            assert left > 0 and selector.select(left), f"no more messages within {timeout} s; got {messages}"
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"stdout closed; got {messages}"
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            messages += [json.loads(each) for each in lines if each.strip()]
    finally:
        selector.close()
    return messages


def burst(argv: list[str], stderr: Path) -> list[Any]:
    """A raw stdio host: the handshake, then five tools/call requests in one write; the ids of the
    answers, in the order they came."""
    with stderr.open("wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=child_env())
    assert proc.stdin is not None
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        proc.stdin.write(line({"id": 0, "method": "initialize", "params": init}))
        proc.stdin.flush()
        read_messages(proc, lambda got: any(m.get("id") == 0 for m in got), 60)  # the server starts meanwhile
        calls = [
            line({"id": i, "method": "tools/call", "params": {"name": "wait", "arguments": {"seconds": seconds}}})
            for i, seconds in enumerate(BURST, 1)
        ]
        proc.stdin.write(line({"method": "notifications/initialized"}) + b"".join(calls))  # one write
        proc.stdin.flush()
        answers = read_messages(proc, lambda got: len([m for m in got if "id" in m]) == len(BURST), 30)
        proc.stdin.close()
        proc.wait(20)
    finally:
        proc.kill()
        proc.wait(10)
    return [m["id"] for m in answers if "id" in m and "method" not in m]


@pytest.mark.slow
def test_five_pipelined_requests_are_answered_in_the_recorded_order(tmp_path: Path) -> None:
    out = tmp_path / "burst.yaml"
    recorded = burst([*stdio("record", "-o", str(out), "--"), *SERVER], tmp_path / "record.err")
    # By their waits, not in the order asked: [4, 2, 5, 3, 1]; but on a busy machine the real server may start
    # one wait a quarter of a second after another (seen: [2, 4, 1, 5, 3] with the waits 0.1 s apart), and
    # what replay owes the host is the order the recording has, whichever it is.
    assert sorted(recorded) == [1, 2, 3, 4, 5] and recorded != [1, 2, 3, 4, 5], recorded
    for attempt in range(3):
        replayed = burst(stdio("replay", str(out)), tmp_path / f"replay{attempt}.err")
        assert replayed == recorded, f"attempt {attempt}: {(tmp_path / f'replay{attempt}.err').read_text()}"


# --- 4. a question before its call's result ----------------------------------------------------------------

ROUNDS = 6
ASIDE = {"seconds": 0.03}  # answered while the host is still answering the question of the other call


async def ask_while_another_call_runs(server: list[str], mode: str, aside: str) -> list[Event]:
    """ROUNDS times: `confirm` (which asks the host first) and a short `wait` in flight together, the
    `wait` sent with `confirm` (aside "with") or by the host when the question comes, before it answers
    (aside "asked": a host that looks something up first). The host answers the question once the short
    call is back, so the short call is answered while the question is open, however busy the machine."""
    log: list[Any] = []
    group: anyio.abc.TaskGroup | None = None
    aside_back = anyio.Event()  # this round's short call has returned

    async def call(client: Client, tool: str, arguments: dict[str, Any]) -> None:
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as error:
            log.append(("host", ("raised", label(tool, arguments), error.error.code)))
        else:
            log.append(("host", ("returned", label(tool, arguments), result.content[0].text)))  # type: ignore[union-attr]
        if tool == "wait":
            aside_back.set()

    async def answer(_ctx: Any, _params: Any) -> ElicitResult:
        if aside == "asked" and group is not None:
            group.start_soon(call, client, "wait", ASIDE)
        with anyio.fail_after(30):
            await aside_back.wait()
        return ElicitResult(action="accept", content={"confirm": True})

    with anyio.fail_after(60):
        async with Client(Tap(transport(server), log), mode=mode, elicitation_callback=answer) as client:
            await client.list_tools()
            for round_ in range(ROUNDS):
                aside_back = anyio.Event()
                async with anyio.create_task_group() as group:
                    group.start_soon(call, client, "confirm", {"what": f"round {round_}"})
                    if aside == "with":
                        group.start_soon(call, client, "wait", ASIDE)
    return events(log)


@pytest.mark.slow
@pytest.mark.parametrize("aside", ["with", "asked"])
def test_a_calls_question_always_comes_before_its_result(tmp_path: Path, aside: str) -> None:
    """Over stdio a server request names no request: the recorder files the question with the call the
    server answers next, here the short one. Replay must still ask before it answers the call that asked."""
    out, report = tmp_path / "ask.yaml", tmp_path / "report.json"

    async def run() -> tuple[list[Event], list[Event]]:
        recorder = [*stdio("record", "-o", str(out), "--"), *SERVER]
        reference = await ask_while_another_call_runs(recorder, "legacy", aside)
        await wait_for_save(out)
        replay = stdio("replay", str(out), "--report", str(report))
        return reference, await ask_while_another_call_runs(replay, "legacy", aside)

    reference, replayed = anyio.run(run)
    for round_ in range(ROUNDS):
        name = label("confirm", {"what": f"round {round_}"})
        for seen, who in ((reference, "the real server"), (replayed, "replay")):
            mine = of(seen, name)
            assert ("ask", name) in mine, f"{who}, round {round_}: never asked: {mine}"
            asked, answered = mine.index(("ask", name)), mine.index(("result", name, f"round {round_}: accept"))
            assert asked < answered, f"{who}, round {round_}: the result before the question: {mine}"
    assert wire(replayed) == wire(reference), first_difference(wire(replayed), wire(reference))
    assert outcomes(replayed) == outcomes(reference)
    summary = json.loads(report.read_text())
    assert summary["misses"] == [] and summary["mismatches"] == [], summary


# --- 5. the TypeScript SDK client --------------------------------------------------------------------------

LONG_RUNNING = ("trigger-long-running-operation", {"duration": 1, "steps": 5})


def typescript_host(*server: str) -> list[dict[str, Any]]:
    """tests/node/progress_host.mjs calling the long-running tool with an onprogress handler: what it saw."""
    tool, arguments = LONG_RUNNING
    command = ["node", str(NODE_DIR / "progress_host.mjs"), tool, json.dumps(arguments), "--", *server]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60, env=child_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.slow
def test_the_typescript_client_gets_every_progress_notification(tmp_path: Path) -> None:
    needs_node()
    out = tmp_path / "everything.yaml"
    direct = typescript_host(*stdio("record", "-o", str(out), "--"), "node", str(EVERYTHING), "stdio")
    sent = [
        item.message["params"]["progress"]
        for interaction in store.load(str(out)).interactions
        for item in interaction.server
        if item.message and item.message.get("method") == "notifications/progress"
    ]
    assert sent == [1, 2, 3, 4, 5]
    progress = [event["progress"] for event in direct if "progress" in event]
    # The server sends its last progress and its result back to back, and the client drops progress that
    # comes in the same read as the result: directly, the last one is sometimes lost.
    assert progress in (sent, sent[:-1]), direct
    replayed = typescript_host(*stdio("replay", str(out)))
    got = [event for event in replayed if "progress" in event]
    assert got == [{"progress": n, "total": 5} for n in sent], f"replayed {replayed}, directly {direct}"
    assert replayed[-1] == direct[-1]


# The recording's host cancelled the call 1.4 s after sending it; its server had sent two progress notifications
# at once, and one more after the cancel (it had not seen it yet), then the SDK server's late -32800.
PROGRESS_PAST_CANCEL = """
version: 1
interactions:
- at: 0.0
  request: {id: 0, method: initialize, params: {protocolVersion: '2025-11-25', capabilities: {},
    clientInfo: {name: h, version: '1'}}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: s, version: '1'}}}
  took: 0.01
- at: 0.02
  notification: {method: notifications/initialized}
- at: 0.1
  request: {id: 1, method: tools/call, params: {name: slow, arguments: {}, _meta: {progressToken: 1}}}
  server:
  - at: 0.2
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 1}}
  - at: 0.6
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 2}}
  - at: 1.6
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 3}}
  response: {error: {code: -32800, message: Request cancelled}}
  took: 1.55
- at: 1.5
  notification: {method: notifications/cancelled, params: {requestId: 1}}
"""


@pytest.mark.slow
@pytest.mark.parametrize("transport_name", ["stdio", "http"])
@pytest.mark.parametrize("cancel_at", [0.7, 1.2])
def test_progress_sent_after_the_cancel_waits_for_a_host_that_cancels_within_the_recorded_time(
    cancel_at: float, transport_name: str, tmp_path: Path
) -> None:
    """Replayed, the progress the server sent after the cancel waits for it as long as the server took from the
    call (1.5 s), not from the progress before it (1.0 s, which a host cancelling at 1.2 s would have seen end)."""
    cassette = tmp_path / "cancel.yaml"
    cassette.write_text(PROGRESS_PAST_CANCEL)
    name = label("slow", {})

    async def host(server: list[str] | str) -> list[Event]:
        log: list[Any] = []
        with anyio.fail_after(30):
            async with Client(Tap(transport(server), log), mode="legacy") as client:
                # Time itself is tested: a host that cancels this long after its call (the SDK's way).
                with anyio.move_on_after(cancel_at):
                    await client.call_tool("slow", {}, progress_callback=lambda *_: anyio.sleep(0))
                # What must not come before the cancel would have come by then.
                await anyio.sleep(0.6)
        return events(log)

    if transport_name == "stdio":
        seen = anyio.run(host, stdio("replay", str(cassette)))
    else:
        with served(cassette, tmp_path) as replay:
            seen = anyio.run(host, replay.url)
    before, _after = split_at_cancel(seen, name)
    assert ("cancel", name) in seen and before == [("call", name), ("progress", name, 1), ("progress", name, 2)], seen
