"""The stdio shell around the replay engine: framing, timers, signals. All of replay's I/O is here.

One loop runs the engine: it waits with `select` on the `Signals` descriptor and stdin (where a thread reads
stdin instead, Windows, that thread wakes the descriptor: `toolkit.Inlet`), the next timer (`Wake`) as its
timeout. stdout carries only what the engine sends (`toolkit.Outlet`); notes go to stderr. A message that
follows a notification or a server request is written once the host has read what came before (at most
`TURN` seconds), and so is one the recording had apart from the one before it (`Send.turn`), so a host that
dispatches notifications a step after replies (the TypeScript SDK, fastmcp) sees a call's progress before its
result, as from the real server; replies after replies recorded together go in one write.

SIGINT or SIGTERM ends the session with 128 + its number once the line being written is written (unless the
host takes nothing for `PATIENCE` seconds); the caller then writes its report inside the same `Signals`
block, so no signal can stop that either.
"""

from __future__ import annotations

import sys
import time

from mockmcp._wire import jsonrpc
from mockmcp.engine.replay import Action, Exit, Note, Replay, Send, Wake
from mockmcp.stdio.toolkit import LONGEST_WAIT, Inlet, LineSplitter, Outlet, Signals, wait_readable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["PATIENCE", "serve"]

PATIENCE = 2.0
"""Seconds a host that stopped reading after a signal may keep replay from ending (without taking a byte)."""
TURN = 0.05
"""Seconds the next message waits for the host to read the one before it; a busy host then gets both at once."""


class _Shell:
    def __init__(self, engine: Replay, stdin: int, stdout: int, stderr: TextIO, signals: Signals) -> None:
        self.engine, self.stdin, self.stderr, self.signals = engine, stdin, stderr, signals
        self.outlet = Outlet(stdout, signals, PATIENCE, TURN)
        self.timers: list[tuple[float, int, int]] = []
        self.sequence = 0
        self.host_gone = False
        self.outbox: list[bytes] = []
        self.turns: list[int] = []  # the places in outbox after which the host gets a turn
        self.exit_status: int | None = None  # set when the cassette ends the session

    def perform(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, Send):
                if action.turn and self.outbox:  # the recording had it apart from what came before
                    self.turns.append(len(self.outbox))
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
        """Write what the engine sent: what follows a notification or a server request on its own (`Outlet`'s turn),
        replies after replies in one write."""
        start = 0
        for end in [*self.turns, len(self.outbox)]:
            if end > start and not self.host_gone and not self.outlet.put(b"".join(self.outbox[start:end]), start > 0):
                self.host_gone = True
                if self.outlet.gave_up:
                    note = f"the host took nothing for {PATIENCE:g}s after the signal; the rest was not sent"
                else:
                    note = "the host stopped reading; nothing more can be sent"
                print(f"mockmcp: {note}", file=self.stderr, flush=True)
            start = max(start, end)
        self.outbox.clear()  # only now: what was being written is written, or can never be
        self.turns.clear()

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
        inlet: Inlet | None = Inlet(self.stdin, self.signals)
        ready: list[int] = []
        splitter = LineSplitter(jsonrpc.MAX_LINE)
        while True:
            if self.signals.fileno() in ready:  # drained before looking: what wakes it from now on is seen next time
                self.signals.drain()
            if self.signals.received is not None:
                return  # whatever was being written is written whole (see `serve`)
            if inlet is not None:
                for chunk in inlet.take(ready):
                    if not chunk:
                        inlet = None
                        self.at_eof(splitter.rest())
                        break
                    for line in splitter.feed(chunk):
                        self.receive(line)
            self.fire_due_timers()
            self.flush()
            if self.exit_status is not None:
                self.end_session()
                return
            if inlet is None and (not self.timers or self.host_gone):
                self.perform(self.engine.close())
                self.flush()
                return
            # A write waits on the descriptor too, and drains it: a signal, or a chunk its wake-up announced, is
            # looked at again rather than waited for.
            if self.signals.received is None:
                fds = [self.signals.fileno(), *(inlet.fds if inlet is not None else ())]
                ready = wait_readable(fds, 0.0 if inlet is not None and inlet.chunks else self.timeout())

    def receive(self, line: bytes) -> None:
        if line.strip():
            self.perform(self.engine.receive(line))

    def at_eof(self, rest: bytes) -> None:
        """The host closed stdin: what waits for its messages goes at once (`Replay.close`: none can come any more),
        and a timer whose job is gone (the host cancelled the request behind a delay) is not waited for: it would
        answer nothing, and a host that closed stdin waits for the exit."""
        self.receive(rest)
        self.perform(self.engine.close())
        if self.timers:
            import heapq

            self.timers = [timer for timer in self.timers if self.engine.holds(timer[2])]
            heapq.heapify(self.timers)

    def end_session(self) -> None:
        """The cassette said to end the session here: the host sees stdout close, as when a server exits."""
        self.timers.clear()
        self.outlet.close()
        self.host_gone = True


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
        print("mockmcp: stopped by a signal; ending the session", file=stderr, flush=True)
        return 128 + signals.received
    return shell.exit_status or 0
