"""The recording journal: every line of a session appended as it passes, so no session is lost.

Each (redacted) line goes to `CASSETTE.journal` as it is forwarded, one small write a message: a `kill -9`
loses at most one line. The cassette is built from it (at the end, or by `mockmcp recover`), saved atomically,
and only then is it removed. The journal is 0600, `flock`ed while written (`holder`), synced at most once a
`_SYNC_EVERY`; a write that fails ends the journaling, never the session (`failure` fails the recording at its end).

Format, JSON lines: a header `{"mockmcp_journal": 1, "mode", "meta", "pid"}`, then per line sent
`{"d": "c"|"s", "t": seconds, "l": line}`, tagged `"s"` (session N of several), `"r"` (on client
request ID's stream), `"g": 1` (GET stream), `"e"` (SSE event id). Facts: `{"o": N, "max": L}` a
server message not kept (`"a": 1` the reply to `"r"`, `"p": 1` not read whole); `{"x": ID}` a request
turned away; `{"b": ID}` an answer broken off; `{"n": ID, "h", "w"}` no answer, the proxy answered
status h; `{"m": {...}}` meta learnt (a later one wins); `{"z": STATUS}` the server exited first;
`{"k": DIGEST, "base": N}` the cassette saved from the journal as it stood (`snapshot`), after N interactions
it held before (the header's "run": the run recording it, see `files.begun_by_this_run`).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, NamedTuple

from mockmcp import __version__
from mockmcp._wire import jsonrpc
from mockmcp._wire.credentials import server_words
from mockmcp._wire.words import RecordMode
from mockmcp.cassette import store as cassettes
from mockmcp.cassette.files import begun_by_this_run, file_digest, journal_path, mark_run, this_run
from mockmcp.cassette.model import CUT, Cassette
from mockmcp.engine.redact import Redactor
from mockmcp.errors import CassetteError
from mockmcp.record._merge import merge
from mockmcp.record._recorder import CLIENT, SERVER, Recorder, Unkept, era, over_limit, silent
from mockmcp.stdio.processes import lock_file
from mockmcp.stdio.toolkit import write_all

__all__ = ["Journal", "finish", "holder", "journal_path", "saved", "settled", "snapshot"]

_DIRECTIONS = {"c": CLIENT, "s": SERVER}
_SYNC_EVERY = 1.0  # seconds between syncs while lines come

_compact = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps's, made once: a line is journaled per message


class Journal:
    """An append-only journal file, created fresh (an existing one is never overwritten) and locked while open."""

    def __init__(self, path: str, header: dict[str, Any], cassette: str | None = None) -> None:
        self.path = path
        self.cassette = cassette  # the cassette it becomes, when known (`snapshot`)
        self.failure: OSError | None = None  # the first write that failed; nothing is journaled after it
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # One lock for every writer (the stdio proxy's two threads); a closed journal takes nothing more, so a
        # late line never reaches a descriptor since given to another file.
        self._lock = threading.Lock()
        self._synced = time.monotonic()
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        lock_file(self._fd)  # a fresh file: nobody else can hold it yet
        self._record({"mockmcp_journal": 1, **header, "pid": os.getpid()})

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None or self.failure is not None:
                return
            try:
                write_all(self._fd, data)
                if time.monotonic() - self._synced >= _SYNC_EVERY:
                    self._sync()
            except OSError as exc:  # ENOSPC, EFBIG (SIGXFSZ is ignored), EIO...: the session goes on
                self.failure = exc
                said = (
                    f"mockmcp: error: cannot write the journal {self.path}: {exc.strerror or exc}; the session goes on"
                )
                print(f"{said}, but nothing more of it is recorded (what was is kept)", file=sys.stderr, flush=True)

    def append(
        self,
        direction: str,
        at: float,
        lines: list[bytes],
        session: int = 0,
        stream: Any = None,
        get: bool = False,
        event: str | None = None,
    ) -> None:
        """Journal lines `direction` sent at one moment, in one write (tagged as the module says)."""
        tag = _tag(session, stream, get, event)
        texts = (line.decode("utf-8", "surrogateescape") for line in lines)  # bytes not UTF-8 survive, escaped
        records = (_compact({"d": direction[0], "t": round(at, 4), "l": text, **tag}) + "\n" for text in texts)
        self._write("".join(records).encode())

    def unkept(
        self,
        at: float,
        size: int,
        limit: int,
        session: int,
        stream: Any,
        get: bool,
        reply: bool = False,
        read_whole: bool = True,
    ) -> None:
        """Journal a server message of `size` bytes over `limit`, not kept (see `Recorder.unkept`)."""
        record = {"d": "s", "t": round(at, 4), "o": size, "max": limit, **_tag(session, stream, get)}
        if reply:
            record["a"] = 1
        if not read_whole:
            record["p"] = 1
        self._record(record)

    def refused(self, request_id: Any, session: int = 0) -> None:
        self._record({"x": request_id, **_tag(session)})

    def cut(self, request_id: Any, at: float, session: int = 0) -> None:
        self._record({"b": request_id, "t": round(at, 4), **_tag(session)})

    def unreached(self, request_id: Any, at: float, status: int, why: str, session: int = 0) -> None:
        self._record({"n": request_id, "t": round(at, 4), "h": status, "w": why, **_tag(session)})

    def _record(self, record: dict[str, Any]) -> None:
        self._write(_compact(record).encode() + b"\n")

    def ended(self, status: int) -> None:
        self._record({"z": status})

    def meta(self, facts: dict[str, Any]) -> None:
        self._record({"m": facts})

    def _sync(self) -> None:
        assert self._fd is not None
        getattr(os, "fdatasync", os.fsync)(self._fd)  # macOS has no fdatasync
        self._synced = time.monotonic()

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                try:
                    if self.failure is None:
                        self._sync()
                except OSError:
                    pass  # what was written is in the file for this machine's readers all the same
                os.close(self._fd)
                self._fd = None

    def discard(self) -> None:
        """Close and remove a journal that recorded nothing (the server never started)."""
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    @classmethod
    def fresh(
        cls,
        cassette_path: str,
        mode: Any,
        redactor: Redactor,
        server: list[str],
        whole: bool = False,
        runs: bool = False,
    ) -> Journal:
        """The journal of a new recording; refuses to start over one running or interrupted (CassetteError).
        `runs`: a recorder a host started, its run (`files.this_run`) noted with each save; in a cassette this
        run saved, its session is added whole, whatever the mode."""
        path = journal_path(cassette_path)
        live = holder(path)
        if live is not None:
            problem = f"a recording of this cassette is running (process {live or 'unknown'})"
            raise CassetteError(problem, path=path, fix="wait for it to end, or write another cassette")
        if os.path.exists(path) and runs and _header(path).get("run") == this_run():
            # An earlier start of this run was killed after it saved (the host's shutdown): what its journal holds
            # goes into the cassette first, as `mockmcp recover` would, and this session after it.
            try:
                said = saved(cassette_path, "an earlier start by this host was stopped before it ended")
            except CassetteError as error:  # it recorded nothing of the server: its journal is gone
                said = [error.render()]
            for text in said:
                print(f"mockmcp: {text}", file=sys.stderr, flush=True)
        if os.path.exists(path):
            fix = f"run `mockmcp recover {cassette_path}` to turn it into the cassette, or delete the journal"
            raise CassetteError("an interrupted recording of this cassette exists", path=path, fix=fix)
        # No credential reaches the cassette: a URL is bare, a secret flag's value or a key's shape [REDACTED].
        words = [redactor.text(part) for part in server_words(server)]
        recorder = f"mockmcp {__version__}"
        meta: dict[str, Any] = {"recorded_at": cassettes.now_iso(), "server": words, "recorder": recorder}
        known = {"redact": redactor.rules(), "substitute": list(redactor.substitutions.names)}
        meta.update((key, value) for key, value in known.items() if value)
        header: dict[str, Any] = {"mode": mode.value, "meta": meta}
        if runs and begun_by_this_run(cassette_path):
            header["mode"], whole = RecordMode.NEW.value, True  # a later start: a further session of the run's
            said = f"mockmcp: {cassette_path} was recorded earlier in this run (by process {os.getppid()}, this"
            said += " recorder's parent): this session is added to it, whole; a new run replays or records afresh"
            print(said, file=sys.stderr, flush=True)
        if whole:
            header["whole"] = True
        if runs:
            header["run"] = this_run()
        return cls(path, header, cassette_path)

    def raise_failure(self, cassette_path: str) -> None:
        """A journal that could not be written fails the recording, once what it kept is saved."""
        if self.failure is not None:
            why = f"the journal could not be written ({self.failure.strerror or self.failure})"
            problem = f"the recording is incomplete: {why}; the cassette holds the session up to that point"
            fix = "make room (or raise the file-size limit), then record again"
            raise CassetteError(problem, path=cassette_path, fix=fix)


def _tag(session: int, stream: Any = None, get: bool = False, event: str | None = None) -> dict[str, Any]:
    tag: dict[str, Any] = {"s": session} if session else {}
    if stream is not None:
        tag["r"] = stream
    if get:
        tag["g"] = 1
    if event is not None:
        tag["e"] = event
    return tag


class Recovered(NamedTuple):
    header: dict[str, Any]
    cassette: Cassette
    torn: bool
    skipped: tuple[str, ...] = ()  # client lines no cassette can hold as messages, so not in the cassette
    unkept: tuple[tuple[int, Unkept], ...] = ()  # server messages over the recorder's limit, by session


def holder(path: str) -> int | None:
    """The pid of the live recorder writing this journal, or None when none holds it (or it does not exist)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if not lock_file(fd, shared=True, wait=False):
            pid = _header(path).get("pid")
            return pid if isinstance(pid, int) else 0  # 0: a live recorder whose header was never written
        return None
    finally:
        os.close(fd)  # closing drops a shared lock taken above


def _header(path: str) -> dict[str, Any]:
    """A journal's first line as a dict; {} when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return _event(handle.readline())
    except OSError:
        return {}


def read(path: str) -> Recovered:
    """Rebuild the session from a journal; a torn last line (the recorder was killed) is dropped."""
    header, recorders, learnt, torn = _replayed(path)
    skipped = tuple(line for recorder in recorders.values() for line in recorder.skipped)
    built = {number: recorders[number].cassette().interactions for number in sorted(recorders)}
    # Sessions are numbered as they come in the cassette; one that left no interaction takes no number.
    numbers = {number: n for n, number in enumerate(number for number, made in built.items() if made)}
    interactions = tuple(
        interaction._replace(session=numbers[number]) for number, made in built.items() for interaction in made
    )
    cassette = Cassette(interactions, {**(header.get("meta") or {}), **learnt, **era(interactions)})
    unkept = tuple(
        (numbers.get(number, number), fact)
        for number in sorted(recorders)
        for fact in recorders[number].unkept_messages
    )
    return Recovered(header, cassette, torn, skipped, unkept)


def awaited(path: str) -> set[Any]:
    """The ids of the host's requests the journal's server has yet to answer (`Recorder.awaited`), so far."""
    _header, recorders, _learnt, _torn = _replayed(path)
    return {key for recorder in recorders.values() for key in recorder.awaited()}


def _replayed(path: str) -> tuple[dict[str, Any], dict[int, Recorder], dict[str, Any], bool]:
    """The journal fed to a recorder per session: header, recorders, meta learnt, whether the last line was torn.
    Raises CassetteError for what is not a journal, or a damaged line before the last."""
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("mockmcp_journal") != 1:
        raise CassetteError("not a mockmcp journal", path=path, line=1, fix="remove it if it is not yours")
    recorders: dict[int, Recorder] = {}
    learnt: dict[str, Any] = {}
    torn = False
    for number, raw in enumerate(lines[1:], 2):
        if not raw:
            continue
        try:
            event = json.loads(raw)
            if isinstance(event.get("m"), dict):
                learnt.update(event["m"])
                continue
            if "k" in event:  # the cassette saved as the journal then stood (`snapshot`): the last one counts
                header["snapshot"] = [str(event["k"]), int(event["base"])]
                continue
            recorder = recorders.setdefault(int(event.get("s", 0)), Recorder())
            stream, get = event.get("r"), bool(event.get("g"))
            if "z" in event:
                recorder.ended(int(event["z"]))
            elif "x" in event:
                recorder.refused(event["x"])
            elif "b" in event:
                recorder.cut(event["b"], float(event["t"]))
            elif "n" in event:
                recorder.unreached(event["n"], float(event["t"]), int(event["h"]), str(event["w"]))
            elif "o" in event:
                reply = bool(event.get("a"))
                recorder.unkept(int(event["o"]), int(event["max"]), event["t"], stream, get, reply, not event.get("p"))
            elif isinstance(event_id := event.get("e"), str) or event_id is None:
                line = event["l"].encode("utf-8", "surrogateescape")
                recorder.feed(_DIRECTIONS[event["d"]], line, event["t"], stream, get, event_id)
            else:
                raise TypeError("an event id is a string")
        except (ValueError, KeyError, TypeError, AttributeError):
            if number != len(lines):  # only the very last line may be torn
                fix = "remove that line and run `mockmcp recover` again"
                raise CassetteError("damaged journal line", path=path, line=number, fix=fix) from None
            torn = True
    return header, recorders, learnt, torn


def finish(cassette_path: str) -> tuple[Cassette, Recovered, tuple[str, ...]]:
    """Build the cassette from its journal, merge as its mode says, save atomically, remove the journal.
    A journal with nothing of the server writes nothing. Returns the cassette, what the journal held, and
    notes for stderr (merge's, and one per message not kept)."""
    path = journal_path(cassette_path)
    live = holder(path)
    if live is not None:
        problem = f"a recording is still writing this journal (process {live or 'unknown'})"
        fix = "let that recording end (or stop it): it writes the cassette itself when it does"
        raise CassetteError(problem, path=path, fix=fix)
    recovered = read(path)
    built = _built(cassette_path, recovered)
    if built is None:
        # Nothing was recorded, or nothing of the server: never replace a cassette with one that answers
        # nothing, nor write one where there was none (`--mode once` would replay it from then on).
        os.unlink(path)
        exists = os.path.exists(cassette_path)
        return (cassettes.load(cassette_path) if exists else recovered.cassette), recovered, ()
    result, notes, numbers, start = built
    _save(result, cassette_path, recovered.header)
    os.unlink(path)
    taken = set(range(start))  # the stand-ins of earlier recordings are none of this one's
    unkept = tuple(
        _unkept_note(cassette_path, result, session, numbers.get(session), fact, taken)
        for session, fact in recovered.unkept
    )
    return result, recovered, notes + unkept


def snapshot(journal: Journal) -> None:
    """Save the cassette from the journal as it stands, the journal kept open, before a host's shutdown can kill
    the recorder; `finish` saves it again from what the cassette held before. Raises CassetteError."""
    if journal.cassette is None:
        return
    recovered = read(journal.path)
    built = _built(journal.cassette, recovered)
    if built is None:
        return
    result, _notes, _numbers, start = built
    _save(result, journal.cassette, recovered.header)
    journal._record({"k": file_digest(journal.cassette), "base": start})


def settled(cassette_path: str) -> bool:
    """Whether an interrupted recording's journal adds nothing a replay needs: the cassette is its last snapshot
    (taken when the host left), unchanged since, and only the server spoke after it."""
    try:
        with open(journal_path(cassette_path), "rb") as handle:
            events = [_event(raw) for raw in handle.read().split(b"\n")[1:]]
    except OSError:
        return False
    marks = [index for index, event in enumerate(events) if "k" in event]
    if not marks or events[marks[-1]]["k"] != file_digest(cassette_path):
        return False
    return all(event.get("d") != "c" for event in events[marks[-1] + 1 :])


def _event(raw: bytes) -> dict[str, Any]:
    try:
        event = json.loads(raw)
    except ValueError:  # a torn last line
        return {}
    return event if isinstance(event, dict) else {}


def _built(cassette_path: str, recovered: Recovered) -> tuple[Cassette, tuple[str, ...], dict[int, int], int] | None:
    """The cassette the journal makes, merged as its mode says; None when it holds nothing of the server.
    Also returns merge's notes, the number each session has in it, and how many interactions come before."""
    result = recovered.cassette
    if not result.interactions or silent(result.interactions):
        return None
    start, numbers, notes = 0, {number: number for number in {i.session for i in result.interactions}}, ()
    if recovered.header.get("mode") == "new" and os.path.exists(cassette_path):
        old = cassettes.load(cassette_path)
        taken = recovered.header.get("snapshot")
        if taken is not None and file_digest(cassette_path) == taken[0]:
            old = old._replace(interactions=old.interactions[: taken[1]])  # what it held before this recording
        result, notes, numbers = merge(old, result, bool(recovered.header.get("whole")))
        start = len(old.interactions)
    return result, notes, numbers, start


def _save(result: Cassette, cassette_path: str, header: dict[str, Any]) -> None:
    """Save the recording (and say which run did, see `files.mark_run`); raises CassetteError, the journal kept."""
    path = journal_path(cassette_path)
    try:
        cassettes.save(result, cassette_path)
    except CassetteError as error:
        # The recorder keeps what a cassette cannot hold as `raw`, so this is a bug of ours: the journal stays.
        fix = f"the session is kept in this journal; report the problem, then `mockmcp recover {cassette_path}`"
        raise CassetteError(f"the recording could not be saved: {error.render()}", path=path, fix=fix) from error
    except OSError as error:  # a full disk, a file-size limit: the journal stays, the old cassette too
        problem = f"the recording could not be saved to {cassette_path}: {error.strerror or error}"
        fix = f"the session is kept in this journal; make room, then run `mockmcp recover {cassette_path}`"
        raise CassetteError(problem, path=path, fix=fix) from error
    if isinstance(header.get("run"), str):
        mark_run(cassette_path, header["run"])


def _unkept_note(
    cassette_path: str, written: Cassette, session: int, number: int | None, fact: Unkept, taken: set[int]
) -> str:
    """What to say of a server message not kept. A reply's place is the first stand-in error of its session
    (`number` in the cassette written; None when not written) and id not `taken` by an earlier note."""
    shown = session if number is None else number  # the session as the cassette numbers it
    of = f" of session {shown}" if shown else ""
    read = "" if fact.read_whole else "more than "  # the recorder stopped reading it: its size is what it read
    over = read + over_limit(fact.size, fact.limit)
    fix = "to record it, have the server send less in one message (a page at a time, say)"
    if fact.reply:
        place = cassette_path
        for index, interaction in enumerate(written.interactions):
            error = (interaction.response or {}).get("error")
            asked = interaction.session == number and (interaction.message or {}).get("id") == fact.request
            if asked and index not in taken and isinstance(error, dict) and error.get("code") == jsonrpc.NOT_RECORDED:
                taken.add(index)
                place = f"{cassette_path}: interactions[{index}].response"
                break
        return (
            f"{place}: the answer to {fact.method} request {fact.request!r}{of} was {over}: the cassette holds an "
            f"error ({jsonrpc.NOT_RECORDED}) in its place, which replay answers with; {fix}, or write the answer "
            "there by hand"
        )
    if fact.get:
        came = "on the GET stream"
    elif fact.request is not None:
        came = f"on the stream of {fact.method or 'the'} request {fact.request!r}"
    else:
        came = "on a stream"
    return (
        f"{cassette_path}: a server message {came}{of}, {fact.at:g} s into the recording, was {over}: it is not "
        f"in the cassette, and replay does not send it; {fix}"
    )


def saved(cassette_path: str, reason: str) -> list[str]:
    """Finish a recording that ended (see `finish`); returns what to say of it, `reason` saying how it ended.
    Raises CassetteError when the server answered none of the host's requests (nothing was written)."""
    written, recovered, notes = finish(cassette_path)
    asked = silent(recovered.cassette.interactions)
    if asked:
        kept = f"{cassette_path} was left as it was" if os.path.exists(cassette_path) else "no cassette was written"
        problem = (
            f"the server answered none of the {asked} request{'s' * (asked != 1)} the host sent, so {kept}: "
            f"a cassette of it would answer nothing, every time; {reason}"
        )
        fix = "make the server start and answer (run its command by hand, or check its URL), then record again"
        raise CassetteError(problem, path=cassette_path, fix=fix)
    said = list(notes)
    if recovered.skipped:
        first = recovered.skipped[0][:80]
        said.append(
            f"{len(recovered.skipped)} line(s) the host sent were no JSON-RPC message a cassette can hold, "
            f"and are not in {cassette_path} (the first: {first!r})"
        )
    if not recovered.cassette.interactions:
        exists = os.path.exists(cassette_path)
        kept = f"{cassette_path} was left as it was" if exists else f"no cassette was written to {cassette_path}"
        return [*said, f"nothing was recorded; {kept}; {reason}"]
    items = recovered.cassette.interactions
    kinds = [
        (sum(i.drop is True for i in items), "still unanswered when the session ended are kept with `drop: true`"),
        (sum(i.drop == CUT for i in items), "whose answer the server broke off are kept with `drop: cut`"),
        (sum(i.exit is not None for i in items), "the server never answered, as it exited first, are kept with `exit`"),
    ]
    said += [f"{count} request(s) {what}" for count, what in kinds if count]
    recorded = f"recorded {len(items)} interactions into {cassette_path} ({len(written.interactions)} in the cassette)"
    return [*said, f"{recorded}; {reason}"]
