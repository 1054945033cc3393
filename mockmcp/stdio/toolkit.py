"""The shells' toolkit: the pipe, line, signal and child-process plumbing every shell needs, written once.

- `write_all(fd, data)`: a pipe takes a large write in pieces; loop until all of it is written.
- `write_whole(fd, data, signals, patience)`: the same for a writer that a signal must be able to
  end: it never blocks inside a write, so once a signal has come it can stop waiting on a reader
  that makes no progress (see "Theory of operation for signals").
- `LineSplitter`: cuts a byte stream into lines in time linear in its length, however the chunks
  fall. The pieces of an unfinished line are kept in a list and joined once, when its newline
  comes (re-joining `pending + chunk` at every chunk copies a long line again and again).
- `Signals`: SIGINT and SIGTERM become a flag and a readable file descriptor for the span of a
  `with` block. Nothing is raised into the code that happens to run: a reply being written is
  written whole, and the poll loop sees the descriptor become readable and ends the session.
  SIGXFSZ is ignored there too (CPython ignores it from the start; said again here so that no
  embedding can undo it): a write past a file-size limit then fails with EFBIG, an error the
  shells handle like a full disk, instead of killing the process.
- `Spool`: lines for a stream that may go unread (stderr to a pipe nobody reads): a thread of its own
  writes them, so a server's loop never blocks on a note; what waits is bounded, the rest counted.
- `wait_exit` / `stop_child`: wait for a child without polling it on a clock (a pidfd on Linux, a
  waiting thread elsewhere), and end it ever more firmly: EOF on its stdin, SIGTERM, SIGKILL.

Theory of operation for signals. CPython's C-level handler only notes the signal; the Python
handler runs later, in the main thread, between two bytecodes. A main thread blocked in `poll()`
would not notice a signal delivered to another thread (the recorder's pumps), so the C handler is
also given a wakeup descriptor (`signal.set_wakeup_fd`): it writes a byte there at once, from any
thread, and every wait in the shells watches that descriptor. The Python handler then records the
signal number (and, for the recorder, passes the signal on to the server). Other threads may
wake the same descriptor with `Signals.wake()`, so one `poll()` serves for "a signal came" and
"a thread has news".

Why `write_whole` exists. A blocking write to a full pipe cannot be left by a signal: CPython runs
the handler and restarts the write (PEP 475), and a handler that raised instead would lose how much
was written, so the reader would get half a line. So that writer first polls the descriptor for
room, beside the signal descriptor, and writes at most PIPE_BUF bytes to a pipe or socket, which a
pipe with room takes without blocking. Until a signal comes it waits as long as the reader takes;
after one, the line being written is still finished, unless the reader makes no progress for
`patience` seconds (a host that stopped reading would otherwise hold the process forever).

Start-up matters for replay: this module imports only `os`, `select` and `signal` at the top;
threads and subprocesses are imported inside the functions that need them, and typing not at all.
"""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable
from types import FrameType, TracebackType

__all__ = [
    "Ended",
    "LONGEST_WAIT",
    "LineSplitter",
    "Signals",
    "Spool",
    "stop_child",
    "wait_exit",
    "wait_readable",
    "write_all",
    "write_whole",
]

# The longest a poll loop waits at once (seconds): poll and select take no more than about 24 days, and a
# recorded pace (`--timing recorded` over `at` times) may ask for longer; waking early only waits again.
LONGEST_WAIT = 3600.0

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Literal

    Ended = Literal["exited", "terminated", "killed"]
    """How `stop_child` ended a child: on its own (at EOF), by SIGTERM, or by SIGKILL."""
else:

    def __getattr__(name: str) -> object:
        # mockmcp uses `Ended` only in annotations, and building it imports typing, milliseconds of
        # every replay's start-up: so it is built only for whoever asks for it.
        if name == "Ended":
            from typing import Literal

            return Literal["exited", "terminated", "killed"]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_FILE_SIZE: int | None = getattr(signal, "SIGXFSZ", None)


def write_all(fd: int, data: bytes) -> None:
    """Write all of data to fd, however many writes it takes; raises OSError (e.g. BrokenPipeError)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_whole(fd: int, data: bytes, signals: Signals, patience: float) -> bool:
    """Write all of data to fd, waiting for room without blocking in a write; a signal does not stop it.

    Returns False, with part of data unwritten, only when after a signal the reader took no byte for
    `patience` seconds. Raises OSError (e.g. BrokenPipeError) as `write_all` does.
    """
    import stat

    mode = os.fstat(fd).st_mode
    piece = select.PIPE_BUF if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    poller.register(signals.fileno(), select.POLLIN)
    view = memoryview(data)
    while view:
        waiting = signals.received is not None
        ready = [ready_fd for ready_fd, _event in poller.poll(patience * 1000 if waiting else None)]
        if signals.fileno() in ready:
            signals.drain()  # the flag says it: the descriptor need not wake this loop again
        if fd in ready:
            try:
                view = view[os.write(fd, view if piece is None else view[:piece]) :]
            except BlockingIOError:  # a descriptor the host made non-blocking, with less room than polled
                continue
        elif waiting and not ready:
            return False
    return True


def unread_counter(fd: int) -> Callable[[], int] | None:
    """A function that tells how many of the bytes written to fd its reader has not taken yet, for a pipe or
    a socket (a host that spawned us over a socketpair, as Node does); None for anything else (a file, a
    terminal), which cannot tell."""
    import array
    import fcntl
    import stat
    import termios

    mode = os.fstat(fd).st_mode
    request = termios.FIONREAD if stat.S_ISFIFO(mode) else termios.TIOCOUTQ if stat.S_ISSOCK(mode) else None
    if request is None:
        return None
    count = array.array("i", [0])

    def unread() -> int:
        try:
            fcntl.ioctl(fd, request, count)
        except OSError:
            return 0
        return count[0]

    return unread


class LineSplitter:
    """Cuts a byte stream into lines (without their newline), in time linear in the stream's length.

    With a `limit`, a line longer than that is kept only as its first limit + 1 bytes, so memory
    stays bounded and the reader still sees that it was too long.
    """

    __slots__ = ("_limit", "_parts", "_size")

    def __init__(self, limit: int | None = None) -> None:
        self._parts: list[bytes] = []  # the unfinished line, in the pieces it came in
        self._size = 0  # their length
        self._limit = limit

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines this chunk completes, in order (empty lines included)."""
        if b"\n" not in chunk:
            self._keep(chunk)
            return []
        lines = chunk.split(b"\n")
        if self._parts:
            self._keep(lines[0])
            lines[0] = self.rest()
        tail = lines.pop()
        self._keep(tail)
        if self._limit is not None:
            lines = [line[: self._limit + 1] for line in lines]
        return lines

    def unfinished(self) -> bool:
        """Whether part of a line has come without its newline yet."""
        return bool(self._parts)

    def _keep(self, piece: bytes) -> None:
        if not piece or (self._limit is not None and self._size > self._limit):
            return  # nothing, or past the limit: the first limit + 1 bytes are kept already
        self._parts.append(piece)
        self._size += len(piece)

    def rest(self) -> bytes:
        """At EOF: the last line when the stream did not end with a newline (b"" when it did); empties the splitter."""
        line = b"".join(self._parts)
        self._parts, self._size = [], 0
        return line if self._limit is None else line[: self._limit + 1]


class Signals:
    """Within `with Signals() as signals:`, SIGINT and SIGTERM set `signals.received` and wake `fileno()`.

    `relay` is called with each signal number, in the main thread (the recorder passes signals on
    to its server). More signals only set the flag again: a writer that must be able to give up
    on a reader uses `write_whole`. On exit the previous handlers and wakeup descriptor are put
    back. Outside the main thread no handler can be installed: the block then runs without them.
    """

    def __init__(self, relay: Callable[[int], None] | None = None) -> None:
        self.received: int | None = None
        self.count = 0  # how many came: a second one may cut short what the first began (a drain)
        self._relay = relay
        # The pipe lives as long as this object, not just the `with` block: a thread may still call
        # wake() after the block, and a descriptor closed under it could meanwhile name another file.
        self._read, self._write = os.pipe()
        for fd in (self._read, self._write):
            os.set_blocking(fd, False)  # set_wakeup_fd requires it; a full pipe must never block a handler
        self._previous: dict[int, signal._HANDLER] = {}
        self._previous_wakeup: int | None = None

    def fileno(self) -> int:
        """The descriptor that becomes readable when a signal comes or `wake()` is called."""
        return self._read

    def wake(self) -> None:
        """Wake whoever waits on `fileno()` (safe from any thread)."""
        try:
            os.write(self._write, b"\0")
        except (BlockingIOError, OSError):
            pass  # already full of wake-ups, or closed: either way nothing is lost

    def drain(self) -> None:
        """Consume the pending wake-ups (the flag stays as it is)."""
        try:
            while os.read(self._read, 4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.received = signum
        self.count += 1
        if self._relay is not None:
            self._relay(signum)

    def __enter__(self) -> Signals:
        try:
            self._previous_wakeup = signal.set_wakeup_fd(self._write)
            for sig in _STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
            if _FILE_SIZE is not None:
                self._previous[_FILE_SIZE] = signal.signal(_FILE_SIZE, signal.SIG_IGN)
        except ValueError:  # not the main thread
            self._restore()
        return self

    def __exit__(
        self, _type: type[BaseException] | None, _value: BaseException | None, _traceback: TracebackType | None
    ) -> None:
        self._restore()

    def __del__(self) -> None:
        os.close(self._read)
        os.close(self._write)

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        if self._previous_wakeup is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            self._previous_wakeup = None


def wait_readable(fds: list[int], timeout: float | None) -> list[int]:
    """Block until one of fds is readable (or at EOF or hung up), or timeout seconds pass; returns the ready ones."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _event in poller.poll(None if timeout is None else max(0.0, timeout) * 1000)]


def wait_exit(process: subprocess.Popen[bytes], timeout: float | None, wake: Signals | None = None) -> bool:
    """Wait until the child exits (True), timeout seconds pass or `wake` is woken (False); reaps it when it exited.

    A woken `wake` is drained, so a caller checks its own flags and calls again.
    """
    if process.poll() is not None:
        return True
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    exit_fd = _exit_fd(process)
    if process.returncode is not None:  # reaped meanwhile (a signal handler may poll): the fd may name another pid
        os.close(exit_fd)
        return True
    try:
        fds = [exit_fd] if wake is None else [exit_fd, wake.fileno()]
        ready = wait_readable(fds, None if deadline is None else deadline - time.monotonic())
        if wake is not None and wake.fileno() in ready:
            wake.drain()
    finally:
        os.close(exit_fd)
    return process.poll() is not None


def _exit_fd(process: subprocess.Popen[bytes]) -> int:
    """A descriptor that becomes readable when the child exits: its pidfd, or a pipe a waiting thread closes."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd: int = pidfd_open(process.pid)
            return fd
        except OSError:  # an old kernel, or the child was reaped meanwhile: the thread below copes with both
            pass
    import threading

    read, write = os.pipe()

    def waiter() -> None:
        process.wait()
        os.close(write)  # the reader sees EOF: readable

    threading.Thread(target=waiter, daemon=True, name=f"wait {process.pid}").start()
    return read


def stop_child(
    process: subprocess.Popen[bytes], grace: float, close_stdin: bool = True, wake: Signals | None = None
) -> Ended:
    """End a child ever more firmly, a grace period apart: close its stdin, then SIGTERM, then SIGKILL.

    Without close_stdin the first step is skipped (the caller has closed stdin or sent a signal
    already, and the grace period starts now). `wake` is watched while waiting, so signals are
    handled at once. Returns how the child ended; it is reaped.
    """
    import time

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


class Spool:
    """Lines written to `stream` by a thread of its own, in order, so that whoever says them never blocks (an
    HTTP server's loop, serving every session, would freeze on a note to a stderr nobody reads). At most
    `limit` characters wait; a line past that is dropped, and the lines dropped in a row are counted where
    they would have been. `flush` waits (a while) for what waits to be written: before a summary, so it comes
    last."""

    def __init__(self, stream: object, limit: int = 1 << 20) -> None:
        import collections
        import threading

        self.stream, self.limit = stream, limit
        self.waiting: collections.deque[str | int] = collections.deque()  # lines, and counts of lines dropped
        self.size = 0  # characters waiting
        self.busy = False  # the thread is writing what it took
        self.changed = threading.Condition()
        self.thread: threading.Thread | None = None

    def say(self, line: str) -> None:
        import threading

        with self.changed:
            if self.size + len(line) <= self.limit:
                self.waiting.append(line)
                self.size += len(line)
            elif self.waiting and isinstance(self.waiting[-1], int):
                self.waiting[-1] += 1
            else:
                self.waiting.append(1)
            if self.thread is None:
                self.thread = threading.Thread(target=self._write, daemon=True, name="mockmcp notes")
                self.thread.start()
            self.changed.notify_all()

    def flush(self, patience: float = 5.0) -> None:
        import time

        deadline = time.monotonic() + patience
        with self.changed:
            while (self.waiting or self.busy) and self.changed.wait(max(0.0, deadline - time.monotonic())):
                pass

    def _write(self) -> None:
        while True:
            with self.changed:
                while not self.waiting:
                    self.changed.wait()
                item = self.waiting.popleft()
                if isinstance(item, str):
                    self.size -= len(item)
                self.busy = True
            line = item if isinstance(item, str) else f"mockmcp: {item} note(s) dropped here: stderr was not being read"
            try:
                self.stream.write(line + "\n")  # type: ignore[attr-defined]
                self.stream.flush()  # type: ignore[attr-defined]
            except (OSError, ValueError):
                pass  # stderr is gone: nothing more to say there
            with self.changed:
                self.busy = False
                self.changed.notify_all()
