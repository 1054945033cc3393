"""What a recorded message waits for before it goes, and what lets it go. Pure: no I/O, no clocks.

Theory of operation. Replay plays each interaction as a *job* (see `replay`). Three rules keep the
recorded order between jobs, and this object owns all three: what is held, and what releases it.

- **Unsolicited** server messages (interactions of kind `server`) go once the client interaction
  recorded just before them has played, or at start-up when nothing was recorded before them.
- A **listen event** (a notification of a 2026-07-28 `subscriptions/listen`) was caused by what the
  host did last before the server sent it (`timeline.listen_holds`): its job *parks* before it
  until that interaction has played, or only begun when it was still unanswered as the event came.
- A **reply overtaken** in the recording (a slow call's, answered after a faster call that came
  behind it: `timeline.overtakers`) is *held* until each of those has been answered or cancelled
  here too, or until the engine says time is up (it waits as long as the server took).

Jobs are named by keys the engine chooses (any hashable, unique for the engine's life);
interactions by their index in the cassette. The engine asks before a job goes on (`parks`, `hold`)
and tells what happened (an interaction began, played, was answered; a hold's time is up); what it
is told returns the keys of the jobs that may go on now, and the engine plays them on. A key handed
back may name a job that is gone (cancelled meanwhile): the engine skips it.
"""

from __future__ import annotations

from mockmcp.cassette.model import SERVER
from mockmcp.core.timeline import listen_holds, overtakers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable

    from mockmcp.cassette.model import Interaction

__all__ = ["GO", "HELD", "Ordering", "STILL_HELD"]

# What `Ordering.hold` says of a reply.
GO = "go"  # it may go
HELD = "held"  # it is held from now on: the engine starts the time it may wait
STILL_HELD = "still held"  # it was held already, and still is


class Ordering:
    """The holds of one live session; see the module's docstring."""

    def __init__(
        self,
        interactions: tuple[Interaction, ...],
        holds: dict[tuple[int, int], tuple[int, bool]],
        overtaken: dict[int, tuple[int, ...]],
    ) -> None:
        """`holds` and `overtaken` are `timeline`'s, computed once per cassette (`selection.Recordings`
        shares them between live sessions); `overtaken` is empty when the recorded times are replayed
        (`--timing`), which keep the order by themselves."""
        self._holds = holds
        self._overtaken = overtaken
        self._unsolicited: dict[int | None, list[int]] = {}
        anchor: int | None = None
        for i, interaction in enumerate(interactions):
            if interaction.kind == SERVER:
                self._unsolicited.setdefault(anchor, []).append(i)
            else:
                anchor = i
        self._begun: set[int] = set()  # interactions whose play has begun at least once
        self._played: set[int] = set()  # interactions played to the end at least once
        self._answered: set[int] = set()  # interactions answered (or cancelled) at least once
        # interaction -> the jobs parked until it has played (True) or begun (False)
        self._parked: dict[int, list[tuple[Hashable, bool]]] = {}
        self._held: dict[int, list[Hashable]] = {}  # interaction -> jobs whose reply waits for it to be answered
        self._holding: set[Hashable] = set()  # jobs whose reply is held
        self._released: set[Hashable] = set()  # jobs whose reply goes though it was held: time is up

    @classmethod
    def of(cls, interactions: tuple[Interaction, ...], timed: bool = False) -> Ordering:
        """The holds of a cassette's interactions; `timed`: the recorded times are replayed."""
        return cls(interactions, listen_holds(interactions), {} if timed else overtakers(interactions))

    # --- unsolicited messages ---------------------------------------------------------------------

    def unsolicited(self, anchor: int | None) -> list[int]:
        """The unsolicited interactions that go now that `anchor` has played (None: at start-up); each once."""
        return self._unsolicited.pop(anchor, [])

    # --- listen events ------------------------------------------------------------------------------

    def parks(self, key: Hashable, index: int, item: int) -> bool:
        """Whether job `key`, playing interactions[index], must wait before its server item `item`; if so it
        is parked until what the event waits for is ready (`begin`, `unpark` hand it back)."""
        hold = self._holds.get((index, item))
        if hold is None:
            return False
        anchor, to_the_end = hold
        if anchor in (self._played if to_the_end else self._begun):
            return False
        self._parked.setdefault(anchor, []).append((key, to_the_end))
        return True

    def begin(self, index: int) -> list[Hashable]:
        """interactions[index] begins to play: the jobs parked until it began (the first time only); those
        parked until it has played stay parked."""
        if index in self._begun:
            return []
        self._begun.add(index)
        parked = self._parked.pop(index, None)
        if not parked:
            return []
        waiting = [(key, to_the_end) for key, to_the_end in parked if to_the_end]
        if waiting:
            self._parked[index] = waiting
        return [key for key, to_the_end in parked if not to_the_end]

    def begun(self, index: int) -> None:
        """interactions[index] counts as begun, without releasing what waits for it (it plays on from
        another recording's step: what waits for it to begin goes when it has played)."""
        self._begun.add(index)

    def played(self, index: int) -> None:
        """interactions[index] has played to its end (what waits for that goes by `unsolicited`, `unpark`)."""
        self._played.add(index)

    def unpark(self, anchor: int) -> list[Hashable]:
        """interactions[anchor] has played (`played` said so): every job parked for it, in the order they parked."""
        return [key for key, _to_the_end in self._parked.pop(anchor, ())]

    # --- overtaken replies ----------------------------------------------------------------------------

    def hold(self, key: Hashable, index: int) -> str:
        """Whether the reply of job `key`, answering interactions[index], may go: `GO`, `HELD` (held from now
        on), or `STILL_HELD`. It waits for the later requests the recording answered before it."""
        if key in self._released:
            self._released.discard(key)
            return GO
        pending = self.waited(index)
        if not pending:
            self._holding.discard(key)
            return GO
        if key in self._holding:
            return STILL_HELD
        self._holding.add(key)
        for k in pending:
            self._held.setdefault(k, []).append(key)
        return HELD

    def waited(self, index: int) -> list[int]:
        """The interactions the reply to interactions[index] waits for: overtakers not answered yet."""
        overtaken = self._overtaken.get(index)
        return [k for k in overtaken if k not in self._answered] if overtaken else []

    def answered(self, index: int) -> list[Hashable]:
        """interactions[index] was answered or cancelled: the held replies that may go on (if nothing else
        holds them)."""
        self._answered.add(index)
        held = self._held.pop(index, None)
        return [key for key in held if key in self._holding] if held else []

    def held(self, key: Hashable) -> bool:
        """Whether job `key`'s reply is held."""
        return key in self._holding

    def release(self, key: Hashable) -> None:
        """Job `key`'s reply goes though what it waits for has not been answered (time is up, or the host
        can send nothing more)."""
        self._holding.discard(key)
        self._released.add(key)
