"""Scripted answers, `optional` and the closed world, met by the official SDK's host over a real `mockmcp replay`.

(The scripted list's own SDK test is the cookbook's recipe "scripted", replayed in both eras by test_cookbook.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from sdk_host import text_of
from test_faults_sdk import call, cassette_file, client, ok, replaying

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


async def test_a_closed_world_fails_a_call_of_a_tool_it_does_not_answer_at_once_over_stdio(tmp_path: Path) -> None:
    path = cassette_file(tmp_path, call("fetch", response=ok("page")))
    server = replaying(path)
    server.args.append("--closed-world")
    with anyio.fail_after(30):
        async with Client(server, mode="legacy") as host:
            with pytest.raises(MCPError) as raised:
                await host.call_tool("delete", {})
            assert text_of(await host.call_tool("fetch", {})) == "page"
    said = raised.value.error
    assert said.message == "mockmcp: closed world: no tool 'delete' is answered here; the cassette answers: fetch"
    assert said.data == {"tool": "delete", "answered": ["fetch"]}


async def test_a_closed_world_in_process_says_it_in_the_cassette_or_by_the_transport(tmp_path: Path) -> None:
    import mockmcp

    path = cassette_file(tmp_path, call("fetch", response=ok("page")), call("search", response=ok("found")))
    text = path.read_text()
    said = []
    for closed, how in ((True, {}), (False, {"closed_world": True})):
        path.write_text(text.replace("version: 1\n", "version: 1\nmeta: {closed_world: true}\n") if closed else text)
        with anyio.fail_after(30):
            async with Client(mockmcp.transport(str(path), log=io.StringIO(), **how), mode="legacy") as host:
                with pytest.raises(MCPError) as raised:
                    await host.call_tool("delete", {})
        said.append(raised.value.error.message)
    assert said == ["mockmcp: closed world: no tool 'delete' is answered here; the cassette answers: fetch, search"] * 2
