"""Waiting for a child process and ending it, on every system: the recorder's server, verify's live server.

A wait watches descriptors, never a clock: a pidfd where Linux has one, else a socket that a thread closes
once `wait()` returns (sockets, because `select` takes nothing else on Windows), beside the caller's
`Signals`, so a signal is handled at once.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from typing import Literal

from mockmcp.shells.toolkit import Signals, socketpair, wait_readable

__all__ = ["Ended", "stop_child", "wait_exit"]

Ended = Literal["exited", "terminated", "killed"]
"""How `stop_child` ended a child: on its own (at EOF), by SIGTERM, or by SIGKILL."""


def wait_exit(process: subprocess.Popen[bytes], timeout: float | None, wake: Signals | None = None) -> bool:
    """Wait until the child exits (True), timeout seconds pass or `wake` is woken (False); reaps it when it exited.

    A woken `wake` is drained, so a caller checks its own flags and calls again.
    """
    if process.poll() is not None:
        return True
    deadline = None if timeout is None else time.monotonic() + timeout
    exit_fd, close = _exit_watch(process)
    try:
        if process.returncode is not None:  # reaped meanwhile (a signal handler may poll): a pidfd may name another
            return True
        fds = [exit_fd] if wake is None else [exit_fd, wake.fileno()]
        ready = wait_readable(fds, None if deadline is None else deadline - time.monotonic())
        if wake is not None and wake.fileno() in ready:
            wake.drain()
    finally:
        close()
    return process.poll() is not None


def _exit_watch(process: subprocess.Popen[bytes]) -> tuple[int, Callable[[], None]]:
    """A descriptor that becomes readable when the child exits, and how to close it."""
    import os

    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd: int = pidfd_open(process.pid)
            return fd, lambda: os.close(fd)
        except OSError:  # an old kernel, or the child was reaped meanwhile: the thread below copes with both
            pass
    read, write = socketpair()

    def waiter() -> None:
        process.wait()
        write.close()  # type: ignore[attr-defined]  # the reader sees its end: readable

    threading.Thread(target=waiter, daemon=True, name=f"wait {process.pid}").start()
    return read.fileno(), read.close  # type: ignore[attr-defined]


def stop_child(
    process: subprocess.Popen[bytes], grace: float, close_stdin: bool = True, wake: Signals | None = None
) -> Ended:
    """End a child ever more firmly, a grace period apart: close its stdin, then SIGTERM, then SIGKILL.

    Without close_stdin the first step is skipped (the caller has closed stdin or sent a signal
    already, and the grace period starts now). `wake` is watched while waiting, so signals are
    handled at once. Returns how the child ended; it is reaped.
    """
    if close_stdin and process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass
    steps: tuple[tuple[Ended, Callable[[], None] | None], ...] = (
        ("exited", None),
        ("terminated", process.terminate),
        ("killed", process.kill),
    )
    for ended, escalate in steps:
        if escalate is not None and process.poll() is None:
            escalate()
        deadline = time.monotonic() + grace
        while not wait_exit(process, deadline - time.monotonic(), wake):
            if time.monotonic() >= deadline:
                break
        else:
            return ended
    process.wait()  # SIGKILL cannot be refused
    return "killed"
