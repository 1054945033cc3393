"""Interception: the MCP SDK's client, patched where every host passes, gets its servers from cassettes.

Frameworks import `stdio_client` by name, so the patch is one level down, at the two module globals it
calls at run time: the spawn (`_create_platform_compatible_process`) and the process-tree kill
(`_terminate_process_tree`), the same on mcp 1.24-1.30 and 2.x. While an `Interception` is active, each
server the host starts is identified (`_identity`), then run live (the allow list), recorded (the real
process, tapped: `_process.Tapped`) or replayed (no process: `_process.Replayed`), by the record mode and
whether its cassette exists. A replayed server has no process id, and the kill never reaches a signal.
With none active, the patched functions are the SDK's own.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from mockmcp._wire.words import RecordMode
from mockmcp.cassette import store as cassettes
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.replay import Replay
from mockmcp.engine.report import Report
from mockmcp.engine.selection import Recordings
from mockmcp.errors import CassetteError, MockmcpError, UsageError
from mockmcp.inprocess._identity import Identity, identify
from mockmcp.inprocess._process import Replayed, Tapped
from mockmcp.options import RecordOptions, ReplayOptions
from mockmcp.record import Journal, saved

__all__ = ["Interception", "NotRecorded", "SUPPORTED", "install", "intercepting", "sdk_version", "supported"]

SUPPORTED = (((1, 24), (1, 30)), ((2, 0), (2, 3)))
"""The mcp releases interception is tested on (first, last), by minor version; any other is refused."""


class NotRecorded(CassetteError, OSError):
    """A server the host starts under replay that no cassette holds: to the SDK, a command that could not start."""


def supported(version: str) -> bool:
    """Whether interception runs on this mcp release (`SUPPORTED`, by major and minor version)."""
    numbers = tuple(int(part) if part.isdigit() else -1 for part in version.split(".")[:2])
    return any(first <= numbers <= last for first, last in SUPPORTED)


def sdk_version() -> str:
    """The installed mcp's version; raises UsageError when interception does not support it."""
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        raise UsageError("interception patches the MCP Python SDK, which is not installed", "pip install mcp") from None
    if not supported(version):
        ranges = " and ".join(f"{a[0]}.{a[1]} to {b[0]}.{b[1]}" for a, b in SUPPORTED)
        raise UsageError(
            f"mockmcp intercepts the MCP Python SDK's releases {ranges} (those its tests run on); this is {version}",
            "pin a supported mcp, or point the host at `mockmcp replay CASSETTE` as its server command",
        )
    return version


_REPLAY, _RECORD = ReplayOptions(), RecordOptions()


class _Server:
    """One server identity's sessions in an interception."""

    __slots__ = ("env", "identity", "journal", "path", "recording", "recordings", "reports", "sessions")

    def __init__(self, identity: Identity, path: Path, recording: bool, env: str) -> None:
        self.identity, self.path, self.recording, self.env = identity, path, recording, env
        self.recordings: Recordings | None = None  # the cassette, loaded on the first replayed session
        self.journal: Journal | None = None  # the recording in progress
        self.reports: list[Report] = []
        self.sessions = 0


class Interception:
    """Where the servers a host starts go while it is active (`with interception:`, or `intercepting(...)`).

    `folder`: the cassettes, one per server, `<identity>.yaml`. `mode`: a record mode (none: replay only; once:
    record a server whose cassette is missing; new_episodes; rewrite). `names`: a name for the servers whose
    command line or URL holds a fragment; `allow`: names or fragments of servers that run live, untouched.
    `how_to_record`: the command that records, told when a server has no cassette under replay."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        mode: RecordMode | str = RecordMode.NONE,
        *,
        names: Mapping[str, str] | None = None,
        allow: tuple[str, ...] = (),
        replay: ReplayOptions = _REPLAY,
        record: RecordOptions = _RECORD,
        project: Path | None = None,
        how_to_record: str = "record it: run again with --record-mode once",
        log: TextIO | None = None,
    ) -> None:
        self.folder, self.allow, self.names = Path(folder), allow, dict(names or {})
        self.mode = mode if isinstance(mode, RecordMode) else RecordMode.parse(mode, allow_none=True)
        self.replay, self.record, self.project, self.log = replay, record, project, log
        self.how_to_record = how_to_record
        self.servers: dict[str, _Server] = {}
        self.problems: list[str] = []  # what went wrong that the host may not have shown: the verdict's part
        self.live: list[str] = []  # the allowed servers that ran live, as their command lines
        self._tapped: list[Tapped] = []
        self._redactor: Redactor | None = None

    # --- the test's view ------------------------------------------------------------------------

    @property
    def reports(self) -> dict[str, list[Report]]:
        """Each replayed server's session reports, by its name (its cassette's file name without `.yaml`)."""
        return {name: server.reports for name, server in self.servers.items() if server.reports}

    def verdict(self, told: Callable[[dict[str, Any]], str] | None = None) -> str | None:
        """Everything the cassettes could not do as recorded (misses, answers that differed, withheld requests,
        with strict what it fails), servers with no cassette, recordings that failed; None when all is well.
        `told` renders a miss (its `to_json`) for where the verdict is read (pytest adds its own fixes)."""
        said = list(self.problems)
        for name, server in self.servers.items():
            for report in server.reports:
                data = report.to_json()
                said += [told(miss) if told else miss["explanation"] for miss in data["misses"]]
                said += [item["explanation"] for item in (*data["mismatches"], *data["withheld"])]
                if self.replay.strict and not report.strict_ok:
                    said.append(f"{name}: strict: {report.strict_failures()}\n{report.summary()}")
        return "\n".join(said) or None

    def activate(self, patch: bool = True) -> None:
        """Put this interception in charge of the servers the SDK starts from now on; `patch`: patch the SDK now
        (`mockmcp run` patches it when the program imports it)."""
        if patch:
            install()
        _ACTIVE.append(self)

    def __enter__(self) -> Interception:
        self.activate()
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self)
        if not _ACTIVE:
            _uninstall()
        self.close()

    def close(self) -> None:
        """Finish what is still open: a recording whose server the host never stopped is saved now."""
        for tapped in self._tapped:
            tapped.finish()

    # --- the host starts a server ---------------------------------------------------------------

    async def spawn(
        self, start: Callable[[], Awaitable[Any]], command: str, args: list[str], env: Any, cwd: Any
    ) -> Any:
        """The process the SDK gets for `command args`: the real one (allowed, or tapped to record), or a replay."""
        line = " ".join([command, *args])
        if any(fragment and fragment in line for fragment in self.allow):
            self.live.append(line)
            return await start()
        identity = identify(
            command,
            args,
            None if cwd is None else os.fspath(cwd),
            names=self.names,
            project=self.project,
            substitutions=self.record.substitutions,
        )
        if identity.name in self.allow:
            self.live.append(line)
            return await start()
        server = self._server(identity, _fingerprint(env))
        server.sessions += 1
        if server.recording:
            return self._tap(server, await start())
        return self._replayed(server)

    def _server(self, identity: Identity, env: str) -> _Server:
        server = self.servers.get(identity.name)
        if server is None:
            path = self.folder / f"{identity.name}.yaml"
            server = self.servers[identity.name] = _Server(identity, path, self.mode.records(path.exists()), env)
        elif server.env != env or server.identity.words != identity.words:
            what = " ".join(identity.words)
            problem = (
                f"two servers of this run share the cassette {server.path.name} ({what}; "
                f"{' '.join(server.identity.words)}), and their environments or command lines differ"
            )
            fix = "name each apart: names={'one': 'a fragment of its command line', 'other': '...'}"
            self.problems.append(f"{problem}; {fix}")
            raise UsageError(problem, fix)
        return server

    def _replayed(self, server: _Server) -> Replayed:
        if server.recordings is None:
            if not server.path.exists():
                what = " ".join(server.identity.words)
                problem = f"the host started the server `{what}`, and no cassette holds it"
                self.problems.append(f"{problem} ({server.path}); {self.how_to_record}")
                raise NotRecorded(problem, path=str(server.path), fix=self.how_to_record)
            recorded = cassettes.load(str(server.path))
            server.recordings = Recordings(recorded, Matcher.build(self.replay.ignores, recorded.meta))
        recordings = server.recordings
        where = str(server.path)
        redactor = Redactor.for_replay(recordings.cassette.meta, os.environ, self.replay.substitutions, where)
        engine = Replay(recordings.cassette, recordings.matcher, redactor, self.replay.timing, recordings)

        server.reports.append(engine.report)  # now: a session the host leaves open at the end is judged too

        def done(engine: Replay, status: int) -> None:
            self._say(engine.report.summary())

        return Replayed(engine, self._say, done)

    def _tap(self, server: _Server, real: Any) -> Tapped:
        if server.journal is not None:
            problem = f"the host started `{' '.join(server.identity.words)}` again while its first session records"
            fix = "record these sessions one at a time (or name the servers apart: names={...})"
            self.problems.append(f"{problem}; {fix}")
            raise UsageError(problem, fix)
        if self._redactor is None:
            got = self.record
            self._redactor = Redactor.for_recording(
                got.redact_env, got.redact_patterns, os.environ, "redact_env", got.substitutions, "substitute"
            )
        mode = self.mode if server.sessions == 1 else RecordMode.NEW  # a later session adds to the first's
        path = str(server.path)
        journal = server.journal = Journal.fresh(path, mode, self._redactor, list(server.identity.words))

        def done() -> None:
            server.journal = None
            journal.close()
            try:
                for text in saved(path, "the host's session ended"):
                    self._say(f"mockmcp: {text}")
                journal.raise_failure(path)
            except MockmcpError as exc:
                self.problems.append(exc.render())

        tapped = Tapped(real, journal, self._redactor.line, done)
        self._tapped.append(tapped)
        return tapped

    def _say(self, text: str) -> None:
        print(text, file=self.log or sys.stderr, flush=True)


def _fingerprint(env: Any) -> str:
    """What tells two servers with one command line apart: their environments (hashed: values may be secrets)."""
    items = sorted((env or {}).items())
    return hashlib.sha1(repr(items).encode()).hexdigest()


# --- the patch -----------------------------------------------------------------------------------

_ACTIVE: list[Interception] = []  # the innermost is the one in charge
_ORIGINAL: dict[str, Any] = {}


async def _spawn(command: str, args: list[str], env: Any = None, errlog: Any = sys.stderr, cwd: Any = None) -> Any:
    original = _ORIGINAL["_create_platform_compatible_process"]

    def start() -> Awaitable[Any]:
        return original(command=command, args=args, env=env, errlog=errlog, cwd=cwd)

    if not _ACTIVE:
        return await start()
    return await _ACTIVE[-1].spawn(start, command, list(args), env, cwd)


async def _terminate(process: Any, *args: Any, **kwargs: Any) -> None:
    if isinstance(process, Replayed):  # no process, no signal: the session ends as if it had been killed
        process.terminate()
        return
    await _ORIGINAL["_terminate_process_tree"](process, *args, **kwargs)


def install() -> None:
    """Patch the SDK's stdio client (once); raises UsageError for an mcp release interception does not support."""
    sdk_version()
    import mcp.client.stdio as stdio

    if _ORIGINAL:
        return
    for name, patch in (("_create_platform_compatible_process", _spawn), ("_terminate_process_tree", _terminate)):
        _ORIGINAL[name] = getattr(stdio, name)
        setattr(stdio, name, patch)
    # --- Streamable HTTP: the HTTP clients' AsyncClient, patched and restored with the stdio client (`_http`) ---
    from mockmcp.inprocess import _http

    _http.install()
    # --- end of Streamable HTTP ---


def _uninstall() -> None:
    import mcp.client.stdio as stdio

    for name, original in _ORIGINAL.items():
        setattr(stdio, name, original)
    _ORIGINAL.clear()
    # --- Streamable HTTP ---
    from mockmcp.inprocess import _http

    _http.uninstall()
    # --- end of Streamable HTTP ---


@contextmanager
def intercepting(
    folder: str | os.PathLike[str], mode: RecordMode | str = RecordMode.NONE, **options: Any
) -> Iterator[Interception]:
    """`with mockmcp.intercepting("cassettes/agent"):` every MCP server this process's SDK client starts is
    replayed from (or, with `mode`, recorded into) a cassette of that folder; see `Interception`."""
    with Interception(folder, mode, **options) as interception:
        yield interception
