"""The recorder's shell: a transparent stdio proxy between a host and a real server.

Theory of operation. Two pump threads copy bytes as they arrive, host -> server and server ->
host, chunk by chunk and unchanged, so the host cannot tell the proxy is there. Each pump also
cuts its stream into lines and appends every line, redacted, to the journal (see `journal`). The
main thread only watches the lifecycle:

- the host closes stdin: close the server's stdin, wait `grace` seconds, then SIGTERM, then SIGKILL
  (a server that ignores EOF cannot hang the recorder); what the server sends meanwhile is recorded;
- the server exits or crashes: close our stdout so the host sees the end, and report its status;
- SIGINT or SIGTERM to the recorder: pass it on to the server, then end the same way.

After the server's stdout is drained, the caller builds the cassette from the journal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from mockmcp.cassette.journal import Journal
from mockmcp.core.redact import Redactor

__all__ = ["Outcome", "run_proxy"]

_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the session ended: the status to exit with and a sentence saying why."""

    status: int
    reason: str


class _Proxy:
    def __init__(self, command: list[str], journal: Journal, redactor: Redactor, grace: float) -> None:
        self.journal, self.redactor, self.grace = journal, redactor, grace
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.host_eof = threading.Event()
        self.server_done = threading.Event()
        self.signalled: int | None = None
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def record(self, direction: str, lines: list[bytes]) -> None:
        if self.redactor:
            lines = [self.redactor.line(line) for line in lines]
        with self.lock:
            self.journal.append(direction, time.monotonic() - self.start, lines)

    def pump(self, source: int, sink: int | None, direction: str) -> None:
        """Copy source to sink unchanged, recording each complete line; stop at EOF.

        A chunk's lines are journaled before the chunk is forwarded: the other side cannot answer a
        line it has not seen, so an answer is never journaled ahead of what it answers.
        """
        pending = b""
        while True:
            try:
                chunk = os.read(source, _CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            if lines:
                self.record(direction, lines)
            if sink is not None:
                sink = self._forward(sink, chunk)
        if pending:
            self.record(direction, [pending])

    def _forward(self, sink: int, chunk: bytes) -> int | None:
        view = memoryview(chunk)
        try:
            while view:
                view = view[os.write(sink, view) :]
        except OSError:  # the reader is gone: keep recording, stop forwarding
            return None
        return sink

    def host_to_server(self) -> None:
        assert self.process.stdin is not None
        self.pump(0, self.process.stdin.fileno(), "client")
        self.host_eof.set()
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def server_to_host(self) -> None:
        assert self.process.stdout is not None
        self.pump(self.process.stdout.fileno(), 1, "server")
        self.server_done.set()

    def on_signal(self, signum: int, _frame: Any) -> None:
        self.signalled = signum
        if self.process.poll() is None:
            self.process.send_signal(signum)

    def wait(self) -> Outcome:
        """Watch the lifecycle until the server is gone and its output drained."""
        deadline: float | None = None
        terminated = False
        while not (self.server_done.is_set() and self.process.poll() is not None):
            self.server_done.wait(0.02)
            if deadline is None and (self.host_eof.is_set() or self.signalled is not None):
                deadline = time.monotonic() + self.grace
            if deadline is not None and time.monotonic() >= deadline and self.process.poll() is None:
                # EOF (or the signal passed on) did not end the server: escalate, a grace period apart.
                if not terminated:
                    self.process.terminate()
                    terminated = True
                else:
                    self.process.kill()
                deadline = time.monotonic() + self.grace
            if self.process.poll() is not None and not self.server_done.is_set():
                # The server is gone but something (a grandchild) may hold its stdout open.
                self.server_done.wait(self.grace)
                break
        return self._outcome(terminated)

    def _outcome(self, terminated: bool) -> Outcome:
        code = self.process.wait()
        status = code if code >= 0 else 128 - code
        if self.signalled is not None:
            return Outcome(
                128 + self.signalled, f"stopped by signal {self.signalled}; the server exited with status {status}"
            )
        if terminated:
            return Outcome(
                0, f"the server did not exit within {self.grace:g}s of the host closing stdin, and was stopped"
            )
        failed = " (it failed or crashed)" if status else ""
        if self.host_eof.is_set():
            return Outcome(status, f"the host closed stdin; the server exited with status {status}{failed}")
        return Outcome(status, f"the server exited with status {status}{failed}")


def run_proxy(command: list[str], journal: Journal, redactor: Redactor, grace: float = 2.0) -> Outcome:
    """Proxy one stdio session between our stdin/stdout and `command`, journaling every line."""
    try:
        proxy = _Proxy(command, journal, redactor, grace)
    except OSError as exc:
        from mockmcp.errors import UsageError

        raise UsageError(
            f"cannot start the server {command[0]!r}: {exc.strerror or exc}", "check the command after `--`"
        ) from None
    previous = {sig: signal.signal(sig, proxy.on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        threading.Thread(target=proxy.host_to_server, daemon=True, name="host->server").start()
        reader = threading.Thread(target=proxy.server_to_host, daemon=True, name="server->host")
        reader.start()
        outcome = proxy.wait()
        reader.join(proxy.grace)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    # Close our stdout so the host sees the end of the session even before we exit.
    sys.stdout.flush()
    try:
        os.close(1)
    except OSError:
        pass
    return outcome
