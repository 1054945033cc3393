"""Shared helpers: where the cassettes are, and how a test launches `mockmcp replay`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "cassettes"
TEST_CASSETTES = Path(__file__).resolve().parent / "cassettes"
MOCKMCP = [sys.executable, "-m", "mockmcp"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def child_env() -> dict[str, str]:
    """The environment for mockmcp subprocesses: this one, with the project importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env
