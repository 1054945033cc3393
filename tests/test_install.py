"""Install anywhere: a wheel built from the checkout installs with its `http` extra into a clean virtual
environment (no test dependencies, no checkout on the path) and replays there, as docs/other-languages.md
says; `uvx` and `pipx` run it from the checkout where they are installed; its pre-commit hooks
(.pre-commit-hooks.yaml) run through `pre-commit try-repo`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT, SHIPPED

from mockmcp.cassette import schema
from mockmcp.cli.app import TITLE

TIMEOUT = 300  # seconds: building and installing fetch the build backend and dependencies when not cached
OPEN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "any", "version": "1"}},
}


def clean_env() -> dict[str, str]:
    """This environment without what points into the checkout or the test environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PYTEST")}
    ours = Path(sys.executable).parent
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != ours)
    return env


def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=clean_env(), **options)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    return done


def source(tmp_path: Path) -> Path:
    """What a build of the checkout reads, copied: building in the checkout would leave build/ and *.egg-info."""
    folder = tmp_path / "source"
    folder.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(ROOT / name, folder / name)
    shutil.copytree(ROOT / "mockmcp", folder / "mockmcp", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.mark.slow
def test_the_wheel_installs_with_its_http_extra_in_a_clean_venv_and_replays(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source(tmp_path))])
    [wheel] = dist.glob("mockmcp-*-py3-none-any.whl")
    target = tmp_path / "clean"
    venv.create(target, with_pip=False)  # this pip installs into it: a clean venv without ensurepip's wait
    python = target / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", f"{wheel}[http]"])
    mockmcp = str(target / "bin" / "mockmcp")
    assert run([mockmcp, "--version"], cwd=tmp_path).stdout == TITLE + "\n"
    cassette = tmp_path / "notes.yaml"
    shutil.copyfile(SHIPPED / "notes.yaml", cassette)
    report = tmp_path / "report.json"
    done = run([mockmcp, "replay", str(cassette), "--report", str(report)], cwd=tmp_path, input=json.dumps(OPEN) + "\n")
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["id"] == 1 and "serverInfo" in answer["result"]
    assert json.loads(report.read_text())["played"] == 1
    # the extra took (replay over HTTP imports h11), and mockmcp runs from the venv, not from the checkout
    where = "import h11, mockmcp.http._loop, mockmcp; print(mockmcp.__file__)"
    assert run([str(python), "-c", where], cwd=tmp_path).stdout.startswith(str(target))
    # the cassettes' schema, for an editor that cannot reach its address: written from the installed package
    run([mockmcp, "schema", "-o", str(tmp_path / "cassette.schema.json")], cwd=tmp_path)
    assert (tmp_path / "cassette.schema.json").read_text() == schema.text()


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["uvx", "pipx"])
def test_uvx_and_pipx_run_mockmcp_from_the_checkout(tool: str, tmp_path: Path) -> None:
    found = shutil.which(tool)
    if found is None:
        pytest.skip(f"{tool} is not installed here; docs/other-languages.md shows its command")
    checkout = str(source(tmp_path))
    spec = ["--from", checkout] if tool == "uvx" else ["run", "--spec", checkout]
    done = run([found, *spec, "mockmcp", "--version"], cwd=tmp_path)
    assert done.stdout == TITLE + "\n"


def pre_commit() -> list[str] | None:
    """pre-commit, from the test environment (the test extra installs it), else from PATH."""
    if importlib.util.find_spec("pre_commit") is not None:
        return [sys.executable, "-m", "pre_commit"]
    found = shutil.which("pre-commit")
    return [found] if found else None


def hook_repository(tmp_path: Path) -> Path:
    """The checkout's build sources and its .pre-commit-hooks.yaml as one commit of a repository of their own: clean,
    so try-repo takes it as it is (a checkout with changes it would copy again) and builds the hooks from it."""
    repository = source(tmp_path)
    shutil.copyfile(ROOT / ".pre-commit-hooks.yaml", repository / ".pre-commit-hooks.yaml")
    git = ["git", "-c", "user.name=mockmcp tests", "-c", "user.email=tests@mockmcp.invalid"]
    run([*git, "init", "-q"], cwd=repository)
    run([*git, "add", "."], cwd=repository)
    run([*git, "commit", "-q", "-m", "hooks"], cwd=repository)
    return repository


@pytest.mark.slow
def test_pre_commit_try_repo_fails_on_a_cassette_holding_a_github_token(tmp_path: Path) -> None:
    """Both hooks over a clean cassette and one holding a GitHub token, in one try-repo: each try-repo builds the
    hooks' environment afresh (a pip install of the repository), in a store of its own, so the test makes one."""
    command = pre_commit()
    if command is None:
        pytest.skip("pre-commit is not installed here (the test extra installs it)")
    repository = hook_repository(tmp_path)
    project = tmp_path / "project"
    (project / "cassettes").mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes.yaml", project / "cassettes" / "clean.yaml")
    token = "ghp_" + "0123456789abcdefghijklmnopqrstuvwxyz"  # the shape of a GitHub token, built here
    leaked = (SHIPPED / "notes.yaml").read_text().replace("remember to buy milk", token)
    assert leaked.count(token) == 1
    (project / "cassettes" / "leak.yaml").write_text(leaked)
    run(["git", "init", "-q"], cwd=project)
    files = ["--files", "cassettes/clean.yaml", "cassettes/leak.yaml"]
    env = {**clean_env(), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit")}  # its log, out of the user's cache
    line = [*command, "try-repo", str(repository), "--color", "never", *files]
    done = subprocess.run(line, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^mockmcp secrets scan\.+Failed$", done.stdout, re.M), done.stdout
    found = re.findall(r"^(cassettes/\S+?):\d+: .*: warning: (.*)$", done.stdout, re.M)
    assert found == [("cassettes/leak.yaml", "a GitHub token (ghp_...) left in the cassette; cassettes get committed")]
    assert token not in done.stdout  # only its first four characters are shown
    assert "2 files: 0 errors, 1 warning" in done.stdout
    assert re.search(r"^mockmcp lint\.+Passed$", done.stdout, re.M), done.stdout  # a credential: lint's warning
