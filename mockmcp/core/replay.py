"""The replay engine: a cassette and incoming lines in, actions out. No I/O, no clocks, no sleeping.

Theory of operation. Every incoming line goes through `receive`, which returns what the shell must
do: `Send` bytes to the host, `Wake` the engine after a delay, `Note` something on stderr, `Cut`
a request's answer off where the recorded one broke off (`drop: cut`), `Exit` the session. A
matched request starts a *job* that walks its interaction's steps: an optional delay, then each
recorded server message in order, then the response. A job pauses at a delay (until the shell
calls `wake`) or at a server-to-client request (until the host's answer arrives through
`receive`), so a waiting job never holds up any other: each request is answered when it arrives.

Each policy has its own room, and this module plays jobs by what they say. Which recording answers
a request is `selection`'s (by `matching`'s key). What waits for what is `ordering`'s: unsolicited
messages, listen events, a reply the recording gave after a faster call's. What a server of the
recorded revision answers where the cassette is silent (a ping, an opening of the other era, a host
declaring other capabilities) is `emulation`'s; the server's questions in flight, and which
recording goes on when the host answers one otherwise, are `branching`'s; a batch's array of
answers is `batch`'s; the live ids and tokens in recorded messages are `live`'s.

The engine serves one live session; over HTTP each live session has its own, all sharing one
index of the recordings (`Recordings`).
"""

from __future__ import annotations

import heapq

from mockmcp import jsonrpc, protocol
from mockmcp.cassette.model import CUT, RAW, REQUEST, Cassette, Interaction, ServerItem
from mockmcp.core import emulation, live
from mockmcp.core.actions import Action, Cut, Exit, Note, Send, Wake
from mockmcp.core.batch import Batch
from mockmcp.core.branching import Questions
from mockmcp.core.matching import Matcher, answer_body, canonical
from mockmcp.core.ordering import BLOCKED, HELD, Ordering
from mockmcp.core.report import Mismatch, Report, Withheld
from mockmcp.core.selection import Exchange, Pick, Recordings, Selection
from mockmcp.core.timeline import response_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.core.emulation import Refusal
    from mockmcp.core.redact import Redactor

__all__ = ["Action", "Cut", "Exit", "Note", "Replay", "Send", "Wake"]


_KEEP = object()  # a job that is not answering a live request: server messages go out as recorded
_UNREAD = object()  # `receive` without a parsed message: the line is read there


class _Job:
    """One interaction being played to the host."""

    __slots__ = (
        "alarm",
        "batch",
        "clock",
        "exchange",
        "id",
        "index",
        "interaction",
        "key",
        "queued",
        "reply_id",
        "slept",
        "step",
        "token",
        "waiting",
    )

    def __init__(
        self, id: int, index: int, interaction: Interaction, reply_id: Any, token: Any, batch: Batch | None, key: Any
    ) -> None:
        self.id = id
        self.index = index
        self.interaction = interaction
        self.reply_id = reply_id  # the live request's id; None when there is no request to answer
        self.key = key  # what the shell knows the live request by (`Send.request`): its key, else its id
        self.token = token  # the live progress token; None when the request asked for no progress
        self.batch = batch
        self.step = 0
        self.waiting: Any = None  # the id of its server request awaiting the host's answer
        self.clock = interaction.at  # with recorded timing: the recorded time reached so far
        self.slept = -1  # with recorded timing: the step whose wait is over
        self.alarm: int | None = None  # the `Wake` it sleeps until (a delay, a recorded wait, a hold)
        self.queued = 0  # its entry in the engine's queue of jobs that go on (0: none)
        self.exchange: Exchange | None = None  # among several recorded sessions: what the host's answers are held to


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
        # The live values of the cassette's placeholders (`${PROJECT}`), put back in all it sends (see `substitute`).
        self._live_values = redactor.substitutions if redactor is not None else None
        self.ended = False
        self.report = Report(cassette)
        self.selection = Selection(recordings or Recordings(cassette, matcher))
        self.report.sessions, self.report.left = self.selection.sessions, self.selection.left
        shared = self.selection.recordings
        self.ordering = Ordering(shared.causes)
        self._moments = shared.causes.moments
        self._jobs: dict[int, _Job] = {}
        self._queue: list[tuple[float, int, int]] = []  # jobs that go on: (next message's recorded time, order, job)
        self._queued = 0
        self._running = False
        self._alarms: dict[int, int] = {}  # a Wake's token -> its job
        self._next_alarm = 0
        self._live: dict[Any, int] = {}  # live request (its key, else its id) -> job
        self._questions = Questions()  # server requests awaiting the host's answer
        self._next_job = 0
        # interaction -> its reply's tail and error code; without live values to write into them, the same for
        # every live session of the recordings, so kept with them (a host's tests start one server per test)
        self._tails: dict[int, tuple[bytes, int | None]] = (
            self.selection.recordings.tails if not self._live_values else {}
        )
        # What the live host declared (initialize's capabilities, or the last stateless request's);
        # None until it declares any, and then server requests go out as recorded.
        self._capabilities: dict[str, Any] | None = None
        self._capability_notes: set[str] = set()  # differences from the recording already noted
        self._recorded_capabilities: dict[int, str] = {}  # interaction -> its declared capabilities, canonical

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
        if parsed is not _UNREAD:
            message = parsed
        else:
            try:
                message = jsonrpc.parse(line)
            except ValueError as exc:  # includes UnicodeDecodeError, NaN, too deep
                return [
                    Note(f"mockmcp: the host sent a line that is not JSON ({exc}); answered -32700"),
                    self._send(
                        jsonrpc.error_response(
                            jsonrpc.reply_id_of_unread(line, exc), jsonrpc.PARSE_ERROR, f"Parse error: {exc}"
                        ),
                        None,
                        False,
                    ),
                ]
        if self.redactor:  # the cassette was recorded with secrets replaced: compare like with like
            message = self.redactor.message(message, ids=False)  # the reply carries the host's id
        if jsonrpc.may_hold_lone_surrogates(line):  # and with the recorder's U+FFFD for a lone surrogate
            message = live.as_recorded(message)
        if isinstance(message, list):
            return self._receive_batch(message)
        return self._receive_one(message, None, key)

    def wake(self, token: int) -> list[Action]:
        """A wait the engine asked for (`Wake`) is over."""
        job = self._jobs.get(self._alarms.pop(token, -1))
        if job is None or job.alarm != token:
            return []  # the job is gone, or went on meanwhile
        job.alarm = None
        if not self.ordering.waits(job.id):
            return self._advance(job)
        # Held as long as the server took to send it: what the recording's host sent first has not come.
        missing = self.ordering.missing(job.id)
        out: list[Action] = []
        if missing:
            what = ", ".join(self._event(event) for event in missing[:3]) + (", ..." if len(missing) > 3 else "")
            out.append(
                Note(
                    f"mockmcp: interactions[{job.index}] goes on after the {self.ordering.gap(job.index, job.step):g}s "
                    f"its server took: the recording's host had sent {what} first, which this host has not (yet)"
                )
            )
        return out + self._resume(self.ordering.give_up(job.id))

    def holds(self, token: int) -> bool:
        """Whether a wait the engine asked for still matters (False once its job finished, went on, or the
        host cancelled its request)."""
        job = self._jobs.get(self._alarms.get(token, -1))
        return job is not None and job.alarm == token

    def close(self) -> list[Action]:
        """The host closed its side: nothing more can arrive, so jobs awaiting an answer are abandoned, what
        waits for the host's messages goes now (the host may still be reading), and what the server could
        not have sent without a message the host never sent is never sent."""
        out: list[Action] = []
        for asked, job_id, item in self._questions.abandon():
            job = self._jobs.pop(job_id)
            text = (
                f"the host closed the session before answering {item.message['method']} "
                f"(id {asked}) from interactions[{job.index}]"
            )
            self.report.unanswered.append(text)
            out.append(Note(f"mockmcp: {text}"))
        released: list[int] = []
        for key in self.ordering.blocked():
            released.extend(self.ordering.give_up(key))
        out.extend(self._resume(released))
        for key in self.ordering.blocked():
            job = self._jobs.pop(key, None)
            if job is None:
                continue
            what = "its answer" if job.step > len(job.interaction.server) else "the rest of what its server sent"
            text = (
                f"interactions[{job.index}]: {what} was not sent: the recorded server sent it only after the host "
                "cancelled the request, and this host never did"
                if job.index in self.ordering.causes.cancels
                else f"interactions[{job.index}]: {what} was not sent: the recorded server sent it only after "
                "what the host did before it, which this host never did"
            )
            self.report.unanswered.append(text)
            out.append(Note(f"mockmcp: {text}"))
        return out

    # --- incoming messages --------------------------------------------------------------------

    def _receive_batch(self, messages: list[Any]) -> list[Action]:
        if not messages:
            empty = jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch")
            return [self._send(empty, None, False)]
        batch = Batch()
        out: list[Action] = []
        for message in messages:
            out.extend(self._receive_one(message, batch))
        return out + self._batched(batch.seal())

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
        return [
            Note(f"mockmcp: invalid message from the host ({found.problem}); answered -32600"),
            *self._answer(batch, error, found.reply_id),
        ]

    def _request(self, message: dict[str, Any], batch: Batch | None, key: Any) -> list[Action]:
        method, params, reply_id = message["method"], message.get("params"), message["id"]
        pick = self.selection.request(self.selection.recordings.key(method, params))
        if pick is None:
            if method == protocol.PING:  # answered as a server of the request's era answers it
                answer, note = emulation.ping(message)
                return ([] if note is None else [Note(note)]) + self._answer(batch, answer, key)
            # an opening of the era the cassette never recorded is refused as its server refuses it
            where = self.cassette.path or "the cassette"
            return self._miss(message, batch, key, emulation.other_era(message, self.cassette.interactions, where))
        said = self._selected(method, pick)
        if pick.interaction is None:
            reason = f"every recording of this {method} request is used up, and the last says `after: unmatched`"
            return said + self._miss(message, batch, key, emulation.Refusal(jsonrpc.NO_MATCH, reason))
        index = pick.interaction
        if pick.repeated:
            self.report.repeats[index] = self.report.repeats.get(index, 0) + 1
        declared = protocol.client_capabilities(method, params)
        out = said + self._unlike_the_recording(method, params, declared, index)
        response = self.cassette.interactions[index].response
        refused = None if declared is None else emulation.undeclared(reply_id, declared, response)
        if refused is not None:  # it asks what the request did not declare: -32021, as a server says
            self.report.plays[index] += 1
            withheld = Withheld(
                index,
                refused[0],
                refused[1],
                f"answered {protocol.MISSING_CAPABILITY}, as a server of that revision does",
            )
            self.report.withheld.append(withheld)
            return [*out, Note(withheld.render()), *self._answer(batch, refused[2], key)]
        job = self._new_job(index, reply_id=reply_id, token=protocol.progress_token(message), batch=batch, key=key)
        job.exchange = pick.exchange
        self._live[key] = job.id
        return out + self._advance(job)

    def _selected(self, method: str, pick: Pick) -> list[Action]:
        """What selection said of its pick: that the live session moved to another recorded session, or that it
        left every recorded session (a mismatch: replay no longer knows what the server answers)."""
        out: list[Action] = [Note(pick.note)] if pick.note else []
        if pick.note and pick.interaction is not None:  # it moved to another recorded session there
            self._joined(pick.interaction)
        if pick.why:
            mismatch = Mismatch(pick.interaction, method, pick.differs, pick.why)
            self.report.mismatches.append(mismatch)
            out.append(Note(mismatch.render()))
        return out

    def _joined(self, index: int) -> None:
        """The live session goes on in interactions[index]'s recorded session: what that session's host sent
        before it counts as come (the live host sent its like), for `ordering`."""
        joined = self.cassette.interactions[index]
        self._let_go(self.ordering.joined(joined.session, joined.at))

    def _notification(self, message: dict[str, Any], key: Any) -> list[Action]:
        method, params = message["method"], message.get("params")
        out: list[Action] = []
        if method == protocol.CANCELLED and isinstance(params, dict):
            request = params.get("requestId") if key is None else key
            if key is not None or jsonrpc.is_valid_id(request):
                out.extend(self._cancel(request))
        index = self.selection.notification(self.matcher.key(method, params), self.report.plays)
        return out if index is None else out + self._advance(self._new_job(index))

    def _host_response(self, message: dict[str, Any]) -> list[Action]:
        asked = self._questions.answered(message["id"])
        if asked is None:
            return [Note(f"mockmcp: ignored a response from the host to an id it was never sent ({message['id']!r})")]
        job, item = self._jobs[asked[0]], asked[1]
        job.waiting = None
        self._let_go(self.ordering.arrive((job.index, job.step - 2)))  # they go on with the job, below
        out: list[Action] = []
        if item.response is None:
            return self._advance(job)
        live, recorded = answer_body(message), answer_body(item.response)
        answered = canonical(live)
        # Among several recorded sessions, the answer tells which are still like the live one (see `selection`);
        # job.step - 2 is the server request being answered (the step after it is next).
        other = (
            None if job.exchange is None else self.selection.answered(job.exchange, job.index, job.step - 2, answered)
        )
        if canonical(recorded) != answered:
            if other is not None:  # a recorded session consistent with the live one says what the server does then
                return [self._follow(job, other, item), *self._advance(job)]
            from mockmcp.core.explain import describe_differences  # deferred: only a difference pays for deepdiff

            found = describe_differences(recorded, live, "the host's", "the host's answer", root="answer")
            differences = tuple(text for _path, text in found)
            mismatch = Mismatch(job.index, item.message["method"], differences)
            self.report.mismatches.append(mismatch)
            out.append(Note(mismatch.render()))
        return out + self._advance(job)

    def _follow(self, job: _Job, index: int, item: ServerItem) -> Note:
        """Go on with the job from the same step of another recording, and follow that recording's session."""
        before = job.index
        self.report.plays[before] -= 1
        self.report.plays[index] += 1
        interactions = self.cassette.interactions
        job.index, job.interaction = index, interactions[index]
        self._joined(index)
        self._let_go(self.ordering.arrive(index))
        # The live host's answer stands for the one recorded there: what waits for it there may go on.
        self._let_go(self.ordering.arrive((index, job.step - 2)))
        self.selection.follow(index)
        return Note(
            f"mockmcp: the host answered {item.message['method']} otherwise than interactions[{before}] recorded, "
            f"as interactions[{index}] recorded it; replay goes on from there"
        )

    def _cancel(self, request: Any) -> list[Action]:
        """The host cancelled a live request (by its key, else its id). When the recording's host cancelled
        it too and the server answered after that, the rest plays as recorded; otherwise it is not answered."""
        job_id = self._live.pop(request, None)
        job = None if job_id is None else self._jobs.get(job_id)
        if job is None:
            return []
        if job.waiting is not None:
            self._questions.withdraw(job.waiting)
        cancel = self.ordering.causes.cancels.get(job.index)
        if cancel is not None and job.batch is None:
            note = Note(
                f"mockmcp: the host cancelled request {job.reply_id!r} (interactions[{job.index}]), as the recording's "
                "host did: what its server sent after that follows"
            )
            if job.waiting is not None:
                job.waiting = None
                self._push(job)
            released = self.ordering.arrive(("cancel", job.index)) + self.ordering.arrive(cancel)
            return [note, *self._resume(released)]
        del self._jobs[job_id]
        note = Note(
            f"mockmcp: the host cancelled request {job.reply_id!r} (interactions[{job.index}]); it will not be answered"
        )
        out = [note, *self._resume(self.ordering.arrive(("cancel", job.index)))]
        return out if job.batch is None else out + self._batched(job.batch.cancelled(job.interaction))

    # --- playing interactions ---------------------------------------------------------------------

    def _new_job(
        self, index: int, reply_id: Any = None, token: Any = _KEEP, batch: Batch | None = None, key: Any = None
    ) -> _Job:
        self.report.plays[index] += 1
        job = _Job(self._next_job, index, self.cassette.interactions[index], reply_id, token, batch, key)
        self._next_job += 1
        if batch is not None:
            batch.expect(job.interaction)
        self._jobs[job.id] = job
        return job

    def _advance(self, job: _Job) -> list[Action]:
        """Play the job on, with every job that may go on meanwhile (see `_run`)."""
        self._push(job)
        return self._run()

    def _resume(self, job_ids: list[int]) -> list[Action]:
        """Go on with the jobs `ordering` let go."""
        self._let_go(job_ids)
        return self._run()

    def _let_go(self, job_ids: list[int]) -> None:
        """Queue the jobs `ordering` let go (a job the host cancelled meanwhile is gone)."""
        for job_id in job_ids:
            job = self._jobs.get(job_id)
            if job is not None:
                self._push(job)

    def _push(self, job: _Job) -> None:
        """The job goes on: into the queue, by the recorded time of its next message."""
        job.alarm = None  # whatever it slept until is moot now
        if job.queued:
            return
        self._queued += 1
        job.queued = self._queued
        heapq.heappush(self._queue, (self._next_time(job), self._queued, job.id))

    def _first(self, job: _Job) -> bool:
        """Whether the queued job's next message goes before every other queued job's, by recorded time (stale
        entries, of jobs that went on meanwhile or are gone, are dropped on the way)."""
        queue = self._queue
        own = False
        while queue:
            _at, entry, other = queue[0]
            found = self._jobs.get(other)
            if found is not None and found.queued == entry:
                if found is not job:
                    break
                own = True  # its own entry: taken out, and put back if it does not go now
            heapq.heappop(queue)
        first = not queue or self._next_time(job) <= queue[0][0]
        if own and not first:
            job.queued = 0
            self._push(job)
        return first

    def _next_time(self, job: _Job) -> float:
        """The recorded time of the job's next message; -1 (before any other) when it has none."""
        at = self._moment(job.index, job.step or 1)
        return -1.0 if at is None else at

    def _moment(self, index: int, step: int) -> float | None:
        """The recorded time of message `step` of interactions[index] (its items, then its response)."""
        moments = self._moments[index]
        return moments[step - 1] if step <= len(moments) else None

    def _run(self) -> list[Action]:
        """Play the queued jobs one message at a time, the earliest recorded message first, so the server's
        recorded order holds across jobs that go on together (a fast call's answer before a slow call's next
        progress). A job stops when it must wait: a delay, its server request's answer, what `ordering` says."""
        if self._running:
            return []  # the loop below is running already, and takes what was queued
        self._running = True
        out: list[Action] = []
        try:
            while self._queue:
                _at, entry, job_id = heapq.heappop(self._queue)
                job = self._jobs.get(job_id)
                if job is None or job.queued != entry:
                    continue
                job.queued = 0
                sent = job.step > 0  # it sends a message now (step 0 only begins it)
                out.extend(self._step(job))
                # A job that sent goes on at once while its next message is not later than any other's: the
                # recorder times the messages of one read alike, and they came in the order of their jobs.
                while sent and job.queued and self._first(job):
                    job.queued = 0
                    out.extend(self._step(job))
        finally:
            self._running = False
        return out

    def _step(self, job: _Job) -> list[Action]:
        """Play the job's next step (a delay, a server item, the response); queued again when it can go on."""
        interaction = job.interaction
        items = interaction.server
        step = job.step
        if step == 0:
            job.step = 1
            self._let_go(self.ordering.arrive(job.index))  # its client message has come
            if interaction.delay:
                return [self._alarm(job, interaction.delay)]
            self._push(job)
            return []
        wait = self._recorded_wait(job, step, self._moment(job.index, step))
        if wait:
            return [self._alarm(job, wait)]  # this step again, once the wait is over
        if job.batch is None:
            verdict = self.ordering.check(job.id, job.index, step, interaction.session)
            if verdict == HELD:
                return [self._alarm(job, self.ordering.gap(job.index, step))]
            if verdict == BLOCKED:
                return []
        if step > len(items):
            return self._finish(job)
        job.step += 1
        item = items[step - 1]
        if item.kind == REQUEST:
            return self._ask(job, item)
        self._push(job)
        return self._server_message(job, item)

    def _event(self, event: Any) -> str:
        """A recorded client event, for people: `interactions[3] (tools/call)`, or a host's answer."""
        if isinstance(event, tuple):
            index, item = event
            method = self.cassette.interactions[index].server[item].message["method"]
            return f"its answer to {method} of interactions[{index}]"
        return f"interactions[{event}] ({self.cassette.interactions[event].method})"

    def _alarm(self, job: _Job, after: float) -> Wake:
        """Wake the job after `after` seconds."""
        self._next_alarm += 1
        job.alarm = self._next_alarm
        self._alarms[job.alarm] = job.id
        return Wake(after, job.alarm)

    def _recorded_wait(self, job: _Job, step: int, at: float | None) -> float:
        """With --timing: how long to wait before this step, as the recording took (scaled); else 0."""
        if not self.timing or at is None or job.clock is None or job.slept == step:
            return 0.0
        wait, job.clock, job.slept = max(0.0, at - job.clock) * self.timing, at, step
        return wait

    def _ask(self, job: _Job, item: ServerItem) -> list[Action]:
        """Send a server-to-client request, under the id `Questions` gives it (its recorded one if it can).

        Not to a host that declared capabilities without the one the request needs, as a server must
        not send it: withheld with a note, and the interaction goes on as recorded.
        """
        missing = None if self._capabilities is None else protocol.missing_capability(self._capabilities, item.message)
        if missing is not None:  # a server must not send it: go on as the recording continues
            withheld = Withheld(job.index, item.message["method"], missing)
            self.report.withheld.append(withheld)
            self._push(job)
            return [Note(withheld.render())]
        out: list[Action] = []
        job.waiting = asked = self._questions.ask(job.id, item)
        recorded = item.message.get("id")
        if asked != recorded and jsonrpc.is_valid_id(recorded):
            text = f"{item.message['method']} from interactions[{job.index}] went out with id {asked!r}"
            out.append(Note(f"mockmcp: {text}: its recorded id {recorded!r} is still awaiting the host's answer"))
        body = {k: v for k, v in self._expanded(item.message).items() if k != "id"}
        data = jsonrpc.encode({"jsonrpc": "2.0", "id": asked, **body})
        out.append(Send(data, job.key, stream=item.stream, method=item.message["method"]))
        return out

    def _server_message(self, job: _Job, item: ServerItem) -> list[Action]:
        if item.kind == RAW:
            line = live.raw_line(self._expanded(item.message))
            return [Send(line, job.key, stream=item.stream, method=live.line_facts(line)[0])]
        recorded = self._expanded(item.message)
        message = recorded if job.token is _KEEP else live.server_message(recorded, job.token, job.reply_id)
        if message is None:
            return []  # progress the live request did not ask for
        data = jsonrpc.encode({"jsonrpc": "2.0", **message})
        return [Send(data, job.key, stream=item.stream, method=message["method"])]

    def _finish(self, job: _Job) -> list[Action]:
        del self._jobs[job.id]
        self._let_go(self.ordering.arrive(("played", job.index)))
        if self._live.get(job.key) == job.id:
            del self._live[job.key]
        interaction = job.interaction
        exit_when = interaction.exit[1] if interaction.exit is not None else None
        out: list[Action] = []
        if job.reply_id is not None and exit_when != "before":
            out.extend(self._reply(job))
        if interaction.exit is not None:
            self.ended = True
            text = (
                f"interactions[{job.index}] ended the session with status {interaction.exit[0]} ({exit_when} replying)"
            )
            self.report.faults.append(text)
            return [*out, Note(f"mockmcp: {text}"), Exit(interaction.exit[0])]
        return out + self._release(job.index)

    def _reply(self, job: _Job) -> list[Action]:
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
        if interaction.raw_response is not None:
            line = live.raw_reply(self._expanded(interaction.raw_response), job.reply_id)
            return [Send(line, job.key, final=True, code=live.line_facts(line)[1])]
        if interaction.response is None:
            return []
        if job.batch is None:
            return [self._encoded_response(job)]
        body = {k: v for k, v in self._response(job).items() if k != "id"}
        return self._answer(job.batch, {"jsonrpc": "2.0", "id": job.reply_id, **body}, job.key, expected=True)

    def _response(self, job: _Job) -> Any:
        """The recorded response as the host gets it: placeholders made the live values; and a hand-written
        request's answer in a stateless session (`model.written_eras`) completed as that era requires."""
        response = self._expanded(job.interaction.response)
        era = self.selection.recordings.eras[job.index]
        if era == protocol.STATELESS and protocol.params_era(job.interaction.params) != era:
            return protocol.as_era_requires(job.interaction.method or "", response)
        return response

    def _encoded_response(self, job: _Job) -> Send:
        """The response; the recorded body is encoded once per interaction, then only the id changes."""
        known = self._tails.get(job.index)
        if known is None:
            response = self._response(job)
            assert response is not None
            known = self._tails[job.index] = (live.reply_tail(response), live.error_code(response))
        return Send(live.reply_line(job.reply_id, known[0]), job.key, final=True, code=known[1])

    def _expanded(self, recorded: Any) -> Any:
        """A recorded message, response or raw line as the host gets it: placeholders made the live values."""
        if not self._live_values:
            return recorded
        if isinstance(recorded, str):
            return self._live_values.expand_text(recorded)
        return self._live_values.expand(recorded)

    def _release(self, anchor: int | None) -> list[Action]:
        """The unsolicited messages recorded after this interaction, now that it has played."""
        out: list[Action] = []
        for index in self.ordering.unsolicited(anchor):
            job = self._new_job(index)
            if anchor is not None and self.timing:
                # With --timing, an unsolicited message keeps its recorded distance from the
                # interaction before it (a log the server sent 5 s after a call comes 5 s after it).
                before = self.cassette.interactions[anchor]
                ended = response_time(before) if before.response is not None else before.at
                if ended is not None and job.clock is not None and before.session == job.interaction.session:
                    job.clock = min(ended, job.clock)
            self._push(job)
        return out + self._run()

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

        method = message["method"]
        code, reason, error = refused or (0, "", None)
        if not code and method in self.selection.recordings.methods:
            code, reason = jsonrpc.NO_MATCH, f"no recorded interaction matches this {method} request"
        elif not code:
            code, reason = jsonrpc.METHOD_NOT_FOUND, f"the cassette never recorded the method {method!r}"
        miss = explain_miss(
            self.cassette, self.matcher, self.report.plays, message["id"], method, message.get("params"), code, reason
        )
        self.report.add_miss(miss)
        if error is None:
            nomatch = code != jsonrpc.METHOD_NOT_FOUND
            said = "mockmcp: no recorded interaction matches" if nomatch else "Method not found"
            error = jsonrpc.error_response(message["id"], code, f"{said}: {method}", miss.error_data())
        return [Note(miss.render()), *self._answer(batch, error, key)]

    def _unlike_the_recording(
        self, method: str, params: Any, declared: dict[str, Any] | None, index: int
    ) -> list[Action]:
        """Note how the live host differs from interactions[index]'s: the protocol version its `initialize`
        asks for, and (once each) the capabilities it declares, which are taken in: a server answers a host
        by what it declared (a shorter tool list without sampling), and server requests follow them."""
        out: list[Action] = []
        recorded = self.cassette.interactions[index].params
        version = emulation.version_note(params, recorded, index) if method == protocol.INITIALIZE else None
        if version is not None:
            if version[1]:
                self.report.capabilities.append(version[0])
            out.append(Note(f"mockmcp: {version[0]}"))
        if declared is None:
            return out
        self._capabilities = declared
        recorded = protocol.client_capabilities(method, recorded)
        if recorded is None:
            return out
        text = self._recorded_capabilities.get(index)
        if text is None:  # each recording's capabilities are made canonical once, not on every request
            text = self._recorded_capabilities[index] = canonical(recorded)
        differences = "" if text == canonical(declared) else emulation.capability_differences(recorded, declared)
        if differences and differences not in self._capability_notes:
            self._capability_notes.add(differences)
            text, note = emulation.capability_note(differences, index, method)
            self.report.capabilities.append(text)
            out.append(Note(note))
        return out
