"""What a cached `mockmcp replay` imports: start-up time is behaviour (a host's suite starts one per test).

The real launch is run, `python -m mockmcp replay` and the `mockmcp` console script, with Python's
own import log on (PYTHONPROFILEIMPORTTIME: one stderr line per module imported, for the whole
life of the process), on a shipped cassette whose parse a first run has cached. It answers one
request; then none of the costly modules a cached replay over stdio never needs may have been
imported. The same log taken through click's path shows click (and typing, which click imports), so
the check can see what it looks for.

Only what is imported once the interpreter's own start-up (`site`) is over counts. `site` runs the
`.pth` files, and an editable install's finder is one: it imports modules of its own (pathlib,
importlib.util, ... with some setuptools versions typing too), which say nothing about mockmcp. A
module `site` imported is never imported again, so it cannot be seen later either: then the test
says it cannot check that module, by skipping, rather than pass or fail by accident.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

NOTES = str(SHIPPED / "notes.yaml")
REQUEST = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
REQUEST["params"] = {"name": "read_file", "arguments": {"path": "notes.txt"}}
RESULT = {"content": [{"type": "text", "text": "remember to buy milk"}], "isError": False}

# Each costs milliseconds to import, and none serves a cached cassette over stdio (typing: see _wire.namedtuple).
FORBIDDEN = ("click", "yaml", "deepdiff", "h11", "asyncio", "typing", "re2")  # re2: only for a cassette with patterns

SCRIPT = shutil.which("mockmcp", path=os.path.dirname(sys.executable))


class Imports(NamedTuple):
    at_start: list[str]  # by the interpreter's start-up, up to and including `site`
    modules: list[str]  # after it: by the launcher and mockmcp


def replay(launcher: list[str], cache: Path, *args: str) -> tuple[Imports, dict[str, object]]:
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
    # "import time:  self [us] | cumulative | [indent]name", after a header line. A module is logged when
    # its import ends, after those it imported, two spaces deeper: so `site` unindented closes start-up.
    names = [line.split("|")[2][1:] for line in stderr.splitlines() if line.startswith("import time:")][1:]
    assert "site" in names, stderr
    end = names.index("site") + 1
    imports = Imports([n.strip() for n in names[:end]], [n.strip() for n in names[end:]])
    assert "mockmcp" in imports.modules, stderr
    return imports, json.loads(proc.stdout)


def costly(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)


@pytest.fixture
def warm_cache(tmp_path: Path) -> Path:
    """A cache folder holding the parse of NOTES, from a first replay (which does import yaml)."""
    cache = tmp_path / "cache"
    imports, _answer = replay(MOCKMCP, cache)
    assert "yaml" in imports.modules  # the first start parses the YAML ...
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


def launch_path() -> set[str]:
    """The launch path's modules as docs/architecture.md lists them (its "Start-up rules", one `- ` line each)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Start-up rules", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `(mockmcp[\w.]*)`$", section, flags=re.M)
    assert len(listed) == len(set(listed)), "a module is listed twice"
    return set(listed)


def test_a_cached_replay_imports_the_launch_path_the_docs_list(warm_cache: Path) -> None:
    imports, _answer = replay(MOCKMCP, warm_cache)
    imported = {m for m in imports.modules if m.split(".")[0] == "mockmcp"}
    assert imported == launch_path(), (
        f"imported but not listed: {sorted(imported - launch_path())}; "
        f"listed but not imported: {sorted(launch_path() - imported)}"
    )


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_cached_replay_imports_nothing_costly(launcher: list[str], warm_cache: Path) -> None:
    imports, answer = replay(launcher, warm_cache)
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": RESULT}
    assert costly(imports.modules) == [], f"imported on a cached replay: {costly(imports.modules)}"
    assert "mockmcp.cli.app" not in imports.modules
    if costly(imports.at_start):
        pytest.skip(f"the interpreter's start-up imported {costly(imports.at_start)}: whether mockmcp would is unseen")


def test_the_check_sees_click_where_click_reads_the_command_line(warm_cache: Path) -> None:
    """A repeated option is left to click (see tests/test_cli.py): then click is imported, and the check says so."""
    imports, answer = replay(MOCKMCP, warm_cache, "--timing", "none", "--timing", "none")
    assert answer["result"] == RESULT
    clicks = {"click", *(m for m in imports.modules if m.startswith("click."))} - set(imports.at_start)
    assert "click" in clicks
    assert clicks <= set(costly(imports.modules))
