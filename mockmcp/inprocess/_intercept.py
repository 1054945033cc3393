"""Interception: the MCP SDK's client, patched where every host passes, gets its servers from cassettes.

Frameworks import `stdio_client` by name, so the patch is one level down, at the two module globals it calls at
run time: the spawn (`_create_platform_compatible_process`) and the process-tree kill (`_terminate_process_tree`).
While an `Interception` is active, each server the host starts is identified (`_wire.identity`), then run live (the
allow list), recorded (`_process.Tapped`) or replayed (`_process.Replayed`, no process), by the record mode and
whether its cassette exists.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from mockmcp._wire.identity import Identity, identify
from mockmcp._wire.words import RecordMode
from mockmcp.engine.redact import Redactor
from mockmcp.engine.report import Report
from mockmcp.errors import MockmcpError, StrictFailure, UsageError
from mockmcp.inprocess._process import Replayed
from mockmcp.inprocess._servers import NotRecorded, Server
from mockmcp.options import RecordOptions, ReplayOptions

__all__ = ["Interception", "NotRecorded", "SUPPORTED", "install", "intercepting", "sdk_version", "supported"]

SUPPORTED = (((1, 24), (1, 30)), ((2, 0), (2, 3)))
"""The mcp releases interception is tested on (first, last), by minor version; any other is refused."""


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


class Interception:
    """Where the servers a host starts go while it is active (`with interception:`, or `intercepting(...)`).

    `folder`: the cassettes, one per server, `<identity>.yaml`. `mode`: a record mode (none: replay only; once:
    record a server whose cassette is missing; new_episodes; rewrite). `names`: a name for the servers whose
    command line or URL holds a fragment; `allow`: names or fragments of servers that run live, untouched.
    `how_to_record`: the command that records, told when a server has no cassette under replay. `stage`: where
    a cassette's recording waits for a verdict to keep it (pytest's), None to record into the cassette.
    `strict_exit`: leaving the block raises StrictFailure with the verdict when it has one (the Python API).
    `registry`: a folder the processes of one run share (`mockmcp run`, a test and its children)."""

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
        stage: Callable[[Path], Path] | None = None,
        strict_exit: bool = False,
        registry: Path | None = None,
    ) -> None:
        self.folder, self.allow, self.names = Path(folder), allow, dict(names or {})
        self.mode = mode if isinstance(mode, RecordMode) else RecordMode.parse(mode, allow_none=True)
        self.replay, self.record, self.project, self.log = replay, record, project, log
        self.how_to_record, self.stage, self.strict_exit = how_to_record, stage, strict_exit
        self.registry = registry  # shared by the processes of one run: which servers it records, each one's verdict
        self.servers: dict[str, Server] = {}
        self.problems: list[str] = []  # what went wrong that the host may not have shown: the verdict's part
        self.told: Callable[[], None] = lambda: None  # called when the verdict may have grown (`mockmcp run`)
        Redactor.build(record.redact_env, record.redact_patterns, os.environ)  # a bad pattern: said now

    @property
    def reports(self) -> dict[str, list[Report]]:
        """Each replayed server's session reports, by its name (its cassette's file name without `.yaml`)."""
        return {name: server.reports for name, server in self.servers.items() if server.reports}

    def live_reports(self) -> list[Report]:
        """Every replayed server's session reports, those under way too (`mockmcp.calls`), server by server."""
        return [report for reports in self.reports.values() for report in reports]

    def recorded(self) -> list[tuple[Path, Path | None]]:
        """The cassettes this run recorded, each with its staged file (None: recorded into the cassette)."""
        if self.registry is None:
            return [(server.path, server.staged) for server in self.servers.values() if server.taps]
        marks = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((self.registry / "recorded").glob("*.json"))]
        return [(Path(m["path"]), m["staged"] and Path(m["staged"])) for m in marks]

    def lanes(self) -> list[tuple[str, Path, list[dict[str, Any]]]]:
        """Each replayed server's name, cassette and session reports (their JSON): an HTML timeline's lanes."""
        return [(name, s.path, [r.to_json() for r in s.reports]) for name, s in self.servers.items() if s.reports]

    def verdict(self, told: Callable[[dict[str, Any]], str] | None = None) -> str | None:
        """Everything the cassettes could not do as recorded, servers with no cassette, recordings that failed;
        None when all is well. `told` renders a miss (its `to_json`) where the verdict is read (pytest's fixes)."""
        said = list(self.problems)
        for name, server in self.servers.items():
            said += [f"{name}: {problem}" for problem in server.problems(self.replay.strict)]
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

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        _ACTIVE.remove(self)
        if not _ACTIVE:
            _uninstall()
        self.close()
        said = self.verdict() if self.strict_exit and kind is None else None
        if said:
            raise StrictFailure(
                f"the intercepted servers' cassettes in {self.folder} could not serve the host:\n{said}"
            )

    def close(self) -> None:
        """Save each recording: a server the host never stopped is saved as it stands (over HTTP: `_http.finish`)."""
        http = sys.modules.get("mockmcp.inprocess._http")
        if http is not None:
            http.finish(self)
        for server in self.servers.values():
            self.save(server)
        self.told()

    def save(self, server: Server) -> None:
        try:
            for text in server.save():
                self.say(f"mockmcp: {text}")
        except MockmcpError as error:
            self.problems.append(error.render())
            self.told()

    async def spawn(
        self, start: Callable[[], Awaitable[Any]], command: str, args: list[str], env: Any, cwd: Any
    ) -> Any:
        """The process the SDK gets for `command args`: the real one (allowed, or tapped to record), or a replay."""
        line = " ".join([command, *args])
        if any(fragment and fragment in line for fragment in self.allow):
            return await start()
        identity = self.identity(command, args, cwd)
        if identity.name in self.allow:
            return await start()
        try:
            server = self._server(identity, _fingerprint(env))
            if self.records(server):
                first = not server.taps and self.mark(server)
                ended = lambda: server.idle and self.save(server)  # noqa: E731
                return server.tap(await start(), self.mode, self.recording_redactor(), first, ended)
            return server.replayed(self.replay, self.say, self.how_to_record)
        except MockmcpError as error:
            self.problems.append(error.render())
            self.told()
            raise

    def identity(self, command: str, args: list[str], cwd: Any = None) -> Identity:
        """The identity of the stdio server `command args` started in `cwd` (None: the host's own folder), as this
        interception names it."""
        unsaid = Redactor.build(self.record.redact_env, self.record.redact_patterns, os.environ)
        return identify(
            command,
            args,
            None if cwd is None else os.fspath(cwd),
            names=self.names,
            project=self.project,
            substitutions=self.record.substitutions,
            unsaid=unsaid.text,
        )

    def _server(self, identity: Identity, env: str) -> Server:
        server = self.servers.get(identity.name)
        if server is None:
            path = self.folder / f"{identity.name}.yaml"
            staged = self.stage(path) if self.stage is not None else None
            server = self.servers[identity.name] = Server(identity, path, env, staged)
        elif server.env != env or server.identity.words != identity.words:
            problem = (
                f"two servers of this run share the cassette {server.path.name} ({' '.join(identity.words)}; "
                f"{server.shown}), and their environments or command lines differ"
            )
            raise UsageError(problem, "name each apart: names={'one': 'a fragment of its command line', ...}")
        return server

    def records(self, server: Server) -> bool:
        """Whether the server is recorded: it was in this run (by this process or another), or the mode says so."""
        if server.taps or (self.registry is not None and self._mark(server).exists()):
            return True
        return server.recordings is None and self.mode.records(server.path.exists())

    def _mark(self, server: Server) -> Path:
        assert self.registry is not None
        return self.registry / "recorded" / f"{server.identity.name}.json"

    def mark(self, server: Server) -> bool:
        """Claim the server's first recording in this run; False when another process of the run has it."""
        if self.registry is None:
            return True
        self._mark(server).parent.mkdir(exist_ok=True)
        try:
            fd = os.open(self._mark(server), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as mark:
            json.dump({"path": str(server.path), "staged": server.staged and str(server.staged)}, mark)
        return True

    def recording_redactor(self) -> Redactor:
        got = self.record
        return Redactor.for_recording(
            got.redact_env, got.redact_patterns, os.environ, "redact_env", got.substitutions, "substitute"
        )

    def say(self, text: str) -> None:
        print(text, file=self.log or sys.stderr, flush=True)
        if text.startswith("mockmcp: no recorded interaction"):  # a miss: what a verdict file must hold now
            self.told()


def _fingerprint(env: Any) -> str:
    """What tells two servers with one command line apart: their environments (hashed: values may be secrets)."""
    return hashlib.sha1(repr(sorted((env or {}).items())).encode()).hexdigest()


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
    from mockmcp.inprocess import _http  # and the HTTP clients' AsyncClient

    _http.install()


def _uninstall() -> None:
    import mcp.client.stdio as stdio

    for name, original in _ORIGINAL.items():
        setattr(stdio, name, original)
    _ORIGINAL.clear()
    from mockmcp.inprocess import _http

    _http.uninstall()


def intercepting(
    folder: str | os.PathLike[str], mode: RecordMode | str = RecordMode.NONE, **options: Any
) -> Interception:
    """`with mockmcp.intercepting("cassettes/agent"):` every MCP server this process's SDK client starts is
    replayed from (or, with `mode`, recorded into) a cassette of that folder; see `Interception`. Leaving the
    block raises StrictFailure with the verdict when the cassettes could not serve the host (`strict_exit`)."""
    options.setdefault("strict_exit", True)
    return Interception(folder, mode, **options)
