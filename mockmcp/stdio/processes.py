"""The shells' dealings with other processes, on every system: waiting for a child and ending it (the recorder's
server, verify's live server), and locking a file against other processes (a journal, a cassette folder).

A wait watches descriptors, never a clock, beside the caller's `Signals` (so a signal is handled at once): a
pidfd where Linux has one, else a socket that a thread closes once `wait()` returns (`select` takes only
sockets on Windows).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Literal

from mockmcp.stdio.toolkit import Signals, socketpair, wait_readable

__all__ = ["Ended", "lock_file", "stop_child", "wait_exit"]

Ended = Literal["exited", "terminated", "killed"]  # how `stop_child` ended a child: at EOF, by SIGTERM, by SIGKILL


def wait_exit(process: subprocess.Popen[bytes], timeout: float | None, wake: Signals | None = None) -> bool:
    """Wait until the child exits (True; reaped), timeout seconds pass or `wake` is woken (False; `wake` drained,
    so a caller checks its own flags and calls again)."""
    if process.poll() is not None:
        return True
    exit_fd, close = _exit_watch(process)
    try:
        if process.returncode is not None:  # reaped meanwhile (a signal handler may poll): a pidfd may name another
            return True
        fds = [exit_fd] if wake is None else [exit_fd, wake.fileno()]
        ready = wait_readable(fds, timeout)
        if wake is not None and wake.fileno() in ready:
            wake.drain()
    finally:
        close()
    return process.poll() is not None


def _exit_watch(process: subprocess.Popen[bytes]) -> tuple[int, Callable[[], None]]:
    """A descriptor that becomes readable when the child exits, and how to close it."""
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
        write.close()  # the reader sees its end: readable

    threading.Thread(target=waiter, daemon=True, name=f"wait {process.pid}").start()
    return read.fileno(), read.close


def stop_child(
    process: subprocess.Popen[bytes], grace: float, close_stdin: bool = True, wake: Signals | None = None
) -> Ended:
    """End a child ever more firmly, a grace period apart: close its stdin (unless the caller did, or sent a signal:
    `close_stdin` False), then SIGTERM, then SIGKILL, watching `wake`. Returns how the child ended; it is reaped."""
    if close_stdin and process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
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


def lock_file(fd: int, shared: bool = False, wait: bool = True) -> bool:
    """Lock the file open at fd against other processes until fd is closed; False when another holds it (without
    `wait`). flock where the system has it; on Windows a lock on one byte far past the data (a lock there stops
    reads of what it covers); where neither exists, none (True)."""
    try:
        import fcntl
    except ImportError:
        fcntl = None  # type: ignore[assignment]
    if fcntl is not None:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True
    try:
        import msvcrt  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return True
    at = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, 1 << 40, os.SEEK_SET)  # locking takes the bytes from the position
    try:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
                return True
            except OSError:  # LK_LOCK gives up after 10 tries a second apart: a waiter tries again
                if not wait:
                    return False
    finally:
        os.lseek(fd, at, os.SEEK_SET)
