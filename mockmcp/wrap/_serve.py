"""One remote server of a wrapped config as `mockmcp serve` runs it, at the port `mockmcp wrap` wrote: the recording
proxy of `record --http-target` or the replay of `replay --http`, finished as they are. Needs the http extra (h11).
"""

from __future__ import annotations

import os
import sys

from mockmcp._wire.words import RecordMode
from mockmcp.cassette import store
from mockmcp.cli.replaying import address, note
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.report import Report
from mockmcp.errors import MockmcpError, UsageError
from mockmcp.http import HttpReplay, LoopServer, RecordingProxy, SessionParts
from mockmcp.record import Journal, later_start, saved
from mockmcp.stdio.toolkit import Signals
from mockmcp.wrap._rules import Remote

__all__ = ["Served"]


class Served:
    """A remote entry's server, started: `server` to run, `said` where it listens, `finish()` after."""

    def __init__(self, remote: Remote, server: LoopServer, said: str, journal: Journal | None) -> None:
        self.remote, self.server, self.said, self.journal = remote, server, said, journal

    @classmethod
    def start(cls, remote: Remote, target: str, mode: RecordMode, replay: bool) -> Served:
        """Listen at the entry's port: replaying its cassette (asked, or mode once and it exists), else recording."""
        listen = ("127.0.0.1", remote.port)
        try:
            if replay or not mode.records(os.path.exists(remote.cassette), later_start(remote.cassette)):
                cassette = store.load(remote.cassette)
                redactor = Redactor.for_replay(cassette, os.environ, (), remote.cassette)
                server = HttpReplay(
                    SessionParts(cassette, Matcher.build((), cassette.meta), redactor), listen, remote.path
                )
                return cls(remote, server, f"{remote.name}: replaying {remote.cassette} at {server.url}", None)
            redactor = Redactor.for_recording(remote.secrets, (), os.environ, option=f"{remote.name}: the variable")
            journal = Journal.fresh(remote.cassette, mode, redactor, [remote.url], runs=True)
            try:
                proxy = RecordingProxy(target, listen, journal, redactor)
                proxy.path = remote.path  # the local endpoint the derived config names; the target's path is its own
            except BaseException:
                journal.discard()
                raise
            said = f"{remote.name}: recording {proxy.url} -> {remote.url} into {remote.cassette}"
            return cls(remote, proxy, said, journal)
        except OSError as exc:
            raise UsageError(
                f"{remote.name}: cannot listen on {address(listen)}: {exc.strerror or exc}",
                "the port is taken: wrap the config again, which picks free ports",
            ) from None

    def abandon(self) -> None:
        """Give up before serving (another server could not start): nothing was recorded."""
        self.server.socket.close()
        if self.journal is not None:
            self.journal.discard()

    def finish(self, signals: Signals | None = None) -> MockmcpError | None:
        """After the loops stopped: save the recording or say the replay's summary; the error, if any. Another of
        `signals` cuts the wait for the answers still under way short, never the save."""
        try:
            if isinstance(self.server, HttpReplay):
                cassette = store.load(self.remote.cassette)
                report = Report.combine(cassette, self.server.shutdown())
                print(report.summary(), file=sys.stderr, flush=True)
                return None
            assert isinstance(self.server, RecordingProxy) and self.journal is not None
            try:
                unfinished = self.server.finish_answers(10.0, signals)
                if unfinished:
                    note(f"{self.remote.name}: {unfinished} answer(s) still coming after 10 s are left out")
            finally:
                self.journal.close()
            for text in saved(self.remote.cassette, "stopped by a signal"):
                note(f"{self.remote.name}: {text}")
            self.journal.raise_failure(self.remote.cassette)
        except MockmcpError as error:
            return error
        return None
