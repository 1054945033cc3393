"""Virtual environments with the MCP Python SDK's 1.x line, for the tests that drive mockmcp from a 1.x host.

The suite's own environment has the SDK's 2.x line; mockmcp's in-process transports and its replay serve 1.x
hosts too (mockmcp/inprocess/_sdk.py). `environment(version)` gives the Python of `.venvs/mcp-<version>` at
the checkout's root: `mcp==<version>`, mockmcp's runtime dependencies as pyproject.toml lists them, and this
checkout installed editable (`pip install -e . --no-deps`). It is built once per machine and kept: built
again only when it is missing or its key changed (the pyproject, the version, this recipe, the Python that
built it, where the checkout is). pytest-xdist's workers may ask for the same one at once: a file lock per
environment lets one build while the others wait, then find it built. How long each build took is kept
beside it (`BUILT`) and said in the run's summary (`built_in_run`). A failed build skips the test only
when the package registry cannot be reached (`PIP_INDEX_URL`, else PyPI's); any other failure fails it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest

from mockmcp.stdio.processes import lock_file

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venvs"
VERSIONS = ("1.24.0", "1.30.0")  # the 1.x releases mockmcp supports: the first and the last
# The agent frameworks that pin the 1.x line, for tests/test_frameworks.py: `environment(version, FRAMEWORKS)`; and
# vcrpy, which patches the 1.x line's httpx, for tests/test_beside_vcr.py.
FRAMEWORKS = ("langchain-mcp-adapters==0.3.2", "strands-agents==1.62.0", "vcrpy==9.4.2")
BUILT = "mockmcp-build.json"  # in each environment: its key, when it was built and how long that took
RECIPE = 1  # raise when the steps below change, so every kept environment is built again
STEP_TIMEOUT = 600  # seconds for one step (pip reads the registry at its own timeout, 180 s a read here)

if sys.platform == "win32":
    BIN = Path("Scripts") / "python.exe"
else:
    BIN = Path("bin") / "python"


class Environment(NamedTuple):
    """A built environment: the SDK release it has, and its Python."""

    mcp: str
    python: Path


def environment(version: str, extras: tuple[str, ...] = ()) -> Environment:
    """`.venvs/mcp-<version>` (with `extras`, packages beside the SDK: `mcp-<version>-more`), built first when it
    is missing or out of date. Skips the test when the build failed because the package registry cannot be
    reached; fails it for any other build failure."""
    name = f"mcp-{version}" + ("-more" if extras else "")
    where = VENVS / name
    VENVS.mkdir(exist_ok=True)
    with _locked(VENVS / f"{name}.lock"):
        if _built_key(where) != _key(version, extras):
            _build(where, version, extras)
    return Environment(version, where / BIN)


def built_in_run(since: float) -> list[str]:
    """What each environment built since `since` (a time.time()) cost, one line each, for the run's summary."""
    lines = []
    for stamp in sorted(VENVS.glob(f"mcp-*/{BUILT}")):
        try:
            built = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if built.get("at", 0) >= since:
            lines.append(f"built {stamp.parent.relative_to(ROOT)} in {built['seconds']:.1f} s (mcp {built['mcp']})")
    return lines


def _key(version: str, extras: tuple[str, ...] = ()) -> str:
    """What an environment was built from: when any of it changes, it is built again."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    recipe = [
        RECIPE,
        version,
        list(extras),
        sys.version,
        sys.base_prefix,
        str(ROOT),
        pyproject,
    ]  # a moved checkout: built again
    return hashlib.sha256(json.dumps(recipe).encode()).hexdigest()


def _built_key(where: Path) -> str | None:
    try:
        built = json.loads((where / BUILT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # never built, or a build that did not finish (the stamp is written last)
    return built.get("key") if (where / BIN).exists() else None


def _build(where: Path, version: str, extras: tuple[str, ...] = ()) -> None:
    """A fresh environment at `where`: the SDK at `version`, mockmcp's dependencies, this checkout (editable)."""
    started = time.monotonic()
    shutil.rmtree(where, ignore_errors=True)
    if importlib.util.find_spec("pip") is not None:  # no pip of its own (seconds): this one installs into it
        _run([sys.executable, "-m", "venv", "--without-pip", str(where)], "create the environment")
        pip = [sys.executable, "-m", "pip", "--python", str(where / BIN), "install", "--quiet"]
    else:  # an environment without pip (uv's): the new one gets its own
        _run([sys.executable, "-m", "venv", str(where)], "create the environment")
        pip = [str(where / BIN), "-m", "pip", "install", "--quiet"]
    _run([*pip, f"mcp=={version}", *extras, *_runtime_dependencies()], f"install mcp=={version} {' '.join(extras)}")
    # The editable install writes mockmcp.egg-info in the checkout: one environment at a time does it.
    with _locked(VENVS / "editable.lock"):
        _run([*pip, "--no-deps", "-e", str(ROOT)], "install this checkout")
    seconds = time.monotonic() - started
    built = {"key": _key(version, extras), "mcp": version, "at": time.time(), "seconds": round(seconds, 2)}
    (where / BUILT).write_text(json.dumps(built), encoding="utf-8")


def _runtime_dependencies() -> list[str]:
    """mockmcp's own dependencies, as pyproject.toml lists them (environment markers included: pip reads them)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # mockmcp depends on tomli before 3.11
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as file:
        return list(tomllib.load(file)["project"]["dependencies"])


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=STEP_TIMEOUT, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        _failed(f"could not {what} within {STEP_TIMEOUT} s", str(exc.stderr or ""))
    if done.returncode != 0:
        _failed(f"could not {what} (exit status {done.returncode})", done.stdout + done.stderr)


def _failed(what: str, output: str) -> None:
    """A build that failed: skipped when the registry cannot be reached (saying why), else a failure."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/"
    try:
        with urllib.request.urlopen(index + "mcp/", timeout=15) as response:
            response.read(1)
    except OSError as exc:
        pytest.skip(f"the MCP SDK's 1.x environment: {what}, and the package registry {index} is unreachable ({exc})")
    pytest.fail(f"the MCP SDK's 1.x environment: {what}, with the registry reachable:\n{output[-4000:]}")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (another process that wants it waits), held until the block ends."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        lock_file(fd)
        yield
    finally:
        os.close(fd)


# Every environment the suite uses: tests/test_sdk1.py's, and tests/test_frameworks.py's with the frameworks.
EVERY = [*((version, ()) for version in VERSIONS), ("1.30.0", FRAMEWORKS)]

if __name__ == "__main__":  # `python tests/sdk1.py`: build them all now (.ci/run does, timing it apart from the tests)
    started = time.time()
    for version, extras in EVERY:
        try:
            environment(version, extras)
        except BaseException as outcome:  # pytest's skip or fail outside a test: the test run says it again
            print(f"not built: mcp {version} {' '.join(extras)}: {outcome}", file=sys.stderr)
    print("\n".join(built_in_run(started)) or "every environment was built already")
