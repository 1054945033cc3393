"""Record in the host's own process: a transport that passes the host's session to a real server and journals it.

The real server is reached through a transport of the SDK's own (`reach`); two tasks on the host's loop pass each
message on unchanged, journaling its wire line first (redacted), so an answer is never journaled ahead of what it
answers. A second session is added to the first's cassette. What the SDK hides (HTTP framing, a line it cannot
parse) is not recorded.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from mockmcp._wire.words import RecordMode
from mockmcp.engine.redact import Redactor
from mockmcp.errors import CassetteError, UsageError
from mockmcp.inprocess._replay import ReplayTransport, Streams, wire
from mockmcp.inprocess._sdk import sdk
from mockmcp.record import CLIENT, SERVER, Journal, saved

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import TracebackType

    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectSendStream

    from mockmcp.engine.report import Report

__all__ = ["RecordingTransport", "reach", "recording"]


class RecordingTransport:
    """One session per `async with`; `sessions` counts them, `recorded` says whether the last one was recorded
    (else it was replayed, and `report` is its report)."""

    def __init__(
        self,
        real: Any,
        cassette: str | os.PathLike[str],
        mode: str | RecordMode = RecordMode.ONCE,
        redact_env: tuple[str, ...] = (),
        redact: tuple[str, ...] = (),
        *,
        ignore: tuple[str, ...] = (),
        strict: bool = False,
        timing: str | float = 0.0,
        log: TextIO | None = None,
        substitute: Mapping[str, str | None] | None = None,
    ) -> None:
        """A transport for the MCP SDK's `Client` that records the session with `real` into `cassette` in this
        process: `Client(mockmcp.recording(StdioServerParameters(...), "cassettes/x.yaml"))`.

        `real`: `StdioServerParameters`, a command line (a list: the server gets this process's whole
        environment, as under `mockmcp record`), a Streamable HTTP URL, an SDK server object (`MCPServer`,
        1.x's `FastMCP`, or a low-level `Server`), or any SDK transport. `mode`: none, once (record when the
        cassette does not exist), new or all. `redact_env`, `redact`: `mockmcp record`'s `--redact-env`,
        `--redact`; the rest are `mockmcp.transport`'s, for recording and replaying alike (`ignore`, `strict`,
        `timing`: when it replays).
        Raises UsageError for an unknown mode, a variable to redact or substitute that is not set, a bad pattern.
        """
        self.real, self.cassette, self.log = real, os.fspath(cassette), log
        self.mode = mode if isinstance(mode, RecordMode) else RecordMode.parse(mode, allow_none=True)
        subs, redacted = tuple((substitute or {}).items()), (tuple(redact_env), tuple(redact), os.environ)
        self.redactor = Redactor.for_recording(*redacted, "redact_env", subs, "substitute")
        self.replay = ReplayTransport(
            self.cassette, ignore=ignore, strict=strict, timing=timing, log=log, substitute=substitute
        )
        self.recorded, self.sessions = False, 0
        self._journal: Journal | None = None
        self._stack: AsyncExitStack | None = None
        self._group: TaskGroup | None = None
        self._start = 0.0

    @property
    def report(self) -> Report | None:
        """The report of the last session, when it was replayed."""
        return self.replay.report

    for_fastmcp = ReplayTransport.for_fastmcp

    async def __aenter__(self) -> Streams:
        if self._group is not None:  # one journal at a time: a second session at once would take it over
            fix = "give each session that runs at the same time a recording of its own, into a cassette of its own"
            problem = f"mockmcp.recording(..., {self.cassette!r}) is already in a session; it records one at a time"
            raise UsageError(problem, fix)
        mode = RecordMode.NEW if self.sessions else self.mode  # a later session adds to the first's cassette
        self.sessions += 1
        self.recorded = mode.records(os.path.exists(self.cassette))
        if not self.recorded:
            if not os.path.exists(self.cassette):  # mode none
                fix = "record it: mockmcp.recording(..., mode='once')"
                problem = "no such cassette, and the mode is none (never record)"
                raise CassetteError(problem, path=self.cassette, fix=fix)
            return await self.replay.__aenter__()
        real, server = reach(self.real)
        if real is self.real and self.sessions > 1:
            raise UsageError(
                f"mockmcp.recording(..., {self.cassette!r}) was given an SDK transport, which serves one session, "
                "and this is the second",
                "give the server as parameters, a command line, a URL or a server object (each session reaches it "
                "afresh), or a new mockmcp.recording(...) with a new transport for each session",
            )
        self._journal = Journal.fresh(self.cassette, mode, self.redactor, server)
        self._stack = AsyncExitStack()
        try:
            # Two streams; 1.x's Streamable HTTP client yields a third, the session id's getter, which is not needed.
            real_read, real_write = (await self._stack.enter_async_context(real))[:2]
        except BaseException:
            self._journal.discard()  # the server never started: nothing to recover later
            raise
        to_host, host_reads = anyio.create_memory_object_stream[Any](float("inf"))
        host_writes, from_host = anyio.create_memory_object_stream[Any](float("inf"))
        for stream in (to_host, host_reads, host_writes, from_host):
            self._stack.push_async_callback(stream.aclose)
        self._start = time.monotonic()
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        self._group.start_soon(self._pass, from_host, real_write, CLIENT)
        self._group.start_soon(self._pass, real_read, to_host, SERVER)
        return host_reads, host_writes

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        if not self.recorded:
            return await self.replay.__aexit__(exc_type, exc, tb)
        assert self._stack is not None and self._group is not None and self._journal is not None
        journal = self._journal
        self._group.cancel_scope.cancel()  # what comes after the host left is no part of its session
        try:
            await self._stack.aclose()  # the task group, the streams, then the real transport (its server stops)
        finally:
            self._group = None  # the transport may open a session again
            journal.close()
            how = "the host's session ended" + ("" if exc_type is None else f" with {exc_type.__name__}")
            for text in saved(self.cassette, how):
                print(f"mockmcp: {text}", file=self.log or sys.stderr, flush=True)
        journal.raise_failure(self.cassette)
        return None

    async def _pass(self, source: Any, sink: MemoryObjectSendStream[Any] | Any, direction: str) -> None:
        """Each message from one side to the other, journaled first; the end of one side, to the other."""
        assert self._journal is not None
        try:
            async for item in source:
                if not isinstance(item, Exception):  # what the SDK could not parse reaches the host, unrecorded
                    line, _message = wire(item)
                    self._journal.append(direction, time.monotonic() - self._start, [self.redactor.line(line)])
                await sink.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass  # one side is gone: the other learns it below
        finally:
            await sink.aclose()


def reach(real: Any) -> tuple[Any, list[str]]:
    """The SDK transport that reaches `real`, and how the cassette's `meta.server` names it; raises UsageError."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    if isinstance(real, (list, tuple)) and real and all(isinstance(part, str) for part in real):
        is_url = len(real) == 1 and real[0].startswith(("http://", "https://"))  # the plugin's servers are lists
        real = real[0] if is_url else StdioServerParameters(command=real[0], args=list(real[1:]), env=dict(os.environ))
    if isinstance(real, StdioServerParameters):
        return stdio_client(real), [real.command, *real.args]
    if isinstance(real, str) and real.startswith(("http://", "https://")):
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(real), [real]
    line = sdk()
    if isinstance(real, line.servers):
        return line.in_memory(real), [f"{type(real).__name__} {real.name!r} in process"]
    if hasattr(real, "__aenter__") and hasattr(real, "__aexit__"):
        return real, [type(real).__name__]
    raise UsageError(
        f"mockmcp.recording cannot reach {real!r} as a server",
        "give StdioServerParameters, a command line as a list, a Streamable HTTP URL, an MCPServer (FastMCP on "
        "the SDK's 1.x line), or an MCP SDK transport",
    )


recording = RecordingTransport
"""`mockmcp.recording(real, cassette, ...)`: the public name of the class (see its `__init__`)."""
