"""The official SDK host drives a real SDK server through `mockmcp record`, then the new cassette replays.

For both eras, the host must see the same through the recorder as talking to the server directly,
step for step, and the same again when the recorded cassette is replayed without the server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NOTES_COMMAND, NOTES_SESSION, ROOT, child_env
from mcp import StdioServerParameters
from sdk_host import connect, full_session, text_of

from mockmcp.cassette import store as cassette

pytestmark = pytest.mark.anyio

SERVER = NOTES_COMMAND
BIG = 200_000


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


async def session(server: StdioServerParameters, mode: str) -> dict[str, Any]:
    logs: list[Any] = []

    with anyio.fail_after(60):
        async with connect(server, mode, logs=logs) as client:
            seen = await full_session(client)
            big = await client.call_tool("big", {"size": BIG})
            seen["big"] = (len(text_of(big)), text_of(big)[:32])
            seen["protocol"] = client.protocol_version
    seen["logs"] = logs
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_recorded_session_equals_direct_and_replays_the_same(mode: str, tmp_path: Path) -> None:
    out = tmp_path / "notes.yaml"
    direct = await session(params(*SERVER), mode)
    recorded = await session(
        params(sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--record-mode", "rewrite", "--", *SERVER),
        mode,
    )
    assert recorded == direct
    assert {key: direct[key] for key in NOTES_SESSION} == NOTES_SESSION
    assert direct["big"][0] == BIG and direct["logs"] == ["counted 1", "counted 2"]

    loaded = cassette.load(str(out))
    assert loaded.meta["era"] == ("handshake" if mode == "legacy" else "stateless")
    report = tmp_path / "report.json"
    replayed = await session(params(sys.executable, "-m", "mockmcp", "replay", str(out), "--report", str(report)), mode)
    assert replayed == direct
    summary = json.loads(report.read_text())
    assert summary["strict_ok"] and summary["mismatches"] == [], summary


# The notes server in a shell that ignores SIGTERM (as its children do) and lingers after it: ended by SIGKILL only.
SLOW_TO_EXIT = ["sh", "-c", 'trap "" TERM; "$@"; sleep 20', "sh", *SERVER]


@pytest.mark.slow
async def test_the_sdk_hosts_shutdown_cannot_lose_the_recording_of_a_server_slow_to_exit(tmp_path: Path) -> None:
    """The SDK's stdio client ends a server by closing stdin, waiting 2 s, SIGTERM to the process group, 2 s more,
    SIGKILL. The server here outlives all but the kill (a shell that ignores SIGTERM, and sleeps), and the recorder
    waits longer than that (`--grace 5`) before it would stop it: the SDK kills the recorder first, and the
    cassette was saved when the host left. A later start by the same host records its session after that one."""
    out = tmp_path / "slow.yaml"
    record = ["-m", "mockmcp", "record", "-o", str(out), "--grace", "5", "--", *SLOW_TO_EXIT]
    with anyio.fail_after(60):
        async with connect(params(sys.executable, *record), "legacy") as client:
            answer = await client.call_tool("read_file", {"path": "notes.txt"})
    assert text_of(answer) == "remember to buy milk"
    recorded = cassette.load(str(out)).interactions  # the journal may stay beside it: the SDK killed the recorder
    again = ["-m", "mockmcp", "record", "-o", str(out), "--", *SERVER]  # this host starts the server once more
    with anyio.fail_after(60):
        async with connect(params(sys.executable, *again), "legacy") as client:
            await client.call_tool("read_file", {"path": "notes.txt"})
    assert not Path(f"{out}.journal").exists()  # what the killed recorder left went into the cassette first
    assert [i.session for i in cassette.load(str(out)).interactions] == [0] * len(recorded) + [1] * len(recorded)
    assert [i.method for i in recorded if i.method] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/list",  # the SDK's client lists the tools after a call, to check its output against its schema
    ]
    assert recorded[-2].params == {"name": "read_file", "arguments": {"path": "notes.txt"}}
