"""What a cached `mockmcp replay` imports: start-up time is behaviour (a host's suite starts one per test).

The real launch is run, `python -m mockmcp replay` and the `mockmcp` console script, with Python's
own import log on (PYTHONPROFILEIMPORTTIME: one stderr line per module imported, for the whole
life of the process), on a shipped cassette whose parse a first run has cached. It answers one
request; then none of the costly modules a cached replay over stdio never needs may have been
imported. The same log taken through click's path shows click, so the check can see what it looks for.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

NOTES = str(SHIPPED / "notes.yaml")
REQUEST = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
REQUEST["params"] = {"name": "read_file", "arguments": {"path": "notes.txt"}}
RESULT = {"content": [{"type": "text", "text": "remember to buy milk"}], "isError": False}

# Each costs milliseconds to import, and none serves a cached cassette over stdio.
FORBIDDEN = ("click", "yaml", "deepdiff", "h11", "asyncio")

SCRIPT = shutil.which("mockmcp", path=os.path.dirname(sys.executable))


def replay(launcher: list[str], cache: Path, *args: str) -> tuple[list[str], dict[str, object]]:
    """Run a replay answering REQUEST; returns the modules it imported and its answer."""
    env = {**child_env(), "MOCKMCP_CACHE_DIR": str(cache), "PYTHONPROFILEIMPORTTIME": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [*launcher, "replay", NOTES, *args],
        input=json.dumps(REQUEST).encode() + b"\n",
        capture_output=True,
        timeout=30,
        env=env,
        cwd=ROOT,
    )
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr
    # "import time:  self [us] | cumulative | [indent]name"
    modules = [line.split("|")[2].strip() for line in stderr.splitlines() if line.startswith("import time:")]
    assert modules and "mockmcp" in modules, stderr
    return modules[1:], json.loads(proc.stdout)  # [1:]: the header line


def costly(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)


@pytest.fixture
def warm_cache(tmp_path: Path) -> Path:
    """A cache folder holding the parse of NOTES, from a first replay (which does import yaml)."""
    cache = tmp_path / "cache"
    modules, _answer = replay(MOCKMCP, cache)
    assert "yaml" in modules  # the first start parses the YAML ...
    assert list(cache.iterdir())  # ... and caches it
    return cache


LAUNCHERS = [pytest.param(MOCKMCP, id="python -m mockmcp")]
LAUNCHERS.append(
    pytest.param(
        [SCRIPT or "mockmcp"],
        id="console script",
        marks=pytest.mark.skipif(SCRIPT is None, reason="no mockmcp console script next to this Python"),
    )
)


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_cached_replay_imports_nothing_costly(launcher: list[str], warm_cache: Path) -> None:
    modules, answer = replay(launcher, warm_cache)
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": RESULT}
    assert costly(modules) == [], f"imported on a cached replay: {costly(modules)}"
    assert "mockmcp.cli.app" not in modules


def test_the_check_sees_click_where_click_reads_the_command_line(warm_cache: Path) -> None:
    """A repeated option is left to click (see tests/test_cli.py): then click is imported, and the check says so."""
    modules, answer = replay(MOCKMCP, warm_cache, "--timing", "none", "--timing", "none")
    assert answer["result"] == RESULT
    assert costly(modules) == ["click", *sorted(m for m in modules if m.startswith("click."))]
