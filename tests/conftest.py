"""Shared helpers: where the cassettes are, and how a test launches `mockmcp replay`."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

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
