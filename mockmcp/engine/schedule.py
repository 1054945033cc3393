"""The replay engine's jobs: the state each is in, and which plays next. Pure: no I/O, no clocks.

A job walks its interaction (a delay, each recorded server message, the response) through the states of
`TRANSITIONS`; a move the table lacks raises (an engine bug, never the host's doing). Jobs that may go on
wait in a heap by the recorded time of their next message, so the recorded server's order holds across jobs;
an entry whose job moved on is skipped (a job holds the number of its live entry, 0: none), and a `Wake`
token is moot once its job moved on. On the launch path (docs/architecture.md, "Start-up rules").
"""

from __future__ import annotations

from heapq import heappop, heappush

from mockmcp.engine.actions import Wake
from mockmcp.engine.timeline import response_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from mockmcp.cassette.model import Interaction
    from mockmcp.engine.actions import Action
    from mockmcp.engine.batch import Batch
    from mockmcp.engine.selection import Exchange

__all__ = ["ENDED", "Job", "Schedule", "TRANSITIONS"]

# A job's states, and what it waits for in each:
#   queued     nothing: it is in the heap, by its next message's recorded time
#   playing    nothing: the engine plays its next step (`Schedule.run`)
#   sleeping   its Wake: a `delay`, or (--timing) as long as the recorded server took
#   held       `ordering`, or at most its Wake: the recording's host had sent more first
#   blocked    `ordering`: its server could not have sent the message without what has not come
#   asking     the host's answer to its server request
#   done, cancelled (by the host), abandoned (the host closed the session while it waited): it has ended
# What happens to a job is an event (the engine's `move`); a job moves only as this table says.
TRANSITIONS = {
    "queued": {"go": "queued", "play": "playing"},  # go: it is queued already, and keeps its place
    "playing": {
        "go": "queued",
        "sleep": "sleeping",
        "hold": "held",
        "block": "blocked",
        "ask": "asking",
        "finish": "done",
    },
    "sleeping": {"go": "queued", "cancel": "cancelled"},  # go: its Wake
    "held": {"go": "queued", "block": "blocked", "cancel": "cancelled", "abandon": "abandoned"},  # block: at its Wake
    "blocked": {"go": "queued", "cancel": "cancelled", "abandon": "abandoned"},
    "asking": {"go": "queued", "cancel": "cancelled", "abandon": "abandoned"},  # go: answered, or cancelled as recorded
    "done": {},
    "cancelled": {},
    "abandoned": {},
}
ENDED = ("done", "cancelled", "abandoned")


class Job:
    """One interaction being played to the host: where it is, and what it plays for."""

    __slots__ = ("alarm", "batch", "clock", "entry", "exchange", "index", "interaction", "key")
    __slots__ += ("reply_id", "slept", "state", "step", "token", "version", "waiting")

    def __init__(
        self, index: int, interaction: Interaction, reply_id: Any, token: Any, batch: Batch | None, key: Any
    ) -> None:
        self.index, self.interaction, self.batch = index, interaction, batch
        self.reply_id = reply_id  # the live request's id; None when there is no request to answer
        self.key = key  # what the shell knows the live request by (`Send.request`): its key, else its id
        self.token = token  # the live progress token (None: none asked; `live.KEEP`: no live request)
        self.state, self.step, self.entry, self.alarm = "queued", 0, 0, 0  # step: the next message (0: begin)
        self.waiting: Any = None  # the id of its server request awaiting the host's answer
        self.clock, self.slept = interaction.at, -1  # --timing: the recorded time reached, the step slept before
        self.exchange: Exchange | None = None  # among several recorded sessions: what the host's answers are held to
        self.version: str | None = None  # an initialize's answer in this protocol version (`emulation.negotiated`)


class Schedule:
    """One live session's jobs; see the module's docstring."""

    __slots__ = ("_alarms", "_entries", "_moments", "_running", "_timing", "_tokens", "_waited", "heap")

    def __init__(self, moments: Sequence[tuple[float | None, ...]], timing: float = 0.0) -> None:
        """`moments`: each interaction's messages' recorded times (`timeline.Causes`); `timing` as `Replay`'s."""
        self._moments, self._timing = moments, timing
        self.heap: list[tuple[float, int, Job]] = []  # the queued jobs' entries, and stale ones of jobs that went on
        self._alarms: dict[int, Job] = {}  # a pending Wake's token -> its job
        self._entries = self._tokens = 0
        self._running = False
        # job -> seconds it slept or was held since what caused its next message came (its request, or the host's
        # answer to its server request): the live clock's part of its window (`timeline.Causes.gaps`)
        self._waited: dict[Job, float] = {}

    def add(self, job: Job) -> Job:
        """Queue the job: a new one to begin, or one going on (by the recorded time of its next message)."""
        self._entries += 1
        job.entry = self._entries
        at = self.moment(job.index, job.step or 1)
        heappush(self.heap, (-1.0 if at is None else at, job.entry, job))
        return job

    def move(self, job: Job, event: str) -> None:
        """`event` happened to the job: it moves as `TRANSITIONS` says (ValueError: the table has no such move)."""
        state = TRANSITIONS[job.state].get(event)
        if state is None:
            raise ValueError(f"mockmcp: a {job.state} job of interactions[{job.index}] cannot {event} (engine bug)")
        if job.alarm:  # whatever it slept until is moot now
            del self._alarms[job.alarm]
            job.alarm = 0
        if state in ENDED or job.state == "asking":  # ended, or the host answered: a new window begins
            self._waited.pop(job, None)
        job.state = state
        if state != "queued":
            job.entry = 0
        elif not job.entry:
            self.add(job)

    def let_go(self, jobs: Iterable[Job]) -> None:
        """Queue the jobs `ordering` let go (one the host cancelled meanwhile has ended)."""
        for job in jobs:
            if job.state not in ENDED:
                self.move(job, "go")

    def sleep(self, job: Job, after: float, event: str = "sleep") -> Wake:
        """The job waits ("sleep" or "hold") until the shell wakes it, `after` seconds from now."""
        self.move(job, event)
        self._waited[job] = self._waited.get(job, 0.0) + after
        self._tokens += 1
        job.alarm = self._tokens
        self._alarms[job.alarm] = job
        return Wake(after, job.alarm)

    def waited(self, job: Job) -> float:
        """Seconds the job slept or was held since what caused its next message came."""
        return self._waited.get(job, 0.0)

    def woken(self, token: int) -> Job | None:
        """The job whose Wake this is, still sleeping or held (None: it moved on, or ended)."""
        job = self._alarms.pop(token, None)
        if job is not None:
            job.alarm = 0
        return job

    def holds(self, token: int) -> bool:
        """Whether that Wake still matters."""
        return token in self._alarms

    def run(self, step: Callable[[Job], list[Action]]) -> list[Action]:
        """Play the queued jobs one message at a time (`step` plays one and moves the job on), the earliest
        recorded message first, until none may go on."""
        if self._running:
            return []  # the loop below is running already, and takes what was queued
        self._running = True
        out: list[Action] = []
        heap = self.heap
        try:
            while heap:
                _at, entry, job = heappop(heap)
                if job.entry != entry:
                    continue
                sent = job.step > 0  # it sends a message now (step 0 only begins it)
                job.state, job.entry = "playing", 0  # "play": a job with a live entry is queued (and has no alarm)
                out.extend(step(job))
                # A job that sent goes on at once while its next message is not later than any other's: the
                # recorder times the messages of one read alike, and they came in the order of their jobs.
                while sent and job.state == "queued" and self._first(job):
                    job.state, job.entry = "playing", 0
                    out.extend(step(job))
        finally:
            self._running = False
        return out

    def moment(self, index: int, step: int) -> float | None:
        """The recorded time of message `step` of interactions[index] (its items, then its response)."""
        moments = self._moments[index]
        return moments[step - 1] if step <= len(moments) else None

    def wait(self, job: Job) -> float:
        """With --timing: how long before the job's next message, as the recording took (scaled); else 0."""
        if not self._timing:
            return 0.0
        at = self.moment(job.index, job.step)
        if at is None or job.clock is None or job.slept == job.step:
            return 0.0
        wait, job.clock, job.slept = max(0.0, at - job.clock) * self._timing, at, job.step
        return wait

    def after(self, job: Job, before: Interaction) -> None:
        """With --timing, an unsolicited message keeps its recorded distance from the interaction it follows
        (a log the server sent 5 s after a call comes 5 s after it)."""
        if not self._timing or job.clock is None or before.session != job.interaction.session:
            return
        ended = response_time(before) if before.response is not None else before.at
        if ended is not None:
            job.clock = min(ended, job.clock)

    def _first(self, job: Job) -> bool:
        """Whether the queued job's next message goes before every other queued job's, by recorded time (stale
        entries, of jobs that went on meanwhile or ended, are dropped on the way)."""
        heap = self.heap
        own = False
        while heap:
            _at, entry, other = heap[0]
            if other.entry == entry:
                if other is not job:
                    break
                own = True  # its own entry: taken out, and put back if it does not go now
            heappop(heap)
        at = self.moment(job.index, job.step or 1)
        first = not heap or (-1.0 if at is None else at) <= heap[0][0]
        if own and not first:
            self.add(job)
        return first
