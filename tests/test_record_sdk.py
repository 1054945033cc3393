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
from conftest import NOTES_SESSION, ROOT, child_env
from mcp import StdioServerParameters
from sdk_host import connect, full_session, text_of

from mockmcp.cassette import store as cassette

pytestmark = pytest.mark.anyio

SERVER = [sys.executable, str(ROOT / "examples" / "notes_server.py")]
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


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_recorded_session_equals_direct_and_replays_the_same(mode: str, tmp_path: Path) -> None:
    out = tmp_path / "notes.yaml"
    direct = await session(params(*SERVER), mode)
    recorded = await session(
        params(sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--mode", "all", "--", *SERVER), mode
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


async def tally(server: StdioServerParameters, words: list[str]) -> list[str]:
    """Read the stateful server's list, then add each word and read it again: every state, in order."""
    with anyio.fail_after(60):
        async with connect(server, "legacy") as client:
            states = [text_of(await client.call_tool("read", {}))]
            for word in words:
                await client.call_tool("add", {"word": word})
                states.append(text_of(await client.call_tool("read", {})))
    return states


async def test_record_mode_new_keeps_every_state_of_a_stateful_server(tmp_path: Path) -> None:
    """Recorded twice with --mode new, the second session longer: replay gives back every state in order."""
    out, stderr = tmp_path / "tally.yaml", tmp_path / "stderr"
    tally_server = str(ROOT / "tests" / "servers" / "tally.py")
    # A shell keeps the recorder's stderr (its notes), which the SDK host does not show.
    script = '"$0" -m mockmcp record -o "$1" --mode new -- "$0" "$2" 2>>"$3"'
    recorder = params("sh", "-c", script, sys.executable, str(out), tally_server, str(stderr))
    assert await tally(recorder, ["a"]) == ["(empty)", "a"]
    while not out.exists() or Path(f"{out}.journal").exists():  # the recorder saves after the host leaves
        await anyio.sleep(0.02)
    first = len(cassette.load(str(out)).interactions)
    growing = ["(empty)", "a", "a, b", "a, b, c"]
    assert await tally(recorder, ["a", "b", "c"]) == growing
    with anyio.fail_after(10):
        while len(cassette.load(str(out)).interactions) == first or Path(f"{out}.journal").exists():
            await anyio.sleep(0.02)
    assert "tools/call read was answered otherwise than in interactions[" in stderr.read_text()
    reads = [
        (i.session, i.response["result"]["content"][0]["text"])
        for i in cassette.load(str(out)).interactions
        if i.params == {"name": "read", "arguments": {}} and i.response is not None
    ]
    assert reads == [(0, "(empty)"), (0, "a"), *((1, state) for state in growing)]

    report = tmp_path / "report.json"
    replay = params(sys.executable, "-m", "mockmcp", "replay", str(out), "--report", str(report))
    assert await tally(replay, ["a", "b", "c"]) == growing
    summary = json.loads(report.read_text())
    assert summary["misses"] == [] and summary["repeats"] == [] and summary["mismatches"] == []
    assert await tally(replay, ["a"]) == ["(empty)", "a"]  # the first session still replays as recorded
