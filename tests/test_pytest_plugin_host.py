"""The pytest plugin as a host team lives with it: classes, parametrize, hand-made fault cassettes, typos, kills.

Each test writes a host's test module in a user's shape, runs pytest on it with pytester, and looks
at the outcomes and at the cassette folder.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NOTES_COMMAND, ROOT, SDK_PYTHON, SHIPPED
from test_pytest_plugin import HOST_HELPERS, NOTES_SERVER, run

from mockmcp.cassette import store
from mockmcp.tools import _lint as lint

pytest_plugins = ["pytester"]

SERVERS = ROOT / "tests" / "servers"
PREAMBLE = HOST_HELPERS + f"SERVER = {NOTES_COMMAND!r}\n"

# Same-named tests in two classes and two modules, and parametrize ids that hold a path. The tests
# only ask for the fixture: with no cassettes, each fails naming the one it would replay, so the
# naming is seen in a real pytest run without a session recorded (`cassette_name`'s table has the rest).
CLASSES = """
import pytest

class TestMilk:
    def test_read(self, mockmcp):
        pass

class TestTodo:
    def test_read(self, mockmcp):
        pass

@pytest.mark.parametrize("path", ["notes.txt", "sub/../todo.md"])
def test_has_text(mockmcp, path):
    pass
"""


def test_same_named_tests_in_two_classes_and_two_modules_get_cassettes_of_their_own(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_kitchen=CLASSES, test_garage=CLASSES.replace("TestTodo", "TestTools"))
    pytester.makeini("[pytest]\nmockmcp_cassette_dir = recordings\n")
    result = run(pytester)
    result.assert_outcomes(failed=8)
    # Each failure says its cassette once in its report, and again in the summary when pytest does not
    # cut summary lines short (as under CI=true): one path per failed test either way.
    named = set(re.findall(r"no cassette at (\S+);", result.stdout.str()))
    folder = pytester.path / "recordings"
    assert sorted(Path(path).relative_to(folder).as_posix() for path in named) == [
        "test_garage/TestMilk.test_read.mcp.yaml",
        "test_garage/TestTools.test_read.mcp.yaml",
        "test_garage/test_has_text[notes.txt].mcp.yaml",
        "test_garage/test_has_text[sub_.._todo.md].mcp.yaml",  # a parametrize id never names another folder
        "test_kitchen/TestMilk.test_read.mcp.yaml",
        "test_kitchen/TestTodo.test_read.mcp.yaml",
        "test_kitchen/test_has_text[notes.txt].mcp.yaml",
        "test_kitchen/test_has_text[sub_.._todo.md].mcp.yaml",
    ]


HOST_KILLED = """
import subprocess
import pytest

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\\n'

@pytest.mark.mockmcp(cassette="notes.yaml")
@pytest.mark.parametrize("ending", ["killed", "closed"])
def test_host_swallows_what_happened(mockmcp, ending):
    proc = subprocess.Popen(mockmcp.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=mockmcp.env)
    proc.stdin.write(PING)
    proc.stdin.flush()
    assert proc.stdout.readline()  # replay is serving
    if ending == "killed":
        proc.kill()  # before replay could write its report, whatever its signal handling
    proc.stdin.close()
    proc.wait(timeout=60)
    proc.stdout.close()
"""


def test_a_replay_that_left_no_report_fails_its_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=HOST_KILLED)
    target = pytester.path / "cassettes" / "test_host" / "notes.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_host_swallows_what_happened?killed?*", "*ended without writing its report: it was killed*"]
    )


TYPOS = """
import pytest

@pytest.mark.mockmcp(strickt=True)
def test_strict_misspelt(mockmcp):
    pass

@pytest.mark.mockmcp(cassete="mine.yaml")
def test_cassette_misspelt(mockmcp):
    pass

@pytest.mark.mockmcp("mine.yaml")
def test_positional(mockmcp):
    pass

@pytest.mark.mockmcp(record="sometimes")
def test_bad_mode(mockmcp):
    pass
"""


def test_unknown_marker_arguments_fail_the_test_naming_the_known_ones(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_typos=TYPOS)
    result = run(pytester)
    result.assert_outcomes(failed=4)
    known = "it takes allow=, before_record=, cassette=, closed_world=, config=, ignore=, intercept=, names=, "
    known += "record=, redact=, redact_env=, server=, servers=, strict="
    result.stdout.fnmatch_lines_random(
        [
            f"*unknown argument strickt=True (did you mean strict=?); {known}*",
            f"*unknown argument cassete='mine.yaml' (did you mean cassette=?); {known}*",
            "*takes keyword arguments only*got [[]'mine.yaml'[]]*",
            "*record='sometimes'*unknown record mode*",
            "*use one of: none, once, new_episodes, rewrite*",
        ]
    )


FAULTS = (
    PREAMBLE
    + """
pytestmark = [pytest.mark.anyio, pytest.mark.mockmcp(server=SERVER)]

async def test_reads(mockmcp):
    assert await read(mockmcp, "notes.txt") == "remember to buy milk"

@pytest.mark.mockmcp(record="none")
async def test_slow_server(mockmcp):
    assert await read(mockmcp, "notes.txt") == "remember to buy milk"

def test_host_sends_nothing(mockmcp):
    proc = subprocess.Popen(mockmcp.command, stdin=subprocess.PIPE, env=mockmcp.env)
    proc.stdin.close()
    proc.wait(timeout=60)
"""
)


def with_delay(path: Path, delay: float) -> None:
    """Hand-edit a cassette: its tools/call answers after `delay` seconds."""
    cassette = store.load(str(path))
    edited = [i._replace(delay=delay) if i.method == "tools/call" else i for i in cassette.interactions]
    store.save(cassette._replace(interactions=tuple(edited)), str(path))


@pytest.mark.slow
def test_rerecording_all_keeps_hand_edits_modes_and_good_cassettes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=FAULTS)
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    reads, fault, nothing = (
        folder / f"{name}.mcp.yaml" for name in ("test_reads", "test_slow_server", "test_host_sends_nothing")
    )
    for cassette in (reads, fault, nothing):  # recorded from the same server; `nothing`'s host now sends nothing
        shutil.copyfile(SHIPPED / "notes-session.yaml", cassette)
    with_delay(reads, 0.2)
    reads.write_text(reads.read_text().replace("interactions:\n", "interactions:\n# why this cassette is slow\n", 1))
    reads.chmod(0o600)
    with_delay(fault, 0.3)
    fault.write_text("# hand-made: a slow server\n" + fault.read_text())
    fault_before = fault.read_bytes()
    nothing_before = nothing.read_bytes()

    run(pytester, "--mockmcp-record-mode=all").assert_outcomes(passed=3)
    assert fault.read_bytes() == fault_before  # record="none": never re-recorded
    delays = [i.delay for i in store.load(str(reads)).interactions if i.method == "tools/call"]
    assert delays == [0.2]  # re-recorded from the server, the hand-made knob kept
    assert "# why this cassette is slow\n" in reads.read_text()  # and the comment explaining it
    assert stat.S_IMODE(reads.stat().st_mode) == 0o600
    assert nothing.read_bytes() == nothing_before  # the host sent nothing: the cassette is not emptied
    assert not [p.name for p in folder.iterdir() if p.suffix != ".yaml" or p.name.startswith(".")]


def test_leftovers_of_a_run_killed_mid_recording_are_cleared_until_the_rerun_records_and_no_lock_files_are_left(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_host=FAULTS)
    folder = pytester.path / "cassettes" / "test_host"
    folder.mkdir(parents=True)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)  # a pid no process has any more
    leftovers = [
        folder / f".test_reads.mcp.{gone.pid}.recording.yaml",
        folder / f".test_reads.mcp.{gone.pid}.recording.yaml.journal",
    ]
    for path in leftovers:
        path.write_text("{}\n")
    result = run(pytester, "--mockmcp-record-mode=once", "-k", "test_reads")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*mockmcp: removed *.test_reads.mcp.*.recording.yaml, left by a test run stopped mid-recording*",
            "*mockmcp: a test run stopped mid-recording left its session in *test_reads.mcp.yaml.journal: "
            "`mockmcp recover *test_reads.mcp.yaml` makes it the cassette*",
        ]
    )
    # The session the journal held waited beside the cassette for `mockmcp recover` until this rerun recorded the
    # cassette, which replaces it: nothing is left beside the cassette.
    result.stdout.fnmatch_lines(["*mockmcp: removed *test_reads.mcp.yaml.journal, the session of a run stopped*"])
    assert sorted(p.name for p in folder.iterdir()) == ["test_reads.mcp.yaml"]


TWO_SERVERS = (
    PREAMBLE
    + """
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]

@pytest.mark.anyio
@pytest.mark.mockmcp(servers={"notes": SERVER, "time": TIME})
class TestAgent:
    async def test_plans_the_day(self, mockmcp):
        try:  # an agent carries on without its notes
            note = await read(mockmcp["notes"], "notes.txt")
        except Exception:
            note = None
        async with Client(mockmcp["time"].stdio_params, mode="legacy") as clock:
            when = await clock.call_tool(
                "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Paris"}
            )
        assert note in ("remember to buy milk", None) and "Europe/Paris" in when.content[0].text
"""
)


@pytest.mark.slow
def test_a_test_talking_to_two_servers_gets_a_cassette_and_a_verdict_for_each(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agent=TWO_SERVERS)
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_agent" / "TestAgent.test_plans_the_day"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.yaml", "time.yaml"]
    assert "mcp_server_time" in " ".join(store.load(str(folder / "time.yaml")).meta["server"])
    run(pytester).assert_outcomes(passed=1)
    # Both hosts changed their requests: the failure explains each server's miss.
    pytester.makepyfile(
        test_agent=TWO_SERVERS.replace('"notes.txt"', '"todo.md"').replace("Europe/Paris", "Asia/Tokyo")
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*TestAgent.test_plans_the_day/notes.yaml could not serve this test as recorded*",
            '*arguments.path: recorded "notes.txt", incoming "todo.md"*',
            "*TestAgent.test_plans_the_day/time.yaml could not serve this test as recorded*",
            '*arguments.target_timezone: recorded "Europe/Paris", incoming "Asia/Tokyo"*',
        ]
    )


def test_a_server_name_the_marker_does_not_declare_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
import pytest

@pytest.mark.mockmcp(servers={"notes": "python notes.py"}, record="all")
def test_typo(mockmcp):
    mockmcp["nots"]
"""
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no mock server named 'nots'; its marker's servers= names 'notes'*"])


MODERN_HOST = """
import pytest
from mcp import Client

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
@pytest.mark.mockmcp(cassette="notes-2026.yaml")
async def test_reads_a_note(mockmcp):
    async with Client(mockmcp.stdio_params) as client:  # the 2026-07-28 era: every request carries _meta
        result = await client.call_tool("read_file", {"path": "note.txt"})
    assert result.content[0].text == "remember to buy milk"
"""


def test_a_miss_is_told_once_in_pytest_terms_with_the_tool_and_arguments_first(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=MODERN_HOST)
    target = pytester.path / "cassettes" / "test_host" / "notes-2026.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes-2026.yaml", target)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '*incoming request (id *): tools/call {"arguments":{"path":"note.txt"},"name":"read_file"}',
            '*arguments.path: recorded "notes.txt", incoming "note.txt"*',
            "*leave it out of matching: @pytest.mark.mockmcp(ignore=[[]'arguments.path'[]])*mockmcp_ignore*",
            "*record the cassette again: pytest --mockmcp-record-mode=rewrite test_host.py::test_reads_a_note",
        ]
    )
    text = result.stdout.str() + result.stderr.str()
    # Once in the failure, not again in a captured stderr section. The short summary line is left
    # out: pytest prints it whole, story and all, when the CI variable is set.
    told = text.split("short test summary info")[0]
    assert told.count("incoming request (id") == 1
    assert "--ignore" not in text and "mockmcp record " not in text


SECRET_HOST = """
import sys
from pathlib import Path
import pytest
from mcp import Client

SERVER = [sys.executable, str(Path(__file__).parent / "notes_server.py")]

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.fixture
def mockmcp_config():
    return {"redact_env": ["GROCERY"], "server": SERVER}

def stamp(message):
    info = message.get("result", {}).get("serverInfo")
    if info:
        info["version"] = "any"  # a value that changes with each release of the server
    return message

@pytest.mark.anyio
@pytest.mark.mockmcp(before_record=stamp)
async def test_reads_a_note(mockmcp):
    async with Client(mockmcp.stdio_params, mode="legacy") as client:
        result = await client.call_tool("read_file", {"path": "notes.txt"})
    assert result.content[0].text.startswith("remember to buy")
"""


@pytest.mark.slow
def test_a_recording_is_redacted_hooked_and_names_the_server_by_project_paths(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_host=SECRET_HOST)
    shutil.copyfile(NOTES_SERVER, pytester.path / "notes_server.py")
    # Recording with GROCERY unset fails the test before it runs: test_a_test_that_cannot_run_as_asked_*.
    cassette = pytester.path / "cassettes" / "test_host" / "test_reads_a_note.mcp.yaml"
    monkeypatch.setenv("GROCERY", "milk")
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    text = cassette.read_text()
    assert "milk" not in text and "[REDACTED:GROCERY]" in text
    recorded = store.load(str(cassette))
    assert recorded.meta["server"] == ["python", "notes_server.py"]
    assert recorded.interactions[0].response["result"]["serverInfo"]["version"] == "any"
    monkeypatch.delenv("GROCERY")
    run(pytester).assert_outcomes(passed=1)  # replay needs no secret


def test_a_misspelt_config_fixture_key_fails_like_a_marker_typo(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef mockmcp_config():\n    return {'redact_evn': ['X']}\n")
    pytester.makepyfile(test_typo="def test_it(mockmcp):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*the mockmcp_config fixture got an unknown argument redact_evn=*did you mean redact_env=?*"]
    )


HTTP_HOST = f"""
import re
import subprocess
import sys
import threading
import pytest
from mcp import Client

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.fixture(scope="session")
def notes_over_http(pytestconfig):
    \"\"\"The real server, over Streamable HTTP: only needed when recording.\"\"\"
    if pytestconfig.getoption("--mockmcp-record-mode") == "none":
        yield None
        return
    server = subprocess.Popen(
        [sys.executable, {NOTES_SERVER!r}, "--http", "0"], stderr=subprocess.PIPE, text=True
    )
    said, found = "", None
    for line in server.stderr:  # it says where it listens once it does (or ends, and the loop with it)
        said += line
        found = re.search(r"Uvicorn running on (http://\\S+)", line)
        if found:
            break
    assert found, said
    threading.Thread(target=server.stderr.read, daemon=True).start()  # the rest, so the pipe never fills
    yield found.group(1) + "/mcp"
    server.terminate()
    server.wait(timeout=30)

@pytest.fixture
def mockmcp_server(notes_over_http):
    return notes_over_http

@pytest.mark.anyio
async def test_reads_a_note_over_http(mockmcp):
    async with Client(mockmcp.start_http(), mode="legacy") as client:
        result = await client.call_tool("read_file", {{"path": "notes.txt"}})
    assert result.content[0].text == "remember to buy milk"
"""


@pytest.mark.slow
def test_an_http_host_records_through_the_proxy_and_replays_over_http(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=HTTP_HOST)
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_host" / "test_reads_a_note_over_http.mcp.yaml"
    methods = [i.method for i in store.load(str(cassette)).interactions]
    assert "initialize" in methods and "tools/call" in methods
    run(pytester).assert_outcomes(passed=1)  # replayed over HTTP, no server
    pytester.makepyfile(test_host=HTTP_HOST.replace('{"path": "notes.txt"}', '{"path": "note.txt"}'))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*could not serve this test as recorded*", '*arguments.path: recorded "notes.txt", incoming "note.txt"*']
    )


# A host that starts the server once per call, against a server whose state outlives the process.
ONE_SHOT = (
    HOST_HELPERS
    + f"""
MEMORY = [*{SDK_PYTHON!r}, {str(SERVERS / "memory_graph.py")!r}, "memory.json"]

async def call(mockmcp, name, arguments):
    async with Client(mockmcp.stdio_params, mode="legacy") as client:
        return (await client.call_tool(name, arguments)).content[0].text

@pytest.mark.anyio
@pytest.mark.mockmcp(server=MEMORY, strict=True)
async def test_remembers(mockmcp):
    assert await call(mockmcp, "read_graph", {{}}) == '{{"entities": []}}'
    assert await call(mockmcp, "create_entities", {{"names": ["milk"]}}) == "created milk"
    assert await call(mockmcp, "read_graph", {{}}) == '{{"entities": ["milk"]}}'
"""
)


@pytest.mark.slow
def test_one_process_per_call_sees_the_recorded_sessions_one_after_another(pytester: pytest.Pytester) -> None:
    """Each replay the test launches takes the next recorded session (the plugin's state file): the third
    process reads what the second wrote, as the real server said, not the first session's empty graph."""
    pytester.makepyfile(test_memory=ONE_SHOT)
    run(pytester, "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    cassette = store.load(str(pytester.path / "cassettes" / "test_memory" / "test_remembers.mcp.yaml"))
    assert sorted({interaction.session for interaction in cassette.interactions}) == [0, 1, 2]
    (pytester.path / "memory.json").unlink()  # replay never starts the server
    run(pytester).assert_outcomes(passed=1)


# The mistakes of a hand edit, each in a hand-made cassette of its own: a handshake and a tools/list, then the
# edited answer to the host's call of read_file (interactions[3], from line 14). Each must fail its test with
# the place, from the plugin as from `mockmcp lint`: never a pass, never a wait for ever.
MADE_BY_HAND = """\
version: 1
interactions:
- request: {method: initialize}
  response:
    result:
      protocolVersion: '2025-11-25'
      capabilities: {tools: {}}
      serverInfo: {name: notes, version: '1'}
- notification: {method: notifications/initialized}
- request: {method: tools/list}
  response: {result: {tools: [{name: read_file, inputSchema: {type: object}}]}}
- request:
    method: tools/call
    params: {name: read_file, arguments: {path: notes.txt}}
"""
ANSWERED = "  response:\n    result: {content: [{type: text, text: remember to buy milk}]%s}\n"
MISTAKES = {  # cassette -> (the edit, the place of its error)
    "under.yaml": (
        "    response:\n      result: {content: [{type: text, text: hi}]}\n",
        "interactions[3].request.response",
    ),
    "yes.yaml": (ANSWERED % ", isError: 'yes'", "interactions[3].response.result.isError"),
    "typo.yaml": (ANSWERED % ", isErorr: true", "interactions[3].response.result.isErorr"),
    "txt.yaml": (ANSWERED.replace("type: text", "type: txt") % "", "interactions[3].response.result.content[0].type"),
}

HAND_EDITS = (
    HOST_HELPERS
    + """
pytestmark = pytest.mark.anyio

@pytest.mark.mockmcp(cassette="under.yaml", record="none")
async def test_response_under_its_request(mockmcp):
    await read(mockmcp, "notes.txt")

@pytest.mark.mockmcp(cassette="yes.yaml", record="none")
async def test_is_error_yes(mockmcp):
    await read(mockmcp, "notes.txt")

@pytest.mark.mockmcp(cassette="typo.yaml", record="none")
async def test_is_error_misspelt(mockmcp):
    await read(mockmcp, "notes.txt")

@pytest.mark.mockmcp(cassette="txt.yaml", record="none")
async def test_content_type_txt(mockmcp):
    await read(mockmcp, "notes.txt")

@pytest.mark.mockmcp(cassette="once.yaml", record="none", strict=True)
async def test_asked_twice(mockmcp):
    async with Client(mockmcp.stdio_params, mode="legacy") as client:
        for _ in range(2):
            await client.call_tool("read_file", {"path": "notes.txt"})

@pytest.mark.mockmcp(cassette="missing.yaml", record="none")
async def test_no_such_cassette(mockmcp):
    await read(mockmcp, "notes.txt")

@pytest.mark.mockmcp(cassette="recipe-2026.yaml", record="none", strict=True)
async def test_recipe_written_without_an_era_in_a_2026_cassette(mockmcp):
    async with Client(mockmcp.stdio_params) as client:  # the SDK's default: 2026-07-28 first
        result = await client.call_tool("read_file", {"path": "notes.txt"})
    assert result.is_error and result.content[0].text == "quota exceeded"
"""
)
# Not a mistake: a recipe written without `_meta` (as the faults cookbook's are) in a cassette of 2026-07-28
# alone speaks that era (`model.written_eras`), so a host of that era is answered by it.
RECIPE_2026 = """\
version: 1
interactions:
- request: {method: server/discover}
  response:
    result: {supportedVersions: ['2026-07-28'], capabilities: {tools: {}}, resultType: complete}
- request: {method: tools/call, params: {name: read_file, arguments: {path: notes.txt}}}
  response: {result: {content: [{type: text, text: quota exceeded}], isError: true}}
"""


def test_each_mistake_of_a_hand_edit_fails_its_test_and_lint_at_its_place(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_edits=HAND_EDITS)
    folder = pytester.path / "cassettes" / "test_edits"
    folder.mkdir(parents=True)
    for name, (edit, _place) in MISTAKES.items():
        (folder / name).write_text(MADE_BY_HAND + edit)
    (folder / "once.yaml").write_text(MADE_BY_HAND + ANSWERED % "")
    (folder / "recipe-2026.yaml").write_text(RECIPE_2026)
    result = run(pytester)
    result.assert_outcomes(failed=6, passed=1)
    assert lint.lint_file(str(folder / "recipe-2026.yaml")) == []
    said = result.stdout.str()
    for name, (_edit, place) in MISTAKES.items():
        [finding] = [f for f in lint.lint_file(str(folder / name)) if f.severity == lint.ERROR]
        assert finding.place == place
        # The plugin refused the cassette before the test's body, with the same place and line as lint.
        located = f"{folder / name}:{finding.line}: {place}: {finding.problem}"
        assert f"the cassette of this test cannot be loaded:\n{located}" in said, name
    assert "did you mean the interaction's `response`?" in said
    assert "asked more often than recorded (strict): interactions[3] tools/call, 1 more time" in said
    assert lint.lint_file(str(folder / "once.yaml")) == []  # a sound cassette: only the host's repeat is wrong
    assert f"no cassette at {folder / 'missing.yaml'}" in said  # the path the marker's cassette= resolves to


TOLERANT = """
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

with socket.create_server(("127.0.0.1", 0)) as free:
    DOWN = f"http://127.0.0.1:{free.getsockname()[1]}/mcp"  # nothing listens there once it is closed
PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'

# A host that shrugs off a server that fails (it logs and goes on): its test passes, so only the
# plugin can say that the recording it asked for did not happen.
@pytest.mark.mockmcp(server=[sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(3)"])
def test_server_dies_at_start(mockmcp):
    proc = subprocess.Popen(mockmcp.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=mockmcp.env)
    proc.communicate(PING + b"\\n", timeout=60)

@pytest.mark.mockmcp(server=DOWN)
def test_upstream_down(mockmcp):
    post = urllib.request.Request(mockmcp.start_http(), PING, {
        "content-type": "application/json", "accept": "application/json, text/event-stream"})
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(post, timeout=30)
"""


def test_a_recording_the_server_never_answered_fails_its_test_with_why_even_when_the_host_goes_on(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_host=TOLERANT)
    result = run(pytester, "--mockmcp-record-mode=once")
    result.assert_outcomes(passed=2, errors=2)
    out = result.stdout.str()
    for name in ("test_server_dies_at_start", "test_upstream_down"):
        assert f"mockmcp: no recording of {pytester.path / 'cassettes' / 'test_host' / name}.mcp.yaml was kept" in out
    assert "the server exited with status 3 (it failed or crashed)" in out
    assert re.search(r"could not reach http://127\.0\.0\.1:\d+/mcp: cannot connect to", out)
    assert not list((pytester.path / "cassettes" / "test_host").iterdir())  # no cassette, no journal
