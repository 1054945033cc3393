"""The plumbing every stdio shell needs, with no call only some systems have: lines, signals, and pipes read and
written without ever blocking where a signal cannot reach.

A loop waits with `select` on its pipes and on the `Signals` descriptor, which a signal wakes from any thread
(CPython's wakeup descriptor). Where `select` takes only sockets (Windows), a thread reads (`Inlet`) or writes
(`Outlet`) each pipe and wakes that descriptor instead, and `Signals` is a socket pair. On the launch path.
"""

from __future__ import annotations

import heapq
import os
import select
import signal
import time
from collections.abc import Callable
from types import FrameType

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    import threading

__all__ = [
    "Inlet",
    "LONGEST_WAIT",
    "LineSplitter",
    "Outlet",
    "Signals",
    "Timers",
    "read_chunk",
    "selectable",
    "socketpair",
    "wait_readable",
    "write_all",
]

# The longest a loop waits at once (seconds): select takes no more than about 24 days, and a recorded
# pace (`--timing recorded` over `at` times) may ask for longer; waking early only waits again.
LONGEST_WAIT = 3600.0
_CHUNK = 1 << 16  # a read's most; and a threaded Outlet's most at once, so a slow reader's progress is seen
_YIELD: Callable[[], None] | None = getattr(os, "sched_yield", None)
_FILE_SIZE: int | None = getattr(signal, "SIGXFSZ", None)


def socketpair() -> tuple[socket.socket, socket.socket]:
    """Two connected non-blocking sockets, which `select` and `set_wakeup_fd` take on every system."""
    import socket  # where select takes pipes (POSIX) only a child's wait without a pidfd needs it

    ends = socket.socketpair()
    for end in ends:
        end.setblocking(False)
    return ends


def read_chunk(fd: int) -> bytes:
    """What fd has to read, up to a chunk; b"" at its end, and from a descriptor that cannot be read (as good as
    ended)."""
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""


def write_all(fd: int, data: bytes) -> None:
    """Write all of data to fd, however many writes it takes; raises OSError (e.g. BrokenPipeError)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def wait_readable(fds: list[int], timeout: float | None) -> list[int]:
    """Block until one of fds (sockets; on POSIX any descriptor) is readable, or timeout seconds pass."""
    ready, _w, _x = select.select(fds, [], [], None if timeout is None else max(0.0, timeout))
    return ready


class LineSplitter:
    """Cuts a byte stream into lines (without their newline) in linear time: an unfinished line's pieces are
    joined once, when its newline comes. With a `limit`, a longer line keeps only its first limit + 1 bytes, so
    memory stays bounded and the reader still sees that it was too long."""

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
        self._keep(lines.pop())
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


class Timers:
    """A replay shell's timers for the engine's `Wake`s: a heap of (deadline, sequence, job), first due first."""

    __slots__ = ("heap", "sequence")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, object]] = []
        self.sequence = 0

    def add(self, after: float, job: object) -> None:
        self.sequence += 1
        heapq.heappush(self.heap, (time.monotonic() + after, self.sequence, job))

    def wait(self) -> float | None:
        """Seconds to wait for the next (0: due now, at most `LONGEST_WAIT`); None without a timer."""
        return min(LONGEST_WAIT, max(0.0, self.heap[0][0] - time.monotonic())) if self.heap else None

    def due(self) -> list[object]:
        """The jobs due now, taken off the heap in order."""
        now, jobs = time.monotonic(), []
        while self.heap and self.heap[0][0] <= now:
            jobs.append(heapq.heappop(self.heap)[2])
        return jobs

    def keep(self, held: Callable[[object], bool]) -> None:
        """Drop the timers whose job is no longer `held`."""
        self.heap = [timer for timer in self.heap if held(timer[2])]
        heapq.heapify(self.heap)


class Signals:
    """Within `with Signals() as signals:`, SIGINT and SIGTERM set `signals.received` and wake `fileno()`; nothing
    is raised into the code that runs, so a reply being written is written whole. `relay` gets each signal number,
    in the main thread. SIGXFSZ is ignored, so a write past a file-size limit fails (EFBIG) as on a full disk.
    Outside the main thread no handler can be installed, and the block runs without them."""

    def __init__(self, relay: Callable[[int], None] | None = None) -> None:
        self.received: int | None = None
        self.count = 0  # how many came: a second one may cut short what the first began (a drain)
        self._relay = relay
        # The pair lives as long as this object, not just the `with` block: a thread may still wake it after.
        read, write = os.pipe()  # free on POSIX; where select cannot wait on it (Windows), a socket pair instead
        self._pipe: tuple[int, int] | None = (read, write) if selectable(read) else None
        if self._pipe is not None:
            os.set_blocking(read, False)  # set_wakeup_fd requires it; a full pipe must never block a handler
            os.set_blocking(write, False)
            self._send: Callable[[bytes], object] = lambda data: os.write(write, data)
            self._receive: Callable[[], bytes] = lambda: os.read(read, 4096)
        else:
            os.close(read)
            os.close(write)
            reader, writer = socketpair()  # kept alive by the two functions below
            read, write = reader.fileno(), writer.fileno()
            self._send = writer.send
            self._receive = lambda: reader.recv(4096)
        self._read, self._write = read, write
        self._previous: dict[int, signal._HANDLER] = {}
        self._previous_wakeup: int | None = None

    def fileno(self) -> int:
        """The descriptor that becomes readable when a signal comes or `wake()` is called."""
        return self._read

    def wake(self) -> None:
        """Wake whoever waits on `fileno()` (safe from any thread)."""
        try:
            self._send(b"\0")
        except OSError:
            pass  # already full of wake-ups, or closed: either way nothing is lost

    def drain(self) -> None:
        """Consume the pending wake-ups (the flag stays as it is)."""
        try:
            while self._receive():
                pass
        except OSError:
            pass

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.received = signum
        self.count += 1
        if self._relay is not None:
            self._relay(signum)

    def __enter__(self) -> Signals:
        try:
            self._previous_wakeup = signal.set_wakeup_fd(self._write)
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
            if _FILE_SIZE is not None:
                self._previous[_FILE_SIZE] = signal.signal(_FILE_SIZE, signal.SIG_IGN)
        except ValueError:  # not the main thread
            self._restore()
        return self

    def __exit__(self, *_exc_info: object) -> None:
        self._restore()

    def __del__(self) -> None:
        for fd in self._pipe or ():  # sockets close themselves
            os.close(fd)

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        if self._previous_wakeup is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            self._previous_wakeup = None


def selectable(fd: int, write: bool = False) -> bool:
    """Whether `select` can wait on fd here: any descriptor below FD_SETSIZE on POSIX, sockets only on Windows."""
    try:
        select.select([] if write else [fd], [fd] if write else [], [], 0)
    except (OSError, ValueError):
        return False
    return True


class Inlet:
    """Chunks read from fd, in order (b"" at EOF). Where `select` can wait on fd, the loop waits on `fds` too and
    `take(ready)` reads once when fd is ready. Elsewhere (`threaded`) a thread reads, wakes `wake` at each chunk,
    and stops reading past `limit` bytes waiting, so a writer that outpaces the loop blocks, as on a full pipe."""

    def __init__(self, fd: int, wake: Signals, threaded: bool | None = None, limit: int = 1 << 20) -> None:
        self.fd, self.wake, self.limit = fd, wake, limit
        self.fds = [] if (not selectable(fd) if threaded is None else threaded) else [fd]
        self.chunks: list[bytes] = []
        self.size = 0
        if not self.fds:
            import threading

            self.room = threading.Condition()
            threading.Thread(target=self._read, daemon=True, name=f"read {fd}").start()

    def _read(self) -> None:
        chunk = b"-"
        while chunk:
            chunk = read_chunk(self.fd)
            with self.room:
                while self.size > self.limit:
                    self.room.wait()
                self.chunks.append(chunk)
                self.size += len(chunk)
            self.wake.wake()  # at each chunk: a waiter may have drained the wake-up of one still waiting

    def take(self, ready: list[int]) -> list[bytes]:
        """The chunks read since the last take (`ready`: what `select` found ready)."""
        if self.fds:
            return [read_chunk(self.fd)] if self.fd in ready else []
        with self.room:
            chunks, self.chunks, self.size = self.chunks, [], 0
            self.room.notify()
        return chunks


class Outlet:
    """Writes to fd, each `put` whole however signals fall (the host never reads half a line), never blocking where
    a signal cannot reach: before a signal it waits as long as the reader takes; after one it gives up (`gave_up`)
    once the reader has taken no byte for `patience` seconds. A failed write keeps its error in `failed`. After
    either, nothing more is written.

    Where `select` can wait on fd (POSIX), the caller waits for room beside `signals` and writes at most PIPE_BUF
    bytes to a pipe or socket, which one with room takes without blocking. Elsewhere (`threaded`: Windows) a
    thread writes, and wakes `signals` when done. A put with `turn` first waits, at most `turn` seconds, until the
    reader has taken what came before (where the system can tell: `unread_counter`).
    """

    def __init__(
        self, fd: int, signals: Signals, patience: float, turn: float = 0.0, threaded: bool | None = None
    ) -> None:
        self.fd, self.signals, self.patience, self.turn = fd, signals, patience, turn
        self.threaded = not selectable(fd, write=True) if threaded is None else threaded
        self.piece = _CHUNK if self.threaded else _room_taken_whole(fd)
        self.progress = 0.0  # when the reader last took bytes, or was given some to take
        self.failed: OSError | None = None
        self.gave_up = False
        self.unread: Callable[[], int] | None = None
        self.job: memoryview | None = None  # threaded: what the thread is writing
        self.changed: threading.Condition | None = None  # threaded: guards job

    def put(self, data: bytes, turn: bool = False) -> bool:
        """Write all of data; False when it was not (or not all) written: see `failed` and `gave_up`."""
        if self.failed is None and not self.gave_up:
            if turn and self.turn:
                self._await_reader()
            self.progress = time.monotonic()
            (self._hand_over if self.threaded else self._write)(memoryview(data))
        return self.failed is None and not self.gave_up

    def close(self) -> None:
        """Close fd (the reader sees its end), unless a thread may still be writing to it."""
        if not self.gave_up:
            try:
                os.close(self.fd)
            except OSError:
                pass

    def _patience_left(self) -> float | None:
        """None before a signal; after one, the seconds until the reader is given up on (0: now)."""
        if self.signals.received is None:
            return None
        left = self.progress + self.patience - time.monotonic()
        self.gave_up = left <= 0
        return max(0.0, left)

    def _write(self, view: memoryview) -> None:
        while view:
            timeout = self._patience_left()
            if self.gave_up:
                return
            readable, writable, _x = select.select([self.signals.fileno()], [self.fd], [], timeout)
            if readable:
                self.signals.drain()  # the flag says it: the descriptor need not wake this wait again
            if writable:
                try:
                    view = view[os.write(self.fd, view[: self.piece]) :]
                except BlockingIOError:  # a descriptor the host made non-blocking, with less room than select said
                    continue
                except OSError as exc:
                    self.failed = exc
                    return
                self.progress = time.monotonic()

    def _hand_over(self, view: memoryview) -> None:
        if self.changed is None:
            import threading

            self.changed = threading.Condition()
            threading.Thread(target=self._writer, args=(self.changed,), daemon=True, name=f"write {self.fd}").start()
        with self.changed:
            self.job = view
            self.changed.notify()
        while self.job is not None:  # the writer clears it, then wakes `signals`
            timeout = self._patience_left()
            if self.gave_up:
                return  # the thread stays blocked in its write: nothing is written after it
            wait_readable([self.signals.fileno()], timeout)
            self.signals.drain()  # every waiter looks at its own state after a wake, so none is lost

    def _writer(self, changed: threading.Condition) -> None:
        while True:
            with changed:
                while self.job is None:
                    changed.wait()
                view = self.job
            try:
                while view:
                    view = view[os.write(self.fd, view[: self.piece]) :]
                    self.progress = time.monotonic()
            except OSError as exc:
                self.failed = exc
            with changed:
                self.job = None
            self.signals.wake()

    def _await_reader(self) -> None:
        if self.unread is None:
            self.unread = unread_counter(self.fd) or (lambda: 0)
        deadline = time.monotonic() + self.turn
        spins = 0
        while self.unread() > 0 and self.signals.received is None and time.monotonic() < deadline:
            spins += 1
            if spins < 20 and _YIELD is not None:
                _YIELD()  # the host, on this core or another, reads within microseconds
            else:
                time.sleep(0.0001)


def _room_taken_whole(fd: int) -> int:
    """The most a write to fd with room takes without blocking: PIPE_BUF for a pipe or a socket, else anything."""
    import stat

    mode = os.fstat(fd).st_mode
    return select.PIPE_BUF if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else 1 << 30


def unread_counter(fd: int) -> Callable[[], int] | None:
    """How many of the bytes written to fd its reader has not taken yet, for a pipe or a socket where the
    system can tell (Linux, macOS: an ioctl); None elsewhere (a file, a terminal, Windows), then no one waits."""
    try:
        import array
        import fcntl
        import stat
        import termios

        mode = os.fstat(fd).st_mode
        request = termios.FIONREAD if stat.S_ISFIFO(mode) else termios.TIOCOUTQ if stat.S_ISSOCK(mode) else None
    except (ImportError, AttributeError, OSError):
        return None
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
