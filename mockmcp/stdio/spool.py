"""Notes to a stream that may go unread (stderr to a pipe nobody reads), written by a thread of its own."""

from __future__ import annotations

import threading
import time
from collections import deque

__all__ = ["Spool"]


class Spool:
    """Lines written to `stream` by a thread of its own, in order, so that whoever says them never blocks (an HTTP
    server's loop would freeze on a stderr nobody reads). At most `limit` characters wait; the lines dropped past
    that are counted where they would have been. `flush` waits a while for the rest: a summary then comes last."""

    def __init__(self, stream: object, limit: int = 1 << 20) -> None:
        self.stream, self.limit = stream, limit
        self.waiting: deque[str | int] = deque()  # lines, and counts of lines dropped
        self.size = 0  # characters waiting
        self.busy = False  # the thread is writing what it took
        self.changed = threading.Condition()
        self.thread: threading.Thread | None = None

    def say(self, line: str) -> None:
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
