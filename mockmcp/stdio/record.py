"""The recorder's shell: a transparent stdio proxy between a host and a real server.

Two pump threads copy bytes as they come, host -> server and server -> host, unchanged, and journal every line,
redacted (see `journal`); a third passes the server's stderr through, keeping its last lines to quote. The main
thread waits on descriptors (the server's exit, and the `Signals` descriptor, which signals and pumps wake) and
ends the session:

- the host closes stdin: close the server's stdin and save the cassette at once (`snapshot`: the host's shutdown
  may kill us next, the SDK's two seconds after); once no request of the host's is in flight (a host may
  half-close stdin and still read its answers) and `grace` seconds have passed, SIGTERM, then SIGKILL a grace
  period later; a line the server is in the middle of sending goes first (`busy`);
- the server exits: forward what it wrote until its stdout ends (a grandchild may hold it: `grace` more), close
  our stdout, report its status; the journal keeps what it left unanswered (`Journal.ended`);
- SIGINT or SIGTERM to the recorder: pass it on to the server, then end the same way.

A journal that cannot be written never stops the pumps (forwarding is the host's lifeline), and a pump that fails
says its side has ended, so the main thread never waits for an EOF that will not come.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, NamedTuple

from mockmcp._wire.jsonrpc import is_valid_id
from mockmcp.engine.redact import Redactor
from mockmcp.errors import CassetteError, UsageError
from mockmcp.record import Journal, awaited, snapshot
from mockmcp.stdio.processes import stop_child, wait_exit
from mockmcp.stdio.toolkit import LineSplitter, Signals, read_chunk, write_all

__all__ = ["Outcome", "run_proxy"]

_TAIL_BYTES = 4096  # how much of the server's stderr is kept to quote (its last lines)
_TAIL_LINES = 10


class Outcome(NamedTuple):
    """How the session ended: the status to exit with, a sentence saying why, and the last lines the
    server wrote to stderr (for a recording that failed)."""

    status: int
    reason: str
    stderr: tuple[str, ...] = ()

    def why(self) -> str:
        """The reason, with the server's last words on stderr when it said any."""
        if not self.stderr:
            return self.reason
        return self.reason + "; its stderr ended with:" + "".join(f"\n  | {line}" for line in self.stderr)


class _Awaited:
    """After the host's EOF: its requests the server has yet to answer, and since when nothing was left to finish."""

    __slots__ = ("answered", "in_flight", "quiet_since", "watching")

    def __init__(self) -> None:
        self.watching = False  # the host's EOF came: the server's lines are read for the requests they answer
        self.in_flight: set[Any] = set()  # its requests the server has yet to answer
        self.answered: set[Any] = set()  # the ids the server answered since then
        # The host's EOF, or the last answer after it (the server's own messages, a log line every second, say, do
        # not put off its end).
        self.quiet_since = 0.0


class _Tail:
    """The server's stderr passed through to ours as it comes, its last bytes kept to quote; read to its end even
    when ours is gone, so the server never blocks on it."""

    def __init__(self) -> None:
        self.kept = b""
        self.done = threading.Event()

    def pump(self, source: int) -> None:
        sink: int | None = 2
        while chunk := read_chunk(source):
            self.kept = (self.kept + chunk)[-_TAIL_BYTES:]
            if sink is not None:
                try:
                    write_all(sink, chunk)
                except OSError:
                    sink = None
        self.done.set()

    def last_lines(self, grace: float) -> tuple[str, ...]:
        """The last lines (waiting a grace period for a grandchild holding the stream)."""
        self.done.wait(grace)
        lines = self.kept.decode("utf-8", "replace").splitlines()
        return tuple(line[:200] for line in lines[-_TAIL_LINES:] if line.strip())


class _Proxy:
    def __init__(self, command: list[str], journal: Journal, redactor: Redactor, grace: float) -> None:
        self.journal, self.redactor, self.grace = journal, redactor, grace
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.host_eof = threading.Event()
        self.server_done = threading.Event()
        self.awaited = _Awaited()
        self.midline_at: float | None = None  # when the server last sent part of a line, not yet its newline
        self.forwarding = False  # a chunk of the server's is being written to the host
        self.signals = Signals(relay=self.pass_on)
        self.stderr = _Tail()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
        )

    def record(self, direction: str, lines: list[bytes]) -> None:
        if self.redactor:
            lines = [self.redactor.line(line) for line in lines]
        with self.lock:
            self.journal.append(direction, time.monotonic() - self.start, lines)

    def pump(self, source: int, sink: int | None, direction: str) -> None:
        """Copy source to sink unchanged, recording each complete line, until EOF. A chunk's lines are journaled
        before it is forwarded: an answer is never journaled ahead of what it answers."""
        splitter = LineSplitter()
        server = direction == "server"
        while chunk := read_chunk(source):
            lines = splitter.feed(chunk)
            if server:
                self.midline_at = time.monotonic() if splitter.unfinished() else None
            if lines:
                self.record(direction, lines)
                if server and self.awaited.watching:
                    self._answered(lines)
            if sink is not None:
                self.forwarding = server  # a slow host is no idle server: see `busy`
                try:
                    write_all(sink, chunk)
                except OSError:  # the reader is gone: keep recording, stop forwarding
                    sink = None
                self.forwarding = False
        if rest := splitter.rest():
            self.record(direction, [rest])

    def _answered(self, lines: list[bytes]) -> None:
        """After the host's EOF: the requests in flight that these server lines answer; the main thread is woken
        when none is left (its grace period starts then). Only then is a line read for what it answers: the
        requests in flight at the EOF come from the journal, once (see `host_to_server`)."""
        ids = []
        for line in lines:
            try:  # as journaled: the ids there are the redacted lines'
                parsed = json.loads(self.redactor.line(line) if self.redactor else line)
            except ValueError:
                continue
            for message in parsed if isinstance(parsed, list) else [parsed]:
                if isinstance(message, dict) and "method" not in message and is_valid_id(message.get("id")):
                    ids.append(message["id"])
        if not ids:
            return
        with self.lock:
            self.awaited.answered.update(ids)
            self.awaited.in_flight.difference_update(ids)
            self.awaited.quiet_since = time.monotonic()
            if not self.awaited.in_flight and self.host_eof.is_set():
                self.signals.wake()  # the grace period may start now

    def host_to_server(self) -> None:
        assert self.process.stdin is not None
        try:
            self.pump(0, self.process.stdin.fileno(), "client")
        finally:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
            self.awaited.quiet_since = time.monotonic()
            # The requests in flight now, as the recorder's own core reads the journal (cancelled ones and a
            # 2026-07-28 listen left out); the answers journaled from here on are read as they come.
            self.awaited.watching = True
            try:
                waiting = awaited(self.journal.path)
            except (OSError, CassetteError):  # a journal that could not be written: the grace starts at the EOF
                waiting = set()
            with self.lock:
                self.awaited.in_flight = waiting - self.awaited.answered
            self.host_eof.set()  # the server has its EOF: its grace period starts once they are answered
            self.signals.wake()

    def server_to_host(self) -> None:
        assert self.process.stdout is not None
        try:
            self.pump(self.process.stdout.fileno(), 1, "server")
        finally:
            self.server_done.set()

    def busy(self) -> bool:
        """Whether the server is in the middle of a line: a chunk of it is being written to the host (which may
        read slowly; the server waits on it then), or part of it came within the last grace period."""
        return self.forwarding or (self.midline_at is not None and time.monotonic() - self.midline_at < self.grace)

    def _overdue(self, since: float) -> bool:
        return time.monotonic() - since >= self.grace and not self.busy()

    def _until(self, since: float) -> float:
        """How long to wait before looking again whether a grace period from `since` is over."""
        return self.grace if self.busy() else max(0.0, since + self.grace - time.monotonic())

    def pass_on(self, signum: int) -> None:
        if self.process.poll() is None:
            try:
                self.process.send_signal(signum)
            except ValueError:  # Windows sends a child SIGTERM only (as TerminateProcess)
                self.process.terminate()

    def wait(self) -> Outcome:
        """Watch the lifecycle until the server is gone and its output drained."""
        ended, saved = "exited", False
        while not wait_exit(self.process, self._patience(), self.signals):
            if self.host_eof.is_set() and not saved:  # the host has left: save as the journal stands (again at the end)
                saved = True
                try:
                    snapshot(self.journal)
                except (OSError, CassetteError) as error:  # the end tries again, and says why it could not
                    print(f"mockmcp: the recording could not be saved yet: {error}", file=sys.stderr, flush=True)
            if self.signals.received is not None:  # the signal passed on should end it: escalate, a grace apart
                ended = stop_child(self.process, self.grace, close_stdin=False, wake=self.signals)
                break
            if self.host_eof.is_set() and not self.awaited.in_flight and self._overdue(self.awaited.quiet_since):
                self.process.terminate()  # the host's EOF should have ended it: escalate, a grace period apart
                ended = stop_child(self.process, self.grace, close_stdin=False, wake=self.signals)
                ended = "killed" if ended == "killed" else "terminated"
                break
        # Whether it went first: decided now, before the host (which sees its stdout close) closes stdin too.
        exited_first = ended == "exited" and not self.host_eof.is_set() and self.signals.received is None
        # The server is gone; a grandchild may still hold its stdout open: the drain gets a grace period.
        gone = time.monotonic()
        while not self.server_done.wait(self._until(gone)):
            if self._overdue(gone):
                break
        outcome = self._outcome(ended != "exited")
        if exited_first:  # after what it sent: the requests in flight now were never answered
            with self.lock:
                self.journal.ended(outcome.status)
        return outcome._replace(stderr=self.stderr.last_lines(self.grace))

    def _patience(self) -> float | None:
        """How long to wait for the server's exit before looking again: after the host's EOF, until its grace ends."""
        if not self.host_eof.is_set() or self.awaited.in_flight:
            return None  # the host's EOF wakes the wait (see `host_to_server`), and so does the last answer
        return self._until(self.awaited.quiet_since)

    def _outcome(self, terminated: bool) -> Outcome:
        code = self.process.wait()
        status = code if code >= 0 else 128 - code
        signalled = self.signals.received
        if signalled is not None:
            return Outcome(128 + signalled, f"stopped by signal {signalled}; the server exited with status {status}")
        if terminated:
            stopped = f"the server did not exit within {self.grace:g}s of the host closing stdin, and was stopped"
            return Outcome(0, stopped)
        failed = " (it failed or crashed)" if status else ""
        if self.host_eof.is_set():
            return Outcome(status, f"the host closed stdin; the server exited with status {status}{failed}")
        return Outcome(status, f"the server exited with status {status}{failed}")


def run_proxy(command: list[str], journal: Journal, redactor: Redactor, grace: float = 2.0) -> Outcome:
    """Proxy one stdio session between our stdin/stdout and `command`, journaling every line."""
    try:
        proxy = _Proxy(command, journal, redactor, grace)
    except OSError as exc:
        raise UsageError(
            f"cannot start the server {command[0]!r}: {exc.strerror or exc}", "check the command after `--`"
        ) from None
    with proxy.signals:
        threading.Thread(target=proxy.host_to_server, daemon=True, name="host->server").start()
        assert proxy.process.stderr is not None
        threading.Thread(target=proxy.stderr.pump, args=(proxy.process.stderr.fileno(),), daemon=True).start()
        threading.Thread(target=proxy.server_to_host, daemon=True, name="server->host").start()
        outcome = proxy.wait()
    # Close our stdout so the host sees the end of the session even before we exit.
    sys.stdout.flush()
    with contextlib.suppress(OSError):
        os.close(1)
    return outcome
