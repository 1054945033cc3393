"""The plugin's side of one test's mock server: what the host launches, and the verdict after the test.

A recording goes to a staged file and becomes the cassette only when the test passed (`keeping`).
Replay reports are read after the test: a request the cassette could not answer, a server request
the host answered otherwise, or a replay that left no report (killed before it could say) fails the
test with the whole explanation; strict also fails on what the host never asked for, or asked more
often than recorded. What the test itself sees is `mock_server.MockServer`.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mockmcp.errors import CassetteError, MockmcpError, UsageError
from mockmcp.options import RecordOptions, ReplayOptions
from mockmcp.plugin import http_server, keeping, launch
from mockmcp.plugin.naming import CASSETTE_RULE
from mockmcp.plugin.privacy import problem, record_args, substitute_args
from mockmcp.plugin.story import pytest_fixes, render_miss
from mockmcp.words import RecordMode

if TYPE_CHECKING:
    from mockmcp.cassette.model import Cassette

__all__ = ["Harness", "Target", "days_old", "server_command"]


class Target(NamedTuple):
    """What one mock server of a test stands for, and how the test named it (for the messages about it)."""

    cassette: Path
    server: Any = None  # a command line (a list), an object only in-process recording reaches (see `transport`)
    given: str | None = None  # the marker's `cassette=` as written (None: named after the test)
    folder: Path | None = None  # the module's cassette folder, which `given` is a path from
    hand_made: bool = False  # the marker says `record="none"`: no record mode applies
    live: bool = False  # the host talks to the real server itself: nothing recorded, replayed or judged


def days_old(recorded_at: Any, now: datetime.datetime) -> float | None:
    """How many days before `now` a cassette's `meta.recorded_at` is; None when it has no readable date."""
    if isinstance(recorded_at, str):
        try:
            recorded_at = datetime.datetime.fromisoformat(recorded_at.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(recorded_at, datetime.datetime):
        return None
    if recorded_at.tzinfo is None:
        recorded_at = recorded_at.replace(tzinfo=datetime.timezone.utc)
    return (now - recorded_at).total_seconds() / 86400


def server_command(*choices: Any) -> Any:
    """The first server given, in precedence order: a command line (a string is split like a shell would), or
    an object only `transport` can record from (an SDK server object or transport), kept as it is."""
    for choice in choices:
        if isinstance(choice, str):
            if choice:
                return shlex.split(choice)
        elif isinstance(choice, Sequence):
            if choice:
                return [str(part) for part in choice]
        elif choice is not None:
            return choice
    return None


class Harness:
    """One mock server of a test as the plugin drives it: set up before the test, judged and cleaned up after."""

    def __init__(
        self, target: Target, record: RecordOptions, replay: ReplayOptions, workdir: Path, env: Mapping[str, str]
    ) -> None:
        self.target, self.record, self.workdir = target, record, workdir  # workdir: this test's own folder
        self.replay = replay._replace(report=str(workdir / "report-{pid}.json"))
        self.mode = RecordMode.parse(record.mode, allow_none=True)
        self.recording = not target.live and self.mode.records(target.cassette.exists())
        self.env = dict(env)  # the real server may need the user's keys; replay needs nothing more
        self.http: http_server.Served | None = None  # the HTTP mock server, once the test started it
        self.inprocess: Any = None  # the in-process transport, once the test took it (see `transport`)
        self.said = io.StringIO()  # what the in-process transport said (its notes and summaries)
        # A recording test that took the command and never launched it would pass with no cassette written.
        self.handed_out = False
        # Every launch records into one staged file with `--mode new`, so a host that launches the
        # server twice in a test gets both sessions; in mode new it starts from the cassette.
        if self.recording and self.mode is RecordMode.NEW and target.cassette.exists():
            shutil.copyfile(target.cassette, self.staged)

    @property
    def cassette(self) -> Path:
        return self.target.cassette

    @property
    def staged(self) -> Path:
        """Where a recording waits for the test's verdict: beside the cassette, so keeping it is one rename."""
        return keeping.staged_path(self.cassette, os.getpid())

    def _args(self) -> list[str]:
        """`mockmcp record` into the staged file, or `mockmcp replay` of the cassette, with the test's options."""
        if self.recording:
            return ["record", "-o", str(self.staged), "--mode", RecordMode.NEW.value, *record_args(self.record)]
        ignores = [arg for path in self.replay.ignores for arg in ("--ignore", path)]
        report = ["--report", str(self.replay.report)]
        return ["replay", str(self.cassette), *report, *ignores, *substitute_args(self.replay.substitutions)]

    def _command_line(self, wanted: str) -> list[str]:
        """The real server's command line (or URL), for `wanted`; raises UsageError for a server object."""
        server = self.target.server
        if server is None or isinstance(server, list):
            return server or []
        raise UsageError(
            f"the server to record from is {server!r}, which only an in-process recording can reach, not {wanted}",
            "have the host connect to `mockmcp.transport`, or name the server by a command line or URL",
        )

    def command(self) -> list[str]:
        """The command line the host launches instead of the real server (each launch is noted in `workdir`)."""
        self.handed_out = True
        if self.target.live:
            return self._command_line("a command to launch")
        # Each replay says in the test's state file which recorded session it took, so a host that launches
        # the server once per call meets the recorded sessions one after another (see `mockmcp.cli.state`).
        state = ["--state", str(self.workdir / "state.json")]
        tail = ["--", *self._command_line("a command to launch")] if self.recording else state
        return [sys.executable, "-m", launch.__name__, str(self.workdir), *self._args(), *tail]

    def _url(self) -> str:
        """The real server's URL, for a recording proxy over HTTP or a live run; raises UsageError for a command."""
        server = self._command_line("a server over HTTP")
        target = server[0] if len(server) == 1 else ""
        if not target.startswith(("http://", "https://")):
            raise UsageError(
                f"{'running live' if self.target.live else 'recording'} over HTTP needs the real server's URL as "
                f"the server to record from, got {self.target.server!r}",
                "name it as server='http://HOST:PORT/mcp' (the marker, --mockmcp-server, a fixture or the ini)",
            )
        return target

    def start_http(self) -> str:
        """Start the Streamable HTTP mock server of this test, once; returns its URL. Raises UsageError.

        When recording, it is the recording proxy in front of the real server, whose URL is `server`.
        """
        if self.target.live:
            return self._url()
        if self.http is None:
            serve = ["--http-target", self._url(), "--listen"] if self.recording else ["--http"]
            command = [sys.executable, "-m", "mockmcp", *self._args(), *serve, "127.0.0.1:0"]
            self.http = http_server.start(command, self.env, self.workdir)
        return self.http.url

    def transport(self) -> Any:
        """The in-process transport of this test (one for the whole test; each session through it is judged):
        replaying the cassette, or recording the real server into the staged file (see `mockmcp.transport`)."""
        self.handed_out = True
        if self.target.live:
            from mockmcp.shells.inprocess_record import reach

            return reach(self.target.server)[0]
        record, replay = self.record, self.replay
        if self.inprocess is None and self.recording:
            from mockmcp.shells.inprocess_record import RecordingTransport

            self.inprocess = RecordingTransport(
                self.target.server,
                str(self.staged),
                RecordMode.NEW,
                record.redact_env,
                record.redact_patterns,
                log=self.said,
                substitute=dict(record.substitutions),
            )
        elif self.inprocess is None:
            from mockmcp.shells.inprocess import ReplayTransport

            subs = dict(replay.substitutions)
            self.inprocess = ReplayTransport(self.cassette, ignore=replay.ignores, log=self.said, substitute=subs)
        return self.inprocess

    def sessions(self) -> int:
        """How many sessions the host had with this test's server: launches, and sessions in process."""
        return len(self.launches()) + (self.inprocess.sessions if self.inprocess is not None else 0)

    def stop(self) -> None:
        """Stop the HTTP mock server, if the test started one (again is harmless)."""
        if self.http is not None:
            http_server.stop(self.http)

    def problem_before(self, nodeid: str) -> str | None:
        """Why the test cannot run at all (a missing or broken cassette, no server to record from), or None.

        Asked before the test body, so a cassette that cannot load fails the test with its own located
        error before the host launches anything (and not as a replay that died).
        """
        live, cassette = self.target.live, self.cassette
        if (self.recording or live) and not self.target.server:
            asked = "--mockmcp-live" if live else f"--mockmcp-record-mode={self.mode.value}"
            return (
                f"{asked} needs the real server {'of' if live else 'to record'} {cassette}: name it with "
                "--mockmcp-server, @pytest.mark.mockmcp(server=[...]), a `mockmcp_server` fixture, or the "
                "`mockmcp_server` ini option"
            )
        if live:
            return None
        if self.recording and problem(self.record, self.env):
            return f"mockmcp cannot record {cassette}: {problem(self.record, self.env)}"
        if not self.recording and not cassette.exists():
            return self._missing(nodeid)
        if cassette.exists() and (not self.recording or self.mode is RecordMode.NEW):
            return self._unloadable()
        return None

    def _missing(self, nodeid: str) -> str:
        said, target = f"no cassette at {self.cassette}", self.target
        if target.given is not None:
            said += (
                f"; the marker's cassette={target.given!r} is a path from the module's cassette folder, "
                f"{CASSETTE_RULE} (here {target.folder}); move the file there, or give cassette= that path "
                "(an absolute one, or `../` to leave the folder)"
            )
        if target.hand_made:
            return (
                f'{said}.\nThis test is marked record="none": its cassette is hand-made, never recorded. Write it '
                "there by hand (docs/faults.md has recipes), or copy a recorded cassette there and edit it; or remove "
                "record= from the marker to let --mockmcp-record-mode=once record it"
            )
        return (
            f"{said}; record it by running this test with --mockmcp-record-mode=once:\n"
            f"  pytest --mockmcp-record-mode=once {shlex.quote(nodeid)}"
        )

    def _loaded(self) -> Cassette:
        """The cassette, loaded (and cached); raises CassetteError."""
        from mockmcp.cassette import store  # deferred: the plugin's load path stays without YAML

        return store.load(str(self.cassette))

    def _unloadable(self) -> str | None:
        """The cassette's own error (YAML, validation), located, if it cannot load."""
        try:
            self._loaded()
        except CassetteError as error:
            return f"mockmcp: the cassette of this test cannot be loaded:\n{error.render()}"
        return None

    def too_old(self, max_days: float | None, nodeid: str) -> str | None:
        """Why the replayed cassette is older than `max_days` by its `meta.recorded_at`, or None."""
        old_enough = max_days is not None and not (self.recording or self.target.live or self.target.hand_made)
        if not old_enough or not self.cassette.exists():
            return None
        try:
            recorded_at = self._loaded().meta.get("recorded_at")
        except CassetteError:
            return None  # told by `problem_before`
        age = days_old(recorded_at, datetime.datetime.now(datetime.timezone.utc))
        if age is None or age <= float(max_days or 0):
            return None
        where = shlex.quote(str(self.cassette))
        return (
            f"mockmcp: {self.cassette} was recorded {age:.0f} days ago ({recorded_at}), more than the "
            f"{max_days:g} days --mockmcp-max-age (or mockmcp_max_age) allows: check it against the real server "
            f"(`mockmcp verify {where}`) or record it again (pytest --mockmcp-record-mode=all {shlex.quote(nodeid)})"
        )

    def launches(self) -> list[int]:
        """The pids of the servers launched in this test (by the host, or for it over HTTP), oldest first."""
        return launch.launches(str(self.workdir))

    def stderr(self, pid: int) -> str:
        """What the server `pid` wrote to stderr (a replay's notes and summary)."""
        return launch.said(str(self.workdir), pid)

    def _report(self, pid: int, wait: float) -> dict[str, Any] | str:
        """The report of the replay `pid`, or why there is none (waiting a little for one still exiting)."""
        path = Path(str(self.replay.report).replace("{pid}", str(pid)))
        deadline = time.monotonic() + wait
        while not path.exists() and keeping.alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            report: dict[str, Any] = json.loads(path.read_text())
        except FileNotFoundError:
            said = "".join(f"\n  | {line}" for line in self.stderr(pid).splitlines()[-20:])
            return (
                f"the replay the host launched (pid {pid}) ended without writing its report: it was killed or "
                "stopped before it could say whether the cassette served every request, so this test cannot pass"
                + (f"; its last words:{said}" if said else "")
            )
        except ValueError as error:
            return f"the report of the replay the host launched (pid {pid}) is unreadable ({error})"
        return report

    def reports(self, wait: float = 3.0) -> list[dict[str, Any] | str]:
        """The replay report of every launch in this test, oldest first, then of every session in process;
        a string says why one is missing."""
        launched = [self._report(pid, wait) for pid in self.launches()]
        if self.recording or self.inprocess is None:
            return launched
        return [*launched, *(report.to_json() for report in self.inprocess.reports)]

    def sections(self) -> list[tuple[str, str]]:
        """What each of the test's mock servers said on stderr (titled), for a failed test's report."""
        verb = "record" if self.recording else "replay"
        said = [(f"mockmcp {verb} {pid} stderr", self.stderr(pid)) for pid in self.launches()]
        said.append(("mockmcp in process", self.said.getvalue()))
        return [(title, text) for title, text in said if text]

    def never_started(self) -> str | None:
        """After the test: why it is suspicious when the test took this server (its command, parameters,
        transport) and no host ever started it: nothing was played, so nothing was judged. None otherwise."""
        if not self.handed_out or self.target.live or self.sessions():  # live: the real server, never judged
            return None
        return (
            f"mockmcp: the test took the mock server of {self.cassette} but no host started it, so nothing of "
            "the cassette was played or judged (launch `mockmcp.command` or `mockmcp.stdio_params` as the host's "
            "server, or connect the host to `mockmcp.transport`)"
        )

    def verdict(self, nodeid: str) -> str | None:
        """After the test `nodeid`: the full explanation of what the cassette could not do, or None if all is well."""
        strict, problems = self.replay.strict, []
        if strict and self.never_started():
            problems.append("never started (strict): " + str(self.never_started()).removeprefix("mockmcp: "))
        for report in self.reports():
            if isinstance(report, str):
                problems.append(report)
                continue
            problems.extend(render_miss(miss, nodeid, self.target.hand_made) for miss in report["misses"])
            # The host's answers to the server's requests count: a handler that regressed fails its test;
            # so do the capabilities it declares: a server request it no longer declares one for was withheld.
            problems.extend(
                told["explanation"] for told in [*report.get("mismatches", []), *report.get("withheld", [])]
            )
            if strict:
                problems.extend(f"never asked for (strict): {_at(unplayed)}" for unplayed in report["unplayed"])
                problems.extend(_repeated(repeat) for repeat in report["repeats"])
        if not problems:
            return None
        return f"mockmcp: {self.cassette} could not serve this test as recorded:\n" + "\n".join(problems)

    def told_reports(self, nodeid: str) -> list[dict[str, Any]]:
        """The reports of this test's replays (none when recording or live), each miss's fixes in pytest's terms."""
        if self.recording or self.target.live:
            return []
        hand_made = self.target.hand_made
        return [
            {**report, "misses": [{**m, "fixes": list(pytest_fixes(m, nodeid, hand_made))} for m in report["misses"]]}
            for report in self.reports(wait=0.0)
            if isinstance(report, dict)
        ]

    def keep_recording(self, finish: Callable[[Cassette], Cassette]) -> str | None:
        """Make the finished recording the test's cassette, `finish` applied (see `keeping.keep`); returns why
        the test fails instead (the recorder failed, the recording could not be kept), or None."""
        try:
            if keeping.keep(self.staged, self.cassette, finish, self.replay.ignores):
                return None
        except MockmcpError as error:  # a before_record that broke a message: the cassette stays as it was
            self.discard_recording()
            return f"mockmcp: the recording of {self.cassette} could not be kept: {error}"
        journal = keeping.journal(self.staged)
        if journal.exists():  # the session is in it: never delete it
            return (
                f"mockmcp: the recording of {self.cassette} was not saved (the recorder's stderr says why); "
                f"the session is kept in {journal}: `mockmcp recover {journal.with_suffix('')}`"
            )
        self.discard_recording()
        refused = [said for pid in self.launches() if (said := self._refused(pid))]
        if refused:  # as the CLI: no cassette that would lie, and the test says why
            return f"mockmcp: no recording of {self.cassette} was kept: " + "\n".join(refused)
        # The host started the recorder, which ended without a recording: the host sent nothing. As the CLI
        # does then, no cassette is written, and an existing one is left as it was.
        if self.sessions() and not self.staged.exists() and not any(map(keeping.alive, self.launches())):
            return None
        return f"mockmcp: the recording of {self.cassette} did not finish (did the host close the server?)"

    def _refused(self, pid: int) -> str | None:
        """Why the recorder `pid` wrote nothing, if it ended with a failure: its exit status and its last words."""
        status = launch.status(str(self.workdir), pid)
        if not status:
            return None
        said = "".join(f"\n  | {line}" for line in self.stderr(pid).splitlines()[-12:])
        return f"the recorder (pid {pid}) exited with status {status}" + (f":{said}" if said else "")

    def discard_recording(self) -> None:
        """Forget a recording the test's verdict did not keep (the real cassette stays as it was)."""
        keeping.discard(self.staged)


def _at(entry: dict[str, Any]) -> str:
    return f"interactions[{entry['interaction']}] {entry['method']}"


def _repeated(repeat: dict[str, Any]) -> str:
    """A request the host asked more often than recorded, as strict fails it."""
    extra = repeat["extra"]
    return (
        f"asked more often than recorded (strict): {_at(repeat)}, {extra} more time{'s' * (extra != 1)} (the last "
        "recording answered again); if the host may ask it as often as it likes, write `times: any` in that interaction"
    )
