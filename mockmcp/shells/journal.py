"""The recording journal: every line of a session appended as it passes, so no session is lost.

`mockmcp record` appends each (already redacted) line to `CASSETTE.journal` the moment it is
forwarded: one small write per message, so recording cost stays flat as the session grows, and a
`kill -9` of the recorder loses at most the line being written. The cassette is always built from
the journal, at the end of a recording or later by `mockmcp recover CASSETTE`, then saved
atomically, and only then is the journal removed.

Format: JSON lines. The first is a header (`{"mockmcp_journal": 1, "mode": ..., "meta": {...}, "pid": N}`),
then one `{"d": "c"|"s", "t": seconds, "l": line}` per line the client or the server sent, with
`"s": N` when it belongs to the Nth session of several (an HTTP proxy sees many clients), and
`"r": ID` when a server line came on the stream of the client request ID (an HTTP POST's), `"g": 1`
when it came on the session's GET stream, `"e": ID` when it came as the SSE event of that id (a
server that resumes a stream sends its events again under their ids). `{"d": "s", "t": seconds,
"o": N, "max": L}`, tagged likewise (`"a": 1`: it was the reply to request `"r"`), stands for a server
message of N bytes the recorder did not keep, as it was over its limit of L bytes. `{"x": ID}` (with its `"s"`)
says that the HTTP layer turned the client request ID away (a session error): it never reached the
session. `{"b": ID, "t": seconds}` (with its `"s"`) says that the server broke off its answer to the
client request ID then (its stream, or its body, ended before the HTTP message did), after the lines
journaled before it. A line
`{"m": {...}}` adds facts learnt along the way to the header's meta (the HTTP proxy's `http`: how
the server frames its answers); a later one wins. `{"z": STATUS}` says that the server ended the session
on its own, exiting with STATUS, before the host did: the requests still unanswered then never were.

A journal holds the session before redaction of its structure is checked by anyone, so it is
created 0600. The recorder holds an exclusive lock on it (`flock`) for the recording's life, and
its header names the recorder's pid: `holder(path)` tells a live recording from an interrupted one,
so `record` and `recover` can refuse to touch a journal that is still being written.

A journal that cannot be written (a full disk, a file-size limit) must not end the session: the
host's answers still pass. The first failure is said once, on stderr; nothing more is journaled
(so only the very last line can be torn, which `read` expects); `failure` keeps the error for the
recorder to report when the session ends.

The journal is synced to disk (`fdatasync`) at most once a `_SYNC_EVERY` seconds as lines come,
and when it is closed: a crash of the machine loses at most that much of the session, and the
forwarding path pays one sync a second, not one a line.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, NamedTuple

from mockmcp import __version__, jsonrpc
from mockmcp.cassette import store as cassettes
from mockmcp.cassette.files import journal_path
from mockmcp.cassette.model import CUT, Cassette
from mockmcp.core.merge import merge
from mockmcp.core.recorder import CLIENT, SERVER, Recorder, Unkept, era, over_limit, silent
from mockmcp.core.redact import Redactor
from mockmcp.errors import CassetteError
from mockmcp.shells.processes import lock_file
from mockmcp.shells.toolkit import write_all

__all__ = ["Journal", "finish", "holder", "journal_path", "saved"]

_DIRECTIONS = {"c": CLIENT, "s": SERVER}
_SYNC_EVERY = 1.0
"""Seconds between syncs of a journal to disk while lines come (and once more when it is closed)."""

_compact = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps's, made once: a line is journaled per message


class Journal:
    """An append-only journal file, created fresh (an existing one is never overwritten) and locked while open."""

    def __init__(self, path: str, header: dict[str, Any]) -> None:
        self.path = path
        self.failure: OSError | None = None  # the first write that failed; nothing is journaled after it
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # One lock for every writer (the stdio proxy's two pump threads; the HTTP proxy has one loop), and
        # a closed journal takes nothing more: a late line must never reach a file descriptor the process
        # has since given to another file.
        self._lock = threading.Lock()
        self._synced = time.monotonic()
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        lock_file(self._fd)  # a fresh file: nobody else can hold it yet
        header = {"mockmcp_journal": 1, **header, "pid": os.getpid()}
        self._record(header)

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
                print(
                    f"mockmcp: error: cannot write the journal {self.path}: {exc.strerror or exc}; "
                    "the session goes on, but nothing more of it is recorded (what was is kept)",
                    file=sys.stderr,
                    flush=True,
                )

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
        """Journal lines that direction sent at one moment (in session N of several, on the stream of
        client request `stream` when known, or on the session's GET stream; as the SSE event `event`),
        in one write."""
        tag = _tag(session, stream, get, event)
        # surrogateescape keeps bytes that are not UTF-8; json escapes them, so they survive.
        records = (
            _compact({"d": direction[0], "t": round(at, 4), "l": line.decode("utf-8", "surrogateescape"), **tag})
            for line in lines
        )
        self._write("".join(record + "\n" for record in records).encode())

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
        """Journal that the server sent a message of `size` bytes, over the recorder's `limit`, which is not kept
        (tagged as `append` tags a line; `reply`: it was the reply to the client request `stream`; not
        `read_whole`: the recorder stopped reading it after `size` bytes)."""
        record = {"d": "s", "t": round(at, 4), "o": size, "max": limit, **_tag(session, stream, get)}
        if reply:
            record["a"] = 1
        if not read_whole:
            record["p"] = 1
        self._record(record)

    def refused(self, request_id: Any, session: int = 0) -> None:
        """Journal that the client request `request_id` was turned away before reaching the session."""
        self._record({"x": request_id, **_tag(session, None, False)})

    def cut(self, request_id: Any, at: float, session: int = 0) -> None:
        """Journal that the server broke off its answer to the client request `request_id`, `at` seconds in."""
        self._record({"b": request_id, "t": round(at, 4), **_tag(session, None, False)})

    def unreached(self, request_id: Any, at: float, status: int, why: str, session: int = 0) -> None:
        """Journal that the client request `request_id` got no answer from the server, `at` seconds in: the HTTP
        recorder answered it `status` itself, saying `why` (see `Recorder.unreached`)."""
        self._record({"n": request_id, "t": round(at, 4), "h": status, "w": why, **_tag(session, None, False)})

    def _record(self, record: dict[str, Any]) -> None:
        """Journal one record (the header, a fact, not a line the session sent) as one line of compact JSON."""
        self._write(_compact(record).encode() + b"\n")

    def ended(self, status: int) -> None:
        """Journal that the server ended the session on its own, exiting with `status` (see `Recorder.ended`)."""
        self._record({"z": status})

    def meta(self, facts: dict[str, Any]) -> None:
        """Journal facts about the recording learnt along the way; they go into the cassette's meta."""
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
    def fresh(cls, cassette_path: str, mode: Any, redactor: Redactor, server: list[str]) -> Journal:
        """The journal of a new recording of `cassette_path` in `mode` (a RecordMode), from the server named
        by `server`; refuses to start over a recording that is running or one that was interrupted."""
        path = journal_path(cassette_path)
        live = holder(path)
        if live is not None:
            raise CassetteError(
                f"a recording of this cassette is running (process {live or 'unknown'})",
                path=path,
                fix="wait for it to end, or write another cassette",
            )
        if os.path.exists(path):
            raise CassetteError(
                "an interrupted recording of this cassette exists",
                path=path,
                fix=f"run `mockmcp recover {cassette_path}` to turn it into the cassette, or delete the journal",
            )
        meta: dict[str, Any] = {
            "recorded_at": cassettes.now_iso(),
            "server": [redactor.text(part) for part in server],
            "recorder": f"mockmcp {__version__}",
        }
        if redactor.rules():
            meta["redact"] = redactor.rules()
        if redactor.substitutions.names:
            meta["substitute"] = list(redactor.substitutions.names)
        return cls(path, {"mode": mode.value, "meta": meta})

    def raise_failure(self, cassette_path: str) -> None:
        """A journal that could not be written fails the recording, once the session and what it kept are saved."""
        if self.failure is not None:
            why = self.failure.strerror or self.failure
            raise CassetteError(
                f"the recording is incomplete: the journal could not be written ({why}); "
                "the cassette holds the session up to that point",
                path=cassette_path,
                fix="make room (or raise the file-size limit), then record again",
            )


def _tag(session: int, stream: Any, get: bool, event: str | None = None) -> dict[str, Any]:
    """What a journal record says of where a line came: its session, the request stream, the GET stream, the event."""
    tag: dict[str, Any] = {"s": session} if session else {}
    if stream is not None:
        tag["r"] = stream
    if get:
        tag["g"] = 1
    if event is not None:
        tag["e"] = event
    return tag


class Recovered(NamedTuple):
    """What a journal holds: its header and the cassette rebuilt from its lines."""

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
            with os.fdopen(os.dup(fd), "rb") as handle:
                first = handle.readline()
            try:
                pid = json.loads(first).get("pid")
            except (ValueError, AttributeError):
                pid = None
            return pid if isinstance(pid, int) else 0  # 0: a live recorder whose header was never written
        return None
    finally:
        os.close(fd)  # closing drops a shared lock taken above


def read(path: str) -> Recovered:
    """Rebuild the session from a journal; a torn last line (the recorder was killed) is dropped."""
    header, recorders, learnt, torn = _replayed(path)
    skipped = tuple(line for recorder in recorders.values() for line in recorder.skipped)
    built = {number: recorders[number].cassette().interactions for number in sorted(recorders)}
    # A session that left no interaction (a probe the server turned away) takes no number: the sessions are
    # numbered as they come in the cassette, from 0.
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
    """The ids of the host's requests a journal's server has yet to answer (`Recorder.awaited`), as journaled
    so far; every session's of a journal of one (a stdio recording)."""
    _header, recorders, _learnt, _torn = _replayed(path)
    return {key for recorder in recorders.values() for key in recorder.awaited()}


def _replayed(path: str) -> tuple[dict[str, Any], dict[int, Recorder], dict[str, Any], bool]:
    """The journal fed to a recorder per session: its header, the recorders, the facts it learnt, whether its
    last line was torn. Raises CassetteError for what is not a journal, or a damaged line before the last."""
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
            recorder = recorders.setdefault(int(event.get("s", 0)), Recorder())
            if "z" in event:
                recorder.ended(int(event["z"]))
                continue
            if "x" in event:
                recorder.refused(event["x"])
                continue
            if "b" in event:
                recorder.cut(event["b"], float(event["t"]))
                continue
            if "n" in event:
                recorder.unreached(event["n"], float(event["t"]), int(event["h"]), str(event["w"]))
                continue
            if "o" in event:
                at, stream, get, reply = event["t"], event.get("r"), bool(event.get("g")), bool(event.get("a"))
                recorder.unkept(int(event["o"]), int(event["max"]), at, stream, get, reply, not event.get("p"))
                continue
            line = event["l"].encode("utf-8", "surrogateescape")
            event_id = event.get("e")
            if event_id is not None and not isinstance(event_id, str):
                raise TypeError("an event id is a string")
            recorder.feed(_DIRECTIONS[event["d"]], line, event["t"], event.get("r"), bool(event.get("g")), event_id)
        except (ValueError, KeyError, TypeError, AttributeError):
            if number != len(lines):  # only the very last line may be torn
                raise CassetteError(
                    "damaged journal line",
                    path=path,
                    line=number,
                    fix="remove that line and run `mockmcp recover` again",
                ) from None
            torn = True
    return header, recorders, learnt, torn


def finish(cassette_path: str) -> tuple[Cassette, Recovered, tuple[str, ...]]:
    """Build the cassette from its journal, merge as the journal's mode says, save atomically, remove the journal.

    A journal that holds no interaction, or in which the server answered none of the host's requests
    (`recorder.silent`), writes nothing: the cassette, if any, stays as it was.

    Returns the cassette written, what the journal held, and notes for stderr (see `core.merge`; and one for
    each server message the recorder did not keep, as it was over its limit).
    """
    path = journal_path(cassette_path)
    live = holder(path)
    if live is not None:
        raise CassetteError(
            f"a recording is still writing this journal (process {live or 'unknown'})",
            path=path,
            fix="let that recording end (or stop it): it writes the cassette itself when it does",
        )
    recovered = read(path)
    result = recovered.cassette
    notes: tuple[str, ...] = ()
    if not result.interactions or silent(result.interactions):
        # Nothing was recorded, or nothing of the server: never replace a cassette with one that answers
        # nothing, nor write one where there was none (`--mode once` would replay it from then on).
        os.unlink(path)
        return (cassettes.load(cassette_path) if os.path.exists(cassette_path) else result), recovered, notes
    start, numbers = 0, {number: number for number in {i.session for i in result.interactions}}
    if recovered.header.get("mode") == "new" and os.path.exists(cassette_path):
        old = cassettes.load(cassette_path)
        result, notes, numbers = merge(old, result)
        start = len(old.interactions)
    try:
        cassettes.save(result, cassette_path)
    except CassetteError as error:
        # The recorder keeps what a cassette cannot hold as `raw`, so this is a bug of ours: the
        # journal (the whole session) stays, and the message says where it is.
        raise CassetteError(
            f"the recording could not be saved: {error.render()}",
            path=path,
            fix=f"the session is kept in this journal; report the problem, then `mockmcp recover {cassette_path}`",
        ) from error
    except OSError as error:  # a full disk, a file-size limit: the journal stays, the old cassette too
        raise CassetteError(
            f"the recording could not be saved to {cassette_path}: {error.strerror or error}",
            path=path,
            fix=f"the session is kept in this journal; make room, then run `mockmcp recover {cassette_path}`",
        ) from error
    os.unlink(path)
    taken = set(range(start))  # the stand-ins of earlier recordings are none of this one's
    unkept = tuple(
        _unkept_note(cassette_path, result, session, numbers.get(session), fact, taken)
        for session, fact in recovered.unkept
    )
    return result, recovered, notes + unkept


def _unkept_note(
    cassette_path: str, written: Cassette, session: int, number: int | None, fact: Unkept, taken: set[int]
) -> str:
    """What to say of a server message the recorder did not keep (over its limit): where, which, how long, and
    how to fix it. A reply's place is the first interaction of its session (`number` in the cassette written:
    None when it was not written, alike to one the cassette had) and id answered by the stand-in error, and not
    `taken` by an earlier note (an id may be used again)."""
    shown = session if number is None else number  # the session as the cassette numbers it
    of = f" of session {shown}" if shown else ""
    read = "" if fact.read_whole else "more than "  # the recorder stopped reading it: its size is what it read
    over = read + over_limit(fact.size, fact.limit)
    fix = "to record it, have the server send less in one message (a page at a time, say)"
    if fact.reply:
        place = cassette_path
        for index, interaction in enumerate(written.interactions):
            error = (interaction.response or {}).get("error")
            if (
                index not in taken
                and interaction.session == number
                and (interaction.message or {}).get("id") == fact.request
                and isinstance(error, dict)
                and error.get("code") == jsonrpc.NOT_RECORDED
            ):
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

    Raises CassetteError when the server answered none of the host's requests: nothing was written, and
    `reason` (how the server ended, what it said, the address it could not be reached at) says why.
    """
    written, recovered, notes = finish(cassette_path)
    asked = silent(recovered.cassette.interactions)
    if asked:
        kept = f"{cassette_path} was left as it was" if os.path.exists(cassette_path) else "no cassette was written"
        raise CassetteError(
            f"the server answered none of the {asked} request{'s' * (asked != 1)} the host sent, so {kept}: "
            f"a cassette of it would answer nothing, every time; {reason}",
            path=cassette_path,
            fix="make the server start and answer (run its command by hand, or check its URL), then record again",
        )
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
    dropped = sum(i.drop is True for i in recovered.cassette.interactions)
    cut = sum(i.drop == CUT for i in recovered.cassette.interactions)
    ended = sum(i.exit is not None for i in recovered.cassette.interactions)
    if dropped:
        said.append(f"{dropped} request(s) still unanswered when the session ended are kept with `drop: true`")
    if cut:
        said.append(f"{cut} request(s) whose answer the server broke off are kept with `drop: cut`")
    if ended:
        said.append(f"{ended} request(s) the server never answered, as it exited first, are kept with `exit`")
    return [
        *said,
        f"recorded {len(recovered.cassette.interactions)} interactions into {cassette_path} "
        f"({len(written.interactions)} in the cassette); {reason}",
    ]
