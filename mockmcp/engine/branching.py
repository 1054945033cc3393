"""The server's questions to the host: under which ids they await an answer (`Questions`), and which
recording replay follows when the host answers otherwise than recorded. No I/O.

A cassette may hold a recording per answer the host gave (`record --mode new`, run once per answer). When the
live host answers otherwise than the recording being played, replay goes on from the next step of one that
asked alike up to that question and whose host answered as the live one did, among the recorded sessions
still consistent with the live one (`selection` passes them); none: the answer is a mismatch.
"""

from __future__ import annotations

from mockmcp._wire import jsonrpc
from mockmcp.cassette.model import RAW, REQUEST
from mockmcp.engine.matching import answer_body, canonical

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable
    from typing import Any

    from mockmcp.cassette.model import Interaction, ServerItem

__all__ = ["Questions", "answered_otherwise", "asked_alike", "differences"]


def asked_alike(
    first: tuple[ServerItem, ...], second: tuple[ServerItem, ...], at: int, live: str | None = None
) -> bool:
    """Whether two recordings' server messages agree up to the server request at `at`, and the host's answers
    before it too (and with `live`, canonical JSON, the second's host answered it so). Notifications agree by
    method: a progress token differs between recordings."""
    if len(first) <= at or len(second) <= at:
        return False
    for n, (one, other) in enumerate(zip(first[: at + 1], second[: at + 1], strict=True)):
        if one.kind != other.kind:
            return False
        if one.kind == RAW:
            if one.message != other.message:
                return False
            continue
        if one.message.get("method") != other.message.get("method"):
            return False
        if one.kind == REQUEST and canonical(one.message.get("params")) != canonical(other.message.get("params")):
            return False
        if n < at and canonical(answer_body(one.response)) != canonical(answer_body(other.response)):
            return False
    return live is None or canonical(answer_body(second[at].response)) == live


def answered_otherwise(
    interactions: tuple[Interaction, ...], recordings: Iterable[int], index: int, at: int, live: str
) -> int | None:
    """Another of `recordings` (of interactions[index]'s request) that `asked_alike` it up to `at` and whose host
    answered `live` there; None when there is none."""
    played = interactions[index].server
    for other in recordings:
        if other != index and asked_alike(played, interactions[other].server, at, live):
            return other
    return None


def differences(recorded: Any, answered: Any) -> tuple[str, ...]:
    """How the host's answer differs from the recorded one (their bodies), in words, for the mismatch."""
    from mockmcp.engine.explain import describe_differences  # deferred: only a difference pays for deepdiff

    found = describe_differences(recorded, answered, "the host's", "the host's answer", root="answer")
    return tuple(text for _path, text in found)


class Questions:
    """The server requests awaiting the host's answer on one live session, by the id each went out under: its
    recorded one (id 0 is where falsy-id bugs live), unless that is in flight already or no valid id."""

    __slots__ = ("_awaiting", "_next")

    def __init__(self) -> None:
        self._awaiting: dict[Any, tuple[Any, ServerItem]] = {}  # our id -> (the job asking, what it asked)
        self._next = 1

    def ask(self, job: Hashable, item: ServerItem) -> Any:
        """The id the request `item` of job `job` goes out under; it awaits an answer from now on."""
        recorded = item.message.get("id")
        asked = recorded
        if not jsonrpc.is_valid_id(recorded) or recorded in self._awaiting:
            while self._next in self._awaiting:
                self._next += 1
            asked = self._next
            self._next += 1
        self._awaiting[asked] = (job, item)
        return asked

    def answered(self, asked: Any) -> tuple[Any, ServerItem] | None:
        """The host answered id `asked`: the job that asked and what (None: no request of ours has that id)."""
        return self._awaiting.pop(asked, None)

    def withdraw(self, asked: Any) -> None:
        """The job that asked is gone (the host cancelled its request): no answer is awaited."""
        self._awaiting.pop(asked, None)

    def abandon(self) -> list[tuple[Any, Any, ServerItem]]:
        """The host can answer nothing more: every request awaiting an answer, (id, job, item), in the order asked."""
        abandoned = [(asked, job, item) for asked, (job, item) in self._awaiting.items()]
        self._awaiting.clear()
        return abandoned
