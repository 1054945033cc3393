"""`mockmcp run -- python my_agent.py`: interception for a whole Python program and its Python children.

The program runs with this package's `_boot` folder first on PYTHONPATH, whose `sitecustomize` calls
`boot` in every Python process the program starts (children inherit the environment). `boot` reads the
settings from `MOCKMCP_RUN`, and patches the SDK when `mcp.client.stdio` is first imported (a finder on
`sys.meta_path`), so a process that never speaks MCP pays nothing but this module. At exit each process
writes its verdict to the run's folder; `run` reads them all and says what failed. A server started
by a program that is not Python, or by a Python that does not load `sitecustomize` (`python -S`,
`-I`), is not intercepted: it runs as it would without mockmcp.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mockmcp.errors import MockmcpError
from mockmcp.options import RecordOptions, ReplayOptions

__all__ = ["BOOT", "SETTINGS", "boot", "run"]

SETTINGS = "MOCKMCP_RUN"
"""The environment variable that carries a run's settings (JSON) to each Python process of the program."""
BOOT = str(Path(__file__).with_name("_boot"))
_STDIO = "mcp.client.stdio"


def run(command: list[str], settings: dict[str, Any]) -> tuple[int, list[str]]:
    """Run `command` with interception; returns its exit status and what each of its processes' cassettes
    could not do. `settings`: the folder, mode, names, allow list and the replay and record options."""
    with tempfile.TemporaryDirectory(prefix="mockmcp-run-") as verdicts:
        env = dict(os.environ)
        env[SETTINGS] = json.dumps({**settings, "verdicts": verdicts})
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [BOOT, env.get("PYTHONPATH")]))
        try:
            status = subprocess.call(command, env=env)
        except KeyboardInterrupt:  # the program got the same SIGINT: its verdicts are still read
            status = 130
        except OSError as error:
            return 127, [f"could not start {command[0]!r}: {error.strerror or error}"]
        said = []
        for file in sorted(Path(verdicts).glob("*.json")):
            verdict = json.loads(file.read_text(encoding="utf-8"))
            said += [f"process {verdict['pid']}: {text}" for text in verdict["said"]]
    return status, said


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
    settings = json.loads(os.environ[SETTINGS])
    from mockmcp.inprocess._intercept import Interception  # the engine, cassettes: what interception needs

    interception = Interception(
        settings["folder"],
        settings["mode"],
        names=settings.get("names") or {},
        allow=tuple(settings.get("allow") or ()),
        replay=ReplayOptions(*map(_tuples, settings.get("replay", ()))),
        record=RecordOptions(*map(_tuples, settings.get("record", ()))),
        project=Path.cwd(),
        how_to_record=settings.get("how_to_record", "record it: mockmcp run --record-mode once -- ..."),
    )
    interception.activate(patch=_STDIO in sys.modules)
    if _STDIO not in sys.modules:
        sys.meta_path.insert(0, _Finder())

    def at_exit() -> None:
        interception.close()
        said = interception.verdict()
        if said is None:
            return
        record = {"pid": os.getpid(), "said": [said]}
        path = Path(settings["verdicts"]) / f"{os.getpid()}.json"
        try:
            path.write_text(json.dumps(record), encoding="utf-8")
        except OSError as error:  # the run's folder is gone: say it here, where it can still be read
            print(f"mockmcp: {said} (the verdict could not be written: {error})", file=sys.stderr)

    atexit.register(at_exit)


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
