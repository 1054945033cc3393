"""What a replay did: interactions played, repeated, missed, left unplayed, answers that differed, server
requests withheld. Pure data with two renderings: a summary for stderr, and JSON for tools (`--report`).
"""

from __future__ import annotations

import collections

from mockmcp._wire.namedtuple import NamedTuple
from mockmcp.cassette.model import CUT, SERVER, Cassette
from mockmcp.engine.consistency import named

TYPE_CHECKING = False
if TYPE_CHECKING:  # explain imports deepdiff lazily, but keep it off the start-up path entirely
    from collections.abc import Callable
    from typing import Any

    from mockmcp.engine.explain import Miss

__all__ = ["KEPT_CALLS", "KEPT_MISSES", "Mismatch", "REPORT_VERSION", "Report", "Times", "Withheld"]

# A contract with tools in any language (docs/report.md): within a version keys are only ever added.
REPORT_VERSION = 1
# A host that retries a miss for minutes must not grow the report without end: the rest are only counted.
KEPT_MISSES = 100
KEPT_CALLS = 10000  # the host's requests a report keeps (`mockmcp.calls`): a session stays bounded


class Mismatch(NamedTuple):
    """The host answered a replayed server-to-client request differently from the recording, or (with a `head`)
    the live session left every recorded session, so a request was answered from a guess."""

    interaction: int | None
    method: str
    differences: tuple[str, ...]
    head: str = ""

    def render(self) -> str:
        where = f"{self.method} (from interactions[{self.interaction}])"
        head = self.head or f"the host answered {where} differently from the recording"
        return "\n".join([f"mockmcp: {head}:", *(f"  - {d}" for d in self.differences)])

    def to_json(self) -> dict[str, Any]:
        facts = {"interaction": self.interaction, "method": self.method, "differences": list(self.differences)}
        return {**facts, "explanation": self.render()}


class Withheld(NamedTuple):
    """A recorded server-to-client request not sent: the live host did not declare the capability it needs."""

    interaction: int
    method: str
    capability: str
    instead: str = "replay goes on as recorded"  # what the host got instead

    def render(self) -> str:
        return (
            f"mockmcp: withheld {self.method} (from interactions[{self.interaction}]): the host did not declare "
            f"the {self.capability} capability, which the recording's host did; {self.instead}"
        )

    def to_json(self) -> dict[str, Any]:
        facts = {"interaction": self.interaction, "method": self.method, "capability": self.capability}
        return {**facts, "explanation": self.render()}


class Times:
    """A session on the wall clock its shell gives (the engine reads no clock): when it started, in seconds since
    the epoch, and when each interaction was first played, in seconds after that."""

    __slots__ = ("clock", "first", "started")

    def __init__(self, clock: Callable[[], float], started: float) -> None:
        self.clock, self.started = clock, started
        self.first: dict[int, float] = {}

    def merge(self, others: list[Times]) -> None:
        """The first plays of other sessions, on this one's clock: each interaction's earliest."""
        for other in others:
            for index, at in other.first.items():
                at += other.started - self.started
                self.first[index] = min(at, self.first.get(index, at))


class Report:
    """Counts and findings of one replay session, filled in by the engine as it goes."""

    __slots__ = ("capabilities", "cassette", "faults", "left", "mismatches", "missed", "misses", "plays", "repeats")
    __slots__ += ("calls", "reordered", "sessions", "unanswered", "withheld", "times")

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        # Times each interaction was played, only what was played: a live session costs the same on any cassette.
        self.plays: collections.Counter[int] = collections.Counter()
        self.repeats: collections.Counter[int] = collections.Counter()  # interaction -> times asked beyond them
        self.misses: list[Miss] = []  # the first KEPT_MISSES of them
        self.missed = 0  # all of them
        self.mismatches: list[Mismatch] = []
        self.withheld: list[Withheld] = []
        # How the live host's declared capabilities differ from the recording's host's (noted, not a failure).
        self.capabilities: list[str] = []
        self.unanswered: list[str] = []
        # Answers that went on without what the recording's host had sent first (a stateful server's answer, given
        # to requests in another order): noted. Not a strict failure: a live session that moved to another
        # recorded session (branching) has that session's earlier events not come by construction.
        self.reordered: list[str] = []
        self.faults: list[str] = []  # fault knobs that took effect (dropped replies, an ended session)
        self.sessions: set[int] = set()  # recorded sessions the live session used (set by the engine)
        # Interactions not expected to play: the rest of a recorded session the live one left, and the part of
        # the one it joined before where it joined.
        self.left: set[int] = set()
        self.calls: list[tuple[str, Any]] = []  # the host's requests, in order (method, params): the first KEPT_CALLS
        self.times: Times | None = None  # when the shell gives a clock (`timed`)

    def timed(self, clock: Callable[[], float], started: float | None = None) -> None:
        """Note the session's start (now, or `started`) and each interaction's first play by `clock` (wall clock)."""
        self.times = Times(clock, clock() if started is None else started)

    def play(self, index: int) -> None:
        """interactions[index] is played (once more); its first play's time noted when the session is timed."""
        self.plays[index] += 1
        times = self.times
        if times is not None and index not in times.first:
            times.first[index] = times.clock() - times.started

    def unplay(self, index: int) -> None:
        """A play of interactions[index] counted is taken back (the session went on from another recording)."""
        self.plays[index] -= 1
        if not self.plays[index] and self.times is not None:  # it was never played after all
            self.times.first.pop(index, None)

    def called(self, method: str, params: Any) -> None:
        """The host asked this request (the first KEPT_CALLS are kept, for `mockmcp.calls`)."""
        if len(self.calls) < KEPT_CALLS:
            self.calls.append((method, params))

    @classmethod
    def combine(cls, cassette: Cassette, reports: list[Report]) -> Report:
        """One report for several live sessions of one cassette (HTTP): what any of them played counts; of what
        they say (misses, mismatches, faults...), the first KEPT_MISSES of each kind."""
        total = cls(cassette)
        for report in reports:
            total.plays.update(report.plays)
            total.repeats.update(report.repeats)
            total.misses += report.misses[: KEPT_MISSES - len(total.misses)]
            total.missed += report.missed
            # Each list kept to KEPT_MISSES entries too: a server folding many sessions' reports must stay bounded.
            for name in ("mismatches", "withheld", "unanswered", "faults", "reordered"):
                kept, more = getattr(total, name), getattr(report, name)
                kept += more[: KEPT_MISSES - len(kept)]
            total.capabilities += [text for text in report.capabilities if text not in total.capabilities]
            total.calls += report.calls[: KEPT_CALLS - len(total.calls)]
            total.sessions |= report.sessions
            total.left |= report.left
        timed = [report.times for report in reports if report.times is not None]
        if timed:  # on one clock: the first session's start
            total.times = Times(timed[0].clock, min(times.started for times in timed))
            total.times.merge(timed)
        return total

    def plays_by_index(self) -> list[int]:
        """Times each interaction was played, in the cassette's order (the report's `plays`)."""
        return [self.plays[i] for i in range(len(self.cassette.interactions))]

    def add_miss(self, miss: Miss) -> None:
        """Count a miss, and keep it whole while fewer than KEPT_MISSES are kept."""
        self.missed += 1
        if len(self.misses) < KEPT_MISSES:
            self.misses.append(miss)

    def _client_indexes(self) -> list[int]:
        """The interactions a host could have asked for: those of the recorded sessions it used."""
        used = self.sessions or {0}  # none used yet: session 0
        return [i for i, it in enumerate(self.cassette.interactions) if it.kind != SERVER and it.session in used]

    @property
    def unplayed(self) -> list[int]:
        """Interactions with a client message that the host never sent (and that were not `optional`)."""
        interactions = self.cassette.interactions
        return [
            i
            for i in self._client_indexes()
            if self.plays[i] == 0 and i not in self.left and not interactions[i].optional
        ]

    @property
    def strict_ok(self) -> bool:
        """What --strict demands: no misses, nothing unplayed, no repeats, no answers that differed, none withheld."""
        return not (self.missed or self.unplayed or self.repeats or self.mismatches or self.withheld)

    def strict_failures(self) -> str:
        """What --strict found wrong, counted: `1 miss, 2 answers that differed`."""
        counts = (
            (self.missed, "miss", "misses"),
            (len(self.unplayed), "unplayed interaction", "unplayed interactions"),
            (len(self.repeats), "request asked more often than recorded", "requests asked more often than recorded"),
            (len(self.mismatches), "answer that differed", "answers that differed"),
            (len(self.withheld), "server request withheld", "server requests withheld"),
        )
        return ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts if n) or "nothing wrong"

    def _label(self, index: int) -> str:
        return f"interactions[{index}] {named(self.cassette.interactions[index])}"

    def _again(self, index: int) -> str:
        """What a repeat of interactions[index] played again: its answer, or what stands in for one."""
        interaction = self.cassette.interactions[index]
        interaction = interaction.played(len(interaction.answers))  # scripted: its last answer, which repeats
        if interaction.drop == CUT:
            return "played again, broken off again (`drop: cut`)"
        if interaction.drop:
            return "played again, unanswered (`drop`)"
        if interaction.raw_response is not None:
            return "its `raw_response` was sent again"
        if interaction.response is None:
            return "played again; it has no answer to repeat"
        return "the last answer was repeated"

    def summary(self) -> str:
        """A few lines for stderr."""
        total = len(self._client_indexes())
        played = total - len(self.unplayed)
        lines = [
            f"mockmcp replay: {self.cassette.path or 'cassette'}: played {played} of {total} interactions; "
            f"{self.missed} missed, {len(self.repeats)} repeated, {len(self.unplayed)} unplayed, "
            f"{len(self.mismatches)} answers differed"
        ]
        for index, extra in sorted(self.repeats.items()):
            times = f"{extra} more time{'s' * (extra != 1)}"
            lines.append(f"  repeated: {self._label(index)}: asked {times} than recorded; {self._again(index)}")
        for miss in self.misses:
            lines.append(f"  missed: {miss.method} (id {miss.request_id!r}): {miss.reason}")
        if self.missed > len(self.misses):
            lines.append(f"  missed: {self.missed - len(self.misses)} more, not kept")
        for index in self.unplayed:
            lines.append(f"  unplayed: {self._label(index)}")
        for mismatch in self.mismatches:
            if mismatch.head or mismatch.interaction is None:
                lines.append(f"  answered from a guess: {mismatch.head}:")
            else:
                lines.append(f"  answer differed: {mismatch.method} in {self._label(mismatch.interaction)}")
            lines.extend(f"    - {difference}" for difference in mismatch.differences)
        for withheld in self.withheld:
            where = f"{withheld.method} in {self._label(withheld.interaction)}"
            lines.append(f"  withheld: {where}: the host did not declare {withheld.capability}")
        lines.extend(f"  capabilities: {text}" for text in self.capabilities)
        lines.extend(f"  {text}" for text in self.unanswered)
        lines.extend(f"  out of order: {text.removeprefix('mockmcp: ')}" for text in self.reordered)
        lines.extend(f"  fault: {text}" for text in self.faults)
        return "\n".join(lines)

    def json_text(self) -> str:
        """to_json as indented JSON text that UTF-8 can always hold: a lone surrogate (from an id) stays escaped."""
        import json  # deferred: only --report writes it

        data = self.to_json()
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            text.encode()
        except UnicodeEncodeError:
            return json.dumps(data, indent=2) + "\n"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "cassette": self.cassette.path,
            "interactions": len(self._client_indexes()),
            "played": len(self._client_indexes()) - len(self.unplayed),
            "plays": self.plays_by_index(),
            "repeats": [
                {"interaction": i, "method": self.cassette.interactions[i].method, "extra": n}
                for i, n in sorted(self.repeats.items())
            ],
            "misses": [miss.to_json() for miss in self.misses],
            "missed": self.missed,  # more than `misses` lists when over KEPT_MISSES
            "unplayed": [{"interaction": i, "method": self.cassette.interactions[i].method} for i in self.unplayed],
            "mismatches": [mismatch.to_json() for mismatch in self.mismatches],
            "withheld": [withheld.to_json() for withheld in self.withheld],
            "capabilities": self.capabilities,
            "unanswered": self.unanswered,
            "faults": self.faults,
            "reordered": self.reordered,
            "calls": [{"method": method, "params": params} for method, params in self.calls],
            "strict_ok": self.strict_ok,
        } | self._times()

    def _times(self) -> dict[str, Any]:
        """A timed session's `started` and `played_at` (the report's keys; none when no clock was given)."""
        if self.times is None:
            return {}
        firsts = [self.times.first.get(i) for i in range(len(self.cassette.interactions))]
        return {"started": self.times.started, "played_at": [None if at is None else round(at, 6) for at in firsts]}
