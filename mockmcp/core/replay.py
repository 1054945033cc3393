"""The replay engine: a cassette and incoming lines in, actions out. No I/O, no clocks, no sleeping.

Theory of operation. Every incoming line goes through `receive`, which returns what the shell must
do: `Send` bytes to the host, `Wake` the engine after a delay, `Note` something on stderr. A
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

from mockmcp import jsonrpc, protocol
from mockmcp.cassette.model import RAW, REQUEST, Cassette, Interaction, ServerItem
from mockmcp.core import emulation, live
from mockmcp.core.actions import Action, Exit, Note, Send, Wake
from mockmcp.core.batch import Batch
from mockmcp.core.branching import Questions
from mockmcp.core.matching import Matcher, answer_body, canonical
from mockmcp.core.ordering import GO, HELD, Ordering
from mockmcp.core.report import Mismatch, Report, Withheld
from mockmcp.core.selection import Exchange, Recordings, Selection
from mockmcp.core.timeline import response_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.core.emulation import Refusal
    from mockmcp.core.redact import Redactor

__all__ = ["Action", "Exit", "Note", "Replay", "Send", "Wake"]


_KEEP = object()  # a job that is not answering a live request: server messages go out as recorded
_UNREAD = object()  # `receive` without a parsed message: the line is read there


class _Job:
    """One interaction being played to the host."""

    __slots__ = (
        "batch",
        "clock",
        "exchange",
        "id",
        "index",
        "interaction",
        "key",
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
        self.ended = False
        self.report = Report(cassette)
        self.selection = Selection(recordings or Recordings(cassette, matcher))
        self.report.sessions, self.report.left = self.selection.sessions, self.selection.left
        shared = self.selection.recordings
        # --timing keeps the order of overtaken replies by itself
        self.ordering = Ordering(cassette.interactions, shared.listen_holds, {} if timing else shared.overtakers)
        self._jobs: dict[int, _Job] = {}
        self._live: dict[Any, int] = {}  # live request (its key, else its id) -> job
        self._questions = Questions()  # server requests awaiting the host's answer
        self._next_job = 0
        self._tails: dict[int, tuple[bytes, int | None]] = {}  # interaction -> its reply's tail and error code
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
                    self._send(jsonrpc.error_response(None, jsonrpc.PARSE_ERROR, f"Parse error: {exc}"), None, False),
                ]
        if self.redactor:  # the cassette was recorded with secrets replaced: compare like with like
            message = self.redactor.message(message, ids=False)  # the reply carries the host's id
        if jsonrpc.may_hold_lone_surrogates(line):  # and with the recorder's U+FFFD for a lone surrogate
            message = live.as_recorded(message)
        if isinstance(message, list):
            return self._receive_batch(message)
        return self._receive_one(message, None, key)

    def wake(self, job_id: int) -> list[Action]:
        """A delay the engine asked for is over."""
        job = self._jobs.get(job_id)
        if job is None:
            return []
        if not self.ordering.held(job_id):
            return self._advance(job)
        self.ordering.release(job_id)  # held as long as the server took to answer: the reply goes now
        waited = ", ".join(f"interactions[{k}]" for k in self.ordering.waited(job.index))
        note = Note(
            f"mockmcp: answered interactions[{job.index}] after the {job.interaction.took}s its server took: the "
            f"recording answered {waited} first, which the host has not asked for (yet)"
        )
        return [note, *self._advance(job)]

    def holds(self, job_id: int) -> bool:
        """Whether a job is still to be played (False once it finished or the host cancelled its request)."""
        return job_id in self._jobs

    def close(self) -> list[Action]:
        """The host closed its side: nothing more can arrive, so jobs awaiting an answer are abandoned, and
        replies held for requests the recording answered first go."""
        out: list[Action] = []
        for asked, job_id, item in self._questions.abandon():
            job = self._jobs.pop(job_id)
            text = (
                f"the host closed the session before answering {item.message['method']} "
                f"(id {asked}) from interactions[{job.index}]"
            )
            self.report.unanswered.append(text)
            out.append(Note(f"mockmcp: {text}"))
        # Nor can the requests a held reply waits for: it goes now (the host may still be reading).
        for job in [job for job in self._jobs.values() if self.ordering.held(job.id)]:
            self.ordering.release(job.id)
            out.extend(self._advance(job))
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
        pick = self.selection.request(self.matcher.key(method, params))
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

    def _selected(self, method: str, pick: Any) -> list[Action]:
        """What selection said of its pick: that the live session moved to another recorded session, or that it
        left every recorded session (a mismatch: replay no longer knows what the server answers)."""
        out: list[Action] = [Note(pick.note)] if pick.note else []
        if pick.why:
            mismatch = Mismatch(pick.interaction, method, pick.differs, pick.why)
            self.report.mismatches.append(mismatch)
            out.append(Note(mismatch.render()))
        return out

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
        out: list[Action] = []
        if item.response is None:
            return self._advance(job)
        live, recorded = answer_body(message), answer_body(item.response)
        # job.step - 2: the server request being answered (the step after it is next)
        answered = canonical(live)
        # Among several recorded sessions, the answer tells which are still like the live one (see `selection`).
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
        self.selection.follow(index)
        job.index, job.interaction = index, self.cassette.interactions[index]
        self.ordering.begun(index)
        return Note(
            f"mockmcp: the host answered {item.message['method']} otherwise than interactions[{before}] recorded, "
            f"as interactions[{index}] recorded it; replay goes on from there"
        )

    def _cancel(self, request: Any) -> list[Action]:
        """The host cancelled a live request (by its key, else its id): it will not be answered."""
        job_id = self._live.pop(request, None)
        if job_id is None or job_id not in self._jobs:
            return []
        job = self._jobs.pop(job_id)
        if job.waiting is not None:
            self._questions.withdraw(job.waiting)
        note = Note(
            f"mockmcp: the host cancelled request {job.reply_id!r} (interactions[{job.index}]); it will not be answered"
        )
        out = [note, *self._resume(self.ordering.answered(job.index))]
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
        """Play the job's steps until it finishes or must wait; the steps are delay, server items, response."""
        out: list[Action] = []
        interaction = job.interaction
        items = interaction.server
        while True:
            step = job.step
            job.step += 1
            if step == 0:
                out.extend(self._resume(self.ordering.begin(job.index)))
                if interaction.delay:
                    out.append(Wake(interaction.delay, job.id))
                    return out
                continue
            wait = self._recorded_wait(
                job, step, items[step - 1].at if step <= len(items) else response_time(interaction)
            )
            if wait:
                job.step = step  # this step again, once the wait is over
                out.append(Wake(wait, job.id))
                return out
            if step <= len(items):
                item = items[step - 1]
                if self.ordering.parks(job.id, job.index, step - 1):
                    job.step = step  # this event again, once what caused it has played
                    return out
                if item.kind == REQUEST:
                    return out + self._ask(job, item)
                out.extend(self._server_message(job, item))
            else:
                held = self._hold(job)
                if held is not None:
                    job.step = step  # the reply again, once what the recording answered first has been
                    return out + held
                return out + self._finish(job)

    def _hold(self, job: _Job) -> list[Action] | None:
        """None when the job's reply may go; else what holding it back takes (nothing, when it is held already):
        it waits for what `ordering` says, at most as long as the server took to answer (then `wake`)."""
        if job.reply_id is None or job.batch is not None:
            return None
        held = self.ordering.hold(job.id, job.index)
        if held == GO:
            return None
        return [Wake(job.interaction.took or 0.0, job.id)] if held == HELD else []

    def _resume(self, job_ids: list[int]) -> list[Action]:
        """Go on with the jobs `ordering` let go (a job the host cancelled meanwhile is gone)."""
        out: list[Action] = []
        for job_id in job_ids:
            job = self._jobs.get(job_id)
            if job is not None:
                out.extend(self._advance(job))
        return out

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
            return [Note(withheld.render()), *self._advance(job)]
        out: list[Action] = []
        job.waiting = asked = self._questions.ask(job.id, item)
        recorded = item.message.get("id")
        if asked != recorded and jsonrpc.is_valid_id(recorded):
            text = f"{item.message['method']} from interactions[{job.index}] went out with id {asked!r}"
            out.append(Note(f"mockmcp: {text}: its recorded id {recorded!r} is still awaiting the host's answer"))
        body = {k: v for k, v in item.message.items() if k != "id"}
        data = jsonrpc.encode({"jsonrpc": "2.0", "id": asked, **body})
        out.append(Send(data, job.key, stream=item.stream, method=item.message["method"]))
        return out

    def _server_message(self, job: _Job, item: ServerItem) -> list[Action]:
        if item.kind == RAW:
            line = live.raw_line(item.message)
            return [Send(line, job.key, stream=item.stream, method=live.line_facts(line)[0])]
        message = item.message if job.token is _KEEP else live.server_message(item.message, job.token, job.reply_id)
        if message is None:
            return []  # progress the live request did not ask for
        data = jsonrpc.encode({"jsonrpc": "2.0", **message})
        return [Send(data, job.key, stream=item.stream, method=message["method"])]

    def _finish(self, job: _Job) -> list[Action]:
        del self._jobs[job.id]
        self.ordering.played(job.index)
        if self._live.get(job.key) == job.id:
            del self._live[job.key]
        interaction = job.interaction
        exit_when = interaction.exit[1] if interaction.exit is not None else None
        out: list[Action] = []
        if job.reply_id is not None and exit_when != "before":
            out.extend(self._reply(job))
        if job.reply_id is not None:
            out.extend(self._resume(self.ordering.answered(job.index)))
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
        if interaction.drop:
            self.report.faults.append(f"interactions[{job.index}]: the reply to request {job.reply_id!r} was dropped")
            return []
        if interaction.raw_response is not None:
            line = live.raw_reply(interaction.raw_response, job.reply_id)
            return [Send(line, job.key, final=True, code=live.line_facts(line)[1])]
        if interaction.response is None:
            return []
        if job.batch is None:
            return [self._encoded_response(job)]
        body = {k: v for k, v in interaction.response.items() if k != "id"}
        return self._answer(job.batch, {"jsonrpc": "2.0", "id": job.reply_id, **body}, job.key, expected=True)

    def _encoded_response(self, job: _Job) -> Send:
        """The response; the recorded body is encoded once per interaction, then only the id changes."""
        known = self._tails.get(job.index)
        if known is None:
            response = job.interaction.response
            assert response is not None
            known = self._tails[job.index] = (live.reply_tail(response), live.error_code(response))
        return Send(live.reply_line(job.reply_id, known[0]), job.key, final=True, code=known[1])

    def _release(self, anchor: int | None) -> list[Action]:
        """What waited for this interaction to play: unsolicited messages, then parked listen events."""
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
            out.extend(self._advance(job))
        return out if anchor is None else out + self._resume(self.ordering.unpark(anchor))

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
