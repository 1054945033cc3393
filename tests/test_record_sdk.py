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
