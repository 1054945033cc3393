"""Replay ends at the host's EOF once nothing it could still send is due: a cancelled delay is not waited for."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT
from test_faults_sdk import call, cassette_file, client, ok

pytestmark = pytest.mark.anyio


async def test_a_request_cancelled_behind_a_delay_does_not_keep_replay_alive_after_eof(tmp_path: Path) -> None:
    path = cassette_file(tmp_path, call("slow", "delay: 30", ok("late")))
    report = tmp_path / "report.json"
    # The SDK closes stdin, waits 2 s for the server to exit, then sends SIGTERM: a replay still
    # waiting out the 30 s delay would be stopped by the signal instead of ending on its own.
    with anyio.fail_after(25):
        async with client(path, report) as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("slow", {}, read_timeout_seconds=0.3)
            closing = time.monotonic()
        closed_after = time.monotonic() - closing
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert report.exists(), "replay was stopped before it wrote its report: it did not end at EOF"
    assert closed_after < 2, f"the host waited {closed_after:.1f} s for replay to exit"
