"""One host test's mock server: which cassette, which command to launch, and the verdict afterwards.

The pytest plugin is only hooks and fixtures over this module, so the rules live here once:

- the cassette of a test is `<test dir>/cassettes/<test module>/<test name>.yaml` by default, the
  name made safe for file systems (long names are cut and keep a hash of the whole, to stay unique);
- the real server to record from: the command line, then the marker, then the fixture, then the ini
  option, the first that names one;
- record modes as in `mockmcp record`, with `none` (the default) never recording: a missing
  cassette fails with the exact command that records it;
- a recording goes to a temporary cassette, moved over the real one (atomically, under a lock, so
  parallel workers never see half a file) only when the test passed, unless asked otherwise;
- replay reports are read after the test: a request the cassette could not answer, or a server
  request the host answered differently from the recording, fails the test with the whole
  explanation; strict also fails on interactions the host never asked for.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mockmcp.protocol import RecordMode

__all__ = ["MODES", "MockServer", "cassette_name", "check_mode", "lock", "server_command"]

# The plugin's record modes: `mockmcp record`'s, and `none`, the default, which never records (so CI
# never does by accident).
MODES = RecordMode.choices(allow_none=True)


def check_mode(text: str) -> str:
    """A record mode of the plugin; raises UsageError naming the valid ones."""
    return RecordMode.parse(text, allow_none=True).value


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 120


def cassette_name(test_name: str) -> str:
    """A file name for a test (parametrized ids included): safe characters, bounded length, unique."""
    safe = _UNSAFE.sub("_", test_name).strip("._") or "test"
    if len(safe) > _MAX_NAME or safe != test_name:
        # Replacing characters or cutting can make two names one: a hash of the whole keeps them apart.
        digest = hashlib.sha1(test_name.encode()).hexdigest()[:10]
        safe = f"{safe[: _MAX_NAME - 11]}-{digest}"
    return safe + ".yaml"


def server_command(*choices: str | Sequence[str] | None) -> list[str] | None:
    """The first server command given, in precedence order; a string is split like a shell would."""
    for choice in choices:
        if choice:
            return shlex.split(choice) if isinstance(choice, str) else [str(part) for part in choice]
    return None


@contextlib.contextmanager
def lock(path: Path) -> Iterator[None]:
    """An exclusive lock beside a cassette, across processes (pytest-xdist workers included)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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
    ) -> None:
        self.cassette = cassette
        self.strict = strict
        self.workdir = workdir  # this test's own folder, for replay reports
        self.mode = check_mode(mode)
        self.recording = RecordMode(self.mode).records(cassette.exists())
        self.server = server
        self._ignores = list(ignores)
        self.env = dict(os.environ)  # the real server may need the user's keys; replay needs nothing more

    @property
    def staged(self) -> Path:
        """Where a recording is written before the test's verdict decides whether it is kept.

        Beside the cassette, so that keeping it is one rename on the same file system.
        """
        return self.cassette.with_name(f".{self.cassette.stem}.{os.getpid()}.recording.yaml")

    @property
    def command(self) -> list[str]:
        """The command line the host launches instead of the real server."""
        mockmcp = [sys.executable, "-m", "mockmcp"]
        if self.recording:
            if self.mode == RecordMode.NEW.value and self.cassette.exists() and not self.staged.exists():
                shutil.copyfile(self.cassette, self.staged)
            # A host may launch the server more than once in a test: later launches add to the first.
            new = self.mode == RecordMode.NEW.value or self.staged.exists()
            mode = (RecordMode.NEW if new else RecordMode.ALL).value
            return [*mockmcp, "record", "-o", str(self.staged), "--mode", mode, "--", *(self.server or [])]
        ignores = [arg for path in self._ignores for arg in ("--ignore", path)]
        return [*mockmcp, "replay", str(self.cassette), "--report", str(self.workdir / "report-{pid}.json"), *ignores]

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
        if not self.recording and not self.cassette.exists():
            return (
                f"no cassette at {self.cassette}; record it by running this test with --mockmcp-record=once:\n"
                f"  pytest --mockmcp-record=once {shlex.quote(nodeid)}"
            )
        return None

    def reports(self) -> list[dict[str, Any]]:
        """The replay reports of every launch in this test, oldest first."""
        files = sorted(self.workdir.glob("report-*.json"), key=lambda p: p.stat().st_mtime)
        return [json.loads(p.read_text()) for p in files]

    def verdict(self) -> str | None:
        """After the test: the full explanation of what the cassette could not do, or None if all is well."""
        problems: list[str] = []
        for report in self.reports():
            problems.extend(miss["explanation"] for miss in report["misses"])
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
        """Move a finished recording over the real cassette; False when there was none to keep."""
        journal = Path(f"{self.staged}.journal")
        deadline = time.monotonic() + wait
        while journal.exists() and time.monotonic() < deadline:  # the recorder is still saving
            time.sleep(0.02)
        if not self.staged.exists() or journal.exists():
            return False
        with lock(self.cassette):
            os.replace(self.staged, self.cassette)
        return True

    def discard_recording(self) -> None:
        """Forget a recording the test's verdict did not keep (the real cassette stays as it was)."""
        for leftover in (self.staged, Path(f"{self.staged}.journal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()

    def unfinished_journal(self) -> Path | None:
        """The journal of a recording that never became a cassette (the recorder failed or was killed), if any."""
        journal = Path(f"{self.staged}.journal")
        return journal if journal.exists() else None
