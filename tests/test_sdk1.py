"""mockmcp under hosts on the MCP Python SDK's 1.x line (1.24.0 and 1.30.0, the first and last supported).

The suite's own environment has the 2.x line; each test here runs tests/sdk1_host.py, a 1.x host
(`ClientSession`), in a virtual environment with that 1.x release and this checkout (tests/sdk1.py, the
`sdk1_env` fixture: built once per machine, then kept). The host replays a shipped cassette in process
(`mockmcp.transport`) and over stdio (`mockmcp replay` under `stdio_client`), and records a 1.x
`FastMCP` server with `mockmcp.recording`, by command line and as an object in memory, then replays
what it wrote. Each sees exactly what the cassette, or the real server, says. A 2026-07-28 cassette of a
server that speaks both eras replays to it as the handshake session of that server does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, SHIPPED, child_env, speaks_both
from sdk1 import Environment

from mockmcp.cassette import store

# A cold environment is built inside the first test of a worker that needs it (the SDK and its dependencies from
# the registry: tens of seconds, each pip step bounded by tests/sdk1.py); every host run below has a timeout of its own.
# Slow, so they are handed out first: a build then overlaps the rest of the run instead of ending it.
pytestmark = [pytest.mark.timeout(1200), pytest.mark.slow]

HOST = ROOT / "tests" / "sdk1_host.py"
SERVER = ROOT / "tests" / "servers" / "sdk1_notes.py"

# What the host sees of cassettes/notes.yaml: initialize, tools/list, tools/call read_file notes.txt.
NOTES = {
    "initialize": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "notes", "version": "1.0.0"},
        "instructions": "A notebook of small text files.",
    },
    "tools": {
        "tools": [
            {
                "name": "read_file",
                "description": "Read a note by its file name.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"path": {"type": "string", "title": "Path"}},
                    "required": ["path"],
                },
            }
        ]
    },
    "call": {"content": [{"type": "text", "text": "remember to buy milk"}], "isError": False},
}
# Two of the cassette's six interactions are not in that session: the missing note, the mistyped method.
NOTES_REPORT = {"missed": 0, "unplayed": [4, 5], "strict_ok": False}


def fastmcp_session(version: str) -> dict[str, Any]:
    """What the host sees of tests/servers/sdk1_notes.py, a 1.x FastMCP server, in the same session."""
    schema = {"properties": {"path": {"title": "Path", "type": "string"}}, "required": ["path"]}
    output = {"properties": {"result": {"title": "Result", "type": "string"}}, "required": ["result"]}
    return {
        "initialize": {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "experimental": {},
                "prompts": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False},
                "tools": {"listChanged": False},
            },
            "serverInfo": {"name": "notes", "version": version},  # FastMCP names the SDK's version
            "instructions": "A notebook of small text files.",
        },
        "tools": {
            "tools": [
                {
                    "name": "read_file",
                    "description": "Read a note by its file name.",
                    "inputSchema": {**schema, "title": "read_fileArguments", "type": "object"},
                    "outputSchema": {**output, "title": "read_fileOutput", "type": "object"},
                }
            ]
        },
        "call": {
            "content": [{"type": "text", "text": "remember to buy milk"}],
            "structuredContent": {"result": "remember to buy milk"},
            "isError": False,
        },
    }


def host(env: Environment, *args: str) -> dict[str, Any]:
    """tests/sdk1_host.py run by the 1.x environment's Python; what it printed, after checking it ran on 1.x."""
    done = subprocess.run(
        [str(env.python), str(HOST), *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env=child_env()
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    assert seen.pop("sdk") == {"mcp": env.mcp, "line": 1}, "the host ran on the SDK's 1.x line, at that release"
    return seen


def test_transport_replays_a_shipped_cassette_to_a_1x_client_session(sdk1_env: Environment) -> None:
    seen = host(sdk1_env, "transport", str(SHIPPED / "notes.yaml"))
    assert seen == {"session": NOTES, "report": NOTES_REPORT}


def test_replay_over_stdio_answers_a_1x_stdio_client(sdk1_env: Environment) -> None:
    seen = host(sdk1_env, "stdio", str(SHIPPED / "notes.yaml"))
    assert seen == {"session": NOTES}


def test_recording_a_1x_fastmcp_server_replays_what_it_showed(sdk1_env: Environment, tmp_path: Path) -> None:
    seen = host(sdk1_env, "record", str(SERVER), str(tmp_path))
    real = fastmcp_session(sdk1_env.mcp)
    played = {"missed": 0, "unplayed": [], "strict_ok": True}
    for way in ("command", "object"):  # over stdio from its command line; its FastMCP object, in memory
        assert seen[way] == {"recorded": real, "was_recorded": True, "replayed": real, "report": played}, way
        cassette = store.load(str(tmp_path / f"{way}.yaml"))
        methods = [item.method for item in cassette.interactions]
        assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/call"], way
    assert store.load(str(tmp_path / "object.yaml")).meta["server"] == ["FastMCP 'notes' in process"]


def test_a_2026_cassette_of_a_server_of_both_eras_replays_to_a_1x_client_session(
    sdk1_env: Environment, tmp_path: Path
) -> None:
    translated = speaks_both("notes-session-2026.yaml", tmp_path)
    seen = host(sdk1_env, "eras", str(translated), str(SHIPPED / "notes-session.yaml"))
    played = {"missed": 0, "unplayed": [], "strict_ok": True}
    assert seen["translated"]["report"] == played == seen["native"]["report"]
    truth, session = seen["native"]["session"], seen["translated"]["session"]
    # What the SDK's server says otherwise in each era, which no recording of the other holds
    # (docs/cassette-format.md, "Both eras, one cassette"): an elicitation schema's title, written in the
    # handshake era only; its capabilities' listChanged and subscribe, true in its discovery only.
    assert [untitled(asked) for asked in session.pop("asked")] == [untitled(asked) for asked in truth.pop("asked")]
    opened, recorded = session["results"].pop(0), truth["results"].pop(0)
    assert {**opened, "capabilities": None} == {**recorded, "capabilities": None}
    assert opened["capabilities"].keys() == recorded["capabilities"].keys() == {"prompts", "resources", "tools"}
    assert session == truth
    assert session["logs"] == ["counted 1", "counted 2"] and len(session["progress"]) == 2


def untitled(asked: Any) -> Any:
    """What a 1.x host's callback was asked (the SDK's dump, by alias), without an elicitation schema's title."""
    if isinstance(asked, dict) and "requestedSchema" in asked:
        return {**asked, "requestedSchema": {k: v for k, v in asked["requestedSchema"].items() if k != "title"}}
    return asked
