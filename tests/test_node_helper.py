"""integrations/node, the helper for TypeScript hosts' tests, run by vitest and by node:test against the
mockmcp this interpreter has installed from the checkout.

Each runner runs its file once (a module-scoped run, one xdist group each, so the two run side by side);
the tests below read its results: the test named `fails: ...` must fail with mockmcp's explanation of
the miss, every other must pass. Both runs are under the Node preload (`--import @mockmcp/node/register`),
whose examples replay server-everything from their shipped cassette with the server absent; one vitest run
more records it under the threads pool. The helper packed by `npm pack` installs into a fresh project and
runs its node:test example there. Without node or the helper's node_modules, they skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import ROOT, child_env

from mockmcp.cassette.model import Interaction
from mockmcp.cassette.store import load
from mockmcp.plugin._naming import cassette_name

NODE_DIR = ROOT / "integrations" / "node"
TIMEOUT = 120  # seconds, for one runner's whole file
FAILING = "echo > fails: a request the cassette never recorded"
PRELOAD_FAILING = "fails: a changed argument"  # test/preload: the host's code as it is, under the preload
PASSING = [
    "echo > replays the cassette named after the test",
    "echo > records once, then replays",
    "the host echoes a note",  # examples/, the examples docs/other-languages.md shows
    "the host echoes through server-everything",  # examples/preload/: under the preload, the host unchanged
    "replays a server over Streamable HTTP",  # test/preload/: its fetch, to a URL where nothing listens
]
PRELOAD = ["--import", "@mockmcp/node/register"]
EVERYTHING = ROOT / "tests" / "node" / "node_modules" / ".bin"  # mcp-server-everything, to record from


def needs_node() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the TypeScript helper's tests (vitest, node:test) cannot run")
    if not (NODE_DIR / "node_modules" / "vitest").is_dir():
        pytest.skip("integrations/node has no node_modules: run `npm ci --prefix integrations/node` (.ci/run does)")


def mockmcp_command() -> str:
    """The `mockmcp` script the test environment installed from the checkout (beside this interpreter)."""
    script = Path(sys.executable).parent / "mockmcp"
    if not script.exists():
        pytest.skip(f"no mockmcp script beside {Path(sys.executable).name}: install mockmcp into this environment")
    return str(script)


def run_node(command: list[str], record_dir: Path, **more: str) -> subprocess.CompletedProcess[str]:
    env = child_env()
    env.update(MOCKMCP=mockmcp_command(), RECORD_DIR=str(record_dir))
    env.pop("MOCKMCP_RECORD", None)  # the tests say their own record modes
    env["MOCKMCP_CASSETTES"] = "examples/cassettes/preload"  # the preload's, shipped: replayed
    assert shutil.which("mcp-server-everything", path=env["PATH"]) is None, "the preload's server must be absent"
    env.update(more)
    return subprocess.run(command, cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def vitest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Each vitest test's full name -> its status and failure text."""
    needs_node()
    work = tmp_path_factory.mktemp("vitest")
    out = work / "results.json"
    vitest = str(NODE_DIR / "node_modules" / ".bin" / "vitest")
    done = run_node([vitest, "run", "--reporter=json", f"--outputFile={out}"], work)
    assert out.exists(), done.stdout + done.stderr
    results = json.loads(out.read_text())
    return {
        " > ".join([*test["ancestorTitles"], test["title"]]): (test["status"], "\n".join(test["failureMessages"]))
        for file in results["testResults"]
        for test in file["assertionResults"]
    }


@pytest.fixture(scope="module")
def node_test(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Each node:test test's full name -> its status and failure text, read from its JUnit report."""
    needs_node()
    work = tmp_path_factory.mktemp("node-test")
    files = [
        "test/helper.node.mjs",
        "examples/notes.node.mjs",
        "test/preload/host.node.mjs",
        "test/preload/http.node.mjs",
    ]
    files.append("examples/preload/everything.node.mjs")
    done = run_node(["node", *PRELOAD, "--test", "--test-reporter=junit", *files], work)
    results: dict[str, tuple[str, str]] = {}

    def walk(element: ElementTree.Element, names: list[str]) -> None:
        for child in element:
            if child.tag == "testsuite":
                walk(child, [*names, child.get("name", "")])
            elif child.tag == "testcase":
                failure = child.find("failure")
                said = "" if failure is None else (failure.get("message", "") + "\n" + (failure.text or ""))
                status = "passed" if failure is None else "failed"
                results[" > ".join([*names, child.get("name", "")])] = (status, said)

    walk(ElementTree.fromstring(done.stdout), [])
    assert results, done.stdout + done.stderr
    return results


RUNNERS = [
    pytest.param("vitest", marks=[pytest.mark.slow, pytest.mark.xdist_group("vitest")]),
    pytest.param("node_test", marks=[pytest.mark.slow, pytest.mark.xdist_group("node-test")]),
]


@pytest.mark.parametrize("runner", RUNNERS)
def test_the_helpers_tests_pass_record_once_then_replay_and_serve_http(
    runner: str, request: pytest.FixtureRequest
) -> None:
    results = request.getfixturevalue(runner)
    passing = [*PASSING, *(["echo > replays over Streamable HTTP"] if runner == "vitest" else [])]
    assert sorted(results) == sorted([*passing, FAILING, PRELOAD_FAILING])
    for name in passing:
        status, said = results[name]
        assert status == "passed", f"{runner}: {name}: {said}"


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_miss_fails_its_test_with_mockmcps_explanation(runner: str, request: pytest.FixtureRequest) -> None:
    status, said = request.getfixturevalue(runner)[FAILING]
    assert status == "failed"
    for words in (
        "could not serve this test as recorded",
        "mockmcp: no recorded interaction matches this tools/call request",
        'arguments.text: recorded "hello", incoming "goodbye"',
        "how to fix:",
        """leave it out of matching: ignore: ["arguments.text"] in the test's options""",
        'record the cassette again: record: "rewrite" in the test\'s options, with the real server as server:',
        "by hand: interactions[2].request.params",
    ):
        assert words in said, f"{runner}: {words!r} not in the failure:\n{said}"
    for shell in ("--ignore", "mockmcp record", "--record-mode"):  # the command line's words, not the helper's
        assert shell not in said, f"{runner}: {shell!r} in the failure:\n{said}"


@pytest.mark.parametrize("runner", RUNNERS)
def test_under_the_preload_a_changed_argument_fails_with_the_differences(
    runner: str, request: pytest.FixtureRequest
) -> None:
    """The host's code as it is, its server replayed by the preload: the call's error says what differed."""
    status, said = request.getfixturevalue(runner)[PRELOAD_FAILING]
    assert status == "failed"
    for words in (
        "MCP error -32099: mockmcp: no recorded interaction matches: tools/call",
        "(closest recorded: interactions[2] of the cassette)",
        'arguments.message: recorded "buy milk", incoming "sell milk"',
        "record it again: MOCKMCP_RECORD=rewrite",
    ):
        assert words in said, f"{runner}: {words!r} not in the failure:\n{said}"


@pytest.mark.slow
def test_the_preload_records_server_everything_under_vitest_threads_as_its_example_replays_it(
    tmp_path: Path,
) -> None:
    """The example's host, unchanged, records server-everything (on PATH here only) under vitest's threads pool
    (the other runs use forks, and node:test's processes): the cassette, named after the server's command line
    by mockmcp, is the one shipped beside the example, which those runs replay with the server absent."""
    needs_node()
    if not (EVERYTHING / "mcp-server-everything").exists():
        pytest.skip("tests/node has no node_modules: run `npm ci --prefix tests/node` (.ci/run does)")
    vitest = str(NODE_DIR / "node_modules" / ".bin" / "vitest")
    path = os.pathsep.join([str(EVERYTHING), os.environ["PATH"]])
    out = tmp_path / "results.json"
    command = [vitest, "run", "--pool", "threads", "--reporter=json", f"--outputFile={out}", "examples/preload"]
    done = run_node(command, tmp_path, MOCKMCP_CASSETTES=str(tmp_path), MOCKMCP_RECORD="once", PATH=path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(out.read_text())["numPassedTests"] == 1
    assert "mockmcp: recorded 3 interactions into" in done.stderr, done.stderr
    shipped = load(str(NODE_DIR / "examples" / "cassettes" / "preload" / "mcp-server-everything-stdio.yaml"))
    recorded = load(str(tmp_path / "mcp-server-everything-stdio.yaml"))
    assert recorded.meta["server"] == ["mcp-server-everything", "stdio"]
    assert [wire(i) for i in recorded.interactions] == [wire(i) for i in shipped.interactions]


@pytest.mark.slow
def test_the_preload_records_a_streamable_http_server_then_replays_it_with_the_server_gone(tmp_path: Path) -> None:
    """A host program over Streamable HTTP, unchanged: its fetch goes through a recording proxy to
    server-everything, then, the server stopped, to a replay of the cassette named after the URL."""
    needs_node()
    if not (EVERYTHING / "mcp-server-everything").exists():
        pytest.skip("tests/node has no node_modules: run `npm ci --prefix tests/node` (.ci/run does)")
    with socket.socket() as probe:  # a free port for the server (it takes its port from PORT, not 0)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    host = ["node", *PRELOAD, "test/preload/http-host.mjs", url]
    server = subprocess.Popen(
        [str(EVERYTHING / "mcp-server-everything"), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:  # it says when it listens
            if "listening on port" in line:
                break
        recorded = run_node(host, tmp_path, MOCKMCP_CASSETTES=str(tmp_path), MOCKMCP_RECORD="once")
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert recorded.returncode == 0 and recorded.stdout == "Echo: hello\n", recorded.stderr
    cassette = tmp_path / f"127.0.0.1_{port}-mcp.yaml"  # the URL's identity, as interception names it
    assert cassette.exists(), recorded.stderr  # the host's process ended once its recording was written
    replayed = run_node(host, tmp_path, MOCKMCP_CASSETTES=str(tmp_path))
    assert replayed.returncode == 0 and replayed.stdout == "Echo: hello\n", replayed.stderr
    assert [i.message["method"] for i in load(str(cassette)).interactions if i.message][-1] == "tools/call"


def wire(interaction: Interaction) -> tuple[object, ...]:
    """What the host sent and what answered it (not the times, nor where a notification of the server's own
    accord was filed, which depends on when it came)."""
    return interaction.kind, interaction.message, interaction.response


NAMES = [
    ["echo", "reads a note"],
    ["a/b", 'c:d*e?"f<g>h|i\\j'],
    [".hidden"],
    ["ctl\x01\x7f"],
    ["x" * 250],
    ["é" * 150],
    ["日本語" * 40, "テスト"],
]


def test_the_helper_names_cassettes_as_the_plugin_does() -> None:
    """One rule in two languages: the helper's cassetteName and the plugin's cassette_name agree on a table."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the TypeScript helper cannot run")
    script = (
        "import { cassetteName } from './index.js';"
        "const names = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(names.map(cassetteName)));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps(NAMES)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [cassette_name(parts) for parts in NAMES]


def test_the_packed_helper_installs_into_a_project_and_runs_its_example(tmp_path: Path) -> None:
    """`npm pack` of the helper, installed into a fresh project (offline: nothing to fetch, the SDK being a peer
    the project brings: here linked from the helper's own node_modules), runs the node:test example there."""
    needs_node()
    packed = json.loads(run_npm(["pack", "--json", "--pack-destination", str(tmp_path)], NODE_DIR).stdout)
    [tarball] = packed
    files = sorted(file["path"] for file in tarball["files"])
    assert files == ["README.md", "index.d.ts", "index.js", "package.json", "register.js"]
    project = tmp_path / "host"
    project.mkdir()
    (project / "package.json").write_text('{"name": "host", "private": true, "type": "module"}\n')
    install = ["install", "--offline", "--legacy-peer-deps", "--no-audit", "--no-fund", "--no-package-lock"]
    run_npm([*install, str(tmp_path / tarball["filename"])], project)
    sdk = project / "node_modules" / "@modelcontextprotocol" / "sdk"
    sdk.parent.mkdir()
    sdk.symlink_to(NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk", target_is_directory=True)
    shutil.copytree(NODE_DIR / "examples", project / "examples", ignore=shutil.ignore_patterns("*.vitest.*"))
    (project / "test").mkdir()
    shutil.copyfile(NODE_DIR / "test" / "echo-server.mjs", project / "test" / "echo-server.mjs")
    where = "import { fileURLToPath } from 'node:url'; console.log(fileURLToPath(import.meta.resolve('@mockmcp/node')))"
    resolved = run_in(["node", "--input-type=module", "-e", where], project)
    assert Path(resolved.stdout.strip()) == project / "node_modules" / "@mockmcp" / "node" / "index.js"
    done = run_in(["node", "--test", "examples/notes.node.mjs"], project)
    assert "# pass 1" in done.stdout and "# fail 0" in done.stdout, done.stdout


def run_npm(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the helper cannot be packed")
    return run_in([npm, *args], cwd)


def run_in(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**child_env(), "MOCKMCP": mockmcp_command()}
    env.pop("MOCKMCP_RECORD", None)  # the example replays its cassette
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    return done
