"""The plugin's side of one host test's mock server: which cassette, which command, and the verdict afterwards.

The pytest plugin is only hooks and fixtures over this module, so the rules live here once:

- the cassette of a test: see `naming`;
- the real server to record from: the command line, then the marker, then the fixture, then the ini
  option, the first that names one;
- record modes as in `mockmcp record`, with `none` (the default) never recording: a missing
  cassette fails with the exact command that records it;
- a recording goes to a staged file and becomes the cassette only when the test passed (see `keeping`);
- replay reports are read after the test: a request the cassette could not answer, or a server
  request the host answered differently from the recording, fails the test with the whole
  explanation; so does a replay the host launched that left no report (it was killed before it
  could say); strict also fails on interactions the host never asked for, and on requests it asked more
  often than recorded.

What the test itself sees of all this is `mock_server.MockServer`: the command to launch, or the
URL of a server started for it.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mockmcp.errors import UsageError
from mockmcp.plugin import http_server, keeping, launch
from mockmcp.plugin.naming import CASSETTE_RULE, Origin
from mockmcp.plugin.privacy import Privacy
from mockmcp.plugin.story import pytest_fixes, render_miss
from mockmcp.words import RecordMode

__all__ = ["Harness", "MODES", "check_mode", "days_old", "server_command"]

# The plugin's record modes: `mockmcp record`'s, and `none`, the default, which never records (so CI
# never does by accident).
MODES = RecordMode.choices(allow_none=True)


def check_mode(text: str) -> str:
    """A record mode of the plugin; raises UsageError naming the valid ones."""
    return RecordMode.parse(text, allow_none=True).value


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


def _repeated(repeat: dict[str, Any]) -> str:
    """A request the host asked more often than recorded, as strict fails it."""
    extra = repeat["extra"]
    return (
        f"asked more often than recorded (strict): interactions[{repeat['interaction']}] {repeat['method']}, "
        f"{extra} more time{'s' * (extra != 1)} (the last recording answered again); if the host may ask it "
        "as often as it likes, write `times: any` in that interaction"
    )


class Harness:
    """One test's mock server as the plugin drives it: set up before the test, judged and cleaned up after."""

    def __init__(
        self,
        cassette: Path,
        mode: str,
        server: Any,
        workdir: Path,
        ignores: Sequence[str] = (),
        strict: bool = False,
        privacy: Privacy | None = None,
        *,
        origin: Origin | None = None,
        live: bool = False,
    ) -> None:
        self.cassette = cassette
        self.strict = strict
        self.workdir = workdir  # this test's own folder, for replay reports
        self.mode = check_mode(mode)
        self.origin = origin or Origin()
        # Live: the host talks to the real server itself; nothing is recorded, replayed or judged.
        self.live = live
        self.recording = not live and RecordMode(self.mode).records(cassette.exists())
        self.server = server  # a command line, or an object to record from in process (see `server_command`)
        self.ignores = list(ignores)
        self.privacy = privacy or Privacy()
        self.env = dict(os.environ)  # the real server may need the user's keys; replay needs nothing more
        self.http: http_server.Served | None = None  # the HTTP mock server, once the test started it
        self.inprocess: Any = None  # the in-process transport, once the test took it (see `transport`)
        self.said = io.StringIO()  # what the in-process transport said (its notes and summaries)
        # Whether the test took the command to launch: a recording test that took it and never launched
        # it would pass with no cassette written, and fail only on its next (replaying) run.
        self.handed_out = False
        # Every launch records into one staged file with `--mode new`, so a host that launches the
        # server twice in a test gets both sessions; in mode new it starts from the cassette.
        if self.recording and self.mode == RecordMode.NEW.value and cassette.exists():
            shutil.copyfile(cassette, self.staged)

    @property
    def staged(self) -> Path:
        """Where a recording is written before the test's verdict decides whether it is kept.

        Beside the cassette, so that keeping it is one rename on the same file system.
        """
        return keeping.staged_path(self.cassette, os.getpid())

    def _record_args(self) -> list[str]:
        return ["record", "-o", str(self.staged), "--record-mode", RecordMode.NEW.word, *self.privacy.record_args()]

    def _replay_args(self) -> list[str]:
        ignores = [arg for path in self.ignores for arg in ("--ignore", path)]
        report = str(self.workdir / "report-{pid}.json")
        return ["replay", str(self.cassette), "--report", report, *ignores, *self.privacy.substitute_args()]

    def _command_line(self, wanted: str) -> list[str]:
        """The real server's command line (or URL), for `wanted`; raises UsageError for a server object."""
        if self.server is None or isinstance(self.server, list):
            return self.server or []
        raise UsageError(
            f"the server to record from is {self.server!r}, which only an in-process recording can reach, not {wanted}",
            "have the host connect to `mockmcp.transport`, or name the server by a command line or URL",
        )

    def command(self) -> list[str]:
        """The command line the host launches instead of the real server (each launch is noted in `workdir`)."""
        self.handed_out = True
        if self.live:
            return self._command_line("a command to launch")
        # Each replay says in the test's state file which recorded session it took, so a host that launches
        # the server once per call meets the recorded sessions one after another (see `mockmcp.cli.state`).
        state = ["--state", str(self.workdir / "state.json")]
        args = (
            [*self._record_args(), "--", *self._command_line("a command to launch")]
            if self.recording
            else [*self._replay_args(), *state]
        )
        return [sys.executable, "-m", launch.__name__, str(self.workdir), *args]

    def _url(self) -> str:
        """The real server's URL, for a recording proxy over HTTP or a live run; raises UsageError for a command."""
        server = self._command_line("a server over HTTP")
        target = server[0] if len(server) == 1 else ""
        if not target.startswith(("http://", "https://")):
            raise UsageError(
                f"{'running live' if self.live else 'recording'} over HTTP needs the real server's URL as the "
                f"server to record from, got {self.server!r}",
                "name it as server='http://HOST:PORT/mcp' (the marker, --mockmcp-server, a fixture or the ini)",
            )
        return target

    def start_http(self) -> str:
        """Start the Streamable HTTP mock server of this test, once; returns its URL. Raises UsageError.

        When recording, it is the recording proxy in front of the real server, whose URL is `server`.
        """
        if self.live:
            return self._url()
        if self.http is None:
            if self.recording:
                args = [*self._record_args(), "--http-target", self._url(), "--http", "127.0.0.1:0"]
            else:
                args = [*self._replay_args(), "--http", "127.0.0.1:0"]
            command = [sys.executable, "-m", "mockmcp", *args]
            self.http = http_server.start(command, self.env, self.workdir)
        return self.http.url

    def transport(self) -> Any:
        """The in-process transport of this test (one for the whole test; each session through it is judged):
        replaying the cassette, or recording the real server into the staged file (see `mockmcp.transport`)."""
        self.handed_out = True
        if self.live:
            from mockmcp.shells.inprocess_record import reach

            return reach(self.server)[0]
        if self.inprocess is None:
            if self.recording:
                from mockmcp.shells.inprocess_record import RecordingTransport

                self.inprocess = RecordingTransport(
                    self.server,
                    str(self.staged),
                    RecordMode.NEW,
                    self.privacy.redact_env,
                    self.privacy.redact,
                    log=self.said,
                    substitute=dict(self.privacy.substitute),
                )
            else:
                from mockmcp.shells.inprocess import ReplayTransport

                self.inprocess = ReplayTransport(
                    self.cassette, ignore=tuple(self.ignores), log=self.said, substitute=dict(self.privacy.substitute)
                )
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
        if (self.recording or self.live) and not self.server:
            asked = "--mockmcp-live" if self.live else f"--mockmcp-record={self.mode}"
            return (
                f"{asked} needs the real server {'of' if self.live else 'to record'} {self.cassette}: name it with "
                "--mockmcp-server, @pytest.mark.mockmcp(server=[...]), a `mockmcp_server` fixture, or the "
                "`mockmcp_server` ini option"
            )
        if self.live:
            return None
        if self.recording and self.privacy.problem(self.env):
            return f"mockmcp cannot record {self.cassette}: {self.privacy.problem(self.env)}"
        if not self.recording and not self.cassette.exists():
            return self._missing(nodeid)
        if self.cassette.exists() and (not self.recording or self.mode == RecordMode.NEW.value):
            return self._unloadable()
        return None

    def _missing(self, nodeid: str) -> str:
        said = f"no cassette at {self.cassette}"
        if self.origin.given is not None:
            said += (
                f"; the marker's cassette={self.origin.given!r} is a path from the module's cassette folder, "
                f"{CASSETTE_RULE} (here {self.origin.folder}); move the file there, or give cassette= that path "
                "(an absolute one, or `../` to leave the folder)"
            )
        if self.origin.hand_made:
            return (
                f'{said}.\nThis test is marked record="none": its cassette is hand-made, never recorded. Write it '
                "there by hand (docs/faults.md has recipes), or copy a recorded cassette there and edit it; or remove "
                "record= from the marker to let --mockmcp-record=once record it"
            )
        return (
            f"{said}; record it by running this test with --mockmcp-record=once:\n"
            f"  pytest --mockmcp-record=once {shlex.quote(nodeid)}"
        )

    def _unloadable(self) -> str | None:
        """The cassette's own error (YAML, validation), located, if it cannot load; loading is cached."""
        from mockmcp.cassette import store  # deferred: the plugin's load path stays without YAML
        from mockmcp.errors import CassetteError

        try:
            store.load(str(self.cassette))
        except CassetteError as error:
            return f"mockmcp: the cassette of this test cannot be loaded:\n{error.render()}"
        return None

    def too_old(self, max_days: float, nodeid: str) -> str | None:
        """Why the replayed cassette is older than `max_days` by its `meta.recorded_at`, or None."""
        if self.recording or self.live or self.origin.hand_made or not self.cassette.exists():
            return None
        from mockmcp.cassette import store  # loaded (and cached) already by `problem_before`
        from mockmcp.errors import CassetteError

        try:
            recorded_at = store.load(str(self.cassette)).meta.get("recorded_at")
        except CassetteError:
            return None  # told by `problem_before`
        age = days_old(recorded_at, datetime.datetime.now(datetime.timezone.utc))
        if age is None or age <= max_days:
            return None
        return (
            f"mockmcp: {self.cassette} was recorded {age:.0f} days ago ({recorded_at}), more than the "
            f"{max_days:g} days --mockmcp-max-age (or mockmcp_max_age) allows: check it against the real server "
            f"(`mockmcp verify {shlex.quote(str(self.cassette))}`) or record it again "
            f"(pytest --mockmcp-record=all {shlex.quote(nodeid)})"
        )

    def launches(self) -> list[int]:
        """The pids of the servers launched in this test (by the host, or for it over HTTP), oldest first."""
        files = sorted(self.workdir.glob(launch.PREFIX + "*"), key=lambda p: p.stat().st_mtime)
        return [int(p.name.removeprefix(launch.PREFIX)) for p in files]

    def _report(self, pid: int, wait: float) -> dict[str, Any] | str:
        """The report of the replay `pid`, or why there is none (waiting a little for one still exiting)."""
        path = self.workdir / f"report-{pid}.json"
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

    def sections(self) -> list[tuple[str, str]]:
        """What each of the test's mock servers said on stderr (titled), for a failed test's report."""
        said = [(f"mockmcp {self._verb} {pid} stderr", self.stderr(pid)) for pid in self.launches()]
        said.append(("mockmcp in process", self.said.getvalue()))
        return [(title, text) for title, text in said if text]

    def stderr(self, pid: int) -> str:
        """What the replay `pid` wrote to stderr (its notes and summary)."""
        try:
            return (self.workdir / launch.STDERR.format(pid=pid)).read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def reports(self, wait: float = 3.0) -> list[dict[str, Any] | str]:
        """The replay report of every launch in this test, oldest first, then of every session in process;
        a string says why one is missing."""
        launched = [self._report(pid, wait) for pid in self.launches()]
        if self.recording or self.inprocess is None:
            return launched
        return [*launched, *(report.to_json() for report in self.inprocess.reports)]

    def never_started(self) -> str | None:
        """After the test: why it is suspicious when the test took this server (its command, parameters,
        transport) and no host ever started it: nothing was played, so nothing was judged. None otherwise."""
        if not self.handed_out or self.live or self.sessions():  # live: the real server, never judged
            return None
        return (
            f"mockmcp: the test took the mock server of {self.cassette} but no host started it, so nothing of "
            "the cassette was played or judged (launch `mockmcp.command` or `mockmcp.stdio_params` as the host's "
            "server, or connect the host to `mockmcp.transport`)"
        )

    def verdict(self, nodeid: str) -> str | None:
        """After the test `nodeid`: the full explanation of what the cassette could not do, or None if all is well."""
        problems: list[str] = []
        if self.strict and self.never_started():
            problems.append("never started (strict): " + str(self.never_started()).removeprefix("mockmcp: "))
        for report in self.reports():
            if isinstance(report, str):
                problems.append(report)
                continue
            problems.extend(render_miss(miss, nodeid, self.origin.hand_made) for miss in report["misses"])
            # The host's answers to the server's requests count: a handler that regressed fails its test.
            problems.extend(mismatch["explanation"] for mismatch in report.get("mismatches", []))
            # So do the capabilities it declares: a server request it no longer declares one for was withheld.
            problems.extend(withheld["explanation"] for withheld in report.get("withheld", []))
            if self.strict:
                problems.extend(
                    f"never asked for (strict): interactions[{u['interaction']}] {u['method']}"
                    for u in report["unplayed"]
                )
                problems.extend(_repeated(repeat) for repeat in report["repeats"])
        if not problems:
            return None
        return f"mockmcp: {self.cassette} could not serve this test as recorded:\n" + "\n".join(problems)

    def told_reports(self, nodeid: str) -> list[dict[str, Any]]:
        """The reports of this test's replays (none when recording or live), each miss's fixes in pytest's terms."""
        if self.recording or self.live:
            return []
        told = []
        for report in self.reports(wait=0.0):
            if isinstance(report, dict):
                misses = [
                    {**miss, "fixes": list(pytest_fixes(miss, nodeid, self.origin.hand_made))}
                    for miss in report.get("misses", [])
                ]
                told.append({**report, "misses": misses})
        return told

    def keep_recording(self) -> bool:
        """Make a finished recording the test's cassette (see `keeping.keep`); False when there was none."""
        return keeping.keep(self.staged, self.cassette, self.privacy.finish, self.ignores)

    def discard_recording(self) -> None:
        """Forget a recording the test's verdict did not keep (the real cassette stays as it was)."""
        keeping.discard(self.staged)

    @property
    def _verb(self) -> str:
        return "record" if self.recording else "replay"

    def refused_recordings(self) -> list[str]:
        """Why each recorder of this test that has ended with a failure wrote nothing (a server that answered
        nothing, or could not be reached): its exit status and its last words."""
        out = []
        for pid in self.launches():
            try:
                status = int((self.workdir / launch.STATUS.format(pid=pid)).read_text())
            except (FileNotFoundError, ValueError):
                continue
            if status != 0:
                said = "".join(f"\n  | {line}" for line in self.stderr(pid).splitlines()[-12:])
                out.append(f"the recorder (pid {pid}) exited with status {status}" + (f":{said}" if said else ""))
        return out

    def recorded_nothing(self) -> bool:
        """Whether the host started the recorder, which ended without a recording: the host sent nothing."""
        started = self.launches()
        if any(keeping.alive(pid) for pid in started):
            return False
        return self.sessions() > 0 and not self.staged.exists()

    def unfinished_journal(self) -> Path | None:
        """The journal of a recording that never became a cassette (the recorder failed or was killed), if any."""
        journal = keeping.journal(self.staged)
        return journal if journal.exists() else None
