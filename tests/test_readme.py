"""The documentation runs as written: every fenced block of README.md and docs/*.md is checked here.

Commands run from a copy of the checkout's examples, cassettes, benchmarks and test servers (so a command
that writes a file writes it there), with `python`, `mockmcp` and `pytest` on PATH meaning this interpreter
and this mockmcp. A block `$ COMMAND` followed by lines is a sample of what the command prints on stdout,
compared line for line with what it prints. A `text` block is a picture (the architecture's maps) and holds
no command; a YAML block after a `<!-- recipe: NAME -->` line is a recipe of the faults cookbook, which
tests/test_cookbook.py replays. Every other block is claimed by one test below, by a line of it (`CLAIMS`);
a new block that nothing claims fails `test_every_block_is_checked`. A block repeated byte for byte on
another page (the README's pytest example, say) is the same example, and is run once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import anyio

# Imported once here, not again inside each pytester run of the config example (a second copy of a
# class fails isinstance checks): its host, and what that host's client proxies load while it runs.
import fastmcp.server.providers.proxy  # noqa: F401
import mcp.server.request_state  # noqa: F401
import pytest
import yaml
from conftest import ROOT, SHIPPED, child_env, forked
from demo_host import SESSION
from mcp import Client
from test_cookbook import RECIPES

import mockmcp
from mockmcp.cli.app import cli
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.engine.replay import Replay, Send
from mockmcp.plugin import pytest_plugin
from mockmcp.plugin._naming import MARKER_ARGUMENTS
from mockmcp.tools import _lint as lint

pytest_plugins = ["pytester"]

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
TIMEOUT = 60  # seconds, for every command a block runs

# A line of each block that is neither a `$ COMMAND` sample, a picture nor a recipe, and the test that checks it.
CLAIMS = {
    "python3 -m venv .venv": "test_quick_start",
    "mockmcp record -o my-notes.yaml": "test_record_then_replay",
    "python -m mcp_server_time": "test_record_the_time_server",
    "mockmcp replay cassettes/notes.yaml --ignore": "test_replay_commands",
    "mockmcp: no recorded interaction matches": "test_what_replay_says_on_stderr",
    "mockmcp replay: cassettes/notes.yaml: played": "test_what_replay_says_on_stderr",
    "mockmcp replay --http 8000": "test_replay_over_http",
    "mockmcp record --http-target": "test_record_over_http",
    "# what to record from": "test_the_pytest_example",
    "pytest --mockmcp-record-mode=once": "test_the_pytest_example",
    "asyncio.run(main())": "test_the_sdk_without_the_plugin",
    "anyio.run(in_process)": "test_replay_in_the_hosts_process",
    "anyio.run(record_two_ways)": "test_record_in_the_hosts_process",
    "# tests/test_notes_in_process.py": "test_the_pytest_in_process_example",
    "asyncio.run(with_fastmcp())": "test_replay_in_the_hosts_process_with_fastmcp",
    "# tests/test_agent.py: one test, two servers": "test_the_pytest_multi_server_example",
    "# tests/test_notes_http.py": "test_the_pytest_http_example",
    'mockmcp.load("cassettes/notes.yaml")': "test_the_python_api_example",
    "python benchmarks/bench_replay.py": "test_benchmarks",
    "uses: mockmcp/mockmcp/.github/actions/drift@main": "test_the_ci_drift_workflow",
    "name: charge, arguments: {amount: 10}": "test_the_without_recording_examples",
    "# tests/test_agent_calls.py": "test_the_calls_example",
    "mockmcp stub -o cassettes/time.yaml": "test_the_stub_page",
    "# get_current_time: write its answer in `content`": "test_the_stub_page",
    "meta: {closed_world: true}": "test_the_without_recording_examples",
    "closed_world=True)\nasync def test_the_agent_only_searches": "test_the_without_recording_examples",
    "# tests/test_agent_time.py": "test_the_agents_page",
    "def model_url(record_mode: str)": "test_the_agent_run_page",
    "pytest examples/agent_run --record-mode=once": "test_the_agent_run_page",
    '"port", "path", "query", "json_body"]}': "test_the_agent_run_page",
    "pytest tests/test_agent_time.py --mockmcp-record-mode=once": "test_the_agents_page",
    "# my_agent.py: stands for an agent": "test_the_agents_page",
    "mockmcp run --record-mode once --cassettes cassettes/agent": "test_the_agents_page",
    "version: 1                       # required": "test_the_cassette_format_examples",
    "framing: sse": "test_the_cassette_format_examples",
    "# yaml-language-server: $schema=": "test_the_cassette_format_examples",
    "interactions[2].respnse: unknown key": "test_the_error_example_is_what_mockmcp_says",
    "arguments.trace: any": "test_the_match_rules_example",
    "substitute: [PROJECT]              # the names only": "test_the_substitution_example",
    "pip wheel --no-deps -w dist path/to/mockmcp": "test_the_other_languages_page",
    "// integrations/node/examples/notes.vitest.mjs": "test_the_other_languages_page",
    "// integrations/node/examples/preload/everything.vitest.mjs": "test_the_other_languages_page",
    "// integrations/node/examples/notes.node.mjs": "test_the_other_languages_page",
    "// mockmcp_test.go": "test_the_other_languages_page",
    "// echo_test.go": "test_the_other_languages_page",
    "TokioChildProcess::new(command)": "test_the_other_languages_page",
    "mockmcp wrap .mcp.json --in-place": "test_the_wrap_commands",
    "# tests/test_host_config.py": "test_the_pytest_config_example",
    '"args": ["examples/notes_server.py"]': "test_the_pytest_config_example",
    '"@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"': "test_the_wrap_examples",
    '"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}': "test_the_wrap_examples",
    '"search": {"serverUrl": "https://search.example.com/mcp"}': "test_the_wrap_examples",
    "// asks for the key once, and hands it to the server": "test_the_wrap_examples",
    '"postgres": {"source": "custom"': "test_the_wrap_examples",
    'envs: {GITHUB_PERSONAL_ACCESS_TOKEN: "<token>"}': "test_the_wrap_examples",
    'command = "npx"   # comments stay': "test_the_wrap_examples",
    "      - id: mockmcp-secrets": "test_the_pre_commit_example",
}


class Block(NamedTuple):
    doc: str  # the page, as a path from the checkout
    lang: str
    text: str
    line: int  # of the block's first line in the page
    recipe: bool  # after a `<!-- recipe: NAME -->` line

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}"


def doc_blocks(path: Path) -> list[Block]:
    """The fenced blocks of one page."""
    blocks: list[Block] = []
    name = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    fence = None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if fence is None:
                recipe = number > 1 and lines[number - 2].startswith("<!-- recipe: ")
                fence = (line[3:].strip(), number + 1, recipe)
            else:
                lang, start, recipe = fence
                blocks.append(Block(name, lang, "\n".join(lines[start - 1 : number - 1]), start, recipe))
                fence = None
    assert fence is None, f"{name}:{fence[1] - 1}: a fenced block that never ends"
    return blocks


BLOCKS = [each for page in DOCS for each in doc_blocks(page)]
SAMPLES = [b for n, b in enumerate(BLOCKS) if b.text.startswith("$ ") and b.text not in [a.text for a in BLOCKS[:n]]]
PICTURES = [b for b in BLOCKS if b.lang == "text"]
CLAIMED = [b for b in BLOCKS if not b.text.startswith("$ ") and b.lang != "text" and not b.recipe]
ALL_TEXT = "\n".join(page.read_text(encoding="utf-8") for page in DOCS)


def block(claim: str) -> Block:
    """The one block holding claim (a block repeated byte for byte on several pages counts once)."""
    found = {b.text: b for b in reversed(CLAIMED) if claim in b.text}
    assert len(found) == 1, f"{len(found)} different blocks hold {claim!r}: {[str(b) for b in found.values()]}"
    return next(iter(found.values()))


def commands(shell: Block) -> list[str]:
    """The commands of a shell block: continuation lines joined, comment and blank lines left out."""
    text = shell.text.replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def environment(bin_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in child_env().items() if not key.startswith("PYTEST_")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    for varies in ("NO_COLOR", "COLUMNS", "LINES"):
        env.pop(varies, None)
    return env


# The test extra installs trio (in-process replay runs on either backend), and with trio installed
# anyio runs each async test once per backend: the pages' pytest examples would run twice, as
# `[asyncio]` and `[trio]`. The checkout keeps them to asyncio, as a reader's install without trio
# runs them (docs/pytest.md says what trio changes), and keeps the `[asyncio]` in their names.
# The pages' commands run in a copy of the checkout's examples without the agent run's, a test module of its own
# (tests/test_beside_vcr.py runs it) that a page's bare `pytest` would collect.
COPIED = shutil.ignore_patterns("__pycache__", "agent_run")

ASYNCIO_ONLY = """\
import pytest


@pytest.fixture(params=["asyncio"])
def anyio_backend(request):
    return request.param
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder laid out like the checkout, with `python`, `mockmcp` and `pytest` on PATH (see `run`)."""
    work = tmp_path / "checkout"
    for part in ("examples", "cassettes", "benchmarks", "tests/servers"):
        shutil.copytree(ROOT / part, work / part, ignore=COPIED)
    (work / "conftest.py").write_text(ASYNCIO_ONLY)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = shlex.quote(sys.executable)
    python_shim(bin_dir)
    for name, target in {"mockmcp": f"{python} -m mockmcp", "pytest": f"{python} -m pytest"}.items():
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        (bin_dir / name).chmod(0o755)
    return work


def python_shim(bin_dir: Path) -> None:
    """`python` for the pages' commands: this interpreter; the pages' SDK servers (the example servers, the time
    server) start forked as the suite's do (conftest.forked), the rest (mockmcp, hosts, `mockmcp run`'s) as written."""
    text = f"""#!/bin/sh
case "$1" in
  *_server.py) {forked()} "$@" ;;
  -m) [ "$2" != mcp_server_time ] || {forked()} "$@" ;;
esac
exec {shlex.quote(sys.executable)} "$@"
"""
    (bin_dir / "python").write_text(text)
    (bin_dir / "python").chmod(0o755)


@pytest.fixture
def here(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`checkout`, laid out in pytester's folder, for the pages' pytest commands run in this process (`pytest_here`):
    a fresh pytest process costs seconds of start-up, and these commands are run several times."""
    for part in ("examples", "cassettes", "tests/servers"):
        shutil.copytree(ROOT / part, pytester.path / part, ignore=COPIED)
    pytester.makeconftest(ASYNCIO_ONLY)
    bin_dir = pytester.path / "bin"
    bin_dir.mkdir()
    python_shim(bin_dir)  # as in `checkout`
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return pytester.path


def pytest_here(pytester: pytest.Pytester, command: str) -> pytest.RunResult:
    """A page's `pytest ...` command, run in this process in `here`'s folder."""
    program, *args = shlex.split(command, comments=True)
    assert program == "pytest", command
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def run(command: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run one README command with bash, as a reader would in the checkout's folder."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=environment(cwd.parent / "bin"),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def popen(command: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        shlex.split(command, comments=True),
        cwd=cwd,
        env=environment(cwd.parent / "bin"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextmanager
def running(command: str, cwd: Path, says: str) -> Iterator[tuple[subprocess.Popen[str], re.Match[str]]]:
    """A long-running README command, once the first line of its stderr matches `says`; stopped by SIGTERM."""
    proc = popen(command, cwd)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = re.search(says, first)
        assert found, f"{command}: expected {says!r} on stderr, got {first!r}"
        yield proc, found
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, f"{command}: exit status {proc.returncode} after SIGTERM\n{err}"
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


def recorded_session() -> str:
    """The demo host's requests that cassettes/notes.yaml recorded, as the lines a host writes."""
    lines = []
    for number, (method, params) in enumerate(SESSION[:-1]):  # the demo's last request is a miss on purpose
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not method.startswith("notifications/"):
            message["id"] = number
        lines.append(json.dumps(message) + "\n")
    return "".join(lines)


def test_every_block_is_checked() -> None:
    assert len(CLAIMED) >= 15 and len(SAMPLES) >= 5, "the pages' blocks were not found"
    for each in CLAIMED:
        claims = [claim for claim in CLAIMS if claim in each.text]
        assert claims, f"{each}: no test checks this block: add a line of it to CLAIMS in {Path(__file__).name}"
        assert len({CLAIMS[claim] for claim in claims}) == 1, f"{each}: claimed by several tests: {claims}"
    for claim, test in CLAIMS.items():
        block(claim)  # each claim names exactly one block
        assert callable(globals().get(test)), f"CLAIMS names {test}, which is not a test of this module"


def test_pictures_hold_no_commands_and_recipes_are_the_cookbooks() -> None:
    for each in PICTURES:
        commands = [line for line in each.text.splitlines() if line.startswith(("$ ", "mockmcp ", "python "))]
        assert not commands, f"{each}: a picture holds commands, which nothing would run: {commands}"
    recipes = [b for b in BLOCKS if b.recipe]
    assert {b.doc for b in recipes} == {"docs/faults.md"}
    assert sorted(b.text + "\n" for b in recipes) == sorted(RECIPES.values()), "test_cookbook.py reads other recipes"


def test_each_command_and_option_is_documented() -> None:
    """docs/cli.md has a section per command naming each of its options, and the README a line per command."""
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## (.*?)\n(.*?)(?=^## |\Z)", page, re.S | re.M))
    assert sorted(cli.commands) == [
        "diff",
        "exec",
        "lint",
        "record",
        "recover",
        "replay",
        "run",
        "schema",
        "serve",
        "show",
        "stub",
        "unwrap",
        "verify",
        "wrap",
    ]
    for name, command in cli.commands.items():
        heading = next((h for h in sections if f"`mockmcp {name}`" in h), None)
        assert heading, f"docs/cli.md: no section `## ... mockmcp {name} ...`"
        line = re.search(rf"^\| `mockmcp {name}[ `]", README.read_text(encoding="utf-8"), re.M)
        assert line, f"README.md: no line for mockmcp {name} in its table of commands"
        for param in command.params:
            for flag in param.opts:
                if flag.startswith("-") and flag != "--help":
                    assert f"`{flag}" in sections[heading], f"docs/cli.md, {heading}: {flag} is not explained"


def test_each_plugin_option_is_documented() -> None:
    page = (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8")
    names: list[str] = []  # every option and ini option the plugin adds, as pytest is told them

    class Parser:
        def getgroup(self, *_args: object) -> Parser:
            return self

        def addoption(self, name: str, **_how: object) -> None:
            names.append(name)

        def addini(self, name: str, *_how: object, **_more: object) -> None:
            names.append(name)

    pytest_plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    assert "--mockmcp-record" in names and "mockmcp_ignore" in names
    for name in names:
        assert f"`{name}" in page, f"docs/pytest.md: {name} is not explained"
    for argument in MARKER_ARGUMENTS:
        assert f"`{argument}=`" in page, f"docs/pytest.md: the marker argument {argument}= is not explained"


@pytest.mark.parametrize("sample", SAMPLES, ids=[str(sample) for sample in SAMPLES])
def test_sample_output(sample: Block, checkout: Path) -> None:
    command, *expected = sample.text.splitlines()
    done = run(command[2:], checkout)
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    assert printed == [line.rstrip() for line in expected], f"{sample}: `{command[2:]}` prints otherwise\n{done.stderr}"


def test_quick_start(checkout: Path) -> None:
    """The quick start's commands after the install steps, which the next test names."""
    steps = [step.strip() for command in commands(block("python3 -m venv .venv")) for step in command.split("&&")]
    installs = [step for step in steps if step.startswith(("python3 -m venv", ". .venv/", "pip ", "python -m pip "))]
    rest = [step for step in steps if step not in installs]
    assert rest == ["python examples/demo_host.py", "python -m pytest -n auto"]
    demo = run(rest[0], checkout)
    assert demo.returncode == 0, demo.stderr
    assert "remember to buy milk" in demo.stdout and "played 6 of 6 interactions" in demo.stdout
    # `python -m pytest` is this very suite; the install steps (a fresh virtual environment, packages from
    # the index) are what `.ci/run` does on a clean clone, so they are checked there, not here: CI runs the
    # README's test command byte for byte.
    suite = commands(block("python3 -m venv .venv"))[1].split(" && ", 2)[2]
    assert suite.startswith("python -m pip install")
    assert (ROOT / ".ci" / "run").read_text().splitlines()[-1] == suite


@pytest.mark.slow
def test_record_then_replay(checkout: Path) -> None:
    recording, replaying = commands(block("mockmcp record -o my-notes.yaml"))
    recorded = run(recording, checkout)
    assert recorded.returncode == 0, recorded.stderr
    assert "recorded 3 interactions into my-notes.yaml" in recorded.stderr
    assert yaml.safe_load((checkout / "my-notes.yaml").read_text())["meta"]["server"] == [
        "python",
        "examples/notes_server.py",
    ]
    replayed = run(replaying, checkout)
    assert replayed.returncode == 0, replayed.stderr
    assert "0 missed" in replayed.stderr
    assert replayed.stdout == recorded.stdout, "the same host, the same answers"
    assert 'call read_file {"path": "notes.txt"} -> remember to buy milk' in replayed.stdout


@pytest.mark.slow
def test_record_the_time_server(checkout: Path) -> None:
    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.skip(
            "needs the official time server, which the test extra does not install: pip install mcp-server-time"
        )
    (recording,) = commands(block("python -m mcp_server_time"))
    recorded = run(recording, checkout)
    assert recorded.returncode == 0, recorded.stderr
    assert "into time.yaml" in recorded.stderr and '"time_difference": "+9.0h"' in recorded.stdout
    replayed = run(recording.split("-- mockmcp record")[0] + "-- mockmcp replay time.yaml", checkout)
    assert replayed.returncode == 0 and "0 missed" in replayed.stderr, replayed.stderr
    assert replayed.stdout == recorded.stdout


def test_replay_commands(checkout: Path) -> None:
    """Each replay command of the README serves the session the cassette recorded, with no miss."""
    for command in commands(block("mockmcp replay cassettes/notes.yaml --ignore")):
        done = run(command, checkout, stdin=recorded_session())
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        assert "played 6 of 6 interactions; 0 missed" in done.stderr
        assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [0, 2, 3, 4, 5]
    assert json.loads((checkout / "report.json").read_text())["misses"] == []


def test_what_replay_says_on_stderr(checkout: Path) -> None:
    demo = run("python examples/demo_host.py cassettes/notes.yaml", checkout)
    assert demo.returncode == 0, demo.stderr
    for claim in ("mockmcp: no recorded interaction matches", "mockmcp replay: cassettes/notes.yaml: played"):
        assert block(claim).text + "\n" in demo.stdout, f"{block(claim)}: not what the demo host shows"


@pytest.mark.anyio
async def test_replay_over_http(checkout: Path) -> None:
    (command,) = commands(block("mockmcp replay --http 8000"))
    claimed = re.search(r"# (http://\S+)", command)
    assert claimed and "--http 8000" in command
    # Port 0 instead of 8000: the system picks a free one, which the server names on stderr.
    with running(command.replace("--http 8000", "--http 0"), checkout, r"http://127\.0\.0\.1:(\d+)/mcp") as (_, found):
        assert found.group(0) == claimed.group(1).replace("8000", found.group(1))
        with anyio.fail_after(TIMEOUT):
            async with Client(found.group(0), mode="legacy") as client:
                result = await client.call_tool("read_file", {"path": "notes.txt"})
        assert result.content[0].text == "remember to buy milk"


@pytest.mark.anyio
async def test_record_over_http(checkout: Path) -> None:
    (command, *_rest) = commands(block("mockmcp record --http-target"))
    target = "mockmcp replay --http 0 cassettes/notes-session.yaml"  # stands for the real server at port 8000
    with running(target, checkout, r"http://\S+/mcp") as (_, served):
        proxy = command.replace("http://127.0.0.1:8000/mcp", served.group(0)).replace("--listen 9000", "--listen 0")
        with running(proxy, checkout, r"recording (http://\S+)") as (_, listening):
            with anyio.fail_after(TIMEOUT):
                async with Client(listening.group(1), mode="legacy") as client:
                    result = await client.call_tool("read_file", {"path": "notes.txt"})
            assert result.content[0].text == "remember to buy milk"
    recorded = yaml.safe_load((checkout / "remote.yaml").read_text())
    assert "tools/call" in [each["request"]["method"] for each in recorded["interactions"] if "request" in each]


@pytest.mark.slow
def test_the_pytest_example(pytester: pytest.Pytester, here: Path) -> None:
    (here / "tests").mkdir(exist_ok=True)
    (here / "tests" / "test_notes.py").write_text(block("# what to record from").text + "\n")
    named = re.search(r"`(tests/cassettes/test_notes/\S+\.yaml)`", ALL_TEXT)
    assert named, "the docs name the example's cassette"
    first, second = commands(block("pytest --mockmcp-record-mode=once"))
    pytest_here(pytester, first).assert_outcomes(passed=1)
    assert (here / named.group(1)).exists(), list((here / "tests").rglob("*.yaml"))
    pytest_here(pytester, second).assert_outcomes(passed=1)


@pytest.mark.slow
@pytest.mark.slow
def test_the_pytest_config_example(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/pytest.md's host config and test, run by pytester in this process (a fresh pytest costs seconds):
    recorded, replayed, then a request only the time server's cassette cannot answer fails naming it alone."""
    bin_dir = pytester.path / "bin"
    bin_dir.mkdir()
    python_shim(bin_dir)  # as in `checkout`
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    shutil.copytree(ROOT / "examples", pytester.path / "examples", ignore=COPIED)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "host.mcp.json").write_text(block('"args": ["examples/notes_server.py"]').text)
    test = block("# tests/test_host_config.py").text + "\n"
    (pytester.path / "tests" / "test_host_config.py").write_text(test)
    pytester.makeconftest(ASYNCIO_ONLY)

    def run_here(*args: str) -> pytest.RunResult:
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)

    run_here("--mockmcp-record-mode=once").assert_outcomes(passed=1)
    folder = pytester.path / "tests" / "cassettes" / "test_host_config" / "test_plans_the_day[asyncio]"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.yaml", "time.yaml"]
    assert yaml.safe_load((folder / "notes.yaml").read_text())["meta"]["redact"] == {"env": ["NOTES_KEY"]}
    assert "k-7a6b5c4d" not in (folder / "notes.yaml").read_text()
    run_here().assert_outcomes(passed=1)
    (pytester.path / "tests" / "test_host_config.py").write_text(test.replace("Asia/Tokyo", "Europe/Paris"))
    failed = run_here()
    failed.assert_outcomes(failed=1)
    assert f"{folder / 'time.yaml'} could not serve this test" in failed.stdout.str()
    assert "notes.yaml could not serve" not in failed.stdout.str()


def test_the_pytest_multi_server_example(pytester: pytest.Pytester, here: Path) -> None:
    (here / "tests").mkdir(exist_ok=True)
    (here / "tests" / "test_agent.py").write_text(block("# tests/test_agent.py").text + "\n")
    pytest_here(pytester, "pytest --mockmcp-record-mode=once tests/test_agent.py").assert_outcomes(passed=1)
    folder = here / "tests" / "cassettes" / "test_agent" / "test_plans_the_day[asyncio]"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.yaml", "time.yaml"]
    assert "test_plans_the_day[asyncio]/notes.yaml" in ALL_TEXT
    pytest_here(pytester, "pytest tests/test_agent.py").assert_outcomes(passed=1)


def test_the_agents_page(pytester: pytest.Pytester, here: Path, checkout: Path) -> None:
    (here / "tests").mkdir(exist_ok=True)
    (here / "tests" / "test_agent_time.py").write_text(block("# tests/test_agent_time.py").text + "\n")
    record, replay = commands(block("pytest tests/test_agent_time.py --mockmcp-record-mode=once"))
    pytest_here(pytester, record).assert_outcomes(passed=1)
    folder = here / "tests" / "cassettes" / "test_agent_time" / "test_tokyo_is_nine_hours_ahead_of_london[asyncio]"
    assert [p.name for p in folder.iterdir()] == ["python-m-mcp_server_time.yaml"]  # the name the page gives
    pytest_here(pytester, replay).assert_outcomes(passed=1)
    (checkout / "my_agent.py").write_text(block("# my_agent.py: stands for an agent").text + "\n")
    recorded, replayed = (run(command, checkout) for command in commands(block("mockmcp run --record-mode once")))
    assert recorded.returncode == replayed.returncode == 0, (recorded.stderr, replayed.stderr)
    assert "Asia/Tokyo" in recorded.stdout and replayed.stdout == recorded.stdout  # the recorded time, again
    assert (checkout / "cassettes" / "agent" / "python-m-mcp_server_time.yaml").exists()


def test_the_agent_run_page() -> None:
    """The page shows the example's test as it is, and its commands as the example's docstring gives them (the
    example runs, recorded then replayed, in tests/test_beside_vcr.py); its `vcr_config` is one vcrpy takes."""
    example = (ROOT / "examples" / "agent_run" / "test_agent_run.py").read_text(encoding="utf-8")
    assert block("def model_url(record_mode: str)").text in example
    usage = commands(block("pytest examples/agent_run --record-mode=once"))
    assert len(usage) == 2 and all(f"    {command}\n" in example for command in usage)
    vcr = pytest.importorskip("vcr", reason="vcrpy is not installed")
    namespace: dict[str, Any] = {"pytest": SimpleNamespace(fixture=lambda function: function)}
    exec(block('"port", "path", "query", "json_body"]}').text, namespace)
    recorder = vcr.VCR()
    recorder.register_matcher("json_body", mockmcp.json_body)  # as the plugin does with pytest-recording's
    assert mockmcp.json_body in recorder.get_merged_config(**namespace["vcr_config"]())["match_on"]


@pytest.mark.slow
def test_the_pytest_http_example(pytester: pytest.Pytester, here: Path, checkout: Path) -> None:
    text = block("# tests/test_notes_http.py").text
    target = "mockmcp replay --http 0 cassettes/notes-session.yaml"  # stands for the real server at port 8000
    with running(target, checkout, r"http://\S+/mcp") as (_, served):
        (here / "tests").mkdir(exist_ok=True)
        test_file = here / "tests" / "test_notes_http.py"
        test_file.write_text(text.replace("http://127.0.0.1:8000/mcp", served.group(0)) + "\n")
        pytest_here(pytester, "pytest --mockmcp-record-mode=once tests/test_notes_http.py").assert_outcomes(passed=1)
    assert (here / "tests" / "cassettes" / "test_notes_http" / "test_reads_a_note_over_http[asyncio].mcp.yaml").exists()
    pytest_here(pytester, "pytest tests/test_notes_http.py").assert_outcomes(passed=1)  # the real server is gone


def test_the_python_api_example(checkout: Path) -> None:
    (checkout / "helper.py").write_text(block('mockmcp.load("cassettes/notes.yaml")').text + "\n")
    done = run("python helper.py", checkout)
    assert done.returncode == 0, done.stderr
    slow = yaml.safe_load((checkout / "cassettes" / "notes-slow.yaml").read_text())
    assert [each.get("delay") for each in slow["interactions"] if each.get("request", {}).get("method") == "tools/call"]
    assert all(
        each.get("delay") == 5 for each in slow["interactions"] if each.get("request", {}).get("method") == "tools/call"
    )


def test_the_sdk_without_the_plugin(checkout: Path) -> None:
    (checkout / "host.py").write_text(block("asyncio.run(main())").text + "\n")
    done = run("python host.py", checkout)
    assert done.returncode == 0, done.stderr
    assert "0 missed" in done.stderr, done.stderr


def test_replay_in_the_hosts_process(checkout: Path) -> None:
    (checkout / "in_process.py").write_text(block("anyio.run(in_process)").text + "\n")
    done = run("python in_process.py", checkout)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["remember to buy milk", "0 missed"], done.stdout


def test_record_in_the_hosts_process(checkout: Path) -> None:
    (checkout / "record.py").write_text(block("anyio.run(record_two_ways)").text + "\n")
    done = run("python record.py", checkout)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "remember to buy milk / 0 missed", done.stdout
    for name in ("notes-memory.yaml", "notes-stdio.yaml"):
        assert "tools/call" in (checkout / name).read_text()


@pytest.mark.slow
def test_the_pytest_in_process_example(pytester: pytest.Pytester, here: Path) -> None:
    (here / "tests").mkdir(exist_ok=True)
    (here / "tests" / "test_notes_in_process.py").write_text(block("# tests/test_notes_in_process.py").text + "\n")
    command = r"`(pytest --mockmcp-record-mode=once tests/test_notes_in_process.py)`"
    said = re.search(command + r" records\s+`(\S+)`", ALL_TEXT)
    assert said, "the docs name the command and the cassette it records"
    pytest_here(pytester, said.group(1)).assert_outcomes(passed=1)
    cassette = yaml.safe_load((here / said.group(2)).read_text())
    assert cassette["meta"]["server"] == ["MCPServer 'notes' in process"]
    pytest_here(pytester, "pytest tests/test_notes_in_process.py").assert_outcomes(passed=1)


def test_replay_in_the_hosts_process_with_fastmcp(checkout: Path) -> None:
    (checkout / "with_fastmcp.py").write_text(block("asyncio.run(with_fastmcp())").text + "\n")
    done = run("python with_fastmcp.py", checkout)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["remember to buy milk", "0 missed"], done.stdout


@pytest.mark.slow
def test_benchmarks(checkout: Path) -> None:
    """The benchmark commands run; with sizes cut to a fraction of a second each, the figures mean nothing."""
    smaller = {
        "bench_replay.py": "--quick --runs 1 --requests 200 --rounds 1 --sizes 100",
        "bench_record.py": "--quick --requests 200 --rounds 1 --pairs 20 --session 80",
    }
    for command in commands(block("python benchmarks/bench_replay.py")):
        script = command.split()[1].rsplit("/", 1)[1]
        done = run(f"{command.split('#')[0].strip()} {smaller[script]}", checkout)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        assert "wall time" in done.stdout


def test_the_cassette_format_examples(tmp_path: Path) -> None:
    """docs/cassette-format.md's complete example loads; its meta.http loads; the schema line is what mockmcp writes."""
    example = mockmcp.loads(block("version: 1                       # required").text, "example.yaml")
    methods = [each.method for each in example.interactions]
    assert methods == ["initialize", "notifications/initialized", "tools/call", None]
    framing = mockmcp.loads("version: 1\n" + block("framing: sse").text + "\ninteractions: []\n", "framing.yaml")
    assert framing.meta["http"]["framing"] == "sse"
    mockmcp.save(example, str(tmp_path / "saved.yaml"))
    first = (tmp_path / "saved.yaml").read_text().splitlines()[0]
    assert first == block("# yaml-language-server: $schema=").text


def _answer(engine: Replay, method: str, params: dict[str, object]) -> dict[str, object]:
    """What the replay engine answers a request (its one reply), in memory."""
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    [sent] = [action for action in engine.receive(line) if isinstance(action, Send)]
    answer: dict[str, object] = json.loads(sent.data)
    return answer


def test_the_match_rules_example() -> None:
    """A search worded anew passes every rule of docs/cassette-format.md's example; one its regex refuses
    misses, and the miss names the rule."""
    cassette = mockmcp.loads(block("arguments.trace: any").text, "search.yaml")
    engine = Replay(cassette, Matcher.build((), cassette.meta))
    anew = {"query": "weather in Rome", "limit": 3, "tags": ["wind", "rain"], "filters": {"lang": "en", "unit": "C"}}
    answer = _answer(engine, "tools/call", {"name": "search", "arguments": {**anew, "request_id": 7}})
    assert answer["result"] == cassette.interactions[0].response["result"]
    missed = _answer(engine, "tools/call", {"name": "search", "arguments": {**anew, "query": "rain in Rome"}})
    [difference] = missed["error"]["data"]["differences"]  # type: ignore[index]
    assert difference.startswith("arguments.query: its match rule `{regex: 'weather in \\w+'}` refuses")
    assert '"rain in Rome": the pattern does not match it whole' in difference


def test_the_substitution_example() -> None:
    """docs/cassette-format.md's substitution: a host in /ci/build/app matches, and reads its own folder."""
    cassette = mockmcp.loads("version: 1\n" + block("substitute: [PROJECT]").text, "files.yaml")
    redactor = Redactor.for_replay(cassette, {}, [("PROJECT", "/ci/build/app")], "files.yaml")
    engine = Replay(cassette, Matcher.build(), redactor)
    params = {"name": "read_text_file", "arguments": {"path": "/ci/build/app/data/todo.txt"}}
    answer = _answer(engine, "tools/call", params)
    assert answer["result"] == {"content": [{"type": "text", "text": "read /ci/build/app/data/todo.txt: buy milk"}]}
    assert "read /ci/build/app/data/todo.txt: buy milk" in ALL_TEXT.replace("\n", " ")


def test_the_error_example_is_what_mockmcp_says() -> None:
    example = block("interactions[2].respnse: unknown key").text.splitlines()
    mistake = "version: 1\ninteractions:\n- request: {method: ping}\n  respnse: {result: {}}\n"
    finding = lint.lint_text(mistake, "c.yaml")[0]
    assert example[0].endswith(f".respnse: {finding.problem}")
    assert example[1] == f"  how to fix: {finding.fix}"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_wrap_commands(checkout: Path) -> None:
    """The wrap page's commands, on its Claude Code example: copies, in place, and back to the same bytes."""
    original = block('"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}').text + "\n"
    (checkout / ".mcp.json").write_text(original)
    for command in commands(block("mockmcp wrap .mcp.json --in-place")):
        done = run(command, checkout)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
    assert (checkout / ".mcp.json").read_text() == original
    recording = json.loads((checkout / ".mcp.mockmcp.json").read_text())["mcpServers"]
    replaying = json.loads((checkout / "replay.json").read_text())["mcpServers"]
    assert recording["github"]["args"][2:4] == ["record", "-o"] and replaying["github"]["args"][2] == "replay"
    assert recording["api"]["url"].startswith("http://127.0.0.1:")


def test_the_ci_drift_workflow() -> None:
    """The workflow on the CLI page uses the action the repository holds, with inputs it has."""
    workflow = yaml.safe_load(block("uses: mockmcp/mockmcp/.github/actions/drift@main").text)
    [step] = [step for step in workflow["jobs"]["drift"]["steps"] if "drift@" in step.get("uses", "")]
    folder = step["uses"].removeprefix("mockmcp/mockmcp/").partition("@")[0]
    action = yaml.safe_load((ROOT / folder / "action.yml").read_text(encoding="utf-8"))
    assert set(step["with"]) <= set(action["inputs"]), set(step["with"]) - set(action["inputs"])
    said = block("uses: mockmcp/mockmcp/.github/actions/drift@main").text
    assert all(f"# {name}:" in said or name in step["with"] for name in ("install", "comment"))


def test_the_stub_page(tmp_path: Path) -> None:
    """The stub of mcp-server-time runs as written, and its placeholder is the page's, comment and all (the HTTP
    endpoint the page names is an example: test_stub.py asks a real one)."""
    first, second = commands(block("mockmcp stub -o cassettes/time.yaml"))
    time_stub = shlex.split(first.replace("cassettes/", f"{tmp_path}/"))
    proc = subprocess.run(time_stub, capture_output=True, text=True, timeout=120, env=child_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert block("# get_current_time: write its answer in `content`").text in (tmp_path / "time.yaml").read_text()
    assert shlex.split(second)[:3] == ["mockmcp", "stub", "-o"] and "--http-target" in second


def test_the_calls_example(pytester: pytest.Pytester) -> None:
    """docs/calls.md's test passes against the shipped cassette; and its failure picture is what a failure says."""
    from test_pytest_plugin import run

    pytester.makepyfile(test_agent_calls=block("# tests/test_agent_calls.py").text + "\n")
    target = pytester.path / "cassettes" / "test_agent_calls" / "notes-session.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    outcomes = run(pytester).parseoutcomes()  # once a backend anyio runs it on
    assert outcomes.get("passed", 0) >= 1 and not (outcomes.get("failed") or outcomes.get("errors")), outcomes
    page = (ROOT / "docs" / "calls.md").read_text(encoding="utf-8")
    assert "AssertionError: expected no tool 'read_file', found 1\nthe host made 3 calls:\n" in page


def test_the_without_recording_examples() -> None:
    """The script answers in turn, then its last for ever; the closed world says what the page quotes."""
    from mockmcp.cassette.store import loads
    from mockmcp.engine.matching import Matcher
    from mockmcp.engine.replay import Replay, Send
    from mockmcp.plugin._naming import MARKER_ARGUMENTS

    def said(engine: Replay, line: str) -> Any:
        [sent] = [json.loads(a.data) for a in engine.receive(line.encode()) if isinstance(a, Send)]
        return sent

    script = block("name: charge, arguments: {amount: 10}").text
    engine = Replay(loads("version: 1\ninteractions:\n" + script + "\n"), Matcher.build())
    charge = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"charge","arguments":{"amount":10}}}'
    assert said(engine, charge % 1)["error"]["message"] == "gateway timeout"
    assert [w.after for w in engine.receive((charge % 2).encode()) if hasattr(w, "after")] == [2.0]
    assert [said(engine, charge % n)["result"]["content"][0]["text"] for n in (3, 4)] == ["charged 10"] * 2
    closed = Replay(loads(block("meta: {closed_world: true}").text + "\n"), Matcher.build())
    error = said(closed, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete"}}')["error"]
    page = (ROOT / "docs" / "without-recording.md").read_text(encoding="utf-8")
    assert f'"{error["message"]}"' in page.replace("\n", " ") and error["data"] == {
        "tool": "delete",
        "answered": ["search"],
    }
    marker = block("closed_world=True)\nasync def test_the_agent_only_searches").text
    assert set(re.findall(r"(\w+)=", marker)) <= set(MARKER_ARGUMENTS)


def test_the_wrap_examples() -> None:
    """Every host's example on the wrap page is wrapped (each server through mockmcp) and unwrapped to its bytes."""
    from mockmcp.wrap._hostconfig import detect, read_config
    from mockmcp.wrap._rules import cassette_names, derive, local_url, restore, wrapped_command

    examples = [b for b in doc_blocks(ROOT / "docs" / "wrap.md") if b.lang in ("json", "jsonc", "yaml", "toml")]
    assert len(examples) == 7
    for example in examples:
        path, text = {"yaml": "config.yaml", "toml": "config.toml"}.get(example.lang, "mcp.json"), example.text + "\n"
        config = read_config(text, detect(path, text), path)
        names = cassette_names(config.entries)
        stdio = [e for e in config.entries if e.kind == "stdio"]
        wrapped = {e.name: wrapped_command(config, e, "python", names[e.name], False, "once") for e in stdio}
        urls = {e.name: local_url(8000, "/mcp") for e in config.entries if e.kind == "http"}
        derived, edits = derive(config, wrapped, urls)
        assert all(e.kind != "skipped" for e in config.entries), example
        assert restore(read_config(derived, config.format), edits) == (text, []), example


def test_the_pre_commit_example() -> None:
    """docs/cli.md's pre-commit config names this repository, a tag of this version, and the hooks of
    .pre-commit-hooks.yaml, whose entries are `mockmcp lint` command lines (tests/test_install.py runs them)."""
    [repo] = yaml.safe_load(block("      - id: mockmcp-secrets").text)["repos"]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    url = re.search(r'^Repository = "(.*)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert url and repo["repo"] == url.group(1) and repo["rev"] == f"v{mockmcp.__version__}"
    assert (
        [hook["id"] for hook in repo["hooks"]] == [hook["id"] for hook in hooks] == ["mockmcp-secrets", "mockmcp-lint"]
    )
    options = {flag for param in cli.commands["lint"].params for flag in param.opts}
    for hook in hooks:
        command, lint, *flags = hook["entry"].split()
        assert (command, lint) == ("mockmcp", "lint") and set(flags) <= options, hook
        assert hook["language"] == "python" and re.search(hook["files"], "tests/cassettes/test_x/one.mcp.yaml"), hook


def test_links_between_pages_resolve() -> None:
    for page in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{page.relative_to(ROOT)}: a link to {target}, which is not there"
            if anchor:
                headings = re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)
                assert anchor in [slug(h) for h in headings], f"{page.relative_to(ROOT)}: no heading for {target}"


def test_the_other_languages_page() -> None:
    """docs/other-languages.md: its TypeScript blocks are the examples tests/test_node_helper.py runs under
    vitest and node:test, its Go blocks are what tests/test_go_helper.py runs (read from the page), its
    install block is what tests/test_install.py does, and its Rust block (not compiled: no crates registry)
    runs `mockmcp exec` with options it has."""
    page = [b for b in CLAIMED if b.doc == "docs/other-languages.md"]
    for each in (b for b in page if b.lang == "js"):
        example = ROOT / each.text.splitlines()[0].removeprefix("// ")
        assert example.read_text(encoding="utf-8") == each.text + "\n", f"{each}: not {example.name} as it is"
    go = [b.text.splitlines()[0].split(":")[0] for b in page if b.lang == "go"]
    assert go == ["// mockmcp_test.go", "// echo_test.go"]
    [install] = [b for b in page if b.lang == "sh"]
    assert "--no-deps" in install.text and "[http]" in install.text
    [rust] = [b for b in page if b.lang == "rust"]
    options = {flag for param in cli.commands["exec"].params for flag in param.opts}
    used = set(re.findall(r'"(--[a-z-]+)"', rust.text)) - {"--"}
    assert used and used <= options, used - options
