"""Replay in the host's process: `mockmcp.transport(cassette)` under the MCP SDK's `Client`.

The same host (examples/sdk_host.py: sampling, elicitation, roots, progress, a tool error) plays a
whole shipped session in process and over stdio replay, in both eras, and sees the same things; the
report is the engine's, and `strict=True` fails a session `--strict` fails, naming why. Each test runs
on asyncio, and on trio where trio is installed.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import anyio
import pytest
from conftest import ROOT, child_env
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError
from sdk_host import connect, full_session

import mockmcp

pytestmark = pytest.mark.anyio


# trio is not in the test extra: with it installed, anyio runs every async test of a project (the
# README's examples among them) once per backend. Where it is installed, these tests run on it too.
BACKENDS = ["asyncio", *(["trio"] if importlib.util.find_spec("trio") else [])]


@pytest.fixture(params=BACKENDS)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """In process, replay runs on the host's own event loop: each of anyio's backends installed."""
    return str(request.param)


SESSIONS = [("legacy", "cassettes/notes-session.yaml"), ("auto", "cassettes/notes-session-2026.yaml")]


async def session(server: Any, mode: str) -> dict[str, Any]:
    with anyio.fail_after(30):
        async with connect(server, mode) as client:
            return await full_session(client)


@pytest.mark.parametrize(("mode", "cassette"), SESSIONS, ids=["legacy", "auto"])
async def test_a_whole_session_in_process_is_what_the_host_sees_over_stdio(mode: str, cassette: str) -> None:
    replay = StdioServerParameters(
        command=sys.executable, args=["-m", "mockmcp", "replay", cassette], env=child_env(), cwd=str(ROOT)
    )
    over_stdio = await session(replay, mode)
    in_process = mockmcp.transport(str(ROOT / cassette))
    assert await session(in_process, mode) == over_stdio
    assert over_stdio["progress"] and over_stdio["missing"][0] is True  # progress and a tool error came
    assert in_process.report is not None and in_process.report.strict_ok


async def test_strict_fails_at_close_with_the_reason_and_the_report_says_what_missed() -> None:
    replay = mockmcp.transport(str(ROOT / "cassettes" / "notes-session.yaml"), strict=True)
    with pytest.raises(mockmcp.StrictFailure, match="1 miss"):
        async with connect(replay, "legacy") as client:
            with pytest.raises(MCPError, match="no recorded interaction matches: tools/call"):
                await client.call_tool("read_file", {"path": "elsewhere.txt"})  # answered -32042, as over stdio
    assert replay.report is not None and replay.report.missed == 1


async def test_a_host_answer_that_differs_is_a_mismatch() -> None:
    from mcp.types import ElicitResult

    async def decline(_ctx: Any, _params: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    from mcp import Client

    replay = mockmcp.transport(str(ROOT / "cassettes" / "notes-session.yaml"))
    async with Client(replay, mode="legacy", elicitation_callback=decline) as client:
        await client.call_tool("delete_file", {"path": "notes.txt"})
    assert replay.report is not None and [m.method for m in replay.report.mismatches] == ["elicitation/create"]
