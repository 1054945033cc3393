"""The stdio shell around the replay engine: framing, timers, signals. All of replay's I/O is here.

One loop waits with `select` on the `Signals` descriptor and stdin (where a thread reads stdin, Windows, that
thread wakes the descriptor: `toolkit.Inlet`), the next timer (`Wake`) as its timeout. stdout carries only what
the engine sends (`toolkit.Outlet`); notes go to stderr. A message after a notification or a server request, or
one the recording had apart (`Send.turn`), waits (at most `TURN` s) until the host has read what came before, so
a host that dispatches notifications a step after replies (the TypeScript SDK, fastmcp) sees a call's progress
before its result; replies after replies go in one write.

SIGINT or SIGTERM ends the session with 128 + its number once the line being written is written (unless the
host takes nothing for `PATIENCE` seconds).
"""

from __future__ import annotations

import sys

from mockmcp._wire import jsonrpc
from mockmcp.engine.replay import Action, Exit, Note, Replay, Send, Wake
from mockmcp.stdio.toolkit import Inlet, LineSplitter, Outlet, Signals, Timers, wait_readable

__all__ = ["PATIENCE", "serve"]

PATIENCE = 2.0  # seconds a host that stopped reading after a signal may keep replay from ending
TURN = 0.05  # seconds the next message waits for the host to read the one before; a busy host then gets both


class _Shell:
    def __init__(self, engine: Replay, signals: Signals) -> None:
        self.engine, self.signals = engine, signals
        self.outlet = Outlet(1, signals, PATIENCE, TURN)
        self.timers = Timers()
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
                self.timers.add(action.after, action.job)
            elif isinstance(action, Note):
                print(action.text, file=sys.stderr, flush=True)
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
                gave_up = f"the host took nothing for {PATIENCE:g}s after the signal; the rest was not sent"
                note = gave_up if self.outlet.gave_up else "the host stopped reading; nothing more can be sent"
                print(f"mockmcp: {note}", file=sys.stderr, flush=True)
            start = max(start, end)
        self.outbox.clear()  # only now: what was being written is written, or can never be
        self.turns.clear()

    def run(self) -> None:
        self.perform(self.engine.start())
        self.flush()
        inlet: Inlet | None = Inlet(0, self.signals)
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
                        if line.strip():
                            self.perform(self.engine.receive(line))
            for job in self.timers.due():
                self.perform(self.engine.wake(job))
            self.flush()
            if self.exit_status is not None:  # the cassette ends the session: the host sees stdout close
                self.outlet.close()
                return
            if inlet is None and (not self.timers.heap or self.host_gone):
                self.perform(self.engine.close())
                self.flush()
                return
            # A write waits on the descriptor too, and drains it: a signal, or a chunk its wake-up announced, is
            # looked at again rather than waited for.
            if self.signals.received is None:
                fds = [self.signals.fileno(), *(inlet.fds if inlet is not None else ())]
                ready = wait_readable(fds, 0.0 if inlet is not None and inlet.chunks else self.timers.wait())

    def at_eof(self, rest: bytes) -> None:
        """The host closed stdin: what waits for its messages goes at once (`Replay.close`: none can come any more),
        and a timer whose job is gone (the host cancelled the request behind a delay) is not waited for: it would
        answer nothing, and a host that closed stdin waits for the exit."""
        if rest.strip():
            self.perform(self.engine.receive(rest))
        self.perform(self.engine.close())
        self.timers.keep(self.engine.holds)


def serve(engine: Replay, signals: Signals) -> int:
    """Run one replay session over stdin and stdout until the host closes stdin, a signal stops it, or the cassette
    ends it, inside the caller's `signals` block (which goes on to keep signals from stopping its report).

    Returns the status the cassette asked for (0 when none), or 128 + the signal that ended the session.
    """
    shell = _Shell(engine, signals)
    shell.run()
    if signals.received is not None:
        print("mockmcp: stopped by a signal; ending the session", file=sys.stderr, flush=True)
        return 128 + signals.received
    return shell.exit_status or 0
