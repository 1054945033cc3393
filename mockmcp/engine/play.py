"""What goes out to the host: each job's next step played as the recording says, and the job moved on. No I/O.

`schedule.run` hands each job that may go on to `Player.step`. On the launch path
(docs/architecture.md, "Start-up rules").
"""

from __future__ import annotations

from mockmcp._wire import jsonrpc
from mockmcp.cassette.model import REQUEST
from mockmcp.engine import emulation, live, ordering
from mockmcp.engine.actions import Exit, Note, Send
from mockmcp.engine.batch import array
from mockmcp.engine.branching import Questions
from mockmcp.engine.report import Withheld
from mockmcp.engine.schedule import Job, Schedule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from mockmcp.cassette.model import Cassette, Interaction, ServerItem
    from mockmcp.engine.actions import Action
    from mockmcp.engine.batch import Batch
    from mockmcp.engine.redact import Redactor
    from mockmcp.engine.report import Report
    from mockmcp.engine.selection import Recordings

__all__ = ["Player", "answer"]


def answer(batch: Batch | None, response: dict[str, Any], key: Any, expected: bool = False) -> list[Action]:
    """A response to the live request `key`: sent, or kept for its batch's array (`expected`: by a job)."""
    if batch is None:
        return [Send(jsonrpc.encode(response), key, final=True, code=live.error_code(response))]
    return array(batch.add(response, expected))


class Player:
    """Plays one live session's jobs; what the engine shares with it are the attributes."""

    def __init__(self, report: Report, recordings: Recordings, redactor: Redactor | None, timing: float) -> None:
        self.cassette: Cassette = recordings.cassette
        self.report = report
        self.ended = False  # an interaction's `exit` ended the session
        self.ordering = ordering.Ordering(recordings.causes)
        self.schedule = Schedule(recordings.causes.moments, timing)
        # The live values of the cassette's placeholders (`${PROJECT}`), put back in all it sends (see `redact`).
        values = redactor.substitutions if redactor is not None else None
        self.writer = live.Writer(values, recordings.tails, recordings.eras)
        self.capabilities = emulation.Capabilities()  # what the live host declared
        self.questions = Questions()  # server requests awaiting the host's answer
        self.requests: dict[Any, Job] = {}  # live request (its key, else its id) -> its job
        self.sent_at: float | None = None  # the recorded time of the latest message sent
        self.prompt = set() if timing else recordings.prompt  # the requests `at_once` may answer

    def begin(
        self,
        index: int,
        reply_id: Any = None,
        token: Any = live.KEEP,
        batch: Batch | None = None,
        key: Any = None,
        played: Interaction | None = None,
    ) -> Job:
        """A job playing interactions[index] (for the live request `reply_id`, named `key` by the shell); `played`:
        the interaction as this play answers (a scripted one's turn), else as recorded."""
        self.report.play(index)
        played = self.cassette.interactions[index] if played is None else played
        job = self.schedule.add(Job(index, played, reply_id, token, batch, key))
        if batch is not None:
            batch.expect(job.interaction)
        return job

    def run(self, jobs: Sequence[Job] = ()) -> list[Action]:
        """Go on with `jobs` (the ones `ordering` let go), and play every job that may go on."""
        if jobs:
            self.schedule.let_go(jobs)
        return self.schedule.run(self.step) if self.schedule.heap else []  # (none queued: none may go on)

    def release(self, anchor: int | None) -> list[Action]:
        """The unsolicited messages recorded after interactions[anchor] (None: first), now that it has played."""
        for index in self.ordering.unsolicited(anchor):
            job = self.begin(index)
            if anchor is not None:
                self.schedule.after(job, self.cassette.interactions[anchor])
        return self.run()

    def step(self, job: Job) -> list[Action]:
        """Play the job's next step (a delay, a server item, the response), and move it on (see `schedule`); a
        message the recording had apart from the one sent before it says so (`Send.turn`)."""
        at = self.schedule.moment(job.index, job.step) if job.step else None
        return self._turned(at, self._play(job))

    def at_once(self, index: int, reply_id: Any, key: Any) -> list[Action] | None:
        """The reply to the live request `reply_id` (`key`) from interactions[index], which a job would play at once:
        the actions, and the state after, of a job's steps, at less cost (None: one may wait, or be waited for)."""
        if index not in self.prompt or self.schedule.heap or self.ordering.waiting:
            return None
        interaction = self.cassette.interactions[index]
        self.ordering.arrive(index)  # its request came, as its job's first step says (again if it waits: no change)
        if not self.ordering.goes(index, 1, interaction.session):
            return None
        self.report.play(index)
        self.ordering.arrive(("played", index))
        self.requests.pop(key, None)  # a job an earlier request under this key began is not the one it names
        out = self.writer.reply(index, interaction, reply_id, key)[0]
        return self._turned(self.schedule.moment(index, 1), out) + self.release(index)

    def _turned(self, at: float | None, out: list[Action]) -> list[Action]:
        """out, its first message marked when the recording had it apart from the one sent before (`at`: its time)."""
        if at is None:
            return out
        for n, action in enumerate(out):
            if isinstance(action, Send):
                if self.sent_at is not None and at > self.sent_at:
                    out[n] = action._replace(turn=True)
                self.sent_at = at
                break
        return out

    def _play(self, job: Job) -> list[Action]:
        interaction, step = job.interaction, job.step
        if step == 0:
            job.step = 1
            self.schedule.let_go(self.ordering.arrive(job.index))  # its client message has come
            if interaction.delay:
                return [self.schedule.sleep(job, interaction.delay)]
            self.schedule.move(job, "go")
            return []
        wait = self.schedule.wait(job)
        if wait:
            return [self.schedule.sleep(job, wait)]  # this step again, once the wait is over
        verdict = self.ordering.check(job, job.index, step, interaction.session) if job.batch is None else ordering.GO
        if verdict == ordering.HELD:
            # Its window is counted on the recorded clock from what caused it; the messages before it went at once.
            window = self.ordering.gap(job.index, step) - self.schedule.waited(job)
            return [self.schedule.sleep(job, round(max(0.0, window), 4), "hold")]
        if verdict == ordering.BLOCKED:
            self.schedule.move(job, "block")
            return []
        if step > len(interaction.server):
            return self._finish(job)
        job.step += 1
        item = interaction.server[step - 1]
        if item.kind == REQUEST:
            return self._ask(job, item)
        self.schedule.move(job, "go")
        return self.writer.notification(item, job.token, job.reply_id, job.key)

    def _ask(self, job: Job, item: ServerItem) -> list[Action]:
        """A server request, under the id `Questions` gives it (its recorded one if it can); not to a host that
        declared capabilities without the one it needs, as a server must not send it: withheld with a note."""
        missing = self.capabilities.missing(item.message)
        if missing is not None:  # the interaction goes on as recorded
            self.report.withheld.append(Withheld(job.index, item.message["method"], missing))
            self.schedule.move(job, "go")
            return [Note(self.report.withheld[-1].render())]
        self.schedule.move(job, "ask")
        job.waiting = asked = self.questions.ask(job, item)
        recorded, out = item.message.get("id"), []
        if asked != recorded and jsonrpc.is_valid_id(recorded):
            text = f"{item.message['method']} from interactions[{job.index}] went out with id {asked!r}"
            out.append(Note(f"mockmcp: {text}: its recorded id {recorded!r} is still awaiting the host's answer"))
        return [*out, self.writer.question(item, asked, job.key)]

    def _finish(self, job: Job) -> list[Action]:
        self.schedule.move(job, "finish")
        self.schedule.let_go(self.ordering.arrive(("played", job.index)))
        if self.requests.get(job.key) is job:
            del self.requests[job.key]
        interaction = job.interaction
        exit_when = interaction.exit[1] if interaction.exit is not None else None
        out = self._reply(job) if job.reply_id is not None and exit_when != "before" else []
        if interaction.exit is None:
            return out + self.release(job.index)
        self.ended = True
        text = f"interactions[{job.index}] ended the session with status {interaction.exit[0]} ({exit_when} replying)"
        self.report.faults.append(text)
        return [*out, Note(f"mockmcp: {text}"), Exit(interaction.exit[0])]

    def _reply(self, job: Job) -> list[Action]:
        """The reply to the live request: the recorded response, or what the fault knobs say instead."""
        interaction, batch = job.interaction, job.batch
        if batch is None or interaction.drop or interaction.raw_response is not None or interaction.response is None:
            sent, fault = self.writer.reply(job.index, interaction, job.reply_id, job.key, job.version)
            if fault:
                self.report.faults.append(fault)
            return sent
        body = {k: v for k, v in self.writer.response(job.index, interaction).items() if k != "id"}
        return answer(batch, {"jsonrpc": "2.0", "id": job.reply_id, **body}, job.key, expected=True)
