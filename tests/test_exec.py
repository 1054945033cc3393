"""`mockmcp exec`: the plugin's record modes for a test runner in any language, and what its report says;
and the explanation a host of the other era gets, which names the host that recorded the cassette.

The rule deciding whether a launch records is `RecordMode.records` (tests/test_words.py has its table);
here each outcome runs once as a real subprocess, with tests/servers/scripted.py as the real server.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from conftest import ANOTHER_HOST, MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp.cassette.store import load
from mockmcp.cli import options
from mockmcp.cli.app import cli
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay

SERVER = [sys.executable, str(ROOT / "tests" / "servers" / "scripted.py")]
OPEN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "ts-host", "version": "1"}},
}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}


def launch(cassette: Path, mode: str, *messages: dict[str, Any], server: list[str] = SERVER, strict: bool = False):
    """Run `mockmcp exec` as a host's test would, sending messages then closing stdin: (process, report). Each
    launch is a run of its own (a host of its own), as each run of a test suite is."""
    report = cassette.parent / "report-{pid}.json"
    options = ["--strict"] if strict else []
    done = subprocess.run(
        [
            *ANOTHER_HOST,
            *MOCKMCP,
            "exec",
            "-o",
            str(cassette),
            "--record-mode",
            mode,
            "--report",
            str(report),
            *options,
            "--",
            *server,
        ],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    [written] = cassette.parent.glob("report-*.json")
    data = json.loads(written.read_text())
    written.unlink()
    return done, data


def test_once_records_a_missing_cassette_then_replays_it_and_none_replays_it(tmp_path: Path) -> None:
    cassette = tmp_path / "cassettes" / "test_x" / "test_y.yaml"
    cassette.parent.mkdir(parents=True)
    done, report = launch(cassette, "once", OPEN, CALL)
    assert done.returncode == 0, done.stderr
    assert report["recorded"]["mode"] == "once" and report["recorded"]["status"] == 0
    assert cassette.exists() and len(load(str(cassette)).interactions) == 2
    done, report = launch(cassette, "once", OPEN, CALL, server=[], strict=True)
    assert done.returncode == 0, done.stderr
    assert "recorded" not in report and report["played"] == 2 and report["strict_ok"]
    done, report = launch(cassette, "none", OPEN, {**CALL, "params": {"name": "other"}}, strict=True)
    assert done.returncode == 1
    [miss] = report["misses"]
    assert "how to fix:" in miss["explanation"] and miss["record"] == "new"


def test_a_later_exec_by_the_same_host_records_into_the_cassette_its_run_began_and_the_next_run_replays(
    tmp_path: Path,
) -> None:
    """A host's test that starts its server twice under `once` records both sessions, in order (a Python
    program here, the host of both; a shell is no host); the next run of the suite replays them."""
    cassette = tmp_path / "c.yaml"
    other = {**CALL, "params": {"name": "echo", "arguments": {"text": "again"}}}
    feeds = []
    for n, session in enumerate([(OPEN, CALL), (OPEN, other)]):
        feeds.append(tmp_path / f"session{n}.jsonl")
        feeds[-1].write_text("".join(json.dumps(m) + "\n" for m in session))
    command = [*MOCKMCP, "exec", "-o", str(cassette), "--record-mode", "once", "--", *SERVER]
    both = (
        "import subprocess, sys\n"
        f"subprocess.run({command!r}, stdin=open({str(feeds[0])!r}), stdout=subprocess.DEVNULL, check=True)\n"
        f"sys.exit(subprocess.run({command!r}, stdin=open({str(feeds[1])!r})).returncode)\n"
    )
    done = subprocess.run([sys.executable, "-c", both], capture_output=True, text=True, env=child_env(), timeout=60)
    assert done.returncode == 0 and "replaying" not in done.stderr, done.stderr
    assert json.loads(done.stdout.splitlines()[1])["result"]["echo"]["arguments"] == {"text": "again"}
    recorded = load(str(cassette)).interactions
    sessions = [(0, "initialize"), (0, "tools/call"), (1, "initialize"), (1, "tools/call")]
    assert [(i.session, i.method) for i in recorded] == sessions
    done, report = launch(cassette, "once", OPEN, CALL, server=[])
    assert done.returncode == 0 and "recorded" not in report and report["played"] == 2, done.stderr


@pytest.mark.parametrize("mode", ["rewrite", "all"])
def test_rewrite_records_afresh_over_a_cassette_and_all_still_does_saying_so(tmp_path: Path, mode: str) -> None:
    cassette = tmp_path / "c.yaml"
    shutil.copyfile(SHIPPED / "notes.yaml", cassette)
    done, report = launch(cassette, mode, OPEN)
    assert done.returncode == 0, done.stderr
    assert report["recorded"] == {"mode": "all", "status": 0, "outcome": report["recorded"]["outcome"]}
    assert [i.method for i in load(str(cassette)).interactions] == ["initialize"]
    said = "mockmcp: record mode all is deprecated: write rewrite"
    assert (said in done.stderr) is (mode == "all"), done.stderr


def test_exec_redacts_a_recording_as_record_does(tmp_path: Path) -> None:
    """The secret of the environment and the pattern's match never reach the journal nor the cassette."""
    cassette, secret = tmp_path / "c.yaml", "sk-live-5f2b9c8e1a7d4e3f"
    call = {**CALL, "params": {"name": "echo", "arguments": {"key": secret, "token": "Bearer abc.def.ghi"}}}
    redact = ["--redact-env", "API_KEY", "--redact", r"Bearer [A-Za-z0-9.]+"]
    proc = subprocess.Popen(
        [
            *MOCKMCP,
            "exec",
            "-o",
            str(cassette),
            "--record-mode",
            "once",
            *redact,
            "--",
            *SERVER,
            "--echo-env",
            "API_KEY",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**child_env(), "API_KEY": secret},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in (OPEN, call)).encode())
        proc.stdin.flush()
        answers = [proc.stdout.readline(), proc.stdout.readline()]  # both answered: both journaled
        journal = Path(str(cassette) + ".journal").read_bytes()
        _rest, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    assert secret.encode() in answers[1]  # the host still sees the real value
    assert b"[REDACTED:API_KEY]" in journal and secret.encode() not in journal and b"abc.def.ghi" not in journal
    text = cassette.read_bytes()
    assert secret.encode() not in text and b"abc.def.ghi" not in text and b"[REDACTED:API_KEY]" in text
    assert load(str(cassette)).meta["redact"] == {"env": ["API_KEY"], "patterns": [r"Bearer [A-Za-z0-9.]+"]}


@pytest.mark.parametrize(
    ("mode", "server", "said"),
    [
        ("none", SERVER, "no cassette at {c}, and record mode none never records"),
        ("once", [], "record mode once records {c}, and no server was given to record from"),
    ],
)
def test_what_exec_cannot_do_is_said_in_its_report_with_the_fix(
    tmp_path: Path, mode: str, server: list[str], said: str
) -> None:
    cassette = tmp_path / "c.yaml"
    done, report = launch(cassette, mode, OPEN, server=server)
    assert done.returncode == 2
    assert report["error"].startswith(said.format(c=cassette)) and "how to fix: " in report["error"]
    assert "mockmcp exec -o" in report["error"] and "--record-mode once" in report["error"]
    assert report["error"] in done.stderr


@pytest.mark.parametrize(
    ("cassette", "opening", "words"),
    [
        (
            "notes-session-2026.yaml",
            OPEN,
            "holds only 2026-07-28 sessions; answered -32022",
        ),
        (
            "notes.yaml",
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
            "holds only handshake-era sessions; answered -32601",
        ),
    ],
)
def test_a_host_of_the_other_era_is_told_who_recorded_the_cassette_and_to_record_its_own(
    cassette: str, opening: dict[str, Any], words: str
) -> None:
    engine = Replay(load(str(SHIPPED / cassette)), Matcher.build())
    engine.receive(json.dumps(opening).encode())
    [miss] = engine.report.to_json()["misses"]
    assert words in miss["reason"]
    assert (
        "the cassette was recorded by the host mcp 0.1.0, which spoke the other era: record the host you test "
        "into it, in the record mode new_episodes (how to fix, below)" in miss["reason"]
    )
    assert "mockmcp record" not in miss["reason"]  # the fixes say it, in the words of where the user is
    assert miss["record"] == "new" and any(
        "mockmcp record --record-mode new_episodes -o" in fix for fix in miss["fixes"]
    )


def test_cassettes_names_each_servers_cassette_as_interception_names_it(tmp_path: Path) -> None:
    """`exec --cassettes DIR`: the cassette is DIR/<the server's identity>.yaml (what a Node preload launches,
    naming no cassette itself); recorded once, then replayed by the same command line."""
    folder = tmp_path / "cassettes"
    server = [sys.executable, "tests/servers/scripted.py"]  # this Python is `python` in a server's words
    command = [*MOCKMCP, "exec", "--cassettes", str(folder), "--project", str(ROOT), "--record-mode", "once"]
    answers = []
    for _run in ("record", "replay"):
        done = subprocess.run(
            [*ANOTHER_HOST, *command, "--", *server],
            input=json.dumps(OPEN) + "\n" + json.dumps(CALL) + "\n",
            capture_output=True,
            text=True,
            env=child_env(),
            cwd=ROOT,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        answers.append([json.loads(line)["result"] for line in done.stdout.splitlines()][1])
    assert answers[0] == answers[1] and "hi" in json.dumps(answers[0])
    assert [p.name for p in folder.iterdir()] == ["python-tests_servers_scripted.py.yaml"]
    assert "played 2 of 2 interactions" in done.stderr


def test_exec_names_the_cassette_once(tmp_path: Path) -> None:
    for given in (["-o", "c.yaml", "--cassettes", "cassettes"], []):
        done = subprocess.run(
            [*MOCKMCP, "exec", *given, "--", "srv"], capture_output=True, text=True, env=child_env(), cwd=tmp_path
        )
        assert done.returncode == 2
        assert "name the cassette: -o CASSETTE, or --cassettes DIR" in done.stderr, done.stderr


def read_by_click(args: list[str]) -> dict[str, Any] | None:
    try:
        with cli.commands["exec"].make_context("exec", list(args)) as ctx:
            values = dict(ctx.params)
    except (click.ClickException, click.exceptions.Exit):
        return None
    values["command"] = list(values["command"])
    return values


def read_fast(args: list[str]) -> dict[str, Any] | None:
    split = args.index("--") if "--" in args else len(args)
    values = options.read_plain(options.EXEC, args[:split], declined=("listen", "target"))
    return None if values is None else {**values, "command": args[split + 1 :]}


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "c.yaml"],
        ["--output=c.yaml", "--record-mode", "once", "--", "node", "s.js", "--", "-x"],
        ["--strict", "-o", "c.yaml", "--report", "r-{pid}.json", "--ignore", "a.b", "--ignore", "c", "--"],
        ["-o", "c.yaml", "--substitute", "HOME=/h", "--grace", "0.5", "--record-mode=rewrite", "--", "srv"],
        ["-o", "c.yaml", "--redact-env", "API_KEY", "--redact", "sk-[a-z]+", "--record-mode", "new_episodes", "--"],
        ["--cassettes", "cassettes", "--project", ".", "--", "node", "s.js"],
        [],  # neither -o nor --cassettes: exec says so, as it says any other problem of its values
        ["--report", "r.json"],
    ],
)
def test_the_launcher_reads_an_exec_command_line_as_click_does(args: list[str]) -> None:
    """`exec` replays on the launch path: the launcher reads its plain command lines itself, from the same table."""
    fast = read_fast(args)
    assert fast is not None and fast == read_by_click(args)


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "c.yaml", "--record-mode", "sometimes"],
        ["--cassettes", str(ROOT / "pyproject.toml")],  # a file, not a folder: click says so
        ["-o", "c.yaml", "--record-mode", "all"],  # 0.x's word: click reads it and says so
        ["--cassette", "c.yaml"],  # 0.x's spelling: the same
        ["-o", "c.yaml", "--grace", "-1"],
        ["-o", "c.yaml", "--http", "0"],
        ["-o", "c.yaml", "--http-target", "http://127.0.0.1:9/mcp"],
        ["-o", "c.yaml", "node", "s.js"],  # a server without `--`: click reads that
    ],
)
def test_what_the_launcher_leaves_to_click(args: list[str]) -> None:
    assert read_fast(args) is None


@pytest.mark.parametrize("named", [False, True], ids=["-o", "--cassettes"])
def test_an_exec_that_replays_a_cached_cassette_imports_nothing_costly(tmp_path: Path, named: bool) -> None:
    """Named after its server too (`--cassettes`, the Node preload's launch): interception is never imported."""
    env = {**child_env(), "MOCKMCP_CACHE_DIR": str(tmp_path), "PYTHONPROFILEIMPORTTIME": "1"}
    cassette = ["-o", str(SHIPPED / "notes.yaml")]
    if named:
        shutil.copyfile(SHIPPED / "notes.yaml", tmp_path / "python-server.py.yaml")
        cassette = ["--cassettes", str(tmp_path), "--project", str(Path.cwd())]
    command = [*MOCKMCP, "exec", *cassette, "--", "python", "server.py"]
    said = ""
    for _ in range(2):  # the first parses the cassette and caches it; the second is what a test suite sees
        done = subprocess.run(command, input="", capture_output=True, text=True, env=env, timeout=30)
        assert done.returncode == 0, done.stderr
        said = done.stderr
    names = [line.split("|")[2].strip() for line in said.splitlines() if line.startswith("import time:")][1:]
    after_site = names[names.index("site") + 1 :]
    assert not [n for n in after_site if n.split(".")[0] in ("click", "yaml", "deepdiff", "h11", "asyncio", "anyio")]
    assert "mockmcp.cli.executing" in after_site and "mockmcp.cli.app" not in after_site
    assert "mockmcp.inprocess" not in after_site and ("mockmcp._wire.identity" in after_site) == named


@pytest.mark.parametrize(
    ("spelling", "note"),
    [
        (["--http-target", "{url}"], None),
        (
            ["--http", "127.0.0.1:0", "--", "{url}"],
            "a URL after `--` in exec --http is deprecated: write --http-target",
        ),
    ],
)
def test_exec_records_over_http_from_its_target(
    spelling: list[str], note: str | None, tmp_path: Path, http_server: Any
) -> None:
    """`--http-target URL` (a proxy at --http, by default any free port) and 0.x's URL after `--` alike."""
    target, cassette, report = http_server(), tmp_path / "c.yaml", tmp_path / "r.json"
    args = [arg.replace("{url}", target) for arg in spelling]
    proc = subprocess.Popen(
        [*MOCKMCP, "exec", "-o", str(cassette), "--record-mode", "once", "--report", str(report), *args],
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(2 if note else 1)]
        assert re.search(rf"recording http://127\.0\.0\.1:\d+/mcp -> {re.escape(target)} into ", lines[-1]), lines
        assert (note is None) or lines[0].startswith(f"mockmcp: {note} "), lines
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    recorded = json.loads(report.read_text())["recorded"]
    assert recorded["mode"] == "once" and recorded["outcome"] == "stopped by a signal"
