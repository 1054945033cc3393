"""One intercepted server: its cassette, its sessions in the order the host started them, replayed or recorded.

Replayed, its sessions share the cassette's index (`Recordings`): the second session started follows the second
recorded one; started more often than a cassette of several sessions holds, or (strict) less, is the verdict's
problem. Recorded, its sessions go into one journal, each tagged with its number, which becomes the cassette as soon
as no session is open (a forked child ends without running atexit), or `staged` until a verdict keeps it (pytest).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mockmcp._wire.identity import Identity
from mockmcp._wire.words import RecordMode
from mockmcp.cassette import store as cassettes
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.report import Report
from mockmcp.engine.selection import Recordings
from mockmcp.errors import CassetteError
from mockmcp.inprocess._process import Replayed, Tapped
from mockmcp.inprocess._replay import session_engine
from mockmcp.options import ReplayOptions
from mockmcp.record import Journal, journal_path, saved

__all__ = ["NotRecorded", "Server"]


class NotRecorded(CassetteError, OSError):
    """A server the host starts under replay that no cassette holds: to the SDK, a command that could not start."""


class Server:
    """One server identity's sessions in an interception: `path` its cassette, `staged` where its recording goes
    until kept (None: into `path` itself), `env` what tells it from another server with its command line."""

    __slots__ = ("env", "identity", "journal", "open", "path", "recordings", "reports", "sessions", "staged", "start")
    __slots__ += ("taps",)

    def __init__(self, identity: Identity, path: Path, env: str, staged: Path | None = None) -> None:
        self.identity, self.path, self.env, self.staged = identity, path, env, staged
        self.recordings: Recordings | None = None  # the cassette, loaded on the first replayed session
        self.journal: Journal | None = None  # the recording, from its first session on
        self.reports: list[Report] = []
        self.open: list[Tapped] = []  # the sessions of the journal being written
        self.taps = 0  # journals begun: the server was recorded
        self.sessions = 0  # sessions the host started
        self.start = 0.0

    @property
    def shown(self) -> str:
        return " ".join(self.identity.words)

    def load(self, options: ReplayOptions, how_to_record: str) -> Recordings:
        """The cassette, indexed once for every session; raises NotRecorded when there is none."""
        if self.recordings is None:
            if not self.path.exists():
                problem = f"the host started the server `{self.shown}`, and no cassette holds it"
                interrupted = journal_path(str(self.path))
                if os.path.exists(interrupted):
                    how_to_record = f"an interrupted recording of it is in {interrupted}: `mockmcp recover {self.path}`"
                raise NotRecorded(problem, path=str(self.path), fix=how_to_record)
            recorded = cassettes.load(str(self.path))
            self.recordings = Recordings(recorded, Matcher.build(options.ignores, recorded.meta))
        return self.recordings

    def replayed(self, options: ReplayOptions, say: Callable[[str], None], how_to_record: str) -> Replayed:
        """The next session, replayed; raises NotRecorded when there is no cassette."""
        engine = session_engine(self.load(options, how_to_record), options)
        self.sessions += 1
        self.reports.append(engine.report)  # now: a session the host leaves open at the end is judged too
        return Replayed(engine, say)

    def problems(self, strict: bool) -> list[str]:
        """What the sessions' count says: more than the cassette's several recorded sessions (the extra ones
        were answered from an earlier session's state), or, with strict, recorded sessions never started."""
        if self.recordings is None:
            return []
        recorded = len({interaction.session for interaction in self.recordings.cassette.interactions})
        name = self.path.name
        if self.sessions > recorded and (recorded > 1 or strict):
            return [
                f"the host started `{self.shown}` {self.sessions} times; {name} holds {recorded} recorded "
                f"session{'s' * (recorded != 1)}, so {self.sessions - recorded} played an earlier session again: "
                "record it again (--record-mode rewrite) if the host now starts it more often"
            ]
        if strict and self.sessions < recorded:
            return [f"strict: the host started `{self.shown}` {self.sessions} of the {recorded} times {name} recorded"]
        return []

    def tap(self, real: Any, mode: RecordMode, redactor: Redactor, first: bool, ended: Callable[[], None]) -> Tapped:
        """The real server's process, this session journaled; `first`: no session of this server was recorded in
        this run before (else the session is added to them, whole). `ended` is called when no session is open."""
        if self.journal is None:
            self.open_journal(mode, redactor, first)
            self.open = []
        assert self.journal is not None
        tapped = Tapped(real, self.journal, redactor.line, len(self.open), self.start, ended)
        self.sessions += 1
        self.open.append(tapped)
        return tapped

    def open_journal(self, mode: RecordMode, redactor: Redactor, first: bool) -> Journal:
        """The journal of the sessions recorded from now on, into the staged file or the cassette."""
        if not first:
            mode = RecordMode.NEW  # after the run's earlier sessions, each kept whole: a replay plays them in turn
        elif self.staged is not None and mode is RecordMode.NEW and self.path.exists():
            shutil.copyfile(self.path, self.staged)  # the sessions are added to what the cassette holds
        elif self.staged is not None:
            mode = RecordMode.ALL  # a fresh recording in the staged file; keeping it decides the rest
        words = list(self.identity.words)
        self.journal = Journal.fresh(str(self.staged or self.path), mode, redactor, words, whole=not first)
        self.start = time.monotonic()
        self.taps += 1
        return self.journal

    @property
    def idle(self) -> bool:
        """No recorded session of this server is open: its journal may become the cassette."""
        return all(tapped.finished for tapped in self.open)

    def save(self) -> list[str]:
        """The journal made the cassette (or the staged recording), its open sessions ended as they stand; what
        to say of it. Raises MockmcpError."""
        if self.journal is None:
            return []
        journal, target, self.journal = self.journal, str(self.staged or self.path), None
        for tapped in self.open:
            tapped.finish()
        journal.close()
        told = saved(target, "the host's sessions ended")
        journal.raise_failure(target)
        return told
