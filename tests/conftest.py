"""Shared helpers: where the cassettes are, and how a test launches `mockmcp replay` (over stdio or HTTP).

Test modules import what they share from here (`from conftest import ...`), never from each other.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "cassettes"
MOCKMCP = [sys.executable, "-m", "mockmcp"]
sys.path.insert(0, str(ROOT / "examples"))  # the tests' SDK host is examples/sdk_host.py

# What the SDK host sees of examples/notes_server.py in `sdk_host.full_session` (both eras).
NOTES_SESSION = {
    "read": "remember to buy milk",
    "missing": (True, "Error executing tool read_file: no such file: nope.txt"),
    "count": "counted to 2",
    "progress": [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")],
    "delete": "deleted notes.txt",
    "summary": "milk",
    "roots": "file:///home/user/notes",
    "resource": "remember to buy milk",
    "prompt": "Please review this note:\n\nremember to buy milk",
}

# mockmcp caches parsed cassettes in the user's cache folder; the tests (and every mockmcp they
# start, which inherits the environment) use a folder of their own instead.
_CACHE = tempfile.mkdtemp(prefix="mockmcp-test-cache-")
os.environ["MOCKMCP_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def child_env() -> dict[str, str]:
    """The environment for mockmcp subprocesses: this one, with the project importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class Served:
    """A running `mockmcp replay --http 0`: its process, the URL it printed, where its report goes."""

    def __init__(self, proc: subprocess.Popen[str], url: str, report: Path) -> None:
        self.proc, self.url, self.report = proc, url, report
        self.port = int(url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0
        return json.loads(self.report.read_text())


@contextmanager
def served(
    cassette: Path, tmp_path: Path, *extra: str, preexec_fn: Callable[[], Any] | None = None
) -> Iterator[Served]:
    """Serve a cassette over HTTP on a port the system picks; the URL is read from the first stderr line.

    `preexec_fn` runs in the child before it starts (a resource limit, say)."""
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [*MOCKMCP, "replay", str(cassette), "--http", "0", "--report", str(report), *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=ROOT,
        preexec_fn=preexec_fn,
    )
    try:
        assert proc.stderr is not None
        found = re.search(r"http://\S+/mcp", proc.stderr.readline())
        assert found, "the server says where it listens"
        yield Served(proc, found.group(0), report)
    finally:
        proc.kill()
        proc.wait(10)
