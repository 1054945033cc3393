"""`mockmcp.calls` over every transport a host meets replay by, with the official SDK's host: in process (read
live, mid-session), over stdio and over HTTP (a replay in another process: read once it wrote its report, when
the host closed the session; before, the error says so), and intercepted (live)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import anyio
import pytest
from conftest import ROOT, SHIPPED, child_env, served
from mcp import StdioServerParameters
from sdk_host import connect

import mockmcp
from mockmcp.errors import UsageError

pytest_plugins = ["pytester"]

NOTES = SHIPPED / "notes-session.yaml"


async def read_twice(client: object) -> None:
    for _ in range(2):
        await client.call_tool("read_file", {"path": "notes.txt"})  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_in_process_the_calls_are_read_live_mid_session() -> None:
    transport = mockmcp.transport(str(NOTES), log=io.StringIO())
    with anyio.fail_after(30):
        async with connect(transport, "legacy") as client:
            await client.call_tool("read_file", {"path": "notes.txt"})
            mockmcp.calls(transport)(tool="read_file", arguments={"path": "notes.txt"}).assert_called(times=1)
            await client.call_tool("read_file", {"path": "notes.txt"})
            assert mockmcp.calls(transport)(tool="read_file").count == 2
    made = mockmcp.calls(transport)
    assert made(tool="read_file").args == [{"path": "notes.txt"}] * 2 and not made(tool="delete_file").called


@pytest.mark.anyio
async def test_over_stdio_the_calls_are_read_once_the_host_closed_the_session(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ["-m", "mockmcp", "replay", str(NOTES), "--report", str(report)]
    server = StdioServerParameters(command=sys.executable, args=args, env=child_env(), cwd=str(ROOT))
    with anyio.fail_after(30):
        async with connect(server, "legacy") as client:
            await read_twice(client)
            with pytest.raises(UsageError, match="writes it when the host closes the session"):
                mockmcp.calls(str(report))
    rule = {"arguments.path": {"regex": r".*\.txt"}}
    assert mockmcp.calls(str(report))(tool="read_file", arguments={"path": ""}, match=rule).count == 2


@pytest.mark.anyio
async def test_over_http_the_calls_are_read_once_the_replay_stopped(tmp_path: Path) -> None:
    with served(NOTES, tmp_path) as server:
        with anyio.fail_after(30):
            async with connect(server.url, "legacy") as client:
                await read_twice(client)
        assert not server.report.exists()  # the HTTP replay serves on: its report comes when it stops
        made = mockmcp.calls(server.stop())
    assert made(tool="read_file").count == 2 and made(method="initialize").count == 1


def test_intercepted_the_calls_are_read_live(tmp_path: Path) -> None:
    (tmp_path / "notes-server.yaml").write_bytes(NOTES.read_bytes())

    async def host() -> None:
        with anyio.fail_after(30):
            async with connect(StdioServerParameters(command="notes-server"), "legacy") as client:
                await client.call_tool("read_file", {"path": "notes.txt"})
                assert mockmcp.calls(interception)(tool="read_file").count == 1  # mid-session
                await client.call_tool("read_file", {"path": "notes.txt"})

    with mockmcp.intercepting(str(tmp_path)) as interception:
        anyio.run(host)
    assert mockmcp.calls(interception)(tool="read_file").count == 2


# A host's tests using the plugin's `mockmcp.calls`: in process mid-session, over stdio and over HTTP after the
# session, and one whose assertion fails, to show what its failure says.
HOST = """
import pytest
from sdk_host import connect

pytest_plugins = ["pytester"]

@pytest.fixture
def anyio_backend():
    return "asyncio"

pytestmark = [pytest.mark.anyio, pytest.mark.mockmcp(cassette="notes-session.yaml")]

async def test_in_process(mockmcp):
    async with connect(mockmcp.transport, "legacy") as client:
        await client.call_tool("read_file", {"path": "notes.txt"})
        mockmcp.calls(tool="read_file").assert_called(times=1)

async def test_stdio(mockmcp):
    async with connect(mockmcp.stdio_params, "legacy") as client:
        await client.call_tool("read_file", {"path": "notes.txt"})
    assert mockmcp.calls(tool="read_file").args == [{"path": "notes.txt"}]

async def test_http(mockmcp):
    async with connect(mockmcp.start_http(), "legacy") as client:
        await client.call_tool("read_file", {"path": "notes.txt"})
    assert mockmcp.calls(tool="read_file").called

async def test_never_deletes(mockmcp):
    async with connect(mockmcp.transport, "legacy") as client:
        await client.call_tool("read_file", {"path": "notes.txt"})
        mockmcp.calls(tool="read_file").assert_not_called()
"""


@pytest.mark.slow
def test_the_plugins_calls_over_every_transport_and_what_a_failure_says(pytester: pytest.Pytester) -> None:
    from test_pytest_plugin import run

    pytester.makepyfile(test_host=HOST)
    target = pytester.path / "cassettes" / "test_host" / "notes-session.yaml"
    target.parent.mkdir(parents=True)
    target.write_bytes(NOTES.read_bytes())
    result = run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: expected no tool 'read_file', found 1",
            "*the host made * calls:",
            '*  [*] 2. read_file({"path":"notes.txt"})',
        ]
    )
