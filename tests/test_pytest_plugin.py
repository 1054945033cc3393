"""The pytest plugin, tested the way its users meet it: real test modules with the SDK as the host, run by pytester."""

from __future__ import annotations

import datetime
import difflib
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import mcp  # noqa: F401
import pytest
import yaml  # noqa: F401
from conftest import MOCKMCP, NOTES_COMMAND, ROOT, SHIPPED, child_env, sse_messages

import mockmcp.cassette.yamledit
import mockmcp.tools._drift  # noqa: F401
from mockmcp import MockServer
from mockmcp.cassette.model import Cassette, Interaction, ServerItem
from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay
from mockmcp.errors import UsageError
from mockmcp.options import RecordOptions, ReplayOptions
from mockmcp.plugin import _keeping as keeping
from mockmcp.plugin import _story as story
from mockmcp.plugin._harness import Harness, Target, serve_http, server_command
from mockmcp.plugin._naming import cassette_name, merge_settings
from mockmcp.plugin._privacy import Privacy

pytest_plugins = ["pytester"]

NOTES_SERVER = str(ROOT / "examples" / "notes_server.py")

# What a host's test module starts with: the SDK as the host, on anyio's asyncio backend.
HOST_HELPERS = """
import subprocess
import sys
import pytest
from mcp import Client

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def read(mockmcp, path):
    async with Client(mockmcp.stdio_params, mode="legacy") as client:
        result = await client.call_tool("read_file", {"path": path})
    return result.content[0].text
"""

HOST_TESTS = (
    HOST_HELPERS
    + f"""
@pytest.mark.anyio
@pytest.mark.mockmcp(server={NOTES_COMMAND!r})
async def test_reads_a_note(mockmcp):
    assert await read(mockmcp, "notes.txt") == "remember to buy milk"
"""
)


def write_host_tests(pytester: pytest.Pytester, body: str = HOST_TESTS, name: str = "test_host") -> Path:
    return pytester.makepyfile(**{name: body})


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run pytest on the test files written: in this process, but for xdist.

    A fresh interpreter costs a second or more, most of it importing the SDK; in this process the
    SDK is imported once (by this module), as a run unloads only the modules it imported itself.
    For the same reason this module imports what keeping a recording loads (PyYAML, the YAML editor,
    the drift comparison): imported afresh inside a run, YAML's node classes would be a second copy,
    which the editor's isinstance checks miss, so a save would rewrite the whole file (comments lost)
    instead of editing it in place as a real run does.
    """
    if "-n" in args:
        # The timeout guards against a hang; a loaded machine needs minutes for two workers recording four sessions.
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "anyio", *args, timeout=300)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_replay_passes_with_a_recorded_cassette(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    target = pytester.path / "cassettes" / "test_host" / "test_reads_a_note.mcp.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    run(pytester).assert_outcomes(passed=1)


def test_a_missing_cassette_fails_with_the_option_that_records_it(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no cassette at *test_reads_a_note.mcp.yaml; record it by running this test with --mockmcp-record-mode=once*"]
    )
    # The option's old spelling still records, and says it is deprecated.
    result = run(pytester, "--mockmcp-record=once")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*mockmcp: --mockmcp-record is deprecated, write --mockmcp-record-mode=once*"])
    assert (pytester.path / "cassettes" / "test_host" / "test_reads_a_note.mcp.yaml").exists()


@pytest.mark.parametrize(
    ("args", "mode", "warned"),
    [
        ([], "none", None),
        (["--mockmcp-record-mode=rewrite"], "all", None),
        (["--mockmcp-record-mode", "new_episodes"], "new", None),
        (["--mockmcp-record=once"], "once", "--mockmcp-record is deprecated, write --mockmcp-record-mode=once"),
        (["--mockmcp-record-mode=all"], "all", "record mode all is deprecated: write rewrite"),
        (["--mockmcp-record-mode=new"], "new", "record mode new is deprecated: write new_episodes"),
        # the new spelling wins
        (["--mockmcp-record-mode=rewrite", "--mockmcp-record=once"], "all", "--mockmcp-record is deprecated"),
    ],
)
def test_the_record_mode_option_and_its_deprecated_spelling(
    pytester: pytest.Pytester, args: list[str], mode: str, warned: str | None
) -> None:
    body = "def test_mode(mockmcp_record_mode, pytestconfig):\n    assert mockmcp_record_mode == {mode!r}\n"
    body += "    assert pytestconfig.getoption('--mockmcp-record') == pytestconfig.getoption('--mockmcp-record-mode')\n"
    pytester.makepyfile(test_mode=body.format(mode=mode))
    result = run(pytester, *args)
    result.assert_outcomes(passed=1, warnings=int(warned is not None))
    assert warned is None or warned in result.stdout.str()
    assert warned is not None or "is deprecated" not in result.stdout.str()


@pytest.mark.parametrize("args", [["--mockmcp-record-mode=sometimes"], ["--mockmcp-record=sometimes"]])
def test_an_unknown_record_mode_is_a_usage_error_naming_the_valid_ones(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    pytester.makepyfile(test_mode="def test_mode(mockmcp_record_mode):\n    pass\n")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mockmcp-record-mode=sometimes: unknown record mode 'sometimes'*"])


@pytest.mark.slow
def test_record_once_record_again_unchanged_verify_then_replay_without_the_server(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_reads_a_note.mcp.yaml"
    assert cassette.exists() and not list(cassette.parent.glob(".*recording*"))
    # Recorded again from a server that says the same: the file is byte for byte what it was (an empty git diff).
    recorded = cassette.read_bytes()
    time.sleep(1.1)  # so a new recorded_at would differ
    run(pytester, "--mockmcp-record-mode=all").assert_outcomes(passed=1)
    again = cassette.read_bytes()
    said = difflib.unified_diff(recorded.decode().splitlines(True), again.decode().splitlines(True))
    assert again == recorded, "".join(said)  # the lines that changed, when they did
    # verify with no command runs the server meta.server names, from the project's folder.
    verified = subprocess.run(
        [*MOCKMCP, "verify", str(cassette), "--substitute", f"PROJECT={pytester.path}"],
        cwd=pytester.path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"against {' '.join(NOTES_COMMAND)}" in verified.stdout
    # The server is gone: replay alone must serve the same test.
    write_host_tests(pytester, HOST_TESTS.replace(repr(NOTES_SERVER), repr("/nonexistent/server.py")))
    run(pytester).assert_outcomes(passed=1)


CASSETTE_DIR_FIXTURE = """
import pytest

@pytest.fixture
def mockmcp_cassette_dir(request):
    return request.path.parent / "recorded"
"""


def test_a_conftest_overrides_one_fixture_at_a_time(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    mode = "\n@pytest.fixture\ndef mockmcp_record_mode():\n    return {!r}\n"
    pytester.makeconftest(CASSETTE_DIR_FIXTURE + mode.format("once"))
    run(pytester).assert_outcomes(passed=1)  # recorded: the conftest's mode, without the option
    assert [p.relative_to(pytester.path).as_posix() for p in pytester.path.rglob("*.yaml")] == [
        "recorded/test_reads_a_note.mcp.yaml"
    ]
    pytester.makeconftest(CASSETTE_DIR_FIXTURE)
    run(pytester).assert_outcomes(passed=1)  # replayed from the conftest's folder
    pytester.makeconftest(CASSETTE_DIR_FIXTURE + mode.format("sometimes"))
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the mockmcp_record_mode fixture returned 'sometimes': unknown record mode*"])


def shipped(pytester: pytest.Pytester, test: str = "test_reads_a_note", module: str = "test_host") -> Path:
    """The test's cassette, a copy of the shipped session (recorded from the same notes server)."""
    target = pytester.path / "cassettes" / module / f"{test}.mcp.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    return target


def test_a_changed_request_fails_with_the_differences(pytester: pytest.Pytester) -> None:
    """The one run end to end of a verdict failing a test (`test_the_verdict_*` has its rules)."""
    shipped(pytester)
    write_host_tests(pytester, HOST_TESTS.replace('"notes.txt") ==', '"note.txt") =='))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*could not serve this test as recorded*",
            "*no recorded interaction matches this tools/call request*",
            '*arguments.path: recorded "notes.txt", incoming "note.txt"*',
            "*@pytest.mark.mockmcp(ignore=[[]'arguments.path'[]]), or `mockmcp_ignore = arguments.path` in the ini*",
            "*record the cassette again: pytest --mockmcp-record-mode=rewrite test_host.py::test_reads_a_note",
        ]
    )
    # The host's error at the miss failed the test too: its traceback, down to the test's own line, is shown first.
    result.stdout.fnmatch_lines(
        [
            "*test_host.py*in test_reads_a_note",  # the SDK's error, in a group of anyio's task groups
            '*  assert await read(mockmcp, "note.txt") == "remember to buy milk"',
            "*MCPError: mockmcp: no recorded interaction matches: tools/call",
            "and mockmcp failed the same test:",
            "*could not serve this test as recorded*",
        ]
    )
    result.stdout.fnmatch_lines(["FAILED test_host.py::test_reads_a_note - Failed: mockmcp: *"])


def test_a_test_failed_by_its_own_assertion_and_by_strict_shows_both(pytester: pytest.Pytester) -> None:
    """The test's failing line and its assertion's details stay in view above mockmcp's verdict."""
    shipped(pytester)
    asserted = '    text = await read(mockmcp, "notes.txt")\n    assert text == "something else"'
    write_host_tests(
        pytester, HOST_TESTS.replace('    assert await read(mockmcp, "notes.txt") == "remember to buy milk"', asserted)
    )
    result = run(pytester, "--mockmcp-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '>       assert text == "something else"',
            "E       AssertionError: assert 'remember to buy milk' == 'something else'",
            "test_host.py:*: AssertionError",
            "and mockmcp failed the same test:",
            "mockmcp: * could not serve this test as recorded:",
            "never asked for (strict): interactions[[]*[]] *",
        ]
    )
    result = run(pytester, "--mockmcp-strict", "--tb=short")
    result.stdout.fnmatch_lines(
        ["test_host.py:*: in test_reads_a_note", '    assert text == "something else"', "E   AssertionError: *"]
    )


def test_strict_fails_on_interactions_the_host_never_asked_for(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester)
    shipped(pytester)  # a whole session; the test uses a part (and passes without --mockmcp-strict: see above)
    result = run(pytester, "--mockmcp-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*never asked for (strict): interactions[[]*[]] *"])


def test_a_replay_the_test_took_and_no_host_started_fails_under_strict_and_is_told_otherwise(
    pytester: pytest.Pytester,
) -> None:
    body = "def test_forgets_to_launch(mockmcp):\n    command = mockmcp.command\n\n"
    body += "def test_only_reads_the_path(mockmcp):\n    assert mockmcp.cassette.name.endswith('.mcp.yaml')\n"
    pytester.makepyfile(test_host=body)
    for test in ("test_forgets_to_launch", "test_only_reads_the_path"):
        shipped(pytester, test)
    result = run(pytester, "--mockmcp-strict")
    result.assert_outcomes(failed=1, passed=1)  # the path alone asks for no server
    result.stdout.fnmatch_lines(["*never started (strict): the test took the mock server of *but no host started it*"])
    result = run(pytester)
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(["*PytestWarning: mockmcp: the test took the mock server of *no host started it*"])


def test_a_failed_test_does_not_overwrite_a_good_cassette(pytester: pytest.Pytester) -> None:
    cassette = shipped(pytester)
    before = cassette.read_bytes()
    failing = HOST_TESTS.replace('== "remember to buy milk"', '== "something else"')
    write_host_tests(pytester, failing)
    run(pytester, "--mockmcp-record-mode=all").assert_outcomes(failed=1)
    assert cassette.read_bytes() == before
    assert not list(cassette.parent.glob(".*recording*"))
    run(pytester, "--mockmcp-record-mode=all", "--mockmcp-keep-failed").assert_outcomes(failed=1)
    assert cassette.read_bytes() != before  # asked for: kept


def test_a_recording_test_that_took_the_command_and_never_launched_it_fails(pytester: pytest.Pytester) -> None:
    """It would pass with no cassette written, and fail only on its next run, which replays."""
    write_host_tests(
        pytester,
        HOST_HELPERS
        + f"""
@pytest.mark.mockmcp(server={NOTES_COMMAND!r})
def test_takes_the_command_only(mockmcp):
    assert mockmcp.command
""",
    )
    result = run(pytester, "--mockmcp-record-mode=once")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*nothing was recorded into*the test took the mock server's command but never launched it*"]
    )
    assert not list(pytester.path.rglob("*.yaml"))


def test_recording_needs_a_server_and_says_where_to_name_it(pytester: pytest.Pytester) -> None:
    write_host_tests(pytester, HOST_TESTS.replace(f"@pytest.mark.mockmcp(server={NOTES_COMMAND!r})\n", ""))
    result = run(pytester, "--mockmcp-record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*--mockmcp-record-mode=once needs the real server*--mockmcp-server*mockmcp_server*"])


PARALLEL = (
    HOST_TESTS
    + """
FILES = [("notes.txt", "remember to buy milk"), ("todo.md", "# Todo"), ("missing.txt", None)]

@pytest.mark.anyio
@pytest.mark.parametrize(("path", "expected"), FILES, ids=[f"{i}-{p}" for i, (p, _) in enumerate(FILES)])
@pytest.mark.mockmcp(server="""
    + repr(NOTES_COMMAND)
    + """)
async def test_parallel(mockmcp, path, expected):
    text = await read(mockmcp, path)
    assert text.startswith(expected) if expected else "no such file" in text
"""
)


@pytest.mark.slow
def test_parallel_workers_record_and_replay_cleanly(pytester: pytest.Pytester) -> None:
    """Two workers record into one folder at once (each keeping under the folder's lock: what parallel workers
    can get wrong), then every cassette replays (in this process, as one worker would)."""
    write_host_tests(pytester, PARALLEL)
    run(pytester, "-n", "2", "--mockmcp-record-mode=once").assert_outcomes(passed=4)
    folder = pytester.path / "cassettes" / "test_host"
    cassettes = sorted(p.name for p in folder.glob("*.yaml"))
    assert cassettes == [
        "test_parallel[0-notes.txt].mcp.yaml",
        "test_parallel[1-todo.md].mcp.yaml",
        "test_parallel[2-missing.txt].mcp.yaml",
        "test_reads_a_note.mcp.yaml",
    ]
    assert not list(folder.glob(".*recording*"))
    run(pytester).assert_outcomes(passed=4)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (["test_plain"], "test_plain.yaml"),
        (["TestMilk", "test_read"], "TestMilk.test_read.yaml"),
        (["test_x[a/b c]"], "test_x[a_b c].yaml"),
        (["test_x[../../etc]"], "test_x[.._.._etc].yaml"),
        (['test_w[a:b*c?"<>|\\]'], "test_w[a_b_c______].yaml"),
        ([".hidden"], "_hidden.yaml"),
    ],
)
def test_cassette_names_keep_the_test_id_with_forbidden_characters_replaced(parts: list[str], expected: str) -> None:
    assert cassette_name(parts) == expected


def test_only_a_name_too_long_for_a_file_system_is_cut_and_keeps_a_hash() -> None:
    made = cassette_name(["test_y[" + "z" * 300 + "]"])
    assert made.startswith("test_y[zzz") and made.endswith(".yaml") and len(made.encode()) <= 200
    assert cassette_name(["test_y[" + "z" * 300 + "!]"]) != made
    wide = cassette_name(["test_\u00e9[" + "\u00e9" * 300 + "]"])  # cut on a character, not inside one
    assert len(wide.encode()) <= 200 and wide.encode().decode() == wide


def test_the_first_server_named_wins_in_precedence_order() -> None:
    assert server_command(None, ["marker", "cmd"], "fixture cmd", "ini cmd") == ["marker", "cmd"]
    assert server_command("cli 'quoted arg'", ["marker"], None, "ini") == ["cli", "quoted arg"]
    assert server_command(None, None, None, "ini cmd") == ["ini", "cmd"]
    assert server_command(None, None, None, "") is None


def test_meta_server_names_paths_relative_to_the_project_and_never_the_home_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    home_file = Path.home() / "tools" / "server.py"
    recorded = Cassette((), {"server": [sys.executable, str(project / "srv" / "notes.py"), str(home_file), "-v"]})
    finished = Privacy(project=project).finish(recorded)
    assert finished.meta["server"] == ["python", "srv/notes.py", "~/tools/server.py", "-v"]
    # As the recorder wrote them: a path by its value, any other word with its placeholders, never this machine's value
    written = ["${PROJECT}/srv/notes.py", "--data=${DATA}", "--root=${PROJECT}", "/opt/${DATA}"]
    privacy = Privacy(project=project, substitute=(("PROJECT", str(project)), ("DATA", "/srv/data"), ("KEY", None)))
    finished = privacy.finish(Cassette((), {"server": [*written, "--key=${KEY}"]}))
    assert finished.meta["server"] == ["srv/notes.py", *written[1:], "--key=${KEY}"]


def test_before_record_sees_every_message_and_must_give_one_back() -> None:
    log = ServerItem("notification", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"at": 1}})
    call = Interaction(
        "request",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"at": 1}},
        (log, ServerItem("raw", "not json")),
        {"jsonrpc": "2.0", "id": 1, "result": {"at": 1}},
    )

    def stamp(message: dict[str, object]) -> dict[str, object]:
        body = message.get("params") or message.get("result")
        assert isinstance(body, dict)
        body["at"] = 0
        return message

    [done] = Privacy(before_record=stamp).finish(Cassette((call,), {})).interactions
    assert done.params == {"at": 0} and done.response == {"jsonrpc": "2.0", "id": 1, "result": {"at": 0}}
    assert done.server[0].message["params"] == {"at": 0} and done.server[1].message == "not json"
    assert call.params == {"at": 1}  # the recording it was given is left as it was
    with pytest.raises(UsageError, match="before_record must return the message"):
        Privacy(before_record=lambda message: None).finish(Cassette((call,), {}))  # type: ignore[arg-type,return-value]


RAW_HOST = """
import os
import subprocess
import pytest

@pytest.mark.mockmcp(server=["unused"])
def test_host_sends_a_lone_surrogate(mockmcp):
    line = b'{"jsonrpc":"2.0","id":"x\\\\ud800","method":"tools/call",'
    line += b'"params":{"name":"read_file","arguments":{"path":"\\\\udc00"}}}\\n'
    done = subprocess.run(
        mockmcp.command, input=line, capture_output=True, env={**os.environ, **mockmcp.env}, timeout=60
    )
    assert b'"error"' in done.stdout
"""


@pytest.mark.slow
def test_a_miss_with_a_lone_surrogate_fails_its_test(pytester: pytest.Pytester) -> None:
    """The report of a miss whose id holds a lone surrogate is written, so the plugin sees the miss (no false pass)."""
    write_host_tests(pytester, RAW_HOST, name="test_raw")
    shipped(pytester, "test_host_sends_a_lone_surrogate", "test_raw")
    result = run(pytester, "test_raw.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no recorded interaction matches this tools/call request*"])


# --- over HTTP: the server takes its own port and says it --------------------------------------------

GREETING = """
version: 1
interactions:
- request:
    id: 1
    method: initialize
    params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: t, version: '1'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: NAME, version: '1'}}}
"""
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def server_name(url: str) -> str:
    """Who answers `initialize` at url."""
    port = int(url.split(":")[2].split("/")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    connection.request("POST", "/mcp", body=json.dumps(INIT), headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    is_sse = (response.getheader("content-type") or "").startswith("text/event-stream")
    [message] = sse_messages(text) if is_sse else [json.loads(text)]
    return str(message["result"]["serverInfo"]["name"])


def make_harness(
    cassette: Path,
    workdir: Path,
    mode: str = "none",
    server: list[str] | None = None,
    *,
    strict: bool = False,
    redact_env: tuple[str, ...] = (),
    fields: dict[str, object] | None = None,
    live: bool = False,
) -> Harness:
    """A test's harness as the fixtures build it: its target, and the options as values."""
    target = Target(cassette, server, live=live)._replace(**(fields or {}))
    return Harness(target, RecordOptions(mode, redact_env), ReplayOptions(strict=strict), workdir, os.environ)


def harness_of(tmp_path: Path, name: str, mode: str = "none", server: list[str] | None = None) -> Harness:
    cassette = tmp_path / f"{name}.yaml"
    cassette.write_text(GREETING.replace("NAME", name))
    workdir = tmp_path / f"{name}-work"
    workdir.mkdir()
    return make_harness(cassette, workdir, mode, server)


@pytest.mark.parametrize(
    ("launched", "problem", "passed", "keep_failed", "handed_out", "fate"),
    [
        (True, False, True, False, True, "keep"),
        (True, False, False, True, True, "keep"),  # --mockmcp-keep-failed
        (True, False, False, False, True, "discard"),  # a failed test never overwrites a good cassette
        (True, True, False, False, True, "leave"),  # it could not run as asked, and fails saying why
        (True, True, False, True, True, "leave"),
        (False, False, True, False, True, "unlaunched"),  # it took the command and never launched it
        (False, False, True, False, False, "discard"),  # it never took the command: nothing to record
        (False, False, False, False, True, "discard"),  # it failed already: said once
        (False, True, False, False, True, "discard"),
    ],
)
def test_what_becomes_of_a_recording_after_its_test(
    launched: bool, problem: bool, passed: bool, keep_failed: bool, handed_out: bool, fate: str
) -> None:
    assert keeping.fate(launched, problem, passed, keep_failed, handed_out) == fate


def test_a_test_sees_only_what_it_uses_of_its_mock_server() -> None:
    public = {name for name in dir(MockServer) if not name.startswith("_")}
    # url: deprecated
    assert public == {"calls", "cassette", "command", "env", "start_http", "stdio_params", "transport", "url"}


def test_the_deprecated_url_says_what_replaces_it(tmp_path: Path) -> None:
    live = make_harness(tmp_path / "c.yaml", tmp_path, server=["http://127.0.0.1:9/mcp"], live=True)  # starts nothing
    said = r"^mockmcp.url is deprecated: call mockmcp.start_http\(\), which starts the HTTP mock server and returns "
    said += "its URL$"
    with pytest.warns(DeprecationWarning, match=said):
        assert MockServer(live).url == "http://127.0.0.1:9/mcp"


def test_two_mocks_started_at_once_take_ports_of_their_own_and_each_test_reaches_its_own(tmp_path: Path) -> None:
    harnesses = [harness_of(tmp_path, name) for name in ("first", "second")]
    mocks = [MockServer(harness) for harness in harnesses]
    urls: dict[int, str] = {}
    starters = [threading.Thread(target=lambda i=i: urls.update({i: mocks[i].start_http()})) for i in range(2)]
    for starter in starters:
        starter.start()
    for starter in starters:
        starter.join(30)
    assert urls[0] != urls[1] and all(url.startswith("http://127.0.0.1:") for url in urls.values())
    assert mocks[0].start_http() == urls[0]  # started once
    with pytest.warns(DeprecationWarning, match="start_http"):
        assert mocks[0].url == urls[0]
    assert [server_name(urls[0]), server_name(urls[1])] == ["first", "second"]
    for harness in harnesses:
        harness.stop()
        [report] = story.reports(harness)
        assert isinstance(report, dict) and report["misses"] == [] and report["unplayed"] == []


def test_a_mock_stopped_the_moment_it_said_its_url_still_writes_its_report(tmp_path: Path) -> None:
    harness = harness_of(tmp_path, "quick")
    harness.start_http()
    began = time.monotonic()
    harness.stop()  # SIGTERM right after the line: the server's signals are caught by then
    assert time.monotonic() - began < 10
    [report] = story.reports(harness)
    assert isinstance(report, dict) and [u["method"] for u in report["unplayed"]] == ["initialize"]
    assert "serving" in harness.stderr(harness.launches()[0])


def test_a_server_that_ends_before_saying_its_url_is_a_clear_error(tmp_path: Path) -> None:
    harness = harness_of(tmp_path, "gone")
    harness.cassette.write_text("version: 1\ninteractions: {}\n")  # replay refuses it and exits
    with pytest.raises(UsageError, match=r"ended before it said where it listens: .*interactions"):
        harness.start_http()


def test_a_server_that_never_says_its_url_is_given_up_on(tmp_path: Path) -> None:
    # -I -S: an interpreter that says its first line in milliseconds, so even a loaded machine has it said in time
    said = "import sys, time; print('starting', file=sys.stderr, flush=True); time.sleep(60)"
    began = time.monotonic()
    with pytest.raises(UsageError, match=r"did not say where it listens within 2 s: starting"):
        serve_http([sys.executable, "-I", "-S", "-c", said], {}, tmp_path, wait=2)
    assert time.monotonic() - began < 30  # stopped, not waited for


def test_recording_over_http_needs_the_real_servers_url(tmp_path: Path) -> None:
    harness = harness_of(tmp_path, "rec", mode="all", server=[sys.executable, "server.py"])
    with pytest.raises(UsageError, match="recording over HTTP needs the real server's URL"):
        harness.start_http()


# --- the rules of a test's settings and verdict, as tables ---------------------------------------------

SERVER_A, SERVER_B = ["python", "a.py"], ["python", "b.py"]


@pytest.mark.parametrize(
    ("config", "markers", "settings"),
    [
        ({}, [], {}),
        ({"server": SERVER_A, "strict": True}, [], {"server": SERVER_A, "strict": True}),
        # a module's (or class's) marker, then the test's own: argument by argument, the nearer wins
        (
            {},
            [((), {"server": SERVER_A, "strict": True}), ((), {"server": SERVER_B})],
            {"server": SERVER_B, "strict": True},
        ),
        ({"record": "all", "ignore": ["x"]}, [((), {"record": "none"})], {"record": "none", "ignore": ["x"]}),
        ({"redact_evn": ["X"], "strict": True}, [], {"strict": True}),  # a typo is left out (and is the problem)
    ],
    ids=["nothing", "the-config-fixture", "nearer-marker-wins", "marker-over-config", "typo-left-out"],
)
def test_settings_merge_the_config_fixture_then_markers_outermost_first(
    config: dict[str, object], markers: list[tuple[tuple[object, ...], dict[str, object]]], settings: dict[str, object]
) -> None:
    assert merge_settings(config, markers)[0] == settings


@pytest.mark.parametrize(
    ("config", "markers", "problem"),
    [
        ({}, [((), {"strict": True})], None),
        (
            {"redact_evn": ["X"]},
            [],
            "the mockmcp_config fixture got an unknown argument redact_evn=['X'] (did you mean",
        ),
        ({}, [(("mine.yaml",), {})], "@pytest.mark.mockmcp takes keyword arguments only"),
        (
            {},
            [((), {"strickt": True}), ((), {"cassete": "x"})],
            "@pytest.mark.mockmcp got an unknown argument strickt=True (did you mean strict=?)",
        ),
        ({"redact_evn": []}, [((), {"strickt": True})], "the mockmcp_config fixture"),  # the first problem is told
        (
            {},
            [((), {"before_record": "stamp"})],
            "@pytest.mark.mockmcp: before_record must be a function of one message, got 'stamp'",
        ),
    ],
    ids=["none", "config-typo", "positional", "outermost-first", "config-first", "before-record-not-callable"],
)
def test_the_first_problem_of_the_settings_is_told(
    config: dict[str, object], markers: list[tuple[tuple[object, ...], dict[str, object]]], problem: str | None
) -> None:
    told = merge_settings(config, markers)[1]
    assert told is None if problem is None else told is not None and told.startswith(problem)


MISSED = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: read_file, arguments: {path: notes.txt}}}
  response: {result: {content: [{type: text, text: remember to buy milk}]}}
"""
NOTE_TXT = (
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"note.txt"}}}'
)


ASKED = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: delete_file, arguments: {path: n.txt}}}
  server:
  - request: {id: 0, method: elicitation/create, params: {message: Delete n.txt?}}
    response: {result: {action: accept, content: {confirm: true}}}
  response: {result: {content: [{type: text, text: deleted n.txt}]}}
"""
DELETE = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_file","arguments":{"path":"n.txt"}}}'
DECLINE = b'{"jsonrpc":"2.0","id":0,"result":{"action":"decline"}}'


def replayed(cassette: str, *lines: bytes) -> dict[str, object]:
    """The report of a replay of `cassette` that received `lines` (made by the engine, as replay's --report is)."""
    engine = Replay(loads(cassette), Matcher.build())
    for line in lines:
        engine.receive(line)
    return dict(json.loads(engine.report.json_text()))


def gone_pid() -> int:
    """A pid no process has any more."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)
    return gone.pid


CLEAN: dict[str, object] = {"misses": [], "mismatches": [], "withheld": [], "unplayed": [], "repeats": []}
UNPLAYED = {**CLEAN, "unplayed": [{"interaction": 3, "method": "tools/call"}]}
REPEATED = {**CLEAN, "repeats": [{"interaction": 2, "method": "tools/call", "extra": 2}]}


@pytest.mark.parametrize(
    ("report", "strict", "told"),
    [
        (CLEAN, True, None),
        (UNPLAYED, False, None),
        (UNPLAYED, True, ["never asked for (strict): interactions[3] tools/call"]),
        (REPEATED, False, None),
        (
            REPEATED,
            True,
            [
                "asked more often than recorded (strict): interactions[2] tools/call, 2 more times",
                "write `times: any` in that interaction",
            ],
        ),
        (
            "answered-otherwise",
            False,
            [
                "the host answered elicitation/create (from interactions[0]) differently from the recording:",
                'result.action: recorded "accept", the host\'s "decline"',
            ],
        ),
        (
            {**CLEAN, "withheld": [{"explanation": "roots/list was not sent: the host no longer declares roots"}]},
            False,
            ["roots/list was not sent: the host no longer declares roots"],
        ),
        (
            "miss",
            False,
            [
                "no recorded interaction matches this tools/call request",
                'incoming request (id 7): tools/call {"arguments":{"path":"note.txt"},"name":"read_file"}',
                'arguments.path: recorded "notes.txt", incoming "note.txt"',
                "@pytest.mark.mockmcp(ignore=['arguments.path']), or `mockmcp_ignore = arguments.path` in the ini",
                "record the cassette again: pytest --mockmcp-record-mode=rewrite test_host.py::test_reads_a_note",
            ],
        ),
        (None, False, ["ended without writing its report: it was killed", "its last words:\n  | mockmcp: serving"]),
        ("{not json", False, ["is unreadable"]),
    ],
    ids=[
        "clean",
        "unplayed",
        "strict",
        "repeated",
        "strict-repeated",
        "host-answered-otherwise",
        "withheld",
        "miss",
        "no-report",
        "unreadable",
    ],
)
def test_the_verdict_after_a_test_tells_what_each_replay_could_not_do(
    tmp_path: Path, report: object, strict: bool, told: list[str] | None
) -> None:
    cassette = tmp_path / "notes.yaml"
    cassette.write_text(MISSED)
    harness = make_harness(cassette, tmp_path, strict=strict)
    pid = gone_pid()
    (tmp_path / f"launch-{pid}").touch()
    (tmp_path / f"stderr-{pid}.txt").write_text("mockmcp: serving notes.yaml\n")
    if report is not None:
        made = {"miss": (MISSED, NOTE_TXT), "answered-otherwise": (ASKED, DELETE, DECLINE)}
        if isinstance(report, str):
            text = json.dumps(replayed(*made[report])) if report in made else report
        else:
            text = json.dumps(report)
        (tmp_path / f"report-{pid}.json").write_text(text)
    verdict = story.verdict(harness, "test_host.py::test_reads_a_note")
    if told is None:
        assert verdict is None
        return
    assert verdict is not None and verdict.startswith(f"mockmcp: {cassette} could not serve this test as recorded:")
    for line in told:
        assert line in verdict, verdict
    assert "--ignore" not in verdict  # told in pytest's terms, not the command line's


@pytest.mark.parametrize(
    ("mode", "server", "exists", "env", "problem"),
    [
        ("none", None, True, {}, None),
        (
            "none",
            None,
            False,
            {},
            "no cassette at {cassette}; record it by running this test with --mockmcp-record-mode=once",
        ),
        (
            "once",
            None,
            False,
            {},
            "--mockmcp-record-mode=once needs the real server to record {cassette}: name it with",
        ),
        ("once", SERVER_A, True, {}, None),  # once replays an existing cassette: no server needed, no secret
        ("all", SERVER_A, True, {}, "mockmcp cannot record {cassette}: redact_env GROCERY: not set in the recorder"),
        ("new", SERVER_A, True, {"GROCERY": "milk"}, None),
    ],
)
def test_a_test_that_cannot_run_as_asked_is_told_why_before_it_runs(
    tmp_path: Path, mode: str, server: list[str] | None, exists: bool, env: dict[str, str], problem: str | None
) -> None:
    cassette = tmp_path / "notes.yaml"
    if exists:
        cassette.write_text(MISSED)
    harness = make_harness(cassette, tmp_path, mode, server, redact_env=("GROCERY",))
    harness.env = {key: value for key, value in harness.env.items() if key != "GROCERY"} | env
    told = story.problem_before(harness, "test_host.py::test_reads_a_note")
    assert told is None if problem is None else told is not None and told.startswith(problem.format(cassette=cassette))


@pytest.mark.parametrize(
    ("fields", "live", "text", "server", "told", "untold"),
    [
        (
            {"given": "faults.yaml", "folder": Path("/t/cassettes/test_host")},
            False,
            None,
            None,
            [
                "no cassette at {cassette}; the marker's cassette='faults.yaml' is a path from the module's cassette "
                "folder, <test dir>/<mockmcp_cassette_dir, default cassettes>/<test module>/<cassette=, default "
                "<Class>.<test>[params].mcp.yaml> (here /t/cassettes/test_host)",
                "pytest --mockmcp-record-mode=once test_host.py::test_reads_a_note",
            ],
            [],
        ),
        (
            {"hand_made": True},
            False,
            None,
            None,
            ['no cassette at {cassette}.\nThis test is marked record="none": its cassette is hand-made'],
            ["pytest --mockmcp-record"],
        ),
        (
            {},
            False,
            "version: 1\ninteractions: [\n",
            None,
            ["cannot be loaded:\n{cassette}:3: not valid YAML"],
            [],
        ),
        (
            {},
            False,
            "version: 1\ninteractions:\n- request: {id: 1, method: 7}\n",
            None,
            ["cannot be loaded:\n{cassette}:3: interactions[0].request: a message needs a `method` string"],
            ["killed"],
        ),
        ({}, True, None, None, ["--mockmcp-live needs the real server of {cassette}"], []),
        ({}, True, None, SERVER_A, None, []),  # live: no cassette needed, none read
    ],
    ids=["cassette-given", "hand-made", "broken-yaml", "invalid", "live-without-server", "live"],
)
def test_what_stops_a_test_before_its_body_names_the_cassette_and_the_rule(
    tmp_path: Path,
    fields: dict[str, object],
    live: bool,
    text: str | None,
    server: list[str] | None,
    told: list[str] | None,
    untold: list[str],
) -> None:
    cassette = tmp_path / "notes.yaml"
    if text is not None:
        cassette.write_text(text)
    harness = make_harness(cassette, tmp_path, "none", server, fields=fields, live=live)
    said = story.problem_before(harness, "test_host.py::test_reads_a_note")
    if told is None:
        assert said is None
        return
    assert said is not None
    for line in told:
        assert line.format(cassette=cassette) in said, said
    for line in untold:
        assert line not in said, said


def test_a_broken_cassette_fails_each_way_of_launching_before_the_host_launches_anything(
    pytester: pytest.Pytester,
) -> None:
    body = """
import pytest

pytestmark = pytest.mark.mockmcp(cassette="broken.yaml")

def test_command(mockmcp):
    raise AssertionError(f"the body ran: {mockmcp.command}")

def test_transport(mockmcp):
    raise AssertionError(f"the body ran: {mockmcp.transport}")

def test_http(mockmcp):
    raise AssertionError(f"the body ran: {mockmcp.start_http()}")
"""
    pytester.makepyfile(test_host=body)
    broken = pytester.path / "cassettes" / "test_host" / "broken.yaml"
    broken.parent.mkdir(parents=True)
    broken.write_text("version: 1\ninteractions:\n- request: {id: 1, method: tools/list}\n  respnse: {result: {}}\n")
    result = run(pytester)
    result.assert_outcomes(failed=3)
    text = result.stdout.str()
    # Once per test in its failure (the summary line repeats it whole when the CI variable is set).
    told = text.split("short test summary info")[0]
    assert told.count("the cassette of this test cannot be loaded") == 3, text
    assert f"{broken}:4: interactions[0]" in text and "the body ran" not in text and "killed" not in text


# A cassette as vcrpy 9 writes it (yaml.dump of the cassette's dict), at the path pytest-recording gives a test.
VCR_CASSETTE = """interactions:
- request:
    body: null
    headers:
      Accept:
      - '*/*'
      User-Agent:
      - python-requests/2.32.3
    method: GET
    uri: https://api.example.com/notes/1
  response:
    body:
      string: '{"text": "remember to buy milk"}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""
# A cassette mockmcp wrote under a test's old name, `<test>.yaml`, before `.mcp.yaml`.
OLD_NAMED = "version: 1\nmeta: {recorded_at: '2026-01-01T00:00:00Z'}\ninteractions: []\n"


def test_orphans_lists_the_cassettes_no_collected_test_uses_and_fails_the_run(pytester: pytest.Pytester) -> None:
    body = """
import pytest

def test_uses_its_own(mockmcp):
    pass

def test_uses_its_own_under_the_old_name(mockmcp):
    pass

@pytest.mark.mockmcp(cassette="shared.yaml")
def test_uses_a_named_one(mockmcp):
    pass

def test_without_mockmcp():
    pass

@pytest.mark.mockmcp(servers={"notes": ["notes-server"], "time": ["time-server"]})
def test_two_servers(mockmcp):
    pass
"""
    pytester.makepyfile(test_host=body)
    folder = pytester.path / "cassettes" / "test_host"
    (folder / "test_two_servers").mkdir(parents=True)
    for name in ("test_uses_its_own.mcp.yaml", "shared.yaml", "test_without_mockmcp.yaml", ".x.1.recording.yaml"):
        (folder / name).write_text("version: 1\ninteractions: []\n")
    (folder / "test_uses_its_own.yaml").write_text(VCR_CASSETTE)  # pytest-recording's, beside: not mockmcp's
    (folder / "test_uses_its_own_under_the_old_name.yaml").write_text(OLD_NAMED)  # still read: used
    for name in ("notes", "time", "memory"):  # a server's cassette each; `memory` is no longer one of them
        (folder / "test_two_servers" / f"{name}.yaml").write_text("version: 1\ninteractions: []\n")
    (pytester.path / "cassettes" / "test_gone").mkdir()
    (pytester.path / "cassettes" / "test_gone" / "test_old.yaml").write_text("version: 1\ninteractions: []\n")
    result = run(pytester, "--collect-only", "-q", "--mockmcp-orphans")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "mockmcp: 3 cassettes that no collected test uses*",
            "  cassettes/test_gone/test_old.yaml",
            "  cassettes/test_host/test_two_servers/memory.yaml",
            "  cassettes/test_host/test_without_mockmcp.yaml",
        ]
    )
    assert "shared.yaml" not in result.stdout.str() and "recording" not in result.stdout.str()
    for name in ("test_without_mockmcp.yaml", "../test_gone/test_old.yaml", "test_two_servers/memory.yaml"):
        (folder / name).unlink()
    result = run(pytester, "--mockmcp-orphans")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["mockmcp: every cassette in the cassette folders is used by a collected test"])


def test_max_age_warns_about_an_old_cassette_and_fails_it_under_strict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host="def test_old(mockmcp):\n    pass\n\ndef test_young(mockmcp):\n    pass\n")
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    (folder / "test_old.mcp.yaml").write_text(
        "version: 1\nmeta: {recorded_at: '2020-01-01T00:00:00Z'}\ninteractions: []\n"
    )
    young = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    (folder / "test_young.mcp.yaml").write_text(f"version: 1\nmeta: {{recorded_at: '{young}'}}\ninteractions: []\n")
    result = run(pytester, "--mockmcp-max-age=30")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(
        ["*test_old.mcp.yaml was recorded * days ago (2020-01-01T00:00:00Z), more than the 30 days*"]
    )
    pytester.makeini("[pytest]\nmockmcp_max_age = 30\n")
    result = run(pytester, "--mockmcp-strict")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["mockmcp: *test_old.mcp.yaml was recorded * days ago*", "FAILED test_host.py::test_old*"]
    )
    assert run(pytester, "--mockmcp-max-age=soon").ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize(
    ("recorded_at", "days"),
    [
        ("2026-01-01T00:00:00Z", 31.0),
        ("2026-01-31T12:00:00+00:00", 0.5),
        ("2026-01-30T00:00:00", 2.0),  # without a zone: UTC
        ("2026-01-30", 2.0),
        ("last week", None),
        (None, None),
        (20260101, None),
    ],
)
def test_days_old(recorded_at: object, days: float | None) -> None:
    assert story.days_old(recorded_at, datetime.datetime(2026, 2, 1, tzinfo=datetime.timezone.utc)) == days


def test_live_runs_against_the_real_server_and_writes_nothing(pytester: pytest.Pytester) -> None:
    body = (
        HOST_HELPERS
        + f"""
pytestmark = pytest.mark.mockmcp(server={NOTES_COMMAND!r})

@pytest.mark.anyio
async def test_over_stdio(mockmcp):
    assert mockmcp.command[-1] == {NOTES_SERVER!r}
    assert await read(mockmcp, "notes.txt") == "remember to buy milk"

@pytest.mark.anyio
async def test_in_process(mockmcp):
    async with Client(mockmcp.transport, mode="legacy") as client:
        result = await client.call_tool("read_file", {{"path": "notes.txt"}})
    assert result.content[0].text == "remember to buy milk"

def test_over_http(mockmcp):
    with pytest.raises(Exception, match="running live over HTTP needs the real server's URL"):
        mockmcp.start_http()
"""
    )
    write_host_tests(pytester, body)
    result = run(pytester, "--mockmcp-live", "--mockmcp-strict")
    result.assert_outcomes(passed=3)
    assert not (pytester.path / "cassettes").exists()


def test_a_kept_recording_replaces_the_journal_a_stopped_run_left_beside_its_cassette(tmp_path: Path) -> None:
    """The journal `leftovers` moved beside the cassette waits for `mockmcp recover` until a recording of the
    cassette is kept; one a live recorder holds, or beside a cassette the recording did not replace, stays."""
    from mockmcp.stdio.processes import lock_file

    ping = "version: 1\ninteractions:\n- request: {method: ping}\n  response: {result: {}}\n"
    cassette, beside = tmp_path / "c.mcp.yaml", tmp_path / "c.mcp.yaml.journal"

    def stage(text: str) -> Path:
        staged = keeping.staged_path(cassette, os.getpid())
        staged.write_text(text)
        return staged

    beside.write_text("{}\n")  # a run stopped mid-recording left it
    with pytest.warns(UserWarning, match=r"removed .*c\.mcp\.yaml\.journal, the session of a run stopped"):
        assert keeping.keep(stage(ping), cassette, lambda kept: kept, ())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.mcp.yaml"]

    beside.write_text("{}\n")
    with pytest.warns(UserWarning, match="the host sent nothing"):  # the cassette stays: so does the session
        assert keeping.keep(stage("version: 1\ninteractions: []\n"), cassette, lambda kept: kept, ())
    assert beside.exists()

    fd = os.open(beside, os.O_RDONLY)  # a recorder holds it: it is alive, never replaced
    try:
        lock_file(fd)
        assert keeping.keep(stage(ping), cassette, lambda kept: kept, ())
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.mcp.yaml", "c.mcp.yaml.journal"]


@pytest.mark.parametrize(
    "live_meta",
    [
        "{recorded_at: '2026-12-07T10:00:00Z'}",  # recorded again later
        "{recorded_at: '2026-12-07T10:00:00Z', updated_at: '2026-12-07T10:00:00Z'}",  # a staged copy merged into
        "{updated_at: '2026-12-07T10:00:00Z'}",
    ],
)
def test_a_recording_again_in_which_no_message_changed_leaves_the_cassette_byte_for_byte(
    tmp_path: Path, live_meta: str
) -> None:
    """However the new recording dates itself, the cassette keeps the dates it had, where it had them, and gains
    none: an unchanged re-recording is an empty diff."""
    body = "interactions:\n- request: {method: ping}\n  response: {result: {}}\n"
    cassette = tmp_path / "c.mcp.yaml"
    text = f"version: 1\nmeta:\n  recorded_at: '2026-12-06T10:00:00Z'\n  era: handshake\n{body}"
    cassette.write_text(text)
    before = cassette.read_bytes()
    staged = keeping.staged_path(cassette, os.getpid())
    staged.write_text(f"version: 1\nmeta: {live_meta}\n{body}")
    assert keeping.keep(staged, cassette, lambda kept: kept, ())
    assert cassette.read_bytes() == before
