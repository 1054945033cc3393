"""The plugin's side of one test's mock server: what the host launches (or connects to), with the test's options.

Every launch is noted in the test's own folder (`launch`), where `story` reads what each left. Over
Streamable HTTP the plugin starts the server itself, on port 0 (a port picked here and freed could be
taken by another xdist worker's server), its stderr going to the file `launch` names, where it says its
URL; SIGTERM after the test ends it as the command means to end: replay writes its report, the recorder saves.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from subprocess import DEVNULL
from typing import Any, NamedTuple

from mockmcp._wire.words import RecordMode
from mockmcp.errors import UsageError
from mockmcp.options import RecordOptions, ReplayOptions
from mockmcp.plugin import _keeping as keeping
from mockmcp.plugin import _launch as launch

__all__ = ["Harness", "Served", "Target", "serve_http", "server_command"]

_STOP = 20.0  # seconds an HTTP mock server gets to save and exit after SIGTERM
# The line the command line prints once it listens (see `cli/commands.py`), replay's or the recorder's.
_LISTENING = re.compile(r"^mockmcp: (?:serving .* at|recording) (https?://\S+).*\n", re.MULTILINE)  # a whole line


class Target(NamedTuple):
    """What one mock server of a test stands for, and how the test named it (for the messages about it)."""

    cassette: Path
    server: Any = None  # a command line (a list), an object only in-process recording reaches (see `transport`)
    given: str | None = None  # the marker's `cassette=` as written (None: named after the test)
    folder: Path | None = None  # the module's cassette folder, which `given` is a path from
    hand_made: bool = False  # the marker says `record="none"`: no record mode applies
    live: bool = False  # the host talks to the real server itself: nothing recorded, replayed or judged
    legacy: Path | None = None  # the cassette under its old name, read until a recording moves it (`naming.legacy`)


def server_command(*choices: Any) -> Any:
    """The first server given, in precedence order: a command line (a string is split like a shell would), or
    an object only `transport` can record from (an SDK server object or transport), kept as it is."""
    for choice in choices:
        if isinstance(choice, str):
            choice = shlex.split(choice)
        if isinstance(choice, Sequence):
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
        self.recording = not target.live and self.mode.records(self.source.exists())
        self.env = dict(env)  # the real server may need the user's keys; replay needs nothing more
        self.http: Served | None = None  # the HTTP mock server, once the test started it
        self.unrecorded: str | None = None  # its URL while requests to it go beneath vcrpy's patch
        self.inprocess: Any = None  # the in-process transport, once the test took it (see `transport`)
        self.said = io.StringIO()  # what the in-process transport said (its notes and summaries)
        self.handed_out = False  # the test took it: a recording never launched would pass with no cassette
        # Every launch records into one staged file with `--record-mode new_episodes`, so a host that launches the
        # server twice in a test gets both sessions; in mode new it starts from the cassette.
        if self.recording and self.mode is RecordMode.NEW and self.source.exists():
            shutil.copyfile(self.source, self.staged)

    @property
    def cassette(self) -> Path:
        """Where the test's cassette is, and where a recording of it is kept."""
        return self.target.cassette

    @property
    def source(self) -> Path:
        """The file replay reads: the cassette, or the one under its old name until a recording moves it."""
        return self.target.legacy or self.target.cassette

    @property
    def staged(self) -> Path:
        """Where a recording waits for the test's verdict: beside the cassette, so keeping it is one rename."""
        return keeping.staged_path(self.cassette, os.getpid())

    def _args(self) -> list[str]:
        """`mockmcp record` into the staged file, or `mockmcp replay` of the cassette, with the test's options."""
        record, replay = self.record, self.replay
        if self.recording:
            head, subs = ["record", "-o", str(self.staged), "--record-mode", RecordMode.NEW.word], record.substitutions
            pairs = [("--redact-env", name) for name in record.redact_env]
            pairs += [("--redact", pattern) for pattern in record.redact_patterns]
        else:
            head, subs = ["replay", str(self.source)], replay.substitutions
            pairs = [("--report", str(replay.report)), *(("--ignore", path) for path in replay.ignores)]
            head += ["--closed-world"] if replay.closed_world else []
        pairs += [("--substitute", name if value is None else f"{name}={value}") for name, value in subs]
        return [*head, *(arg for pair in pairs for arg in pair)]

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
        """`MockServer.start_http`: replay, or the recording proxy in front of the real server's URL, over HTTP."""
        if self.target.live:
            return self._url()
        if self.http is None:
            serve = ["--http-target", self._url()] if self.recording else []
            command = [sys.executable, "-m", "mockmcp", *self._args(), *serve, "--http", "127.0.0.1:0"]
            self.http = serve_http(command, self.env, self.workdir)
            from mockmcp import inprocess  # deferred: the HTTP clients' patch, for a host over HTTP only

            inprocess.serve_beside_vcr(self.http.url)  # its traffic never reaches a VCR cassette
            self.unrecorded = self.http.url
        return self.http.url

    def transport(self) -> Any:
        """`MockServer.transport`: replaying the cassette, or recording the real server into the staged file."""
        from mockmcp import inprocess  # deferred: only a host in process pays for the SDK

        self.handed_out, record, replay = True, self.record, self.replay
        if self.target.live:
            return inprocess.reach(self.target.server)[0]
        if self.inprocess is None and self.recording:
            redacted, subs = (record.redact_env, record.redact_patterns), dict(record.substitutions)
            self.inprocess = inprocess.RecordingTransport(
                self.target.server, str(self.staged), RecordMode.NEW, *redacted, log=self.said, substitute=subs
            )
        elif self.inprocess is None:
            subs = dict(replay.substitutions)
            self.inprocess = inprocess.ReplayTransport(
                self.source, ignore=replay.ignores, log=self.said, substitute=subs, closed_world=replay.closed_world
            )
        return self.inprocess

    def sessions(self) -> int:
        """How many sessions the host had with this test's server: launches, and sessions in process."""
        return len(self.launches()) + (self.inprocess.sessions if self.inprocess is not None else 0)

    def stop(self) -> None:
        """Stop the HTTP mock server, if the test started one (again is harmless)."""
        if self.http is not None:
            self.http.stop()
        if self.unrecorded is not None:
            from mockmcp import inprocess

            inprocess.serve_beside_vcr(self.unrecorded, up=False)
            self.unrecorded = None

    def calls(self) -> Any:
        """What the host did in this test (`mockmcp.calls`): in process, live; a replay the host launched, once it
        ended (its report is written then); the HTTP mock server is stopped first, as its report is its last word.
        Raises UsageError for a launched replay still running, or while recording."""
        if self.recording:
            raise UsageError(
                "mockmcp.calls reads what replay answered, and this test records",
                "assert on the calls once the cassette is recorded (the test replays it then)",
            )
        self.stop()
        sources: list[Any] = []
        for pid in self.launches():
            path = Path(str(self.replay.report).replace("{pid}", str(pid)))
            if not path.exists():
                raise UsageError(
                    f"the replay the host launched (pid {pid}) is still running: a launched replay's calls are read "
                    "once the host closed its session (the host's `async with` block has ended)",
                    "assert after that block, or connect the host to `mockmcp.transport`, whose calls are read live",
                )
            sources.append(path)
        if self.inprocess is not None:
            sources.append(self.inprocess)
        from mockmcp import inprocess  # deferred: as in `transport`

        return inprocess.calls(sources)

    def launches(self) -> list[int]:
        """The pids of the servers launched in this test (by the host, or for it over HTTP), oldest first."""
        return launch.launches(str(self.workdir))

    def stderr(self, pid: int) -> str:
        """What the server `pid` wrote to stderr (a replay's notes and summary)."""
        return launch.said(str(self.workdir), pid)


class Served(NamedTuple):
    """A running HTTP mock server: its process, the URL it said it serves, the folder its launch is noted in."""

    process: subprocess.Popen[bytes]
    url: str
    folder: Path

    def stop(self) -> None:
        """Stop it with SIGTERM (killing it only if it will not end), and note its exit status."""
        if self.process.poll() is None:
            self.process.terminate()  # once: a second SIGTERM may cut the recorder's save short
            try:
                self.process.wait(timeout=_STOP)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        launch.exited(str(self.folder), self.process.pid, self.process.returncode)


def serve_http(command: list[str], env: Mapping[str, str], folder: Path, wait: float = 20.0) -> Served:
    """Start `command` (`mockmcp` on port 0), noted in `folder` as the host's launches are; returns once it says
    its URL. Raises UsageError if it does not within `wait` seconds."""
    with tempfile.NamedTemporaryFile(dir=folder, delete=False) as log:  # its stderr, named by its pid once it runs
        process = subprocess.Popen(command, env=dict(env), stdin=DEVNULL, stdout=DEVNULL, stderr=log)
    os.replace(log.name, folder / launch.STDERR.format(pid=process.pid))
    (folder / f"{launch.PREFIX}{process.pid}").touch()
    deadline = time.monotonic() + wait
    while True:
        ended = process.poll() is not None  # before reading: what it said before it ended is read
        listening = _LISTENING.search(launch.said(str(folder), process.pid))
        if listening or ended or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    served = Served(process, listening.group(1) if listening else "", folder)
    if listening:
        return served
    why = "ended before it said where it listens" if ended else f"did not say where it listens within {wait:g} s"
    served.stop()
    text = "".join(launch.said(str(folder), process.pid).splitlines(keepends=True)[-20:]).strip()
    raise UsageError(f"the mock server over HTTP {why}: {text or 'it said nothing'}")
