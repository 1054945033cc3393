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
TEST_CASSETTES = Path(__file__).resolve().parent / "cassettes"
MOCKMCP = [sys.executable, "-m", "mockmcp"]

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
