"""The stdio shell around the replay engine: framing, timers, signals. All of replay's I/O is here.

One thread, one poll loop: lines from stdin go to the engine as they arrive, timers the engine asks
for (`Wake`) are kept in a heap, and whatever the engine returns is carried out at once. stdout
carries only what the engine sends; notes go to stderr.

A message that follows a notification or a server request goes in a write of its own, once the
host has read what came before (at most `TURN` seconds; a pipe and a socket can tell, see
`toolkit.unread_counter`): so a host's event loop gets a turn between them, and a host that
dispatches notifications a step after replies (the TypeScript SDK does) sees a call's progress
before its result, as it does from the real server. Replies that follow a reply go in one write
with it (pipelined requests come in chunks): a host takes replies at once and in order.

SIGINT and SIGTERM are a flag and a descriptor the loop polls beside stdin (see `toolkit.Signals`):
a write already begun is finished, so the host never reads half a line, and then the session
ends with the status 128 + the signal number. More signals change nothing. Writes wait for room
in the pipe without blocking in a write (`toolkit.write_whole`), so after a signal a host that
has stopped reading holds replay for at most `PATIENCE` seconds; the caller then writes its
report (still within the `Signals` block it passes in, so no signal can stop that either).
"""

from __future__ import annotations

import os
import select
import sys
import time

from mockmcp._wire import jsonrpc
from mockmcp.engine.replay import Action, Exit, Note, Replay, Send, Wake
from mockmcp.stdio.toolkit import LONGEST_WAIT, LineSplitter, Signals, unread_counter, write_whole

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

__all__ = ["PATIENCE", "serve"]

_CHUNK = 1 << 16
PATIENCE = 2.0
"""Seconds a host that stopped reading after a signal may keep replay from ending (without taking a byte)."""
TURN = 0.05
"""Seconds the next message waits for the host to read the one before it; a busy host then gets both at once."""


class _Shell:
    def __init__(self, engine: Replay, stdin: int, stdout: int, stderr: TextIO, signals: Signals) -> None:
        self.engine, self.stdin, self.stdout, self.stderr = engine, stdin, stdout, stderr
        self.signals = signals
        self.timers: list[tuple[float, int, int]] = []
        self.sequence = 0
        self.host_gone = False
        self.outbox: list[bytes] = []
        self.turns: list[int] = []  # the places in outbox after which the host gets a turn
        self.exit_status: int | None = None  # set when the cassette ends the session
        self.unread: Callable[[], int] | None = None  # how much of what was written the host has not read

    def perform(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, Send):
                self.outbox.append(action.data)
                if not action.final:
                    self.turns.append(len(self.outbox))
            elif isinstance(action, Wake):
                import heapq  # deferred, like below: only a session with delays has timers

                self.sequence += 1
                heapq.heappush(self.timers, (time.monotonic() + action.after, self.sequence, action.job))
            elif isinstance(action, Note):
                print(action.text, file=self.stderr, flush=True)
            elif isinstance(action, Exit):
                self.exit_status = action.status
            # A Cut (`drop: cut`) sends nothing: every request shares stdout, which one answer may not break.

    def flush(self) -> None:
        """Write what the engine sent: what follows a notification or a server request once the host has read
        it, replies after replies in one write."""
        if not self.outbox:
            return
        whole = True
        try:
            if self.host_gone:
                return
            start = 0
            for end in [*self.turns, len(self.outbox)]:
                if end <= start:
                    continue
                if start:
                    self.await_reader()
                whole = write_whole(self.stdout, b"".join(self.outbox[start:end]), self.signals, PATIENCE)
                if not whole:
                    break
                start = end
        except (BrokenPipeError, ConnectionResetError):
            self.host_gone = True
            print("mockmcp: the host stopped reading; nothing more can be sent", file=self.stderr, flush=True)
        else:
            if not whole:
                self.host_gone = True
                print(
                    f"mockmcp: the host took nothing for {PATIENCE:g}s after the signal; the rest was not sent",
                    file=self.stderr,
                    flush=True,
                )
        finally:
            self.outbox.clear()  # only now: what was being written is written, or can never be
            self.turns.clear()

    def await_reader(self) -> None:
        """Until the host has read all that was written, at most `TURN` seconds (or a signal)."""
        if self.unread is None:
            self.unread = unread_counter(self.stdout) or (lambda: 0)
        deadline = time.monotonic() + TURN
        spins = 0
        while self.unread() > 0 and self.signals.received is None and time.monotonic() < deadline:
            spins += 1
            if spins < 20:
                os.sched_yield()  # the host, on this core or another, reads within microseconds
            else:
                time.sleep(0.0001)

    def fire_due_timers(self) -> None:
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            import heapq

            _deadline, _seq, job = heapq.heappop(self.timers)
            self.perform(self.engine.wake(job))

    def timeout(self) -> float | None:
        return None if not self.timers else min(LONGEST_WAIT, max(0.0, self.timers[0][0] - time.monotonic()))

    def run(self) -> None:
        self.perform(self.engine.start())
        self.flush()
        # poll, not epoll: epoll refuses regular files and /dev/null, which are fine stdins here.
        poller = select.poll()
        poller.register(self.stdin, select.POLLIN)
        poller.register(self.signals.fileno(), select.POLLIN)
        splitter = LineSplitter(jsonrpc.MAX_LINE)
        while True:
            # Checked before waiting too: a signal that came during a write woke (and was drained by) that write.
            if self.signals.received is not None:
                return  # whatever was being written was written whole
            timeout = self.timeout()
            ready = [fd for fd, _event in poller.poll(None if timeout is None else timeout * 1000)]
            if self.signals.received is not None:
                return
            if self.stdin in ready:
                chunk = os.read(self.stdin, _CHUNK)
                if not chunk:
                    break
                for line in splitter.feed(chunk):
                    self.receive(line)
            self.fire_due_timers()
            self.flush()
            if self.exit_status is not None:
                self.end_session()
                return
        self.receive(splitter.rest())
        self.drain()

    def receive(self, line: bytes) -> None:
        if line.strip():
            self.perform(self.engine.receive(line))

    def end_session(self) -> None:
        """The cassette said to end the session here: the host sees stdout close, as when a server exits."""
        self.timers.clear()
        try:
            os.close(self.stdout)
        except OSError:
            pass
        self.host_gone = True

    def drain(self) -> None:
        """After the host's EOF: send what is still due (delayed replies), then stop.

        A timer whose job is gone (the host cancelled the request behind a delay) is dropped rather
        than waited for: it would answer nothing, and a host that closed stdin waits for the exit. What
        waits for the host's messages goes at once (`Replay.close`): none can come any more.
        """
        self.perform(self.engine.close())
        self.flush()
        if self.timers:
            import heapq

            self.timers = [timer for timer in self.timers if self.engine.holds(timer[2])]
            heapq.heapify(self.timers)
        while self.timers and not self.host_gone:
            if self.signals.received is not None:
                return
            select.select([self.signals.fileno()], [], [], self.timeout() or 0.0)
            if self.signals.received is not None:
                return
            self.fire_due_timers()
            self.flush()
            if self.exit_status is not None:
                self.end_session()
                return
        self.perform(self.engine.close())
        self.flush()


def serve(
    engine: Replay, stdin: int = 0, stdout: int = 1, stderr: TextIO = sys.stderr, signals: Signals | None = None
) -> int:
    """Run one replay session over file descriptors until the host closes stdin, a signal stops it, or
    the cassette ends it.

    `signals`, an entered `Signals` block, lets the caller keep signals from stopping what it does
    after the session (writing a report); without it, serve holds one for the session only.
    Returns the exit status: the one the cassette asked for (0 when it asked none), or 128 + the
    signal number when SIGINT or SIGTERM ended the session.
    """
    if signals is None:
        with Signals() as own:
            return serve(engine, stdin, stdout, stderr, own)
    shell = _Shell(engine, stdin, stdout, stderr, signals)
    shell.run()
    if signals.received is not None:
        shell.flush()
        print("mockmcp: stopped by a signal; ending the session", file=stderr, flush=True)
        return 128 + signals.received
    return shell.exit_status or 0
