"""The framework matrix: agents on real frameworks, their code unchanged, recorded from the live servers and replayed.

Each host in tests/frameworks/ starts its servers by commands on PATH (shims that leave a mark when they
start: a third-party server, mcp-server-time; this project's notes server; the npm server-everything).
It runs under `mockmcp run --record-mode once` (the live servers, recorded), then under `mockmcp run` with
the shims gone from PATH: the replay gives the host exactly what the live servers gave it, and starts
nothing (tests/test_intercept.py holds a run with no mockmcp at all to the same). Then the host asks for
another time than recorded: the run fails, explaining the miss. The frameworks on the SDK's 2.x line run
in the suite's environment; those that pin 1.x (langchain-mcp-adapters, strands-agents) in a 1.30
environment of their own (tests/sdk1.py), and the SDK's own 1.x host on 1.24 too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sdk1
from conftest import ROOT, child_env, forked

pytestmark = [pytest.mark.timeout(1200), pytest.mark.slow]

HOSTS = ROOT / "tests" / "frameworks"
EVERYTHING = ROOT / "tests" / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
TIMEOUT = 180


# (host, the environment's packages beyond the SDK ("": the suite's own, 2.x), its SDK release, cassettes written)
MATRIX = [
    ("pydantic_ai", "", "", ["notes-server.yaml", "time-server.yaml"]),
    ("openai_agents", "", "", ["time-server.yaml"]),
    ("fastmcp_config", "", "", ["everything-server-stdio.yaml", "time-server.yaml"]),
    ("sdk_client", "", "", ["time-server.yaml"]),
    ("langchain", "frameworks", "1.30.0", ["time-server.yaml"]),
    ("strands", "frameworks", "1.30.0", ["time-server.yaml"]),
    ("sdk_client", "", "1.30.0", ["time-server.yaml"]),
    ("sdk_client", "", "1.24.0", ["time-server.yaml"]),
]


def _param(host: str, extras: str, version: str, cassettes: list[str]) -> Any:
    marks = [pytest.mark.xdist_group(f"sdk1-{version}{'-more' * bool(extras)}")] if version else []
    return pytest.param(host, extras, version, cassettes, marks=marks, id=f"{host}-{version or 'mcp2'}")


@pytest.fixture
def shims(tmp_path: Path) -> Path:
    """The servers' commands, in a folder of their own; each start appends a line to `starts` in it."""
    folder = tmp_path / "bin"
    folder.mkdir()
    commands = {
        "time-server": forked("-m", "mcp_server_time"),
        "notes-server": forked(str(ROOT / "examples" / "notes_server.py")),
        "everything-server": f"exec node {EVERYTHING / 'index.js'}",
    }
    for name, command in commands.items():
        (folder / name).write_text(f'#!/bin/sh\necho {name} >> "{folder / "starts"}"\n{command} "$@"\n')
        (folder / name).chmod(0o755)
    return folder


def starts(shims: Path) -> list[str]:
    marks = shims / "starts"
    return marks.read_text().split() if marks.exists() else []


def python_for(extras: str, version: str) -> str:
    if not version:
        return sys.executable
    return str(sdk1.environment(version, sdk1.FRAMEWORKS if extras else ()).python)


def runner(python: str, host: str, cwd: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*mockmcp: str, path: str, when: str = "12:00", then: str = "") -> subprocess.CompletedProcess[str]:
        """The host with `when`, under `mockmcp run` with the options `mockmcp`; with `then`, again with that in
        the same process (tests/frameworks/then.py), its first output line the first run's."""
        env = {**child_env(), "PATH": path}
        if mockmcp:
            mockmcp = (*mockmcp, "--cassettes", str(cwd / "cassettes")) if "--cassettes" not in mockmcp else mockmcp
        program = [python, str(HOSTS / f"{host}_host.py"), when]
        if then:
            program = [python, str(HOSTS / "then.py"), program[1], when, then]
        command = [python, "-m", "mockmcp", "run", *mockmcp, "--", *program] if mockmcp else program
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)

    return run


@pytest.mark.parametrize(("host", "extras", "version", "cassettes"), [_param(*row) for row in MATRIX])
def test_replayed_the_host_sees_what_the_live_servers_said_and_a_changed_argument_is_explained(
    host: str, extras: str, version: str, cassettes: list[str], shims: Path, tmp_path: Path
) -> None:
    if host == "fastmcp_config" and (shutil.which("node") is None or not EVERYTHING.exists()):
        pytest.skip("the npm server needs node and tests/node's packages (npm ci --prefix tests/node)")
    run = runner(python_for(extras, version), host, tmp_path)
    with_shims = f"{shims}{os.pathsep}{os.environ['PATH']}"
    folder = tmp_path / "cassettes"

    recorded = run("--record-mode", "once", "--cassettes", str(folder), path=with_shims)  # the live servers
    assert recorded.returncode == 0, recorded.stderr
    assert sorted(p.name for p in folder.iterdir()) == cassettes
    started = starts(shims)
    assert sorted(set(started)) == sorted(name.removesuffix("-stdio.yaml").removesuffix(".yaml") for name in cassettes)

    # Replayed, then asked for another time than recorded: one run, the framework imported once.
    replayed = run("--cassettes", str(folder), path=os.environ["PATH"], then="13:00")
    assert starts(shims) == started  # replay started no server; their commands are not even on PATH
    first = replayed.stdout.splitlines()[0]
    assert json.loads(recorded.stdout) == json.loads(first)  # what the live servers told the host, again
    assert replayed.returncode == 1  # the program itself ended well: the verdict fails the run
    said = replayed.stderr.split("mockmcp: process")[1:]  # the run's verdict, after the program ended
    assert said and 'arguments.time: recorded "12:00", incoming "13:00"' in said[0]
    assert all('incoming "12:00"' not in part for part in said)  # the recorded call was answered, not missed


# --- a remote server behind credentials, over Streamable HTTP, from both SDK lines ------------------------

GUARDED = ROOT / "tests" / "servers" / "guarded.py"
TOKEN, KEY = "frameworks-token-4d1f", "frameworks-key-9b2e"


# The 1.x line's httpx under `mockmcp run`; the 2.x line's httpx2, with the same server stopped, its credentials
# grepped for and a changed argument, is tested in process by tests/test_intercept_http.py.
@pytest.mark.parametrize("version", [pytest.param("1.30.0", marks=[pytest.mark.xdist_group("sdk1-1.30.0")])])
def test_a_remote_server_is_recorded_then_replayed_stopped_and_its_credentials_never_kept(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = runner(python_for("", version), "sdk_http", tmp_path)
    env = {**child_env(), "GUARD_TOKEN": TOKEN, "GUARD_KEY": KEY}
    server = subprocess.Popen([sys.executable, str(GUARDED), "--http", "0"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = _serving(server) + f"/mcp?key={KEY}"
        monkeypatch.setenv("GUARD_URL", url)  # the host's own settings (child_env passes them on)
        monkeypatch.setenv("GUARD_TOKEN", TOKEN)
        recorded = run("--record-mode", "once", "--name", "notes=127.0.0.1", path=os.environ["PATH"], when="notes.txt")
    finally:
        server.terminate()
        server.wait(10)
    assert recorded.returncode == 0, recorded.stderr
    # the server is gone: replayed, then asked for another note than recorded, in one run
    replayed = run("--name", "notes=127.0.0.1", path=os.environ["PATH"], when="notes.txt", then="todo.md")
    assert json.loads(recorded.stdout) == json.loads(replayed.stdout.splitlines()[0])
    assert json.loads(recorded.stdout)["text"] == "remember to buy milk"  # what the live server said
    cassette = (tmp_path / "cassettes" / "notes.yaml").read_text()
    assert TOKEN not in cassette and KEY not in cassette and "Bearer" not in cassette
    assert replayed.returncode == 1 and 'arguments.path: recorded "notes.txt", incoming "todo.md"' in replayed.stderr


def _serving(server: subprocess.Popen[str]) -> str:
    assert server.stderr is not None
    for line in server.stderr:
        if "Uvicorn running on " in line:
            return line.split("Uvicorn running on ")[1].split()[0]
    raise AssertionError("the guarded server did not start")
