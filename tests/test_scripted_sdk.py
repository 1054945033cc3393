"""Scripted answers, `optional` and the closed world, met by the official SDK's host over a real `mockmcp replay`.

(The scripted list's own SDK test is the cookbook's recipe "scripted", replayed in both eras by test_cookbook.)
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from sdk_host import text_of
from test_faults_sdk import call, cassette_file, client, ok

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("optional", [True, False])
async def test_an_optional_call_the_host_never_makes_is_not_unplayed(tmp_path: Path, optional: bool) -> None:
    knobs = "optional: true" if optional else ""
    path = cassette_file(tmp_path, call("fetch", response=ok("page")), call("delete", knobs, ok("gone")))
    report = tmp_path / "report.json"
    with anyio.fail_after(30):
        async with client(path, report) as host:
            assert text_of(await host.call_tool("fetch", {})) == "page"
    said = json.loads(report.read_text())
    assert said["strict_ok"] is optional
    assert said["unplayed"] == ([] if optional else [{"interaction": 4, "method": "tools/call"}])
