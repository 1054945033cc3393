"""The replay engine: a cassette and incoming lines in, actions out. No I/O, no clocks, no sleeping.

Theory of operation. Every incoming line goes through `receive`, which returns what the shell must
do: `Send` bytes to the host, `Wake` the engine after a delay, `Note` something on stderr, `Cut` a
request's answer off where the recorded one broke off (`drop: cut`), `Exit` the session. A matched
request starts a *job* that walks its interaction's steps: an optional delay, each recorded server
message, the response; a waiting job (a delay, a server request to the host) holds up no other job.
What state a job is in, and which plays next, is `schedule`'s; which recording answers a request,
`selection`'s; what waits for what, `ordering`'s; what a server of the recorded revision says where
the cassette is silent, `emulation`'s; the server's questions in flight and the recording that goes
on when the host answers otherwise, `branching`'s; a batch's array, `batch`'s; what is sent of the
recording (live ids, tokens and values), `live`'s. This module plays jobs by what they say.

The engine serves one live session; over HTTP each live session has its own, all sharing one index
of the recordings (`Recordings`).
"""

from __future__ import annotations

from mockmcp import jsonrpc, protocol
from mockmcp.cassette.model import CUT, REQUEST
from mockmcp.core import emulation, live, ordering
from mockmcp.core.actions import Action, Cut, Exit, Note, Send, Wake
from mockmcp.core.batch import Batch
from mockmcp.core.branching import Questions
from mockmcp.core.matching import Matcher, answer_body, canonical
from mockmcp.core.report import Mismatch, Report, Withheld
from mockmcp.core.schedule import ABANDON, ASK, BLOCK, CANCEL, ENDED, FINISH, GO, HOLD, SLEEPING, Schedule
from mockmcp.core.selection import Pick, Recordings, Selection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.cassette.model import Cassette, ServerItem
    from mockmcp.core.emulation import Refusal
    from mockmcp.core.redact import Redactor
    from mockmcp.core.schedule import Job

__all__ = ["Action", "Cut", "Exit", "Note", "Replay", "Send", "Wake"]

_UNREAD = object()  # `receive` without a parsed message: the line is read there


class Replay:
    """Replays one cassette to one host session."""

    def __init__(
        self,
        cassette: Cassette,
        matcher: Matcher,
        redactor: Redactor | None = None,
        timing: float = 0.0,
        recordings: Recordings | None = None,
    ) -> None:
        """`timing`: 0 answers at once; otherwise the recorded timing, scaled by this factor, is reproduced.

        `recordings`: the index shared by all live sessions of a server (HTTP); made here when absent.
        """
        self.cassette, self.matcher, self.redactor, self.timing = cassette, matcher, redactor, timing
        self.ended = False
        self.report = Report(cassette)
        self.selection = Selection(recordings or Recordings(cassette, matcher))
        self.report.sessions, self.report.left = self.selection.sessions, self.selection.left
        shared = self.selection.recordings
        self.ordering = ordering.Ordering(shared.causes)
        self.schedule = Schedule(shared.causes.moments, timing)
        # The live values of the cassette's placeholders (`${PROJECT}`), put back in all it sends (see `substitute`).
        self.writer = live.Writer(redactor.substitutions if redactor is not None else None, shared.tails, shared.eras)
        self.capabilities = emulation.Capabilities()
        self.questions = Questions()  # server requests awaiting the host's answer
        self.requests: dict[Any, Job] = {}  # live request (its key, else its id) -> its job

    # --- the engine's interface to its shell ---------------------------------------------------

    def start(self) -> list[Action]:
        """What to send before the host says anything: unsolicited messages recorded first."""
        return self._release(None)

    def receive(self, line: bytes, parsed: Any = _UNREAD, key: Any = None) -> list[Action]:
        """Handle one line from the host.

        `parsed`: the line as `jsonrpc.parse` read it, when the shell has read it already (over HTTP, to
        judge the POST), which spares reading it twice. `key`: the shell's own name for the live request
        the message is (a request) or cancels (`notifications/cancelled`), when its id alone does not name
        it (clients of a shared stateless session choose their ids on their own); what is sent for the
        request carries it as `Send.request`, and the messages carry the request's own id. None: the
        request's id names it.
        """
        if self.ended:
            return []
        message = parsed
        if parsed is _UNREAD:
            try:
                message = jsonrpc.parse(line)
            except ValueError as exc:  # includes UnicodeDecodeError, NaN, too deep
                error = jsonrpc.error_response(
                    jsonrpc.reply_id_of_unread(line, exc), jsonrpc.PARSE_ERROR, f"Parse error: {exc}"
                )
                return [
                    Note(f"mockmcp: the host sent a line that is not JSON ({exc}); answered -32700"),
                    self._send(error, None, False),
                ]
        if self.redactor:  # the cassette was recorded with secrets replaced: compare like with like
            message = self.redactor.message(message, ids=False)  # the reply carries the host's id
        if jsonrpc.may_hold_lone_surrogates(line):  # and with the recorder's U+FFFD for a lone surrogate
            message = live.as_recorded(message)
        if not isinstance(message, list):
            return self._receive_one(message, None, key)
        if not message:
            return [
                self._send(
                    jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch"), None, False
                )
            ]
        batch = Batch()
        out = [action for member in message for action in self._receive_one(member, batch)]
        return out + self._batched(batch.seal())

    def wake(self, token: int) -> list[Action]:
        """A wait the engine asked for (`Wake`) is over."""
        job = self.schedule.woken(token)
        if job is None:
            return []  # the job is gone, or went on meanwhile
        if job.state is SLEEPING:
            self.schedule.move(job, GO)
            return self.schedule.run(self._step)
        # Held as long as the server took to send it: what the recording's host sent first has not come.
        note = self.ordering.overdue(job, job.index, job.step, self.cassette.interactions)
        self.schedule.move(job, BLOCK)  # until `give_up` lets it go, unless its server could not go on
        return ([] if note is None else [Note(note)]) + self._resume(self.ordering.give_up(job))

    def holds(self, token: int) -> bool:
        """Whether a wait the engine asked for still matters (False once its job finished, went on, or the
        host cancelled its request)."""
        return self.schedule.holds(token)

    def close(self) -> list[Action]:
        """The host closed its side: nothing more can arrive, so jobs awaiting an answer are abandoned, what
        waits for the host's messages goes now (the host may still be reading), and what the server could
        not have sent without a message the host never sent is never sent."""
        texts = []
        for asked, job, item in self.questions.abandon():
            self.schedule.move(job, ABANDON)
            method = item.message["method"]
            texts.append(
                f"the host closed the session before answering {method} (id {asked}) from interactions[{job.index}]"
            )
        released = [job for waiting in self.ordering.blocked() for job in self.ordering.give_up(waiting)]
        out = [Note(f"mockmcp: {text}") for text in texts] + self._resume(released)
        for job in self.ordering.blocked():
            if job.state not in ENDED:  # one the host cancelled has ended already
                self.schedule.move(job, ABANDON)
                texts.append(self.ordering.unsent(job.index, job.step > len(job.interaction.server)))
                out.append(Note(f"mockmcp: {texts[-1]}"))
        self.report.unanswered.extend(texts)
        return out

    # --- incoming messages --------------------------------------------------------------------

    def _receive_one(self, message: Any, batch: Batch | None, key: Any = None) -> list[Action]:
        found = jsonrpc.classify(message)
        if found.kind == jsonrpc.REQUEST:
            return self._request(message, batch, message["id"] if key is None else key)
        if found.kind == jsonrpc.NOTIFICATION:
            return self._notification(message, key)
        if found.kind == jsonrpc.RESPONSE:
            return self._host_response(message)
        if isinstance(message, dict) and ("result" in message or "error" in message) and "method" not in message:
            return [Note(f"mockmcp: ignored a malformed response from the host: {found.problem}")]
        error = jsonrpc.error_response(found.reply_id, jsonrpc.INVALID_REQUEST, f"Invalid Request: {found.problem}")
        note = Note(f"mockmcp: invalid message from the host ({found.problem}); answered -32600")
        return [note, *self._answer(batch, error, found.reply_id)]

    def _request(self, message: dict[str, Any], batch: Batch | None, key: Any) -> list[Action]:
        method, params = message["method"], message.get("params")
        pick = self.selection.request(self.selection.recordings.key(method, params))
        if pick is None:
            if method == protocol.PING:  # answered as a server of the request's era answers it
                answer, note = emulation.ping(message)
                return ([] if note is None else [Note(note)]) + self._answer(batch, answer, key)
            # an opening of the era the cassette never recorded is refused as its server refuses it
            where = self.cassette.path or "the cassette"
            return self._miss(message, batch, key, emulation.other_era(message, self.cassette.interactions, where))
        out = self._selected(method, pick)
        if pick.interaction is None:
            reason = f"every recording of this {method} request is used up, and the last says `after: unmatched`"
            return out + self._miss(message, batch, key, emulation.Refusal(jsonrpc.NO_MATCH, reason))
        index = pick.interaction
        interaction = self.cassette.interactions[index]
        if pick.repeated:
            self.report.repeats[index] = self.report.repeats.get(index, 0) + 1
        declared = protocol.client_capabilities(method, params)
        for note, text in self.capabilities.take(method, params, declared, interaction.params, index):
            self.report.capabilities.extend(() if text is None else (text,))
            out.append(Note(note))
        refused = None if declared is None else emulation.undeclared(message["id"], declared, interaction.response)
        if refused is not None:  # it asks what the request did not declare: -32021, as a server says
            self.report.plays[index] += 1
            instead = f"answered {protocol.MISSING_CAPABILITY}, as a server of that revision does"
            self.report.withheld.append(Withheld(index, refused[0], refused[1], instead))
            return [*out, Note(self.report.withheld[-1].render()), *self._answer(batch, refused[2], key)]
        job = self._new_job(index, message["id"], protocol.progress_token(message), batch, key)
        job.exchange = pick.exchange
        self.requests[key] = job
        return out + self.schedule.run(self._step)

    def _selected(self, method: str, pick: Pick) -> list[Action]:
        """What selection said of its pick: that the live session moved to another recorded session, or that it
        left every recorded session (a mismatch: replay no longer knows what the server answers)."""
        out: list[Action] = [Note(pick.note)] if pick.note else []
        if pick.note and pick.interaction is not None:  # it moved to another recorded session there
            self._joined(pick.interaction)
        if pick.why:
            self.report.mismatches.append(Mismatch(pick.interaction, method, pick.differs, pick.why))
            out.append(Note(self.report.mismatches[-1].render()))
        return out

    def _joined(self, index: int) -> None:
        """The live session goes on in interactions[index]'s recorded session: what that session's host sent
        before it counts as come (the live host sent its like), for `ordering`."""
        joined = self.cassette.interactions[index]
        self.schedule.let_go(self.ordering.joined(joined.session, joined.at))

    def _notification(self, message: dict[str, Any], key: Any) -> list[Action]:
        method, params = message["method"], message.get("params")
        out: list[Action] = []
        if method == protocol.CANCELLED and isinstance(params, dict):
            request = params.get("requestId") if key is None else key
            if key is not None or jsonrpc.is_valid_id(request):
                out.extend(self._cancel(request))
        index = self.selection.notification(self.matcher.key(method, params), self.report.plays)
        if index is not None:
            self._new_job(index)
            out.extend(self.schedule.run(self._step))
        return out

    def _host_response(self, message: dict[str, Any]) -> list[Action]:
        asked = self.questions.answered(message["id"])
        if asked is None:
            return [Note(f"mockmcp: ignored a response from the host to an id it was never sent ({message['id']!r})")]
        job, item = asked
        job.waiting, at = None, job.step - 2  # the server request answered (the step after it is next)
        self.schedule.let_go(self.ordering.arrive((job.index, at)))  # they go on with the job, below
        out: list[Action] = []
        if item.response is not None:
            answered, recorded = answer_body(message), answer_body(item.response)
            # Among several recorded sessions, the answer tells which are still like the live one (`selection`).
            live_answer = canonical(answered)
            other = None if job.exchange is None else self.selection.answered(job.exchange, job.index, at, live_answer)
            if canonical(recorded) != live_answer and other is not None:
                out.append(self._follow(job, other, item))  # a consistent recorded session says what the server does
            elif canonical(recorded) != live_answer:
                from mockmcp.core.explain import describe_differences  # deferred: only a difference pays for deepdiff

                found = describe_differences(recorded, answered, "the host's", "the host's answer", root="answer")
                self.report.mismatches.append(Mismatch(job.index, item.message["method"], tuple(t for _p, t in found)))
                out.append(Note(self.report.mismatches[-1].render()))
        self.schedule.move(job, GO)
        return out + self.schedule.run(self._step)

    def _follow(self, job: Job, index: int, item: ServerItem) -> Note:
        """Go on with the job from the same step of another recording, and follow that recording's session."""
        before = job.index
        self.report.plays[before] -= 1
        self.report.plays[index] += 1
        job.index, job.interaction = index, self.cassette.interactions[index]
        self._joined(index)
        self.schedule.let_go(self.ordering.arrive(index))
        # The live host's answer stands for the one recorded there: what waits for it there may go on.
        self.schedule.let_go(self.ordering.arrive((index, job.step - 2)))
        self.selection.follow(index)
        return Note(
            f"mockmcp: the host answered {item.message['method']} otherwise than interactions[{before}] recorded, "
            f"as interactions[{index}] recorded it; replay goes on from there"
        )

    def _cancel(self, request: Any) -> list[Action]:
        """The host cancelled a live request (by its key, else its id). When the recording's host cancelled
        it too and the server answered after that, the rest plays as recorded; otherwise it is not answered."""
        job = self.requests.pop(request, None)
        if job is None or job.state in ENDED:
            return []
        if job.waiting is not None:
            self.questions.withdraw(job.waiting)
        cancel = self.ordering.causes.cancels.get(job.index)
        said = f"mockmcp: the host cancelled request {job.reply_id!r} (interactions[{job.index}])"
        if cancel is not None and job.batch is None:
            if job.waiting is not None:
                job.waiting = None
                self.schedule.move(job, GO)
            released = self.ordering.arrive(("cancel", job.index)) + self.ordering.arrive(cancel)
            return [
                Note(f"{said}, as the recording's host did: what its server sent after that follows"),
                *self._resume(released),
            ]
        self.schedule.move(job, CANCEL)
        out = [Note(f"{said}; it will not be answered"), *self._resume(self.ordering.arrive(("cancel", job.index)))]
        return out if job.batch is None else out + self._batched(job.batch.cancelled(job.interaction))

    # --- playing interactions ---------------------------------------------------------------------

    def _new_job(
        self, index: int, reply_id: Any = None, token: Any = live.KEEP, batch: Batch | None = None, key: Any = None
    ) -> Job:
        self.report.plays[index] += 1
        job = self.schedule.add(index, self.cassette.interactions[index], reply_id, token, batch, key)
        if batch is not None:
            batch.expect(job.interaction)
        return job

    def _resume(self, jobs: list[Job]) -> list[Action]:
        """Go on with the jobs `ordering` let go."""
        self.schedule.let_go(jobs)
        return self.schedule.run(self._step)

    def _step(self, job: Job) -> list[Action]:
        """Play the job's next step (a delay, a server item, the response), and move it on (see `schedule`)."""
        interaction, step = job.interaction, job.step
        if step == 0:
            job.step = 1
            self.schedule.let_go(self.ordering.arrive(job.index))  # its client message has come
            if interaction.delay:
                return [self.schedule.sleep(job, interaction.delay)]
            self.schedule.move(job, GO)
            return []
        wait = self.schedule.wait(job)
        if wait:
            return [self.schedule.sleep(job, wait)]  # this step again, once the wait is over
        verdict = (
            ordering.GO if job.batch is not None else self.ordering.check(job, job.index, step, interaction.session)
        )
        if verdict == ordering.HELD:
            return [self.schedule.sleep(job, self.ordering.gap(job.index, step), HOLD)]
        if verdict == ordering.BLOCKED:
            self.schedule.move(job, BLOCK)
            return []
        if step > len(interaction.server):
            return self._finish(job)
        job.step += 1
        item = interaction.server[step - 1]
        if item.kind != REQUEST:
            self.schedule.move(job, GO)
            return self.writer.notification(item, job.token, job.reply_id, job.key)  # type: ignore[return-value]
        missing = self.capabilities.missing(item.message)
        if missing is not None:  # a server must not send it: go on as the recording continues
            self.report.withheld.append(Withheld(job.index, item.message["method"], missing))
            self.schedule.move(job, GO)
            return [Note(self.report.withheld[-1].render())]
        self.schedule.move(job, ASK)
        job.waiting = asked = self.questions.ask(job, item)  # its recorded id, unless that one awaits an answer
        recorded, out = item.message.get("id"), []
        if asked != recorded and jsonrpc.is_valid_id(recorded):
            text = f"{item.message['method']} from interactions[{job.index}] went out with id {asked!r}"
            out.append(Note(f"mockmcp: {text}: its recorded id {recorded!r} is still awaiting the host's answer"))
        return [*out, self.writer.question(item, asked, job.key)]

    def _finish(self, job: Job) -> list[Action]:
        self.schedule.move(job, FINISH)
        self.schedule.let_go(self.ordering.arrive(("played", job.index)))
        if self.requests.get(job.key) is job:
            del self.requests[job.key]
        interaction = job.interaction
        exit_when = interaction.exit[1] if interaction.exit is not None else None
        out = self._reply(job) if job.reply_id is not None and exit_when != "before" else []
        if interaction.exit is None:
            return out + self._release(job.index)
        self.ended = True
        text = f"interactions[{job.index}] ended the session with status {interaction.exit[0]} ({exit_when} replying)"
        self.report.faults.append(text)
        return [*out, Note(f"mockmcp: {text}"), Exit(interaction.exit[0])]

    def _reply(self, job: Job) -> list[Action]:
        """The reply to the live request: the recorded response, or what the fault knobs say instead."""
        interaction = job.interaction
        if interaction.drop == CUT:
            self.report.faults.append(
                f"interactions[{job.index}]: the answer to request {job.reply_id!r} broke off before its reply "
                "(`drop: cut`: over HTTP its stream was cut; over stdio, no reply)"
            )
            return [Cut(job.key)]
        if interaction.drop:
            self.report.faults.append(f"interactions[{job.index}]: the reply to request {job.reply_id!r} was dropped")
            return []
        if job.batch is None or interaction.raw_response is not None or interaction.response is None:
            return self.writer.reply(job.index, interaction, job.reply_id, job.key)  # type: ignore[return-value]
        body = {k: v for k, v in self.writer.response(job.index, interaction).items() if k != "id"}
        return self._answer(job.batch, {"jsonrpc": "2.0", "id": job.reply_id, **body}, job.key, expected=True)

    def _release(self, anchor: int | None) -> list[Action]:
        """The unsolicited messages recorded after this interaction, now that it has played."""
        for index in self.ordering.unsolicited(anchor):
            job = self._new_job(index)
            if anchor is not None:
                self.schedule.after(job, self.cassette.interactions[anchor])
        return self.schedule.run(self._step)

    # --- answers -----------------------------------------------------------------------------------

    def _answer(self, batch: Batch | None, response: dict[str, Any], key: Any, expected: bool = False) -> list[Action]:
        """A response to the live request `key`: sent, or kept for its batch's array."""
        if batch is None:
            return [self._send(response, key)]
        return self._batched(batch.add(response, expected))

    def _batched(self, responses: list[dict[str, Any]] | None) -> list[Action]:
        """A batch's array of responses, once it is whole."""
        if responses is None:
            return []
        return [Send(jsonrpc.encode(responses), batch=tuple(response.get("id") for response in responses))]

    def _send(self, response: dict[str, Any], key: Any, final: bool = True) -> Send:
        return Send(jsonrpc.encode(response), key, final=final, code=live.error_code(response))

    def _miss(
        self, message: dict[str, Any], batch: Batch | None, key: Any, refused: Refusal | None = None
    ) -> list[Action]:
        """A request no recording answers: explained on stderr and in the report, answered with an error
        (the refusal's, or one carrying the explanation's short form)."""
        from mockmcp.core.explain import explain_miss  # deferred: a miss is the only user of deepdiff

        method, request_id, params = message["method"], message["id"], message.get("params")
        code, reason, error = refused or (0, "", None)
        if not code and method in self.selection.recordings.methods:
            code, reason = jsonrpc.NO_MATCH, f"no recorded interaction matches this {method} request"
        elif not code:
            code, reason = jsonrpc.METHOD_NOT_FOUND, f"the cassette never recorded the method {method!r}"
        miss = explain_miss(self.cassette, self.matcher, self.report.plays, request_id, method, params, code, reason)
        self.report.add_miss(miss)
        if error is None:
            said = (
                "mockmcp: no recorded interaction matches" if code != jsonrpc.METHOD_NOT_FOUND else "Method not found"
            )
            error = jsonrpc.error_response(request_id, code, f"{said}: {method}", miss.error_data())
        return [Note(miss.render()), *self._answer(batch, error, key)]
