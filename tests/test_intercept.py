"""Interception: the host's own code starts its MCP server as it always does, and gets a cassette instead.

The host is the SDK's `Client` over `StdioServerParameters(command="notes-server")`, a command found on
PATH (a shim that runs examples/notes_server.py and leaves a mark each time it starts). Recorded with
the shim on PATH, replayed with it gone: the host sees the same session, and the mark says the server
never started. The plugin's marker, switch and fixture; misses and servers with no cassette fail the
test with their explanation; no signal ever leaves a replayed server's kill.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.client.stdio
import pytest
from conftest import ROOT, SHIPPED, forked
from mcp import StdioServerParameters
from sdk_host import connect, full_session
from test_pytest_plugin import run

import mockmcp
from mockmcp._wire.identity import identify
from mockmcp.errors import UsageError
from mockmcp.inprocess import _intercept as intercept
from mockmcp.inprocess._process import NO_PID, Replayed
from mockmcp.options import RecordOptions

pytest_plugins = ["pytester"]

NOTES_SERVER = ROOT / "examples" / "notes_server.py"


@pytest.fixture
def shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`notes-server` on PATH; each start appends a line to `starts` beside it."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "notes-server"
    script.write_text(f'#!/bin/sh\necho started >> "{folder / "starts"}"\n{forked(str(NOTES_SERVER))} "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder


def starts(shim: Path) -> int:
    marks = shim / "starts"
    return len(marks.read_text().splitlines()) if marks.exists() else 0


def unshim(shim: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's command gone from PATH, as on a machine that never installed it."""
    kept = [part for part in os.environ["PATH"].split(os.pathsep) if part != str(shim)]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))
    assert shutil.which("notes-server") is None


# --- identity: a pure rule, a table ------------------------------------------------------------------

HOME = Path.home()
IDENTITIES = [
    # (command, args, cwd, url, names) -> (name, words)
    (("notes-server", [], None, None, {}), ("notes-server", ("notes-server",))),
    (
        (sys.executable, ["-m", "mcp_server_time"], None, None, {}),
        ("python-m-mcp_server_time", ("python", "-m", "mcp_server_time")),
    ),
    (
        ("npx", ["-y", "@modelcontextprotocol/server-everything"], None, None, {}),
        ("npx-y-_modelcontextprotocol_server-everything", ("npx", "-y", "@modelcontextprotocol/server-everything")),
    ),
    (
        ("/usr/local/bin/uvx", ["mcp-server-git", "--repository", str(ROOT / "sub")], None, None, {}),
        ("uvx-mcp-server-git-repository-sub", ("uvx", "mcp-server-git", "--repository", "sub")),
    ),
    (("node", [str(HOME / "srv" / "x.js")], None, None, {}), ("node-_srv_x.js", ("node", "~/srv/x.js"))),
    (("node", ["x.js"], "/srv", None, {}), ("node-x.js-in_srv", ("node", "x.js", "in /srv"))),
    (("node", ["x.js"], str(ROOT), None, {}), ("node-x.js", ("node", "x.js"))),  # the project's folder: no word
    (
        (None, [], None, "https://user:secret@api.example.com:8443/v1/mcp?key=abc", {}),
        ("api.example.com_8443-v1-mcp", ("https://api.example.com:8443/v1/mcp",)),
    ),  # no credentials, no query
    (
        ("uvx", ["mcp-server-time"], None, None, {"time": "server-time", "git": "server-git"}),
        ("time", ("uvx", "mcp-server-time")),
    ),
    (("python", ["a" * 200], None, None, {}), ("python-" + "a" * 62 + "-e35121adac", ("python", "a" * 200))),  # cut
    (  # no credential names a cassette, nor reaches its meta.server
        ("pg-mcp", ["--api-key", "k3y", "postgres://app:PASS@db/app"], None, None, {}),
        (
            "pg-mcp-api-key-_REDACTED_-postgres_app_REDACTED_db_app",
            ("pg-mcp", "--api-key", "[REDACTED]", "postgres://app:[REDACTED]@db/app"),
        ),
    ),
]


@pytest.mark.parametrize(("given", "expected"), IDENTITIES)
def test_a_server_is_named_by_what_any_machine_writes_alike(given: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    command, args, cwd, url, names = given
    identity = identify(command, args, cwd, url=url, names=names, project=ROOT)
    assert (identity.name, identity.words) == expected


def test_two_names_claiming_one_server_are_refused() -> None:
    with pytest.raises(UsageError, match="claimed by 2 names: a, b"):
        identify("uvx", ["mcp-server-time"], names={"a": "uvx", "b": "time"})


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("1.23.3", False),
        ("1.24.0", True),
        ("1.30.0", True),
        ("1.31.0", False),
        ("2.0.0", True),
        ("2.3.0", True),
        ("2.4.0", False),
        ("3.0.0", False),
        ("2.0.0rc1", True),
    ],
)
def test_only_the_sdk_releases_the_suite_runs_on_are_intercepted(version: str, supported: bool) -> None:
    assert intercept.supported(version) is supported


# --- the SDK's Client, unchanged, in this process ------------------------------------------------------


def session_of(folder: Path, mode: str = "none", **options: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        with anyio.fail_after(30), mockmcp.intercepting(folder, mode, **options):
            async with connect(StdioServerParameters(command="notes-server"), "legacy") as client:
                return await full_session(client)

    return anyio.run(go)


def test_recorded_with_the_server_then_replayed_without_it_the_host_sees_the_same(
    shim: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert mcp.client.stdio._create_platform_compatible_process.__module__ == "mcp.client.stdio"  # its own
    live = anyio.run(lambda: _live_session())  # outside an interception: the real server
    folder = tmp_path / "cassettes"
    recorded = session_of(folder, "once")
    assert starts(shim) == 2 and (folder / "notes-server.yaml").exists()  # the live run, then the recording
    unshim(shim, monkeypatch)
    replayed = session_of(folder)
    assert live == recorded == replayed
    assert starts(shim) == 2  # replay started nothing
    assert mcp.client.stdio._create_platform_compatible_process.__module__ == "mcp.client.stdio"  # given back


async def _live_session() -> dict[str, Any]:
    with anyio.fail_after(30):
        async with connect(StdioServerParameters(command="notes-server"), "legacy") as client:
            return await full_session(client)


def test_a_shipped_cassette_plays_to_the_host_as_mockmcp_transport_does(tmp_path: Path) -> None:
    shutil.copyfile(SHIPPED / "notes-session.yaml", tmp_path / "notes-server.yaml")
    intercepted = session_of(tmp_path)

    async def in_process() -> dict[str, Any]:
        async with connect(mockmcp.transport(str(SHIPPED / "notes-session.yaml")), "legacy") as client:
            return await full_session(client)

    assert intercepted == anyio.run(in_process)


def test_interception_switched_on_after_the_framework_was_imported_still_replays(
    shim: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastmcp import Client as FastMCPClient  # imports the SDK's stdio_client by name, before any patch
    from fastmcp.client.transports import StdioTransport

    async def read(mode: str) -> str:
        with anyio.fail_after(30), mockmcp.intercepting(tmp_path, mode):
            async with FastMCPClient(StdioTransport(command="notes-server", args=[])) as client:
                result = await client.call_tool("read_file", {"path": "notes.txt"})
        return str(result.content[0].text)

    assert anyio.run(read, "once") == "remember to buy milk" and starts(shim) >= 1
    recorded = starts(shim)
    unshim(shim, monkeypatch)
    assert anyio.run(read, "none") == "remember to buy milk" and starts(shim) == recorded  # the cassette answered


def test_no_signal_reaches_any_process_group_from_a_replayed_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, int, int]] = []
    for name in ("kill", "killpg"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda pid, sig, _n=name, _r=real: (sent.append((_n, pid, sig)), _r(pid, sig))[1])
    shutil.copyfile(SHIPPED / "notes-session.yaml", tmp_path / "notes-server.yaml")
    session_of(tmp_path)

    async def killed() -> Replayed:  # the SDK's escalation, as when a server outlives its grace
        with mockmcp.intercepting(tmp_path) as interception:
            process = await mcp.client.stdio._create_platform_compatible_process("notes-server", [])
            assert isinstance(process, Replayed) and process.pid == NO_PID
            await mcp.client.stdio._terminate_process_tree(process)
            assert interception.reports["notes-server"]
            return process

    process = anyio.run(killed)
    assert process.returncode == -signal.SIGTERM
    assert sent == []
    with pytest.raises(ProcessLookupError):
        os.getpgid(NO_PID)  # what the SDK would ask of it, had anything reached the real kill


def test_a_secret_on_the_command_line_never_names_the_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTES_TOKEN", "s3cr3t-t0ken")
    options = RecordOptions(redact_env=("NOTES_TOKEN",), redact_patterns=(r"key-\d+",))

    async def start() -> None:
        with mockmcp.intercepting(tmp_path, record=options):
            args = ["--token", "s3cr3t-t0ken", "--key", "key-123"]
            await mcp.client.stdio._create_platform_compatible_process("notes-server", args)

    with pytest.raises(intercept.NotRecorded) as refused:
        anyio.run(start)
    assert refused.value.path == str(tmp_path / "notes-server-token-_REDACTED_NOTES_TOKEN_-key-_REDACTED.yaml")
    assert "s3cr3t" not in str(refused.value) and "key-123" not in str(refused.value)


def test_two_servers_with_one_command_line_and_different_environments_are_refused(tmp_path: Path) -> None:
    shutil.copyfile(SHIPPED / "notes-session.yaml", tmp_path / "notes-server.yaml")

    async def two() -> None:
        with mockmcp.intercepting(tmp_path) as interception:
            for env in ({"TOKEN": "a"}, {"TOKEN": "b"}):
                async with connect(StdioServerParameters(command="notes-server", env=env), "legacy") as client:
                    await client.list_tools()
        assert "their environments or command lines differ" in str(interception.verdict())

    with pytest.raises(BaseException) as caught:
        anyio.run(two)
    assert "name each apart" in repr(caught.value) or "name each apart" in str(caught.value.__cause__)


# --- the plugin: marker, switch, fixture ----------------------------------------------------------------

HOST = """
import pytest
from mcp import Client, StdioServerParameters

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def read(path):
    async with Client(StdioServerParameters(command="notes-server"), mode="legacy") as client:
        result = await client.call_tool("read_file", {"path": path})
    return result.content[0].text

@pytest.mark.anyio
@pytest.mark.mockmcp(intercept=True)
async def test_reads_a_note():
    assert await read("PATH") == "remember to buy milk"
"""


def test_the_marker_records_then_replays_and_a_changed_argument_fails_with_the_miss(
    pytester: pytest.Pytester, shim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_host=HOST.replace("PATH", "notes.txt"))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_reads_a_note" / "notes-server.yaml"
    assert cassette.exists() and starts(shim) == 1
    unshim(shim, monkeypatch)
    run(pytester).assert_outcomes(passed=1)
    pytester.makepyfile(test_host=HOST.replace("PATH", "todo.md"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "no recorded interaction matches" in said and "pytest --mockmcp-record-mode" in said
    assert 'path: recorded "notes.txt", incoming "todo.md"' in said
    page = re.search(r"the session as a timeline: (\S+\.html)", said)
    assert page and "notes-server" in Path(page.group(1)).read_text(encoding="utf-8")  # a lane for the server
    assert starts(shim) == 1


def test_a_server_no_cassette_holds_fails_the_test_and_is_never_started(pytester: pytest.Pytester, shim: Path) -> None:
    pytester.makepyfile(test_host=HOST.replace("PATH", "notes.txt").replace("@pytest.mark.mockmcp(intercept=True)", ""))
    result = run(pytester, "--mockmcp-intercept")
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "the host started the server `notes-server`, and no cassette holds it" in said
    assert "pytest --mockmcp-intercept --mockmcp-record-mode=once test_host.py::test_reads_a_note" in said  # as run
    assert starts(shim) == 0


def test_a_server_on_the_allow_list_runs_live(pytester: pytest.Pytester, shim: Path) -> None:
    marked = HOST.replace("PATH", "notes.txt").replace("intercept=True", "intercept=True, allow=['notes-server']")
    pytester.makepyfile(test_host=marked)
    run(pytester).assert_outcomes(passed=1)
    assert starts(shim) == 1 and not (pytester.path / "cassettes").exists()


FIXTURE_HOST = """
import pytest
from mcp import Client, StdioServerParameters

@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_two_sessions(mockmcp_intercept, anyio_backend):
    for path in ("notes.txt", "todo.md"):  # a host that starts its server for each call
        async with Client(StdioServerParameters(command="notes-server"), mode="legacy") as client:
            await client.call_tool("read_file", {"path": path})
    reports = mockmcp_intercept.reports
    assert MODE == "once" or [sorted(r.sessions) for r in reports["notes-server"]] == [[0], [1]]  # in order
"""


def test_the_fixture_records_a_server_started_twice_and_replays_its_sessions_in_order(
    pytester: pytest.Pytester, shim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_host=FIXTURE_HOST.replace("MODE", "'once'"))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    assert starts(shim) == 2
    unshim(shim, monkeypatch)
    pytester.makepyfile(test_host=FIXTURE_HOST.replace("MODE", "'none'"))
    run(pytester, "--mockmcp-strict").assert_outcomes(passed=1)


# --- mockmcp run: a whole program, and the Python programs it starts ------------------------------------

AGENT = """
import multiprocessing, subprocess, sys
import anyio
from mcp import Client, StdioServerParameters

async def read(path, who):
    async with Client(StdioServerParameters(command="notes-server"), mode="legacy") as client:
        print(who, (await client.call_tool("read_file", {"path": path})).content[0].text, flush=True)

def forked(path):
    try:
        anyio.run(read, path, "forked")
    except Exception:
        pass  # a host that shrugs a failed call off: only the verdict can tell

if __name__ == "__main__":
    role, path = sys.argv[1:3]
    anyio.run(read, "notes.txt" if role == "parent" else path, role)
    if role == "parent":  # a Python child of the program, and a forked one: intercepted too
        subprocess.run([sys.executable, __file__, "child", "notes.txt"], check=True)
        process = multiprocessing.get_context("fork").Process(target=forked, args=(path,))
        process.start()
        process.join()
"""


def test_mockmcp_run_records_a_program_and_its_python_children_then_replays_them_without_the_server(
    shim: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agent.py").write_text(AGENT)

    def run(*options: str, path: str = "notes.txt") -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "mockmcp", "run", *options, "--cassettes", "c", "--"]
        command += [sys.executable, "agent.py", "parent", path]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=dict(os.environ))

    recorded = run("--record-mode", "new_episodes")
    assert recorded.returncode == 0, recorded.stderr
    said = ["parent remember to buy milk", "child remember to buy milk", "forked remember to buy milk"]
    assert recorded.stdout.splitlines() == said
    assert starts(shim) == 3  # each process recorded its own session into the one cassette
    assert (tmp_path / "c" / "notes-server.yaml").exists()
    unshim(shim, monkeypatch)
    replayed = run()
    assert (replayed.returncode, replayed.stdout) == (0, recorded.stdout), replayed.stderr
    missed = run(path="todo.md")  # asked by the forked child only, which shrugs its failed call off
    assert missed.returncode == 1 and starts(shim) == 3, missed.stderr
    assert missed.stdout.splitlines() == said[:2]
    assert 'path: recorded "notes.txt", incoming "todo.md"' in missed.stderr
    assert "no recorded interaction matches" in missed.stderr.split("mockmcp: process")[1]  # said at the end, too


# --- what a trial as a user found: each a way to pass falsely, or to lose a recording ---------------------

FAILING = HOST.replace("PATH", "notes.txt").replace('== "remember to buy milk"', '== "WANTED"')


def test_a_failing_test_never_replaces_its_cassette(
    pytester: pytest.Pytester, shim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_host=HOST.replace("PATH", "notes.txt"))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_reads_a_note" / "notes-server.yaml"
    before = cassette.read_bytes()
    pytester.makepyfile(test_host=FAILING.replace('"notes.txt"', '"todo.md"'))
    run(pytester, "--mockmcp-record-mode=rewrite").assert_outcomes(failed=1)
    assert cassette.read_bytes() == before  # the failed test's recording was discarded
    assert [p.name for p in cassette.parent.iterdir()] == ["notes-server.yaml"]  # nothing staged is left


SESSIONS = """
import pytest
from mcp import Client, StdioServerParameters

@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.mockmcp(intercept=True)
async def test_sessions(anyio_backend):
    for path in PATHS:  # a host that starts its server for each call
        async with Client(StdioServerParameters(command="notes-server"), mode="legacy") as client:
            await client.call_tool("read_file", {"path": path})
"""


def test_a_server_started_more_often_than_recorded_fails_the_test_and_fewer_only_under_strict(
    pytester: pytest.Pytester, shim: Path
) -> None:
    pytester.makepyfile(test_host=SESSIONS.replace("PATHS", repr(["notes.txt", "todo.md"])))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_sessions[asyncio]" / "notes-server.yaml"
    assert sorted({i.session for i in mockmcp.load(str(cassette)).interactions}) == [0, 1]
    for replayed, options, outcome, said in [
        (["notes.txt", "todo.md", "notes.txt"], [], "failed", "`notes-server` 3 times; notes-server.yaml holds 2"),
        (["notes.txt"], ["--mockmcp-strict"], "failed", "started `notes-server` 1 of the 2 times"),
        (["notes.txt"], [], "passed", ""),  # not strict: a host may start its server fewer times than recorded
    ]:
        pytester.makepyfile(test_host=SESSIONS.replace("PATHS", repr(replayed)))
        result = run(pytester, *options)
        result.assert_outcomes(**{outcome: 1})
        assert said in result.stdout.str()
    assert starts(shim) == 2  # recorded once, never started on replay


def test_two_sessions_alike_are_both_recorded(pytester: pytest.Pytester, shim: Path) -> None:
    pytester.makepyfile(test_host=SESSIONS.replace("PATHS", repr(["notes.txt", "notes.txt"])))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_sessions[asyncio]" / "notes-server.yaml"
    assert sorted({i.session for i in mockmcp.load(str(cassette)).interactions}) == [0, 1]
    run(pytester, "--mockmcp-strict").assert_outcomes(passed=1)


CHILD = """
import subprocess, sys
import pytest

@pytest.mark.mockmcp(intercept=True)
def test_child():
    done = subprocess.run([sys.executable, AGENT, "child", "PATH"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
"""


def test_a_python_child_of_the_test_is_intercepted_too(
    pytester: pytest.Pytester, shim: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    child = CHILD.replace("AGENT", repr(str(tmp_path / "agent.py")))
    pytester.makepyfile(test_host=child.replace("PATH", "notes.txt"))
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    assert (
        starts(shim) == 1 and (pytester.path / "cassettes" / "test_host" / "test_child" / "notes-server.yaml").exists()
    )
    unshim(shim, monkeypatch)
    run(pytester).assert_outcomes(passed=1)
    pytester.makepyfile(test_host=child.replace("PATH", "todo.md"))
    result = run(pytester)
    result.assert_outcomes(failed=1)  # the child swallowed nothing: its miss is the test's
    assert 'path: recorded "notes.txt", incoming "todo.md"' in result.stdout.str()
    assert starts(shim) == 1


def test_python_api_leaving_the_block_raises_the_verdict(tmp_path: Path) -> None:
    shutil.copyfile(SHIPPED / "notes-session.yaml", tmp_path / "notes-server.yaml")

    async def shrugs() -> None:
        with mockmcp.intercepting(tmp_path):
            async with connect(StdioServerParameters(command="notes-server"), "legacy") as client:
                try:
                    await client.call_tool("read_file", {"path": "elsewhere.txt"})
                except Exception:
                    pass

    with pytest.raises(mockmcp.StrictFailure, match="no recorded interaction matches"):
        anyio.run(shrugs)


def test_sigterm_to_mockmcp_run_reaches_the_program(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text("import sys, time\nprint('up', flush=True)\ntime.sleep(60)\n")
    command = [sys.executable, "-m", "mockmcp", "run", "--cassettes", "c", "--", sys.executable, "slow.py"]
    with subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, text=True) as started:
        assert started.stdout is not None and started.stdout.readline() == "up\n"
        started.send_signal(signal.SIGTERM)
        assert started.wait(timeout=30) != 0
    lingering = subprocess.run(["pgrep", "-f", f"{tmp_path}.*slow.py|slow.py$"], capture_output=True, text=True)
    assert not [pid for pid in lingering.stdout.split() if _cwd(pid) == tmp_path]


def _cwd(pid: str) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None
