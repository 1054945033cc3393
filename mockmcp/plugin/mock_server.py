"""One host test's mock server: which cassette, which command to launch, and the verdict afterwards.

The pytest plugin is only hooks and fixtures over this module, so the rules live here once:

- the cassette of a test: see `naming`;
- the real server to record from: the command line, then the marker, then the fixture, then the ini
  option, the first that names one;
- record modes as in `mockmcp record`, with `none` (the default) never recording: a missing
  cassette fails with the exact command that records it;
- a recording goes to a temporary cassette, moved over the real one (atomically, under a lock on
  the folder, so parallel workers never see half a file) only when the test passed, unless asked
  otherwise; re-recording keeps the fault knobs of the interactions it keeps, the file's
  permissions, and never replaces a cassette with an empty recording;
- replay reports are read after the test: a request the cassette could not answer, or a server
  request the host answered differently from the recording, fails the test with the whole
  explanation; so does a replay the host launched that left no report (it was killed before it
  could say); strict also fails on interactions the host never asked for.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import shlex
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mockmcp.errors import UsageError
from mockmcp.plugin import http_server, launch
from mockmcp.plugin.privacy import Privacy
from mockmcp.plugin.story import render_miss
from mockmcp.protocol import RecordMode

__all__ = ["MODES", "MockServer", "MockServers", "Privacy", "check_mode", "lock", "server_command"]

# The plugin's record modes: `mockmcp record`'s, and `none`, the default, which never records (so CI
# never does by accident).
MODES = RecordMode.choices(allow_none=True)


def check_mode(text: str) -> str:
    """A record mode of the plugin; raises UsageError naming the valid ones."""
    return RecordMode.parse(text, allow_none=True).value


def server_command(*choices: str | Sequence[str] | None) -> list[str] | None:
    """The first server command given, in precedence order; a string is split like a shell would."""
    for choice in choices:
        if choice:
            return shlex.split(choice) if isinstance(choice, str) else [str(part) for part in choice]
    return None


@contextlib.contextmanager
def lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on a cassette folder, across processes (pytest-xdist workers included).

    The folder itself is locked, so no lock file is left beside the cassettes to end up in commits.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class MockServer:
    """What the host under test launches for one test, and what came of it."""

    def __init__(
        self,
        cassette: Path,
        mode: str,
        server: list[str] | None,
        workdir: Path,
        ignores: Sequence[str] = (),
        strict: bool = False,
        privacy: Privacy | None = None,
    ) -> None:
        self.cassette = cassette
        self.strict = strict
        self.workdir = workdir  # this test's own folder, for replay reports
        self.mode = check_mode(mode)
        self.recording = RecordMode(self.mode).records(cassette.exists())
        self.server = server
        self._ignores = list(ignores)
        self.privacy = privacy or Privacy()
        self.env = dict(os.environ)  # the real server may need the user's keys; replay needs nothing more
        self._http: tuple[subprocess.Popen[bytes], int] | None = None  # the HTTP mock server, and its port
        self.handed_out = False  # whether the test asked for the command: a server never launched records nothing

    @property
    def staged(self) -> Path:
        """Where a recording is written before the test's verdict decides whether it is kept.

        Beside the cassette, so that keeping it is one rename on the same file system.
        """
        return self._staged(os.getpid())

    def _staged(self, pid: int | str) -> Path:
        return self.cassette.with_name(f".{self.cassette.stem}.{pid}.recording.yaml")

    def _record_args(self) -> list[str]:
        if self.mode == RecordMode.NEW.value and self.cassette.exists() and not self.staged.exists():
            self.staged.write_bytes(self.cassette.read_bytes())
        # A host may launch the server more than once in a test: later launches add to the first.
        new = self.mode == RecordMode.NEW.value or self.staged.exists()
        mode = (RecordMode.NEW if new else RecordMode.ALL).value
        return ["record", "-o", str(self.staged), "--mode", mode, *self.privacy.record_args()]

    def _replay_args(self) -> list[str]:
        ignores = [arg for path in self._ignores for arg in ("--ignore", path)]
        return ["replay", str(self.cassette), "--report", str(self.workdir / "report-{pid}.json"), *ignores]

    def _launched(self, args: list[str]) -> list[str]:
        return [sys.executable, "-m", launch.__name__, str(self.workdir), *args]

    @property
    def command(self) -> list[str]:
        """The command line the host launches instead of the real server."""
        self.handed_out = True
        if self.recording:
            return [sys.executable, "-m", "mockmcp", *self._record_args(), "--", *(self.server or [])]
        return self._launched(self._replay_args())

    @property
    def url(self) -> str:
        """The URL of a Streamable HTTP mock server the host connects to; started on first use, stopped after the test.

        When recording, it is the recording proxy in front of the real server, whose URL is `server`.
        """
        if self._http is None:
            self.handed_out = True
            port = http_server.free_port()
            if self.recording:
                target = self.server[0] if self.server and len(self.server) == 1 else ""
                if not target.startswith(("http://", "https://")):
                    raise UsageError(
                        f"recording over HTTP needs the real server's URL as the server to record from, "
                        f"got {self.server!r}",
                        "name it as server='http://HOST:PORT/mcp' (the marker, --mockmcp-server, a fixture or the ini)",
                    )
                args = [*self._record_args(), "--http-target", target, "--listen", f"127.0.0.1:{port}"]
            else:
                args = [*self._replay_args(), "--http", f"127.0.0.1:{port}"]
            stderr = self.workdir / "stderr-{pid}.txt"
            self._http = (http_server.start(self._launched(args), self.env, port, stderr), port)
        return f"http://127.0.0.1:{self._http[1]}/mcp"

    def stop(self) -> None:
        """Stop the HTTP mock server, if the test started one (again is harmless)."""
        if self._http is not None:
            http_server.stop(self._http[0])

    @property
    def stdio_params(self) -> Any:
        """The same, as the official SDK's `StdioServerParameters` (command, args, env)."""
        from mcp import StdioServerParameters  # the SDK is the user's, not a dependency of mockmcp

        command = self.command
        return StdioServerParameters(command=command[0], args=command[1:], env=self.env)

    def problem_before(self, nodeid: str) -> str | None:
        """Why the test cannot run at all (a missing cassette, no server to record from), or None."""
        if self.recording and not self.server:
            return (
                f"--mockmcp-record={self.mode} needs the real server to record {self.cassette}: name it with "
                "--mockmcp-server, @pytest.mark.mockmcp(server=[...]), a `mockmcp_server` fixture, or the "
                "`mockmcp_server` ini option"
            )
        if self.recording and self.privacy.problem(self.env):
            return f"mockmcp cannot record {self.cassette}: {self.privacy.problem(self.env)}"
        if not self.recording and not self.cassette.exists():
            return (
                f"no cassette at {self.cassette}; record it by running this test with --mockmcp-record=once:\n"
                f"  pytest --mockmcp-record=once {shlex.quote(nodeid)}\n"
                '(a marker\'s record= wins over the option: a test marked record="none" is never recorded)'
            )
        return None

    def launches(self) -> list[int]:
        """The pids of the replays the host launched in this test, oldest first."""
        files = sorted(self.workdir.glob(launch.PREFIX + "*"), key=lambda p: p.stat().st_mtime)
        return [int(p.name.removeprefix(launch.PREFIX)) for p in files]

    def _report(self, pid: int, wait: float) -> dict[str, Any] | str:
        """The report of the replay `pid`, or why there is none (waiting a little for one still exiting)."""
        path = self.workdir / f"report-{pid}.json"
        deadline = time.monotonic() + wait
        while not path.exists() and _alive(pid) and time.monotonic() < deadline:
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

    def stderr(self, pid: int) -> str:
        """What the replay `pid` wrote to stderr (its notes and summary)."""
        try:
            return (self.workdir / f"stderr-{pid}.txt").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def reports(self, wait: float = 3.0) -> list[dict[str, Any] | str]:
        """The replay report of every launch in this test, oldest first; a string says why one is missing."""
        return [self._report(pid, wait) for pid in self.launches()]

    def verdict(self, nodeid: str) -> str | None:
        """After the test `nodeid`: the full explanation of what the cassette could not do, or None if all is well."""
        problems: list[str] = []
        for report in self.reports():
            if isinstance(report, str):
                problems.append(report)
                continue
            problems.extend(render_miss(miss, nodeid) for miss in report["misses"])
            # The host's answers to the server's requests count: a handler that regressed fails its test.
            problems.extend(mismatch["explanation"] for mismatch in report.get("mismatches", []))
            # So do the capabilities it declares: a server request it no longer declares one for was withheld.
            problems.extend(withheld["explanation"] for withheld in report.get("withheld", []))
            if self.strict:
                problems.extend(
                    f"never asked for (strict): interactions[{u['interaction']}] {u['method']}"
                    for u in report["unplayed"]
                )
        if not problems:
            return None
        return f"mockmcp: {self.cassette} could not serve this test as recorded:\n" + "\n".join(problems)

    def keep_recording(self, wait: float = 10.0) -> bool:
        """Make a finished recording the test's cassette; False when there was none to keep.

        Over an existing cassette, the fault knobs (delay, drop, ...) of the interactions the new
        recording pairs with are carried over, as `mockmcp verify --update` does, and the file keeps
        its permissions; a recording with no interactions never replaces one that has some.
        """
        journal = Path(f"{self.staged}.journal")
        deadline = time.monotonic() + wait
        while journal.exists() and time.monotonic() < deadline:  # the recorder is still saving
            time.sleep(0.02)
        if not self.staged.exists() or journal.exists():
            return False
        from mockmcp.cassette import store

        # The recording as it may be kept (before_record, portable paths), still beside the cassette.
        store.save(self.privacy.finish(store.load(str(self.staged))), str(self.staged))
        with lock(self.cassette.parent):
            if self.cassette.exists():
                self._merge_into_cassette()
            else:
                os.replace(self.staged, self.cassette)
        return True

    def _merge_into_cassette(self) -> None:
        from mockmcp.cassette import store
        from mockmcp.core.matching import Matcher
        from mockmcp.errors import CassetteError
        from mockmcp.tools.drift import carry_knobs, compare

        live = store.load(str(self.staged))
        try:
            recorded = store.load(str(self.cassette))
        except CassetteError:  # nothing in it to keep: the recording replaces it
            os.chmod(self.staged, self.cassette.stat().st_mode & 0o7777)
            os.replace(self.staged, self.cassette)
            return
        if not live.interactions and recorded.interactions:
            self.staged.unlink()
            warnings.warn(
                f"mockmcp: the host sent nothing, so {self.cassette} was kept as it was rather than emptied",
                stacklevel=1,
            )
            return
        drift = compare(recorded, live, Matcher.build(tuple(self._ignores)))
        updated, _kept = carry_knobs(recorded, live, drift)
        store.save(updated, str(self.cassette))  # atomic, with the old file's permissions
        self.staged.unlink()

    def discard_recording(self) -> None:
        """Forget a recording the test's verdict did not keep (the real cassette stays as it was)."""
        for leftover in (self.staged, Path(f"{self.staged}.journal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()

    def unfinished_journal(self) -> Path | None:
        """The journal of a recording that never became a cassette (the recorder failed or was killed), if any."""
        journal = Path(f"{self.staged}.journal")
        return journal if journal.exists() else None

    def remove_leftovers(self) -> list[Path]:
        """Remove what recordings of this cassette by test runs that died mid-way left behind; returns them.

        A test run killed while recording never reached its verdict, so, as with a failed test, its
        recording is not kept: the staged file and journal of a process no longer alive are removed.
        """
        pattern = glob.escape(f".{self.cassette.stem}.") + "*" + glob.escape(".recording.yaml")
        removed = []
        for path in [*self.cassette.parent.glob(pattern), *self.cassette.parent.glob(pattern + ".journal")]:
            pid = path.name[len(self.cassette.stem) + 2 :].split(".", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                removed.append(path)
        return removed


class MockServers(dict[str, MockServer]):
    """The mock servers of a test that talks to several, by name: `mockmcp["notes"].stdio_params`."""

    def __missing__(self, name: str) -> MockServer:
        known = ", ".join(repr(key) for key in self) or "none"
        raise KeyError(f"this test has no mock server named {name!r}; its marker's servers= names {known}")
