"""`mockmcp.recording`: record in the host's process, with `mockmcp record`'s guarantees, and replay what it wrote.

The host is the official SDK's `Client` (legacy and auto); the real server is examples/notes_server.py,
in memory (its `MCPServer` object) or over stdio. A recording is good when replaying it, in process
and over stdio, shows the host what the real server showed it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NOTES_COMMAND, ROOT, child_env, notes_over_http
from mcp import StdioServerParameters
from notes_server import server as notes
from sdk_host import connect, full_session

import mockmcp
from mockmcp.cassette import store

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.xdist_group("inprocess-record"),
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),  # the example server logs so
]

NOTES = NOTES_COMMAND


@pytest.fixture(params=["asyncio", "trio"] if __import__("importlib").util.find_spec("trio") else ["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def session(server: Any, mode: str) -> dict[str, Any]:
    with anyio.fail_after(30):
        async with connect(server, mode) as client:
            return await full_session(client)


def over_stdio(cassette: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mockmcp", "replay", str(cassette)], env=child_env(), cwd=str(ROOT)
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("real", ["memory", "stdio"])
async def test_a_recording_replays_what_the_real_server_showed_in_process_and_over_stdio(
    tmp_path: Path, real: str, mode: str
) -> None:
    cassette = tmp_path / "notes.yaml"
    recording = mockmcp.recording(notes if real == "memory" else NOTES, cassette)
    direct = await session(recording, mode)
    assert recording.recorded and cassette.exists() and not Path(f"{cassette}.journal").exists()
    assert direct["progress"] and direct["missing"][0] is True  # progress and a tool error came
    replay = mockmcp.transport(cassette)
    assert await session(replay, mode) == direct
    assert replay.report is not None and replay.report.strict_ok
    assert await session(over_stdio(cassette), mode) == direct


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_server_over_http_is_recorded_by_its_url(tmp_path: Path, mode: str) -> None:
    cassette = tmp_path / "notes.yaml"
    with notes_over_http() as url:
        recording = mockmcp.recording(url, cassette)
        direct = await session(recording, mode)
    assert store.load(str(cassette)).meta["server"] == [url]
    replay = mockmcp.transport(cassette)
    assert await session(replay, mode) == direct
    assert replay.report is not None and replay.report.strict_ok


async def test_the_modes_once_none_new_and_all_as_in_the_cli(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.yaml"
    with pytest.raises(mockmcp.CassetteError, match="no such cassette, and the mode is none"):
        await session(mockmcp.recording(notes, cassette, mode="none"), "legacy")
    first = mockmcp.recording(notes, cassette)  # once, no cassette: records
    await session(first, "legacy")
    assert first.recorded
    # once, with a cassette: replays it, and never reaches the server (a command that cannot start)
    again = mockmcp.recording(["no-such-server-anywhere"], cassette)
    await session(again, "legacy")
    assert not again.recorded and again.report is not None and again.report.strict_ok
    size = len(store.load(str(cassette)).interactions)
    added = mockmcp.recording(notes, cassette, mode="new")
    await session(added, "auto")  # the other era's session is new: added whole
    assert len(store.load(str(cassette)).interactions) > size
    fresh = mockmcp.recording(notes, cassette, mode="all")
    await session(fresh, "legacy")
    assert len(store.load(str(cassette)).interactions) == size
    with pytest.raises(mockmcp.UsageError, match="sometimes"):
        mockmcp.recording(notes, cassette, mode="sometimes")


async def test_a_second_session_through_one_transport_is_added_to_the_first(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.yaml"
    recording = mockmcp.recording(notes, cassette)
    await session(recording, "legacy")
    await session(recording, "auto")
    assert recording.recorded and recording.sessions == 2
    recorded = store.load(str(cassette))
    assert {i.method for i in recorded.interactions} >= {"initialize", "server/discover"}


async def test_secrets_never_reach_the_journal_or_the_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTES_TOKEN", "remember")  # a word of the note the server reads
    cassette = tmp_path / "notes.yaml"
    recording = mockmcp.recording(notes, cassette, redact_env=("NOTES_TOKEN",), redact=(r"mi[l]k",))
    seen = await session(recording, "legacy")
    assert "remember" in str(seen)  # the host sees the real values
    text = cassette.read_text()
    assert "remember" not in text and "milk" not in text
    assert "[REDACTED:NOTES_TOKEN]" in text and "[REDACTED]" in text
    # Replay applies the same rules to what the host sends: the host's real values still match.
    replay = mockmcp.transport(cassette)
    await session(replay, "legacy")
    assert replay.report is not None and replay.report.missed == 0
    monkeypatch.delenv("NOTES_TOKEN")
    with pytest.raises(mockmcp.UsageError, match="redact_env NOTES_TOKEN: not set"):
        mockmcp.recording(notes, tmp_path / "other.yaml", redact_env=("NOTES_TOKEN",))


async def test_a_server_that_cannot_start_leaves_no_cassette_and_no_journal(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.yaml"
    with pytest.raises(OSError):
        await session(mockmcp.recording(["no-such-server-anywhere"], cassette), "legacy")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_server_that_dies_at_start_leaves_no_cassette_and_raises_why(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.yaml"
    typo = [sys.executable, "-m", "notes_servr"]  # a module name mistyped: Python says so and exits 1
    with pytest.raises(mockmcp.CassetteError) as raised:
        await session(mockmcp.recording(typo, cassette), "legacy")
    assert raised.value.path == str(cassette)
    assert raised.value.problem.startswith("the server answered none of the 1 request the host sent")
    assert "so no cassette was written" in raised.value.problem
    assert list(tmp_path.iterdir()) == []  # no cassette, no journal


async def test_what_cannot_be_a_server_is_told(tmp_path: Path) -> None:
    with pytest.raises(mockmcp.UsageError, match="cannot reach 42 as a server"):
        await session(mockmcp.recording(42, tmp_path / "x.yaml"), "legacy")


KILLED = """
import os, signal, sys
import anyio
from mcp import Client
import mockmcp

async def main():
    async with Client(mockmcp.recording([sys.executable, {server!r}], {cassette!r}), mode="legacy") as client:
        await client.call_tool("read_file", {{"path": "notes.txt"}})
        os.kill(os.getpid(), signal.SIGKILL)

anyio.run(main)
"""


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_host_killed_mid_session_leaves_a_journal_recover_turns_into_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.yaml"
    script = tmp_path / "host.py"
    script.write_text(textwrap.dedent(KILLED.format(server=NOTES[-1], cassette=str(cassette))))
    died = subprocess.run(
        [sys.executable, str(script)], env=child_env(), cwd=str(ROOT), capture_output=True, timeout=60
    )
    assert died.returncode == -signal.SIGKILL, died.stderr.decode()[-2000:]
    assert not cassette.exists() and os.path.exists(f"{cassette}.journal")
    recovered = subprocess.run(
        [sys.executable, "-m", "mockmcp", "recover", str(cassette)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert recovered.returncode == 0, recovered.stderr
    methods = [interaction.method for interaction in store.load(str(cassette)).interactions]
    assert methods[:2] == ["initialize", "notifications/initialized"] and "tools/call" in methods


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # fastmcp's Client runs on asyncio
async def test_fastmcp_records_and_replays_in_process(tmp_path: Path) -> None:
    from fastmcp import Client

    cassette = tmp_path / "notes.yaml"
    for transport in (mockmcp.recording(notes, cassette), mockmcp.transport(cassette)):
        with anyio.fail_after(30):
            async with Client(transport.for_fastmcp()) as client:
                result = await client.call_tool("read_file", {"path": "notes.txt"})
        assert result.content[0].text == "remember to buy milk"
    assert transport.report is not None and transport.report.missed == 0 and transport.report.strict_ok


async def test_one_recording_records_one_session_at_a_time(tmp_path: Path) -> None:
    recording = mockmcp.recording(notes, tmp_path / "notes.yaml")
    async with recording:
        with pytest.raises(mockmcp.UsageError, match="already in a session"):
            await recording.__aenter__()


async def test_an_sdk_transport_serves_one_session_and_a_second_is_told(tmp_path: Path) -> None:
    from mcp.client.stdio import stdio_client

    recording = mockmcp.recording(
        stdio_client(StdioServerParameters(command=NOTES[0], args=NOTES[1:])), tmp_path / "x.yaml"
    )
    await session(recording, "legacy")
    with pytest.raises(mockmcp.UsageError, match="serves one session, and this is the second"):
        await session(recording, "legacy")


@pytest.mark.parametrize(("timing", "factor"), [("none", 0.0), ("recorded", 1.0), (0.5, 0.5), ("2", 2.0)])
def test_timing_takes_what_replay_takes(timing: object, factor: float) -> None:
    assert mockmcp.transport("cassettes/notes.yaml", timing=timing).timing == factor  # type: ignore[arg-type]


@pytest.mark.parametrize("timing", ["fast", -1.0, float("inf"), None])
def test_a_timing_replay_cannot_take_is_refused_at_once(timing: object) -> None:
    with pytest.raises(mockmcp.UsageError, match=r"timing=.* is neither none, recorded nor a factor"):
        mockmcp.transport("cassettes/notes.yaml", timing=timing)  # type: ignore[arg-type]
