"""Replay in the host's own process: a transport the MCP SDK's `Client` takes, driving the same engine.

A message the host writes goes to `Replay.receive` as its stdio line, in the host's own task; what the engine
sends is parsed with the SDK's parser into the host's read stream (`_HostReads`); a `Wake` is a timer task on the
host's loop. Leaving the block ends the session as closing stdin does (summary, `report`, `StrictFailure`).
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

try:
    import anyio
    import anyio.lowlevel
    from anyio.abc import ObjectReceiveStream, ObjectSendStream
except ImportError as exc:  # the SDK brings anyio: a host that replays in process has it
    raise ImportError("mockmcp.transport replays to the MCP Python SDK's Client: install it (pip install mcp)") from exc

from mockmcp._wire import jsonrpc
from mockmcp._wire.words import timing_factor
from mockmcp.cassette import store as cassettes
from mockmcp.cassette.model import closed
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.replay import Exit, Note, Replay, Send, Wake
from mockmcp.engine.selection import Recordings
from mockmcp.errors import StrictFailure, UsageError
from mockmcp.inprocess._sdk import SDK, sdk
from mockmcp.options import ReplayOptions

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import TracebackType

    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from mockmcp.cassette.model import Cassette
    from mockmcp.engine.report import Report
    from mockmcp.inprocess._fastmcp import SDKTransport

__all__ = ["ReplayTransport", "Streams", "replay_redactor", "session_engine", "transport", "wire"]

# What an SDK transport yields: the stream the host reads (`SessionMessage`, or an exception), the one it writes.
Streams = tuple["ObjectReceiveStream[Any]", "ObjectSendStream[Any]"]


def wire(session_message: Any) -> tuple[bytes, dict[str, Any]]:
    """An SDK `SessionMessage` as the line it is on the wire, and its JSON value (read back from pydantic's line:
    a third of the cost of building the value in Python)."""
    model = session_message.message
    try:
        line = model.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except ValueError:  # what pydantic will not write as JSON (a lone surrogate): built, then encoded as ours
        message: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_unset=True)
        return jsonrpc.encode(message), message
    return line + b"\n", jsonrpc.parse(line)


_HOST_STEPS = 4  # at most, in a host's turn, for the tasks it started (a handler, and the awaits in it)


def _others_ready() -> bool:
    """Whether anything of the host's but the caller is ready to run (trio's batches do not show: yes)."""
    try:
        return bool(asyncio.get_running_loop()._ready)  # type: ignore[attr-defined]  # private, there since 3.4
    except (RuntimeError, AttributeError):
        return True


class ReplayTransport:
    """One session per `async with`, each with an engine of its own, as a new `mockmcp replay` would be (two
    at once are refused); a later one starts from the recorded sessions earlier ones left, as with `--state`.
    `report` is the last session's report once it ended, `reports` every session's, `sessions` counts them."""

    def __init__(
        self,
        cassette: str | os.PathLike[str] | Cassette,
        *,
        ignore: tuple[str, ...] = (),
        strict: bool = False,
        timing: str | float = 0.0,
        log: TextIO | None = None,
        substitute: Mapping[str, str | None] | None = None,
        closed_world: bool = False,
    ) -> None:
        """A transport for the MCP SDK's `Client` (or `ClientSession(read, write)`) that replays `cassette` in
        this process: `Client(mockmcp.transport("cassettes/x.yaml"))`. `ignore`, `strict` and `timing` are
        `mockmcp replay`'s `--ignore`, `--strict` and `--timing` (none, recorded, or a factor; 0 answers at
        once); `substitute` its `--substitute`, by name (`{"PROJECT": "/path"}`; None: the environment
        variable's value); `closed_world` its `--closed-world`; `log` is where the notes and summary go (default:
        stderr). Raises UsageError for a bad timing."""
        self.cassette, self.log = cassette, log
        factor = timing_factor(timing, "timing")
        self.options = ReplayOptions(
            ignore, strict, factor, tuple((substitute or {}).items()), closed_world=closed_world
        )
        self.report: Report | None = None
        self.reports: list[Report] = []
        self.sessions = 0  # sessions begun
        self._recordings: Recordings | None = None  # the cassette, loaded on the first session
        self._engine: Replay | None = None
        self._group: TaskGroup | None = None
        self._to_host: MemoryObjectSendStream[Any] | None = None
        self._streams: tuple[Any, ...] = ()
        self._sdk: SDK | None = None  # the host's SDK line, found on the first session

    def for_fastmcp(self) -> SDKTransport:
        """This transport as fastmcp's `Client` takes it, each connection a session: `fastmcp.Client(
        mockmcp.transport(...).for_fastmcp())`. Raises ImportError without fastmcp."""
        from mockmcp.inprocess._fastmcp import SDKTransport

        return SDKTransport(self)

    async def __aenter__(self) -> Streams:
        if self._group is not None:  # one engine, one report: a second session at once would take them over
            given = self.cassette
            name = os.fspath(given) if isinstance(given, (str, os.PathLike)) else given.path or "a cassette"
            fix = "give each session that runs at the same time a transport of its own (mockmcp.transport again)"
            raise UsageError(f"mockmcp.transport({name!r}) is already in a session; it plays one at a time", fix=fix)
        self._sdk = sdk()  # the SDK imported here, not with mockmcp.transport: only an in-process host pays for it
        self.sessions += 1
        options, given = self.options, self.cassette
        if self._recordings is None:  # one index for every session, as over HTTP: each claims what it took
            recorded = cassettes.load(os.fspath(given)) if isinstance(given, (str, os.PathLike)) else given
            recorded = closed(recorded, options.closed_world)
            self._recordings = Recordings(recorded, Matcher.build(options.ignores, recorded.meta))
        self._engine = session_engine(self._recordings, options)
        self._to_host, host_reads = anyio.create_memory_object_stream[Any](math.inf)
        host_writes = _HostWrites(self)
        self._streams = (self._to_host, host_reads, host_writes)
        self._group = anyio.create_task_group()  # the engine's timers
        await self._group.__aenter__()
        self._perform(self._engine.start())
        return _HostReads(host_reads), host_writes

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._group is not None and self._engine is not None
        engine = self._engine
        self._group.cancel_scope.cancel()  # the timers: nothing more can come
        await self._group.__aexit__(None, None, None)
        if not engine.ended:
            self._perform(engine.close())
        for stream in self._streams:
            stream.close()
        self.report, self._group = engine.report, None  # the transport may open a session again
        self.reports.append(engine.report)
        print(engine.report.summary(), file=self.log or sys.stderr, flush=True)
        if exc_type is None and self.options.strict and not engine.report.strict_ok:
            raise StrictFailure(f"strict: the session had {engine.report.strict_failures()} (see the summary above)")
        return None

    def live_reports(self) -> list[Report]:
        """Every session's report, the one under way too (`mockmcp.calls` reads what the host did so far)."""
        return [*self.reports, *([self._engine.report] if self._group is not None and self._engine else [])]

    @property
    def timing(self) -> float:
        """The timing factor sessions replay at (0: at once)."""
        return self.options.timing

    def _receive(self, session_message: Any) -> None:
        """A message the host writes, to the engine, as the line it would have sent."""
        assert self._engine is not None
        if not self._engine.ended:
            self._perform(self._engine.receive(*wire(session_message)))

    def _perform(self, actions: list[Any]) -> None:
        assert self._to_host is not None and self._group is not None
        for action in actions:
            if isinstance(action, Send):
                for n, line in enumerate(action.data.splitlines()):
                    self._deliver(line, action.turn and not n)
            elif isinstance(action, Wake):
                self._group.start_soon(self._wake, action.after, action.job)
            elif isinstance(action, Note):
                print(action.text, file=self.log or sys.stderr, flush=True)
            elif isinstance(action, Exit):
                self._to_host.close()  # the host sees the session end, as when a server exits
            # A Cut (`drop: cut`) sends nothing: every request shares the one stream, which one answer may not break.

    def _deliver(self, line: bytes, apart: bool) -> None:
        """One line to the host, parsed as the SDK's stdio client parses it (a bad line: the exception); `apart`:
        the recording had it apart from the one before (`_HostReads`)."""
        assert self._to_host is not None and self._sdk is not None
        try:
            item: Any = self._sdk.session_message(self._sdk.parse(line))
        except ValueError as exc:
            item = exc
        try:
            self._to_host.send_nowait((apart, item))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the host has gone: nothing it could read

    async def _wake(self, after: float, token: int) -> None:
        await anyio.sleep(after)
        assert self._engine is not None
        if self._engine.holds(token):
            self._perform(self._engine.wake(token))


def session_engine(recordings: Recordings, options: ReplayOptions) -> Replay:
    """The engine of one live session of `recordings` (shared by every session of its cassette), replayed with
    `options`: its substitutions' values from this environment."""
    recorded = recordings.cassette
    engine = Replay(recorded, recordings.matcher, replay_redactor(recorded, options), options.timing, recordings)
    engine.report.timed(time.time)  # the plugin's page places its plays on the wall clock, among the model's
    return engine


def replay_redactor(recorded: Cassette, options: ReplayOptions) -> Redactor:
    """What replays `recorded` with `options`: its substitutions' values from this environment."""
    return Redactor.for_replay(
        recorded, os.environ, options.substitutions, recorded.path or "the cassette", "substitute="
    )


class _HostReads(ObjectReceiveStream[Any]):
    """The stream the host reads. Its reader is one task: before it gets a message the recording had apart from the
    one before, the tasks it started for that one (the SDK and fastmcp handle notifications in tasks of their own)
    run while any is ready, as the real server's pause would have let them; at most `_HOST_STEPS` steps of its loop."""

    def __init__(self, inner: MemoryObjectReceiveStream[tuple[bool, Any]]) -> None:
        self.inner = inner

    async def receive(self) -> Any:
        apart, item = await self.inner.receive()
        for _ in range(_HOST_STEPS if apart else 0):
            if not _others_ready():
                break
            await anyio.lowlevel.cancel_shielded_checkpoint()  # no cancel loses the message taken
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()


class _HostWrites(ObjectSendStream[Any]):
    """The stream the host writes to (the SDK's `WriteStream`): each message goes to the engine in the host's own
    task, so what the engine sends is in the host's read stream when `send` returns."""

    def __init__(self, transport: ReplayTransport) -> None:
        self.transport, self.closed = transport, False

    async def send(self, item: Any) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        self.transport._receive(item)
        # A cancellation point, as any send is; the host waits for the answer next, which lets its other tasks run.
        await anyio.lowlevel.checkpoint_if_cancelled()

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.close()


transport = ReplayTransport
"""`mockmcp.transport(cassette, ...)`: the public name of the class (see its `__init__`)."""
