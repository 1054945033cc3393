"""`mockmcp run -- python my_agent.py`: interception for a whole Python program and its Python children.

The program runs with `_boot` first on PYTHONPATH, whose `sitecustomize` calls `boot` in every Python process
(children inherit the environment); `boot` patches the SDK when `mcp.client.stdio` is first imported, so a process
that never speaks MCP pays nothing more. Each process writes its verdict to the run's folder; `run` reads them.
A Python that does not load `sitecustomize` (`python -S`, `-I`), or a program not in Python, runs unintercepted.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockmcp.errors import MockmcpError
from mockmcp.options import RecordOptions, ReplayOptions

if TYPE_CHECKING:
    from mockmcp.inprocess._intercept import Interception

__all__ = ["BOOT", "SETTINGS", "boot", "environment", "read_verdicts", "run", "settings"]

SETTINGS = "MOCKMCP_RUN"
"""The environment variable that carries a run's settings (JSON) to each Python process of the program."""
BOOT = str(Path(__file__).with_name("_boot"))
_STDIO = "mcp.client.stdio"


def run(command: list[str], interception: Interception) -> tuple[int, list[str]]:
    """Run `command` with `interception` in each of its Python processes; returns its exit status and what each
    process's cassettes could not do. SIGINT and SIGTERM are passed on to the program."""
    with tempfile.TemporaryDirectory(prefix="mockmcp-run-") as verdicts:
        try:
            child = subprocess.Popen(command, env={**os.environ, **environment(settings(interception), verdicts)})
        except OSError as error:
            return 127, [f"could not start {command[0]!r}: {error.strerror or error}"]
        passed = {n: signal.signal(n, lambda got, _: child.send_signal(got)) for n in (signal.SIGINT, signal.SIGTERM)}
        try:
            status = child.wait()
        finally:
            for number, before in passed.items():
                signal.signal(number, before)
        return status, read_verdicts(verdicts)


def settings(interception: Interception, stage: str | None = None) -> dict[str, Any]:
    """An interception as each process of a program starts it again (`boot`); `stage`: where its recordings wait
    for a verdict, `{stem}` the cassette's (pytest's staged files), None: into the cassettes."""
    return {
        "folder": str(interception.folder),
        "mode": interception.mode.value,
        "names": interception.names,
        "allow": list(interception.allow),
        "replay": list(interception.replay),
        "record": list(interception.record),
        "how_to_record": interception.how_to_record,
        "project": None if interception.project is None else str(interception.project),
        "stage": stage,
    }


def environment(settings: dict[str, Any], verdicts: str) -> dict[str, str]:
    """What a program's environment gains for interception in each of its Python processes."""
    path = os.pathsep.join(filter(None, [BOOT, os.environ.get("PYTHONPATH")]))
    return {SETTINGS: json.dumps({**settings, "verdicts": verdicts}), "PYTHONPATH": path}


def read_verdicts(folder: str | Path) -> list[str]:
    """What each process of a program said its cassettes could not do, process by process."""
    said = []
    for file in sorted(Path(folder).glob("*.json")):
        try:
            verdict = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # being written as the program ended: said in full by the process itself
            continue
        said += [f"process {verdict['pid']}: {text}" for text in verdict["said"]]
    return said


class _Finder(importlib.abc.MetaPathFinder):
    """Patches the SDK's stdio client as it is imported, so that a program that never imports it pays nothing."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != _STDIO:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            from mockmcp.inprocess._intercept import install  # deferred: imports the engine

            install()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def boot() -> None:
    """Start this process's interception, as `MOCKMCP_RUN` says (called by `_boot/sitecustomize.py`)."""
    given = json.loads(os.environ[SETTINGS])
    stage = given["stage"]  # where a recording waits for the test's verdict, as the plugin names it
    from mockmcp.inprocess._intercept import Interception  # the engine, cassettes: what interception needs

    interception = Interception(  # as `settings` wrote it
        given["folder"],
        given["mode"],
        names=given["names"],
        allow=tuple(given["allow"]),
        replay=ReplayOptions(*map(_tuples, given["replay"])),
        record=RecordOptions(*map(_tuples, given["record"])),
        project=Path(given["project"] or Path.cwd()),
        how_to_record=given["how_to_record"],
        stage=None if stage is None else lambda cassette: cassette.with_name(stage.replace("{stem}", cassette.stem)),
        registry=Path(given["verdicts"]),
    )
    folder = Path(given["verdicts"])

    def write() -> None:  # at each change, not only at exit: a forked child ends without running atexit
        said = interception.verdict()
        if said is None:
            return
        path = folder / f"{os.getpid()}.json"
        try:
            path.write_text(json.dumps({"pid": os.getpid(), "said": [said]}), encoding="utf-8")
        except OSError as error:  # the run's folder is gone: say it here, where it can still be read
            print(f"mockmcp: {said} (the verdict could not be written: {error})", file=sys.stderr)

    def forked() -> None:  # a forked child tells its own verdict and keeps its own recordings: its parent's are its
        interception.problems.clear()
        interception.servers.clear()

    interception.told = write
    os.register_at_fork(after_in_child=forked)
    interception.activate(patch=_STDIO in sys.modules)
    if _STDIO not in sys.modules:
        sys.meta_path.insert(0, _Finder())
    atexit.register(interception.close)  # saves the recordings, then writes the verdict


def _tuples(value: Any) -> Any:
    """A value of an options tuple as JSON carried it: its lists (of substitution pairs too) tuples again."""
    return tuple(map(_tuples, value)) if isinstance(value, list) else value


def boot_safely() -> None:
    """`boot`, with a settings error said on stderr and the program stopped, never a traceback from site."""
    try:
        boot()
    except (MockmcpError, KeyError, ValueError) as error:
        told = error.render() if isinstance(error, MockmcpError) else f"bad {SETTINGS}: {error!r}"
        print(f"mockmcp run: {told}", file=sys.stderr)
        raise SystemExit(2) from None
