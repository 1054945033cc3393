"""The replay engine: a cassette and incoming lines in, actions out (`actions`). No I/O, no clocks, no sleeping.

This module takes what the host sends, by what it is: a request begins a job (`play`) on the recording
`selection` picks, or is a miss (`explain`); a notification may cancel one; a response answers a server
request (`branching`). One engine serves one live session; over HTTP each has its own, sharing one `Recordings`.
"""

from __future__ import annotations

from mockmcp._wire import jsonrpc, protocol
from mockmcp.engine import emulation, eras, live
from mockmcp.engine.actions import Action, Cut, Exit, Note, Send, Wake
from mockmcp.engine.batch import Batch, array
from mockmcp.engine.branching import differences
from mockmcp.engine.matching import Matcher, answer_body, canonical
from mockmcp.engine.play import Player, answer
from mockmcp.engine.report import KEPT_MISSES, Mismatch, Report, Withheld
from mockmcp.engine.schedule import ENDED
from mockmcp.engine.selection import Pick, Recordings, Selection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.cassette.model import Cassette, ServerItem
    from mockmcp.engine.emulation import Refusal
    from mockmcp.engine.redact import Redactor
    from mockmcp.engine.schedule import Job

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
        """`timing`: 0 answers at once, else the recorded timing scaled by it; `recordings`: shared (HTTP)."""
        self.matcher, self.redactor, self.timing = matcher, redactor, timing
        self.era: str | None = None  # the live host's, once its first request said it
        self._serve(cassette, recordings or Recordings(cassette, matcher))

    def _serve(self, cassette: Cassette, recordings: Recordings) -> None:
        """Serve this cassette (the recorded one, or its translation into the live host's era)."""
        self.cassette = cassette
        before, self.report = getattr(self, "report", None), Report(cassette)
        if before is not None and before.times is not None:  # translated before anything played: the same clock
            self.report.timed(before.times.clock, before.times.started)
        self.selection = Selection(recordings)
        self.report.sessions, self.report.left = self.selection.sessions, self.selection.left
        self.player = player = Player(self.report, recordings, self.redactor, self.timing)
        # what the engine shares with its player: the jobs, what they wait for, the questions they asked
        self.schedule, self.ordering, self.questions = player.schedule, player.ordering, player.questions
        self.requests = player.requests  # live request (its key, else its id) -> its job

    @property
    def ended(self) -> bool:
        """Whether an interaction's `exit` ended the session: nothing more is read or sent."""
        return self.player.ended

    # --- the engine's interface to its shell ---------------------------------------------------

    def start(self) -> list[Action]:
        """What to send before the host says anything: unsolicited messages recorded first."""
        return self.player.release(None)

    def receive(self, line: bytes, parsed: Any = _UNREAD, key: Any = None) -> list[Action]:
        """Handle one line from the host; `parsed`: as `jsonrpc.parse` read it, when the shell has (HTTP).
        `key`: the shell's name for the live request the message is or cancels when its id does not name it
        (clients of a shared stateless session choose their ids on their own), carried as `Send.request`."""
        if self.player.ended:
            return []
        message = parsed
        if parsed is _UNREAD:
            try:
                message = jsonrpc.parse(line)
            except ValueError as exc:  # includes UnicodeDecodeError, NaN, too deep
                return _unreadable(line, exc)
        if self.redactor:  # the cassette was recorded with secrets replaced: compare like with like
            message = self.redactor.message(message, ids=False)  # the reply carries the host's id
        if jsonrpc.may_hold_lone_surrogates(line):  # and with the recorder's U+FFFD for a lone surrogate
            message = live.as_recorded(message)
        if not isinstance(message, list):
            return self._receive_one(message, None, key)
        if not message:
            return [_sent(jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch"))]
        batch = Batch()
        out = [action for member in message for action in self._receive_one(member, batch)]
        return out + array(batch.seal())

    def wake(self, token: int) -> list[Action]:
        """A wait the engine asked for (`Wake`) is over."""
        job = self.schedule.woken(token)
        if job is None:
            return []  # the job is gone, or went on meanwhile
        if job.state == "sleeping":
            self.schedule.move(job, "go")
            return self.player.run()
        # Held as long as the server took to send it: what the recording's host sent first has not come.
        note = self.ordering.overdue(job, job.index, job.step, self.cassette.interactions)
        if note is not None and len(self.report.reordered) < KEPT_MISSES:
            self.report.reordered.append(note)
        self.schedule.move(job, "block")  # until `give_up` lets it go, unless its server could not go on
        return ([] if note is None else [Note(note)]) + self.player.run(self.ordering.give_up(job))

    def holds(self, token: int) -> bool:
        """Whether a wait the engine asked for still matters (False once its job went on or ended)."""
        return self.schedule.holds(token)

    def close(self) -> list[Action]:
        """The host closed its side: jobs awaiting its answer are abandoned, what waits for its messages goes now
        (it may still be reading), and what the server could not have sent without them is never sent."""
        texts = []
        for asked, job, item in self.questions.abandon():
            self.schedule.move(job, "abandon")
            method, where = item.message["method"], f"interactions[{job.index}]"
            texts.append(f"the host closed the session before answering {method} (id {asked}) from {where}")
        released = [job for waiting in list(self.ordering.waiting) for job in self.ordering.give_up(waiting)]
        out: list[Action] = [Note(f"mockmcp: {text}") for text in texts]
        out += self.player.run(released)
        for job in list(self.ordering.waiting):  # the session ends: nothing more can come
            if job.state not in ENDED:  # one the host cancelled has ended already
                self.schedule.move(job, "abandon")
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
        return [note, *answer(batch, error, found.reply_id)]

    def _request(self, message: dict[str, Any], batch: Batch | None, key: Any) -> list[Action]:
        if self.era is None:
            return self._opened(message, batch, key)
        method, params = message["method"], message.get("params")
        self.report.called(method, params)
        pick = self.selection.request(self.selection.recordings.key(method, params))
        if pick is None:
            if method == protocol.PING:  # answered as a server of the request's era answers it
                pong, note = emulation.ping(message)
                said: list[Action] = [] if note is None else [Note(note)]
                return said + answer(batch, pong, key)
            # an opening of the era the cassette never recorded is refused as its server refuses it
            where = self.cassette.path or "the cassette"
            refused = emulation.closed_world(message, self.cassette)
            refused = refused or emulation.other_era(message, self.cassette.interactions, where)
            return self._miss(message, batch, key, refused)
        out = self._selected(method, pick)
        if pick.interaction is None:
            reason = f"every recording of this {method} request is used up, and the last says `after: unmatched`"
            return out + self._miss(message, batch, key, emulation.Refusal(jsonrpc.NO_MATCH, reason))
        index = pick.interaction
        interaction = self.cassette.interactions[index].played(self.report.plays[index])  # scripted: this turn's
        if pick.repeated:
            self.report.repeats[index] += 1
        declared = protocol.client_capabilities(method, params)
        for note, text in self.player.capabilities.take(method, params, declared, interaction.params, index):
            self.report.capabilities.extend(() if text is None else (text,))
            out.append(Note(note))
        refused = None if declared is None else emulation.undeclared(message["id"], declared, interaction.response)
        if refused is not None:  # it asks what the request did not declare: -32021, as a server says
            self.report.play(index)
            instead = f"answered {protocol.MISSING_CAPABILITY}, as a server of that revision does"
            self.report.withheld.append(Withheld(index, refused[0], refused[1], instead))
            return [*out, Note(self.report.withheld[-1].render()), *answer(batch, refused[2], key)]
        if batch is None and (sent := self.player.at_once(index, message["id"], key)) is not None:
            return out + sent
        job = self.player.begin(index, message["id"], protocol.progress_token(message), batch, key, interaction)
        job.exchange = pick.exchange
        if method == protocol.INITIALIZE:
            job.version = emulation.negotiated(params, interaction.response)
        self.requests[key] = job
        return out + self.player.run()

    def _opened(self, message: dict[str, Any], batch: Batch | None, key: Any) -> list[Action]:
        """The host's first request says its era: a cassette that recorded only the other one, from a server that
        speaks both, is served translated into the host's (before anything played), as that server answers it."""
        self.era = eras.host_era(message)
        translation = None if self.report.plays else eras.for_host(self.era, self.cassette)
        if translation is None:
            return self._request(message, batch, key)
        recorded = protocol.HANDSHAKE if self.era == protocol.STATELESS else protocol.STATELESS
        recordings = Recordings(translation[0], self.matcher)
        recordings.claims = self.selection.recordings.claims  # its sessions keep their numbers, and their takers
        self._serve(translation[0], recordings)
        self.selection.left |= translation[1]
        note = (
            f"mockmcp: the host speaks the {self.era} era and {self.cassette.path or 'the cassette'} recorded the "
            f"{recorded} one, from a server that speaks both: answered as that server answers the host's era"
        )
        return [Note(note), *self.player.release(None), *self._request(message, batch, key)]

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
        if method == protocol.CANCELLED:
            request = protocol.cancelled_request(params) if key is None else key
            if request is not None:
                out.extend(self._cancel(request))
        index = self.selection.notification(self.matcher.key(method, params), self.report.plays)
        if index is not None:
            self.player.begin(index)
            out.extend(self.player.run())
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
                differs = differences(recorded, answered)
                self.report.mismatches.append(Mismatch(job.index, item.message["method"], differs))
                out.append(Note(self.report.mismatches[-1].render()))
        self.schedule.move(job, "go")
        return out + self.player.run()

    def _follow(self, job: Job, index: int, item: ServerItem) -> Note:
        """Go on with the job from the same step of another recording, and follow that recording's session."""
        before = job.index
        self.report.unplay(before)
        self.report.play(index)
        job.index, job.interaction = index, self.cassette.interactions[index]
        self._joined(index)
        # The live host's answer stands for the one recorded there: what waits for it there may go on.
        self.schedule.let_go(self.ordering.arrive(index) + self.ordering.arrive((index, job.step - 2)))
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
                self.schedule.move(job, "go")
            released = self.ordering.arrive(("cancel", job.index)) + self.ordering.arrive(cancel)
            note = Note(f"{said}, as the recording's host did: what its server sent after that follows")
            return [note, *self.player.run(released)]
        self.schedule.move(job, "cancel")
        out = [Note(f"{said}; it will not be answered"), *self.player.run(self.ordering.arrive(("cancel", job.index)))]
        return out if job.batch is None else out + array(job.batch.cancelled(job.interaction))

    def _miss(
        self, message: dict[str, Any], batch: Batch | None, key: Any, refused: Refusal | None = None
    ) -> list[Action]:
        """A request no recording answers: explained on stderr and in the report, answered with an error
        (the refusal's, or one carrying the explanation's short form)."""
        from mockmcp.engine.explain import explain_miss  # deferred: a miss is the only user of deepdiff

        method, request_id = message["method"], message["id"]
        code, reason, error = emulation.refusal(method, refused, self.selection.recordings.methods)
        miss = explain_miss(self.cassette, self.matcher, self.report.plays, message, code, reason)
        if refused is not None and refused.reason.startswith(emulation.CLOSED):  # not a request asked otherwise
            miss = miss._replace(candidates=(), fixes=emulation.CLOSED_FIXES)
        self.report.add_miss(miss)
        if error is None:
            said = (
                "mockmcp: no recorded interaction matches" if code != jsonrpc.METHOD_NOT_FOUND else "Method not found"
            )
            error = jsonrpc.error_response(request_id, code, f"{said}: {method}", miss.error_data())
        return [Note(miss.render()), *answer(batch, error, key)]


def _sent(response: dict[str, Any]) -> Send:
    """An answer to a line that names no request (`final`: False, so no request's stream ends with it)."""
    return Send(jsonrpc.encode(response), code=live.error_code(response))


def _unreadable(line: bytes, exc: ValueError) -> list[Action]:
    """A line that is no JSON: answered -32700, with the id it seems to carry (a reply no request ends)."""
    error = jsonrpc.error_response(jsonrpc.reply_id_of_unread(line, exc), jsonrpc.PARSE_ERROR, f"Parse error: {exc}")
    return [Note(f"mockmcp: the host sent a line that is not JSON ({exc}); answered -32700"), _sent(error)]
