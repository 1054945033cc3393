"""What a recorded message waits for before it goes, and what lets it go. Pure: no I/O, no clocks.

A server message was sent after the client messages recorded before it in its session (`timeline.Causes`),
so it goes only once the live host has sent their like: events *arrive* (`arrive`: a matched interaction by
index, a host's answer `(interaction, item)`, `("cancel", index)`, `("played", index)`), and each recorded
session's *frontier* counts how many of its events, in recorded order, have all come. A message that needs
more is `HELD` for at most as long as its server took after what caused it in its job (`gap`: from the request,
or the host's latest answer to it, on the recorded clock), then `give_up` lets it go and what the host skipped
counts as come; or `BLOCKED` for ever, when its server could not have sent it without the event (`hard`: a
late answer needs the cancel, a listen event its cause). Jobs are keys the engine chooses; a key handed back
may name a job that is gone.

What a job waits for is indexed (the frontier it needs, per session, in a heap; each hard event it lacks), so
an arrival looks only at the jobs it may let go: its cost does not grow with how many jobs wait.
"""

from __future__ import annotations

from heapq import heappop, heappush

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable
    from typing import Any

    from mockmcp.cassette.model import Interaction
    from mockmcp.engine.timeline import Causes

__all__ = ["BLOCKED", "GO", "HELD", "Ordering"]

# What `Ordering.check` says of a message.
GO = "go"  # it may go
HELD = "held"  # it waits for client messages, at most `gap` seconds (the engine wakes it, then `give_up`)
BLOCKED = "blocked"  # it waits for a client message the server could not have sent it without


class Ordering:
    """What one live session's jobs wait for; see the module's docstring."""

    def __init__(self, causes: Causes) -> None:
        """`causes`: computed once per cassette; the state here holds only what this live session did."""
        self.causes = causes
        self._started: set[int | None] = set()  # the anchors whose unsolicited interactions have started
        self._frontier: dict[int, int] = {}  # session -> how many of its client events have come
        self._come: dict[int, set[int]] = {}  # session -> places beyond the frontier that have come
        self._arrived: set[Hashable] = set()  # events that truly came (hard needs look here)
        self.waiting: dict[Hashable, tuple[int, int, tuple[Hashable, ...]]] = {}  # job -> (session, needs, hard)
        self._latest: dict[int, int] = {}  # session -> the place of the latest of its events that came
        self._excused: dict[Hashable, int] = {}  # job -> how many events its next message goes without
        self._order: dict[Hashable, int] = {}  # waiting job -> when it began to wait (jobs go in that order)
        self._serial = 0  # counts the waits and the heap's entries
        self._due: dict[int, list[tuple[int, int, Hashable]]] = {}  # session -> heap of (needs, serial, job)
        self._on_event: dict[Hashable, list[Hashable]] = {}  # hard event not come -> the jobs that wait for it
        self._stirred: set[Hashable] = set()  # jobs whose wait something changed since the last `_ready`

    def unsolicited(self, anchor: int | None) -> list[int]:
        """The unsolicited interactions that start now that `anchor` has played (None: at start-up); each once."""
        if anchor in self._started:
            return []
        self._started.add(anchor)
        return list(self.causes.unsolicited.get(anchor, ()))

    def check(self, key: Hashable, index: int, step: int, session: int) -> str:
        """Whether job `key`'s next message, step `step` of interactions[index] (of recorded `session`), may go:
        `GO`, `HELD` or `BLOCKED`; a job told to wait is handed back by `arrive` (or `give_up`) once it may."""
        message = (index, step)
        needs = self.causes.needs.get(message, 0)
        hard = self.causes.hard.get(message, ())
        if not self._soft(key, session, needs) and self._arrived.issuperset(hard):  # it may go (`_may_go`)
            self.waiting.pop(key, None)
            self._order.pop(key, None)
            self._excused.pop(key, None)
            return GO
        self._serial += 1
        self._order.setdefault(key, self._serial)
        self.waiting[key] = (session, needs, hard)
        for event in hard:
            if event not in self._arrived:
                self._on_event.setdefault(event, []).append(key)
        if self._soft(key, session, needs):
            heappush(self._due.setdefault(session, []), (needs, self._serial, key))
            return HELD
        return BLOCKED

    def goes(self, index: int, step: int, session: int) -> bool:
        """Whether a new job's next message, step `step` of interactions[index], may go now (`check`: GO)."""
        message = (index, step)
        return self._may_go(None, session, self.causes.needs.get(message, 0), self.causes.hard.get(message, ()))

    def gap(self, index: int, step: int) -> float:
        """How long the recorded server took to send that message after what caused it (`timeline.Causes.gaps`)."""
        return self.causes.gaps.get((index, step), 0.0)

    def missing(self, key: Hashable) -> list[Hashable]:
        """The client events job `key` waits for that have not come (the soft ones: recorded events)."""
        found = self.waiting.get(key)
        if found is None:
            return []
        session, needs, _hard = found
        come = self._come.get(session, set())
        events = self.causes.events[session]
        return [events[p] for p in range(self._frontier.get(session, 0), needs) if p not in come]

    def overdue(self, key: Hashable, index: int, step: int, interactions: tuple[Interaction, ...]) -> str | None:
        """The note for job `key` going on after the `gap` without what it waited for (None: nothing is missing)."""
        missing = self.missing(key)
        if not missing:
            return None
        what = ", ".join(_event(event, interactions) for event in missing[:3]) + (", ..." if len(missing) > 3 else "")
        return (
            f"mockmcp: interactions[{index}] goes on after the {self.gap(index, step):g}s its server took: "
            f"the recording's host had sent {what} first, which this host has not (yet)"
        )

    def unsent(self, index: int, answer: bool) -> str:
        """Why interactions[index]'s `answer` (else the rest of its server's messages) was never sent, the
        session over while it waited for what its server could not have sent it without."""
        what = "its answer" if answer else "the rest of what its server sent"
        if index in self.causes.cancels:
            return (
                f"interactions[{index}]: {what} was not sent: the recorded server sent it only after the host "
                "cancelled the request, and this host never did"
            )
        return (
            f"interactions[{index}]: {what} was not sent: the recorded server sent it only after what the host did "
            "before it, which this host never did"
        )

    def arrive(self, event: Hashable) -> list[Any]:
        """A client event came (or an interaction played: `("played", index)`): the jobs that may go on now."""
        self._arrived.add(event)
        self._stirred.update(self._on_event.pop(event, ()))
        found = self.causes.position.get(event)
        if found is not None:
            self._advance(*found)
        return self._ready() if self._stirred else []

    def joined(self, session: int, before: float | None) -> list[Any]:
        """The live session goes on in another recorded session, at a message recorded at `before`: what that
        session's host sent before it counts as come (the live host sent its like)."""
        times = self.causes.times.get(session)
        if not times or before is None:
            return []
        for place, at in enumerate(times):
            if at >= before:
                break
            self._advance(session, place)
        return self._ready()

    def give_up(self, key: Hashable) -> list[Any]:
        """Job `key` waited as long as the server took: its message goes (unless a hard need blocks it), and what
        the host skipped (recorded before the latest event that came) counts as come. The jobs that may go now."""
        found = self.waiting.get(key)
        if found is None:
            return []
        session, needs, _hard = found
        self._excused[key] = needs
        self._stirred.add(key)
        for place in range(self._frontier.get(session, 0), min(needs, self._latest.get(session, -1))):
            self._advance(session, place)
        return self._ready()

    def _advance(self, session: int, place: int) -> None:
        if place > self._latest.get(session, -1):
            self._latest[session] = place
        frontier = self._frontier.get(session, 0)
        if place < frontier:
            return
        come = self._come.setdefault(session, set())
        come.add(place)
        while frontier in come:
            come.discard(frontier)
            frontier += 1
        self._frontier[session] = frontier
        due = self._due.get(session)
        while due and due[0][0] <= frontier:
            self._stirred.add(heappop(due)[2])

    def _soft(self, key: Hashable, session: int, needs: int) -> bool:
        """Whether the job still waits for recorded client events (neither come nor excused by `give_up`)."""
        return needs > self._frontier.get(session, 0) and needs > self._excused.get(key, 0)

    def _may_go(self, key: Hashable, session: int, needs: int, hard: tuple[Hashable, ...]) -> bool:
        return not self._soft(key, session, needs) and self._arrived.issuperset(hard)

    def _ready(self) -> list[Any]:
        """The jobs stirred since the last call that may go now, in the order they began to wait."""
        if not self._stirred:
            return []
        stirred, self._stirred = self._stirred, set()
        waiting = self.waiting
        ready = [key for key in stirred if key in waiting and self._may_go(key, *waiting[key])]
        ready.sort(key=self._order.__getitem__)
        for key in ready:
            del waiting[key]
            del self._order[key]
        return ready


def _event(event: Any, interactions: tuple[Interaction, ...]) -> str:
    """A recorded client event, for people: `interactions[3] (tools/call)`, or a host's answer."""
    if isinstance(event, tuple):
        index, item = event
        method = interactions[index].server[item].message["method"]
        return f"its answer to {method} of interactions[{index}]"
    return f"interactions[{event}] ({interactions[event].method})"
