"""Cassettes that travel: a host project recorded in one folder replays from a copy in another.

The server speaks in absolute paths (`tests/servers/files.py`, like the official filesystem server):
it lists its files by their absolute paths and reads one only by its absolute path. The host's test,
run by pytester with the SDK as the host, records with the plugin (which writes the project's folder
as `${PROJECT}`), then the project is copied elsewhere and the copy's test replays with no `ignore`.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT
from test_pytest_plugin import run

pytest_plugins = ["pytester"]

HOST = """
import sys
from pathlib import Path

import pytest
from mcp import Client

DATA = Path(__file__).parent / "data"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.mockmcp(server=[sys.executable, str(Path(__file__).parent / "files_server.py"), str(DATA)])
async def test_reads_the_file_it_lists(mockmcp):
    async with Client(mockmcp.stdio_params) as client:
        listed = await client.call_tool("list_files", {})
        [path] = listed.structured_content["result"]
        read = await client.call_tool("read_text_file", {"path": path})
    assert path == str(DATA / "todo.txt")
    assert read.content[0].text == "buy milk"
"""


def test_a_cassette_recorded_in_one_folder_replays_from_a_copy_in_another(pytester: pytest.Pytester) -> None:
    first = pytester.path / "first"
    (first / "data").mkdir(parents=True)
    (first / "data" / "todo.txt").write_text("buy milk")
    (first / "test_files.py").write_text(HOST)
    shutil.copy(ROOT / "tests" / "servers" / "files.py", first / "files_server.py")
    run(pytester, str(first), "--rootdir", str(first), "--mockmcp-record-mode=once").assert_outcomes(passed=1)
    [cassette] = (first / "cassettes").rglob("*.yaml")
    text = cassette.read_text()
    assert str(first) not in text and str(pytester.path) not in text  # no path of the recording machine
    assert "${PROJECT}/data/todo.txt" in text and "substitute: [PROJECT]" in text

    second = pytester.path / "second"
    shutil.copytree(first, second, ignore=shutil.ignore_patterns("__pycache__"))
    (second / "files_server.py").unlink()  # replay needs no server
    run(pytester, str(second), "--rootdir", str(second)).assert_outcomes(passed=1)
