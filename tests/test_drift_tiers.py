"""Tiered drift against a real server: mcp-server-time's shipped recording, edited to be an older server's, and
the GitHub Action composite that runs it in CI, its steps run here as a runner would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp.cassette import store
from mockmcp.cassette.validation import from_data

ACTION = ROOT / ".github" / "actions" / "drift" / "action.yml"


def older_server(tmp_path: Path, change: str) -> Path:
    """cassettes/time.yaml as an older mcp-server-time would have answered: so today's server is an upgrade
    whose one change is `change` (breaking: `timezone` became required; dangerous: a description changed)."""
    data = yaml.safe_load((SHIPPED / "time.yaml").read_text(encoding="utf-8"))
    [listing] = [i for i in data["interactions"] if i.get("request", {}).get("method") == "tools/list"]
    tool = next(t for t in listing["response"]["result"]["tools"] if t["name"] == "get_current_time")
    if change == "breaking":
        tool["inputSchema"]["required"] = []
    else:
        tool["description"] = "Get the time"
    path = tmp_path / f"time-{change}.yaml"
    store.save(from_data(data), str(path))
    return path


def verify(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """`mockmcp verify` against the server the cassette's meta.server names (mcp-server-time)."""
    command = [*MOCKMCP, "verify", *options, str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=child_env(), cwd=ROOT)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "status", "line"),
    [
        ("breaking", 1, "breaking  required-argument-added tool get_current_time: argument `timezone` is required now"),
        ("dangerous", 0, 'dangerous description-changed tool get_current_time: description "Get the time" -> '),
    ],
)
def test_fail_on_breaking_fails_only_on_a_breaking_change_of_a_real_servers_contract(
    tmp_path: Path, change: str, status: int, line: str
) -> None:
    proc = verify(older_server(tmp_path, change), "--fail-on", "breaking")
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert "changed  [1] tools/list" in proc.stdout  # the drift is told either way
    assert f"  {line}" in proc.stdout


# The action's ${{ }} expressions, as far as it uses them: a context's dotted path, compared with == and !=.
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_PATH = re.compile(r"\b(inputs|github|steps)((?:\.[\w-]+)+)")


def _evaluate(expression: str, contexts: dict[str, Any]) -> Any:
    def value(match: re.Match[str]) -> str:
        found: Any = contexts[match.group(1)]
        for key in match.group(2)[1:].split("."):
            found = found.get(key, "") if isinstance(found, dict) else ""
        return repr(found)

    python = _PATH.sub(value, expression).replace("&&", " and ").replace("||", " or ")
    return eval(python, {"__builtins__": {}})  # the action's own expressions, read above


def run_action(tmp_path: Path, inputs: dict[str, str], gh_says: str) -> tuple[int, list[str], dict[str, Any]]:
    """Run the composite's steps in order as a runner does (each `if`, each `env`, `run` by bash), with `mockmcp`
    this checkout and `gh` a script that logs its arguments and answers the comment listing with `gh_says`.
    Returns the status of the first step that failed (0: none), the log of gh, and the steps' outputs."""
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    given = {name: spec.get("default", "") for name, spec in action["inputs"].items()} | inputs
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "mockmcp").write_text(f'#!/bin/sh\nexec {sys.executable} -m mockmcp "$@"\n')
    (bin_ / "gh").write_text(
        f'#!/bin/sh\necho "$@" >> {tmp_path}/gh.log\ncase "$*" in *--jq*) echo "{gh_says}";; esac\n'
    )
    for script in bin_.iterdir():
        script.chmod(0o755)
    github = {"token": "t", "event_name": "pull_request", "repository": "o/r", "event": {"pull_request": {"number": 7}}}
    contexts: dict[str, Any] = {"inputs": given, "github": github, "steps": {}}
    for step in action["runs"]["steps"]:
        assert "${{" not in step["run"], f"{step['id']}: a script reads its values from env"
        if "if" in step and not _evaluate(step["if"], contexts):
            continue
        outputs = tmp_path / f"{step['id']}.out"
        outputs.touch()
        env = child_env() | {"PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(outputs)}
        env |= {"RUNNER_TEMP": str(tmp_path)}
        env |= {
            k: str(_EXPRESSION.sub(lambda m: str(_evaluate(m.group(1), contexts)), v))
            for k, v in step.get("env", {}).items()
        }
        proc = subprocess.run(
            ["bash", "-e", "-c", step["run"]], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        said = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
        contexts["steps"][step["id"]] = {"outputs": said}
        if proc.returncode:
            log = (tmp_path / "gh.log").read_text().splitlines() if (tmp_path / "gh.log").exists() else []
            return proc.returncode, log, contexts["steps"]
    return 0, (tmp_path / "gh.log").read_text().splitlines(), contexts["steps"]


@pytest.mark.slow
def test_the_ci_action_comments_once_and_fails_on_the_tier(tmp_path: Path) -> None:
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir(), later.mkdir()
    status, gh, steps = run_action(first, {"cassettes": str(older_server(tmp_path, "breaking")), "install": ""}, "")
    assert status == 1 and steps["verify"]["outputs"]["status"] == "1"
    assert "install" not in steps  # mockmcp is installed: nothing for pip
    where = steps["verify"]["outputs"]["report"]
    report = Path(where).read_text()
    assert report.count("<!-- mockmcp drift -->") == 1
    assert report.startswith("<!-- mockmcp drift -->\n### mockmcp verify")
    assert "| breaking | `required-argument-added` | tool get_current_time |" in report
    assert gh[-1] == f"api --method POST repos/o/r/issues/7/comments -F body=@{where}"
    # A later push: the earlier comment (id 41) is edited, not a second one written; a dangerous change passes.
    status, gh, steps = run_action(later, {"cassettes": str(older_server(tmp_path, "dangerous")), "install": ""}, "41")
    assert status == 0 and "verdict" not in steps
    assert gh[-1] == f"api --method PATCH repos/o/r/issues/comments/41 -F body=@{steps['verify']['outputs']['report']}"
