"""An SSE byte stream cut into its events as the recording proxy reads it, however the chunks fall. Pure.

Lines may end in CRLF, LF or CR, and each chunk is scanned once. An event longer than `limit` bytes comes out as
its size (an int) with the id of an `id:` line in its first `limit` bytes: it holds at most `limit` and a chunk.
A legacy HTTP+SSE server's `endpoint` event (where its client POSTs) is no message: it is kept in `announced`.
"""

from __future__ import annotations

import re

from mockmcp.options import BOUNDS

__all__ = ["SseEvents"]


class SseEvents:
    """Cuts an SSE byte stream into its events; notes whether they had ids, and whether the first was priming."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = BOUNDS.kept_bytes if limit is None else limit
        self._pending = bytearray()
        self._after_cr = False  # the last chunk ended in CR: an LF starting this one ends no further line
        self._skipped: int | None = None  # bytes dropped of the event being read, once past the limit
        self._skipped_id: str | None = None  # the id of that event, when it came before the limit was passed
        self.ids = False
        self.primed: bool | None = None  # None until the first event is whole
        self.count = 0  # events with data
        self.announced: list[str] = []  # the data of `endpoint` events not yet taken: URLs to POST messages to
        self.legacy = False  # an `endpoint` event came: a legacy HTTP+SSE session's stream

    def events(self, chunk: bytes) -> list[tuple[str | None, bytes | int]]:
        """The id (or None) and data (or the size of one over the limit) of every event with data this completes."""
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        start = max(0, len(self._pending) - 1)  # a blank line may begin in what came before
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self._pending += chunk
        out: list[tuple[str | None, bytes | int]] = []
        while b"\n" in chunk and (end := self._pending.find(b"\n\n", start)) >= 0:
            if self._skipped is not None:
                out.append(self._seen(self._skipped_id, True, self._skipped + end))
                self._skipped = None
            else:
                out.extend(self._event(bytes(self._pending[:end])))
            del self._pending[: end + 2]
            start = 0
        if self._skipped is None and len(self._pending) - self._pending.endswith(b"\n") > self.limit:
            self._skipped, self._skipped_id = 0, _early_id(self._pending, self.limit)
        if self._skipped is not None:  # only the last byte is kept: a blank line may begin with it
            self._skipped += len(self._pending) - 1
            del self._pending[:-1]
        return out

    def between(self) -> bool:
        """Whether no event is being read: the next chunk begins one."""
        return self._skipped is None and not self._pending

    def held(self) -> int:
        """The bytes it holds: of the event being read, at most the limit and a chunk."""
        return len(self._pending)

    def skipping(self) -> int | None:
        """The bytes so far of an event over the limit being read, if one is."""
        return None if self._skipped is None else self._skipped + len(self._pending)

    def _event(self, event: bytes) -> list[tuple[str | None, bytes | int]]:
        if len(event) > self.limit:
            return [self._seen(_early_id(event, self.limit), True, len(event))]
        lines = event.split(b"\n")
        data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
        if b"event: endpoint" in lines or b"event:endpoint" in lines:
            self.announced.append(b"".join(data).decode("utf-8", "replace"))
            self.legacy = True
            return []
        ids = [line[3:].removeprefix(b" ") for line in lines if line.startswith(b"id:")]
        event_id = ids[-1].decode("utf-8", "replace") if ids else None
        if not any(data):
            self._seen(event_id, False, 0)
            return []
        return [self._seen(event_id, True, b"\n".join(data))]

    def _seen(self, event_id: str | None, data: bool, kept: bytes | int) -> tuple[str | None, bytes | int]:
        """Note an event's id and whether it had data; what `events` gives of it."""
        self.ids = self.ids or event_id is not None
        if self.primed is None:
            self.primed = event_id is not None and not data
        self.count += data
        return event_id, kept


_ID_LINE = re.compile(rb"^id: ?([^\n]*)\n", re.MULTILINE)


def _early_id(event: bytes | bytearray, limit: int) -> str | None:
    """The id of an SSE event over the limit: the last `id:` line that ends within its first `limit` bytes."""
    with memoryview(event) as view, view[:limit] as early:  # read where it is, not copied
        ids = _ID_LINE.findall(early)
    return ids[-1].decode("utf-8", "replace") if ids else None
