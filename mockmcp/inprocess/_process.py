"""The server process the MCP SDK's `stdio_client` gets instead of a real one, and the tap on a real one.

`Replayed` is an anyio `Process` with no process behind it: what the host writes to its stdin goes to the
replay engine in the host's own task; its stdout yields what the engine sends. Timers (`Wake`) are fired by
the reader of stdout (the SDK reads it all the time), so no task of ours outlives a session. `Tapped` wraps
the real process: each line, either way, is journaled (redacted) before it is passed on, as `mockmcp record`
journals, tagged with its session's number.
"""

from __future__ import annotations

import signal
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from mockmcp._wire import jsonrpc
from mockmcp.engine.replay import Action, Exit, Note, Replay, Send, Wake
from mockmcp.record import CLIENT, SERVER, Journal
from mockmcp.stdio.toolkit import LineSplitter, Timers

__all__ = ["NO_PID", "Replayed", "Tapped"]

NO_PID = 0x7FFF_FFFF
"""The `pid` of a replayed server: above any system's largest process id, so `os.kill`, `os.killpg` and
`os.getpgid` given it fail with ProcessLookupError; never 0 or -1, which name the caller's own group or all."""


class _Stdin(ByteSendStream):
    """A process's stdin as the SDK writes it: each call is its process's to carry out."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner

    async def send(self, item: bytes) -> None:
        await self.owner.put(item)

    async def send_eof(self) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.owner.close_in()


class _Stdout(ByteReceiveStream):
    """A process's stdout as the SDK reads it: each call is its process's to carry out."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self.owner.get(max_bytes)

    async def aclose(self) -> None:
        await self.owner.close_out()


class _Piped(Process):
    """What `Replayed` and `Tapped` share: stdin and stdout whose every call goes to `put`, `close_in`, `get`,
    `close_out`."""

    @property
    def stdin(self) -> ByteSendStream:
        return _Stdin(self)

    @property
    def stdout(self) -> ByteReceiveStream:
        return _Stdout(self)


class Replayed(_Piped):
    """One replay session as a server process; its notes, and its summary when it ends, go to `note`."""

    stderr = None
    pid = NO_PID
    returncode: int | None = None  # the exit status, once the session ended

    def __init__(self, engine: Replay, note: Callable[[str], None]) -> None:
        self.engine, self.note = engine, note
        self.outbox: deque[bytes] = deque()
        self.timers = Timers()
        self.splitter = LineSplitter(jsonrpc.MAX_LINE)
        self.eof = False  # stdin closed: the session ends once no timer is left
        self.stdout_closed = False
        self.changed = anyio.Event()
        self.perform(engine.start())

    async def put(self, data: bytes) -> None:
        if self.returncode is not None or self.eof:
            raise anyio.BrokenResourceError  # as a pipe to a server that exited
        for line in self.splitter.feed(data):
            self.receive(line)
        await anyio.lowlevel.checkpoint()

    async def get(self, max_bytes: int) -> bytes:
        while not self.outbox:
            if self.returncode is not None or self.stdout_closed:
                raise anyio.EndOfStream
            await self.step()
        return self.outbox.popleft()

    async def close_out(self) -> None:
        self.stdout_closed = True

    async def wait(self) -> int:
        while self.returncode is None:
            await self.step()
        return self.returncode

    def terminate(self) -> None:
        self.end(-signal.SIGTERM, "the host terminated the server")

    def kill(self) -> None:
        self.end(-signal.SIGKILL, "the host killed the server")

    def send_signal(self, signum: int) -> None:
        self.end(-signum, f"the host sent the server signal {signum}")

    async def aclose(self) -> None:
        await self.close_in()
        with anyio.move_on_after(2.0):
            await self.wait()
        if self.returncode is None:
            self.terminate()

    def receive(self, line: bytes) -> None:
        if line.strip() and self.returncode is None:
            self.perform(self.engine.receive(line))

    async def close_in(self) -> None:
        """As over stdio (`stdio.replay`): what waits for the host goes now, a timer whose job is gone is dropped."""
        if self.eof or self.returncode is not None:
            return
        self.eof = True
        self.receive(self.splitter.rest())
        self.perform(self.engine.close())
        self.timers.keep(self.engine.holds)
        self.settle()

    def perform(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, Send):
                self.outbox.append(action.data)
            elif isinstance(action, Wake):
                self.timers.add(action.after, action.job)
            elif isinstance(action, Note):
                self.note(action.text)
            elif isinstance(action, Exit):
                self.end(action.status, None)
            # A Cut (`drop: cut`) sends nothing: every request shares stdout, which one answer may not break.
        self.changed.set()

    def settle(self) -> None:
        """After stdin closed: the session ends when no timer is left to answer."""
        if self.eof and not self.timers.heap and self.returncode is None:
            self.end(0, None)

    def end(self, status: int, why: str | None) -> None:
        if self.returncode is not None:
            return
        if why is not None:
            self.note(f"mockmcp: {why}; ending the session")
        if not self.engine.ended:
            self.perform(self.engine.close())
        self.returncode, self.timers.heap = status, []
        self.changed.set()
        self.note(self.engine.report.summary())

    async def step(self) -> None:
        """Wait for something to change: output, the end, or the next timer (which is then fired)."""
        self.changed = anyio.Event()
        with anyio.move_on_after(self.timers.wait()):
            await self.changed.wait()
        for job in self.timers.due():
            if self.returncode is None:
                self.perform(self.engine.wake(job))
        self.settle()


class Tapped(_Piped):
    """A real server process whose stdin and stdout are journaled line by line, as recorded session `session`
    (times from `start`); `finish` ends the journaling (the SDK closed stdout, or the interception ended)."""

    def __init__(
        self,
        real: Process,
        journal: Journal,
        redact: Callable[[bytes], bytes],
        session: int,
        start: float,
        ended: Callable[[], None],
    ) -> None:
        self.real, self._journal, self.redact, self.session, self.start = real, journal, redact, session, start
        self.ended = ended
        self.client, self.server = LineSplitter(), LineSplitter()
        self.finished = False

    async def put(self, data: bytes) -> None:
        self.journal(CLIENT, self.client, data)
        await self.real.stdin.send(data)

    async def close_in(self) -> None:
        await self.real.stdin.aclose()

    async def get(self, max_bytes: int) -> bytes:
        try:
            data = await self.real.stdout.receive(max_bytes)
        except anyio.EndOfStream:
            self.finish()
            raise
        self.journal(SERVER, self.server, data)
        return data

    async def close_out(self) -> None:
        try:
            await self.real.stdout.aclose()
        finally:
            self.finish()  # the SDK closes stdout when the session is over: what it did not read is not

    def journal(self, direction: str, splitter: LineSplitter, data: bytes) -> None:
        lines = [self.redact(line) for line in splitter.feed(data) if line.strip()]
        if lines and not self.finished:
            self._journal.append(direction, time.monotonic() - self.start, lines, self.session)

    def finish(self) -> None:
        if not self.finished:
            self.journal(CLIENT, self.client, b"\n")  # a last line without its newline
            self.journal(SERVER, self.server, b"\n")
            self.finished = True
            self.ended()

    stderr = property(lambda self: self.real.stderr)
    pid = property(lambda self: self.real.pid)
    returncode = property(lambda self: self.real.returncode)
    _process = property(lambda self: getattr(self.real, "_process", None))  # the SDK (2.x) closes its transport

    async def wait(self) -> int:
        return await self.real.wait()

    def terminate(self) -> None:
        self.real.terminate()

    def kill(self) -> None:
        self.real.kill()

    def send_signal(self, signum: int) -> None:
        self.real.send_signal(signum)

    async def aclose(self) -> None:
        try:
            await self.real.aclose()
        finally:
            self.finish()
