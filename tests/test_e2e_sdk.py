"""The official MCP SDK as a real host, talking to `mockmcp replay` over stdio.

Both connection modes: `legacy` (the initialize handshake) and the default `auto` (probe with
server/discover, fall back to initialize). Each test reads the replay's JSON report to check what
the engine saw, besides what the host saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MOCKMCP, NOTES_SESSION, ROOT, SHIPPED, child_env
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult, Implementation
from sdk_host import connect, elicit, full_session, roots, sampling, text_of

pytestmark = pytest.mark.anyio

LEGACY = SHIPPED / "notes-session.yaml"  # recorded from examples/notes_server.py by examples/sdk_host.py
MODERN = SHIPPED / "notes-session-2026.yaml"


def replay(cassette: Path, report: Path, *extra: str) -> StdioServerParameters:
    args = ["-m", "mockmcp", "replay", str(cassette), "--report", str(report), *extra]
    return StdioServerParameters(command=sys.executable, args=args, env=child_env(), cwd=str(ROOT))


@pytest.mark.parametrize(("mode", "cassette"), [("legacy", LEGACY), ("auto", MODERN)])
async def test_host_sees_the_whole_recorded_session(mode: str, cassette: Path, tmp_path: Path) -> None:
    logs: list[Any] = []

    report = tmp_path / "report.json"
    with anyio.fail_after(30):
        async with connect(replay(cassette, report), mode, logs=logs) as client:
            seen = await full_session(client)
    assert {key: seen[key] for key in NOTES_SESSION} == NOTES_SESSION
    assert "read_file" in seen["tools"]
    assert logs == ["counted 1", "counted 2"]
    summary = json.loads(report.read_text())
    assert summary["misses"] == [] and summary["unplayed"] == [] and summary["mismatches"] == []
    assert summary["played"] == summary["interactions"]


async def test_other_host_config_gets_the_same_answers(tmp_path: Path) -> None:
    """Different client info, capabilities and progress tokens on every call: same answers."""
    report = tmp_path / "report.json"
    info = Implementation(name="another-host", version="9.9.9")
    with anyio.fail_after(30):
        async with Client(
            replay(MODERN, report),
            client_info=info,
            sampling_callback=sampling,
            elicitation_callback=elicit,
            list_roots_callback=roots,
            log_level="debug",
        ) as client:
            tokens: list[Any] = []

            async def progress(value: float, total: float | None, message: str | None) -> None:
                tokens.append(value)

            # A progress callback on every call changes each request's _meta.progressToken.
            first = await client.call_tool("read_file", {"path": "notes.txt"}, progress_callback=progress)
            seen = await full_session(client)
    assert text_of(first) == "remember to buy milk"
    assert {key: seen[key] for key in NOTES_SESSION} == NOTES_SESSION
    summary = json.loads(report.read_text())
    assert summary["misses"] == []
    # read_file was asked twice and recorded once; the SDK also lists tools again after its first call.
    assert {(r["interaction"], r["method"]) for r in summary["repeats"]} == {(1, "tools/list"), (2, "tools/call")}


PROMPTS = """
version: 1
interactions:
- request: {id: 0, method: initialize, params: {protocolVersion: '2025-11-25'}}
  response:
    result:
      protocolVersion: '2025-11-25'
      capabilities: {prompts: {listChanged: false}}
      serverInfo: {name: prompts, version: '1'}
- notification: {method: notifications/initialized}
- request: {id: 1, method: prompts/get, params: {name: left_out}}
  response: {result: {messages: [{role: user, content: {type: text, text: recorded without arguments}}]}}
- request: {id: 2, method: prompts/get, params: {name: sent_empty, arguments: {}}}
  response: {result: {messages: [{role: user, content: {type: text, text: recorded with empty arguments}}]}}
"""


async def test_prompt_arguments_empty_or_left_out_match_the_other_recording(tmp_path: Path) -> None:
    """The SDK sends `arguments: {}` when given {}, and leaves them out when given none; fastmcp always leaves
    them out. A cassette recorded either way answers the host that does the other."""
    cassette = tmp_path / "prompts.yaml"
    cassette.write_text(PROMPTS)
    report = tmp_path / "report.json"
    with anyio.fail_after(30):
        async with connect(replay(cassette, report), "legacy") as client:
            given_empty = await client.get_prompt("left_out", {})
            left_out = await client.get_prompt("sent_empty")
    assert given_empty.messages[0].content.text == "recorded without arguments"  # type: ignore[union-attr]
    assert left_out.messages[0].content.text == "recorded with empty arguments"  # type: ignore[union-attr]
    summary = json.loads(report.read_text())
    assert summary["misses"] == [] and summary["unplayed"] == []


async def test_legacy_cassette_lets_an_auto_host_fall_back(tmp_path: Path) -> None:
    """A handshake-era cassette answers server/discover -32601, as such a server does; the host falls back."""
    report = tmp_path / "report.json"
    with anyio.fail_after(30):
        async with Client(replay(SHIPPED / "notes.yaml", report)) as client:
            assert client.protocol_version == "2025-11-25"
            result = await client.call_tool("read_file", {"path": "notes.txt"})
    assert text_of(result) == "remember to buy milk"
    summary = json.loads(report.read_text())
    assert [m["method"] for m in summary["misses"]] == ["server/discover"]
    assert summary["misses"][0]["code"] == -32601


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_shipped_classic_session(mode: str, tmp_path: Path) -> None:
    cassette = SHIPPED / ("notes.yaml" if mode == "legacy" else "notes-2026.yaml")
    with anyio.fail_after(30):
        async with Client(replay(cassette, tmp_path / "r.json"), mode=mode, elicitation_callback=elicit) as client:
            tools = (await client.list_tools()).tools
            found = await client.call_tool("read_file", {"path": "notes.txt"})
            missing = await client.call_tool("read_file", {"path": "missing.txt" if mode == "legacy" else "nope.txt"})
            if mode == "legacy":
                with pytest.raises(MCPError) as raised:
                    # The SDK has no public call for a mistyped method; its dispatcher sends one as is.
                    params = {"name": "read_file", "arguments": {"path": "notes.txt"}}
                    await client.session._dispatcher.send_raw_request("tools/cal", params)
                assert raised.value.error.code == -32601
            else:
                deleted = await client.call_tool("delete_file", {"path": "notes.txt"})
                assert text_of(deleted) == "deleted notes.txt"
    read_file = next(tool for tool in tools if tool.name == "read_file")
    assert list(read_file.input_schema["properties"]) == ["path"]
    assert text_of(found) == "remember to buy milk"
    assert missing.is_error is True


async def test_unmatched_call_is_a_protocol_error_that_explains_itself(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with anyio.fail_after(30):
        async with Client(replay(SHIPPED / "notes.yaml", report), mode="legacy") as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("read_file", {"path": "note.txt"})
            still = await client.call_tool("read_file", {"path": "notes.txt"})
    error = raised.value.error
    assert error.code == -32099
    assert "no recorded interaction matches" in error.message
    assert error.data["closest"] == "interactions[3]"
    assert any("arguments.path" in d and "notes.txt" in d and "note.txt" in d for d in error.data["differences"])
    assert text_of(still) == "remember to buy milk"
    miss = json.loads(report.read_text())["misses"][0]
    assert "--ignore 'arguments.path'" in miss["explanation"]


def test_the_example_host_replays_the_time_server_cassette() -> None:
    """docs/cli.md's recording of the time server, replay half: cassettes/time.yaml came from mcp-server-time."""
    convert = '{"source_timezone": "Europe/London", "time": "12:00", "target_timezone": "Asia/Tokyo"}'
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "sdk_host.py"),
            "--call",
            "convert_time",
            convert,
            "--call",
            "get_current_time",
            '{"timezone": "Mars/Olympus"}',
            "--",
            *MOCKMCP,
            "replay",
            "cassettes/time.yaml",
            "--strict",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "connected: protocol 2026-07-28" in proc.stdout
    assert '"time_difference": "+9.0h"' in proc.stdout
    assert "tool error: Error executing tool get_current_time: Invalid timezone" in proc.stdout
    assert "played 4 of 4 interactions; 0 missed" in proc.stderr


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_host_answering_an_elicitation_otherwise_fails_strict(action: str, tmp_path: Path) -> None:
    """The host's answers count: recorded with accept, a host whose user declines fails --strict (exit 1)."""
    status, stderr = tmp_path / "status", tmp_path / "stderr"
    # A shell between the host and the replay keeps the replay's exit status, which the SDK never reports.
    script = '"$0" -m mockmcp replay "$1" --strict 2>"$2"; echo $? >"$3"'
    server = StdioServerParameters(
        command="sh",
        args=["-c", script, sys.executable, str(LEGACY), str(stderr), str(status)],
        env=child_env(),
        cwd=str(ROOT),
    )

    async def answer(_ctx: Any, _params: Any) -> ElicitResult:
        return (
            ElicitResult(action="accept", content={"confirm": True})
            if action == "accept"
            else ElicitResult(action="decline")
        )

    with anyio.fail_after(30):
        async with Client(
            server, mode="legacy", sampling_callback=sampling, elicitation_callback=answer, list_roots_callback=roots
        ) as client:
            await full_session(client)
        while not status.exists() or not status.read_text().strip():
            await anyio.sleep(0.02)
    log = stderr.read_text()
    if action == "accept":
        assert status.read_text().strip() == "0", log
        assert "0 answers differed" in log
        return
    assert status.read_text().strip() == "1", log
    assert "1 answers differed" in log
    assert "  answer differed: elicitation/create in interactions[6] tools/call delete_file" in log
    assert '    - result.action: recorded "accept", the host\'s "decline"' in log
    assert "--strict: the session had 1 answer that differed" in log


async def test_a_host_without_a_roots_callback_is_not_sent_roots_list(tmp_path: Path) -> None:
    """The SDK declares roots only with a list_roots_callback: replay must not ask such a host for roots."""
    report = tmp_path / "report.json"
    with anyio.fail_after(30):
        async with Client(
            replay(LEGACY, report), mode="legacy", sampling_callback=sampling, elicitation_callback=elicit
        ) as client:
            result = await client.call_tool("list_roots", {})
    assert text_of(result) == "file:///home/user/notes"  # the interaction goes on as recorded
    summary = json.loads(report.read_text())
    [withheld] = summary["withheld"]
    assert (withheld["method"], withheld["capability"]) == ("roots/list", "roots")
    assert summary["capabilities"] == [
        "the host does not declare roots, which the recording's host did (interactions[0] initialize)"
    ]
    assert summary["mismatches"] == [] and summary["misses"] == [] and summary["strict_ok"] is False
