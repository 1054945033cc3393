"""The plugin's `mockmcp.transport`: a host's test replays (and records) in its own process, judged as over stdio.

Each test writes a host's test module, run by pytester; every host test runs twice, once with the
host launching `mockmcp.stdio_params` and once connecting to `mockmcp.transport`, and the two
verdicts must say the same.
"""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import SHIPPED
from test_pytest_plugin import NOTES_SERVER, run

from mockmcp.cassette import store

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.xdist_group("inprocess-plugin")

# A host's tests, each run both ways: the host launches the replay, or replays in its own process.
HOST = """
import pytest
from mcp import Client, MCPError
from mcp.types import ElicitResult
from sdk_host import connect, full_session

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.fixture(params=["stdio", "inprocess"])
def server(request, mockmcp):
    return mockmcp.stdio_params if request.param == "stdio" else mockmcp.transport

pytestmark = [pytest.mark.anyio, pytest.mark.mockmcp(cassette="notes-session.yaml")]

async def test_whole_session(server):
    async with connect(server, "legacy") as client:
        seen = await full_session(client)
    assert seen["progress"]

async def test_misses(server):
    async with connect(server, "legacy") as client:
        await client.call_tool("read_file", {"path": "notes.txt"})
        with pytest.raises(MCPError):
            await client.call_tool("read_file", {"path": "elsewhere.txt"})

async def test_answers_otherwise(server):
    async def decline(_context, _params):
        return ElicitResult(action="decline")

    async with Client(server, mode="legacy", elicitation_callback=decline) as client:
        await client.call_tool("delete_file", {"path": "notes.txt"})

@pytest.mark.mockmcp(strict=True)
async def test_strict(server):
    async with connect(server, "legacy") as client:
        await client.call_tool("read_file", {"path": "notes.txt"})

@pytest.mark.mockmcp(closed_world=True)
async def test_closed_world(server):
    async with connect(server, "legacy") as client:
        with pytest.raises(MCPError, match="closed world: no tool 'rm_rf' is answered here; the cassette answers: "):
            await client.call_tool("rm_rf", {})
"""


def _verdicts(text: str) -> dict[str, str]:
    """Each failed test's verdict, by test and way, with what differs between the ways (the test's id) made alike."""
    found: dict[str, str] = {}
    for match in re.finditer(r"_+ (test_\w+)\[(stdio|inprocess)\] _+\n(.*?)(?=\n_{5,} |\n=+ )", text, re.S):
        name, way, body = match.groups()
        body = re.sub(r"(the session as a timeline: )\S+", r"\1PAGE", body)  # each test's page has a folder of its own
        found[f"{name}[{way}]"] = body.replace(f"[{way}]", "[WAY]")
    return found


def test_a_miss_a_differing_answer_and_strict_fail_a_test_in_process_as_over_stdio(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=HOST)
    target = pytester.path / "cassettes" / "test_host" / "notes-session.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=8)
    verdicts = _verdicts(result.stdout.str())
    assert sorted(verdicts) == [
        f"{name}[{way}]"
        for name in ("test_answers_otherwise", "test_closed_world", "test_misses", "test_strict")
        for way in ("inprocess", "stdio")
    ]
    for name in ("test_misses", "test_answers_otherwise", "test_strict", "test_closed_world"):
        assert verdicts[f"{name}[inprocess]"] == verdicts[f"{name}[stdio]"], name
    assert 'arguments.path: recorded "notes.txt", incoming "elsewhere.txt"' in verdicts["test_misses[inprocess]"]
    assert "elicitation/create" in verdicts["test_answers_otherwise[inprocess]"]
    assert "never asked for (strict): interactions[" in verdicts["test_strict[inprocess]"]
    # the marker closed the world: the call the host made of a tool the cassette does not answer fails the test
    assert "closed world, and answers no tool 'rm_rf'" in verdicts["test_closed_world[inprocess]"]


RECORDING_HOST = f"""
import sys
import pytest
from sdk_host import connect, full_session

SERVER = [sys.executable, {NOTES_SERVER!r}]

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.fixture
def mockmcp_server(request):
    if "memory" in request.node.name:
        from notes_server import server
        return server
    return SERVER

@pytest.mark.anyio
@pytest.mark.parametrize("real", ["stdio", "memory"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_session(mockmcp, mode, real):
    async with connect(mockmcp.transport, mode) as client:
        seen = await full_session(client)
    assert seen["progress"]

from notes_server import server as notes

@pytest.mark.anyio
@pytest.mark.mockmcp(servers={{"stdio": SERVER, "memory": notes}})
async def test_two_servers(mockmcp):
    for name in ("stdio", "memory"):
        async with connect(mockmcp[name].transport, "legacy") as client:
            seen = await full_session(client)
        assert seen["progress"]

@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_replayed_over_stdio(mockmcp, mode):
    async with connect(mockmcp.stdio_params, mode) as client:
        seen = await full_session(client)
    assert seen["progress"]
"""


@pytest.mark.slow
def test_recorded_in_process_from_a_command_and_from_a_server_object_replays_both_ways(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_host=RECORDING_HOST)
    recorded = run(pytester, "--mockmcp-record-mode=once", "-k", "test_session or test_two_servers")
    recorded.assert_outcomes(passed=5)
    folder = pytester.path / "cassettes" / "test_host"
    names = sorted(path.name for path in folder.iterdir())
    sessions = [f"test_session[{mode}-{real}].mcp.yaml" for mode in ("auto", "legacy") for real in ("memory", "stdio")]
    assert names == [*sessions, "test_two_servers"]
    assert sorted(path.name for path in (folder / "test_two_servers").iterdir()) == ["memory.yaml", "stdio.yaml"]
    for mode in ("legacy", "auto"):
        memory = store.load(str(folder / f"test_session[{mode}-memory].mcp.yaml"))
        assert memory.meta["server"] == ["MCPServer 'notes' in process"]
        over_stdio = store.load(str(folder / f"test_session[{mode}-stdio].mcp.yaml"))
        assert over_stdio.meta["server"][0] == "python"  # made portable, as the plugin's recordings over stdio
        # The same server, in memory or over stdio: the same exchanges.
        assert [i.method for i in memory.interactions] == [i.method for i in over_stdio.interactions]
    # Each recording replays in process (a run without --mockmcp-record replays) and over stdio.
    replayed = run(pytester, "-k", "test_session or test_two_servers")
    replayed.assert_outcomes(passed=5)
    for mode in ("legacy", "auto"):
        for real in ("memory", "stdio"):
            shutil.copyfile(
                folder / f"test_session[{mode}-{real}].mcp.yaml", folder / f"test_replayed_over_stdio[{mode}].mcp.yaml"
            )
            run(pytester, "-k", f"test_replayed_over_stdio and {mode}").assert_outcomes(passed=1)
