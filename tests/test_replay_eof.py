"""Replay ends at the host's EOF once nothing it could still send is due: a cancelled delay is not waited for."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import ROOT, child_env
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT

pytestmark = pytest.mark.anyio

CASSETTE = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response:
    result:
      protocolVersion: '2025-11-25'
      capabilities: {tools: {}}
      serverInfo: {name: slow, version: '1'}
- notification: {method: notifications/initialized}
- request: {method: tools/call, params: {name: slow, arguments: {}}}
  delay: 30
  response: {result: {content: [{type: text, text: late}], isError: false}}
"""


async def test_a_request_cancelled_behind_a_delay_does_not_keep_replay_alive_after_eof(tmp_path: Path) -> None:
    path = tmp_path / "slow.yaml"
    path.write_text(CASSETTE)
    report = tmp_path / "report.json"
    args = ["-m", "mockmcp", "replay", str(path), "--report", str(report)]
    server = StdioServerParameters(command=sys.executable, args=args, env=child_env(), cwd=str(ROOT))
    # The SDK closes stdin, waits 2 s for the server to exit, then sends SIGTERM: a replay still
    # waiting out the 30 s delay would be stopped by the signal, so the report says which it was.
    with anyio.fail_after(25):
        async with Client(server, mode="legacy") as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("slow", {}, read_timeout_seconds=0.3)
            closing = time.monotonic()
        closed_after = time.monotonic() - closing
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert report.exists(), "replay was stopped before it wrote its report: it did not end at EOF"
    assert closed_after < 2, f"the host waited {closed_after:.1f} s for replay to exit"
