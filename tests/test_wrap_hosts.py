"""`mockmcp wrap` under real hosts that read a config: fastmcp's `Client(config)` and the Inspector's CLI.

Each records through a wrapped config, then replays with the real servers gone, and sees what it saw.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MOCKMCP, ROOT, child_env, said
from fastmcp import Client

from mockmcp.cassette.store import load
from mockmcp.cli.app import main

SECRET = "hush-9f8e7d6c5b4a"
INSPECTOR = ROOT / "tests" / "node" / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "cli.js"


def wrap(config: Path, out: Path, *options: str) -> dict[str, Any]:
    """`mockmcp wrap CONFIG -o OUT ...`, run as the command line runs it; returns the derived config."""
    main(["wrap", str(config), "-o", str(out), "--cassettes", str(config.parent / "cassettes"), *options])
    derived: dict[str, Any] = json.loads(out.read_text())
    return derived


@contextmanager
def serving(derived: Path) -> Iterator[None]:
    """`mockmcp serve DERIVED` until the block ends (SIGTERM: recordings saved, replays summed up)."""
    proc = subprocess.Popen(
        [*MOCKMCP, "serve", str(derived)], stderr=subprocess.PIPE, text=True, env=child_env(), cwd=derived.parent
    )
    try:
        said(proc, r"serving until", "mockmcp serve")
        yield
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        assert proc.returncode == 0
    finally:
        proc.kill()
        proc.wait(10)


async def host_session(config: dict[str, Any]) -> dict[str, Any]:
    """What a fastmcp host sees of the config's servers (fastmcp names each tool `<server>_<tool>`)."""
    seen: dict[str, Any] = {}
    with anyio.fail_after(60):
        async with Client(config) as client:
            seen["tools"] = sorted(tool.name for tool in await client.list_tools())
            for tool, args in [
                ("notes_read_file", {"path": "notes.txt"}),
                ("time_convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
                ("web_read_file", {"path": "todo.md"}),
                ("echo_getenv", {"name": "ECHO_SECRET"}),
            ]:
                result = await client.call_tool(tool, args)
                seen[tool] = [part.text for part in result.content]
    return seen


@pytest.mark.slow
@pytest.mark.anyio
async def test_fastmcp_records_a_wrapped_config_then_replays_it_with_the_servers_gone(
    tmp_path: Path, http_server: Callable[..., str]
) -> None:
    notes = tmp_path / "notes_server.py"
    shutil.copy(ROOT / "examples" / "notes_server.py", notes)  # removed before the replay
    python = sys.executable
    url = http_server()  # the SDK server over HTTP this worker shares; the replay below never reaches it
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {"command": python, "args": [str(notes)]},
                    "time": {"command": python, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
                    "web": {"url": url, "headers": {"Authorization": f"Bearer {SECRET}"}},  # never in a cassette
                    "echo": {
                        "command": python,
                        "args": [str(ROOT / "tests" / "servers" / "env_echo.py")],
                        "env": {"ECHO_SECRET": SECRET},
                    },
                }
            },
            indent=2,
        )
    )
    recording = tmp_path / "recording.json"
    derived = wrap(config, recording)
    assert derived["mcpServers"]["web"]["url"].startswith("http://127.0.0.1:")
    assert derived["mcpServers"]["echo"]["env"] == {"ECHO_SECRET": SECRET}  # the host still hands it over
    with serving(recording):
        recorded = await host_session(derived)
    notes.unlink()  # the stdio servers are gone, and the web server's URL leads nowhere
    config.write_text(config.read_text().replace(url, "http://127.0.0.1:9/mcp"))
    cassettes = tmp_path / "cassettes"
    assert sorted(p.name for p in cassettes.glob("*.yaml")) == ["echo.yaml", "notes.yaml", "time.yaml", "web.yaml"]
    assert recorded["echo_getenv"] == [f"ECHO_SECRET is {SECRET}"]
    for cassette in cassettes.glob("*.yaml"):
        assert SECRET not in cassette.read_text(), cassette

    replaying = tmp_path / "replaying.json"
    derived = wrap(config, replaying, "--replay")
    with serving(replaying):
        replayed = await host_session(derived)
    assert replayed["echo_getenv"] == ["ECHO_SECRET is [REDACTED:ECHO_SECRET]"]  # what the cassette holds
    del recorded["echo_getenv"], replayed["echo_getenv"]
    assert replayed == recorded
    assert recorded["notes_read_file"] == ["remember to buy milk"] and "Asia/Tokyo" in recorded["time_convert_time"][0]


def inspector(config: Path, server: str, *call: str) -> dict[str, Any]:
    """The Inspector's CLI (`--cli --config FILE --server NAME`), one process per call, as a shell script runs it.

    Run from its own build folder: it reads its package.json by a path relative to the working directory.
    """
    done = subprocess.run(
        ["node", str(INSPECTOR), "--cli", "--config", str(config), "--server", server, *call],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=INSPECTOR.parent,
        env=child_env(),
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.skipif(shutil.which("node") is None, reason="the Inspector's CLI runs on node, which is not installed")
@pytest.mark.skipif(not INSPECTOR.exists(), reason="the Inspector's CLI is not installed: npm ci --prefix tests/node")
def test_the_inspector_cli_records_then_replays_through_a_wrapped_config(tmp_path: Path) -> None:
    notes = tmp_path / "notes_server.py"
    shutil.copy(ROOT / "examples" / "notes_server.py", notes)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(notes)]}}}))
    call = ["--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=notes.txt"]
    wrap(config, tmp_path / "recording.json")
    recorded = inspector(tmp_path / "recording.json", "notes", *call)
    assert (tmp_path / "cassettes" / "notes.yaml").exists()
    notes.unlink()
    wrap(config, tmp_path / "replaying.json", "--replay")
    assert inspector(tmp_path / "replaying.json", "notes", *call) == recorded
    assert recorded["content"] == [{"type": "text", "text": "remember to buy milk"}]


EVERYTHING = (
    ROOT / "tests" / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
# A host of its own per run: fastmcp's Client over the config, in auto mode; what it saw, as JSON on stdout.
FASTMCP_HOST = """
import asyncio, json, sys
from fastmcp import Client

async def main():
    async with Client(json.loads(open(sys.argv[1]).read())) as client:
        tools = sorted(tool.name for tool in await client.list_tools())
        notes = await client.call_tool("notes_read_file", {"path": "notes.txt"})
        echo = await client.call_tool("every_echo", {"message": "hi"})
        print(json.dumps([tools, notes.content[0].text, echo.content[0].text]))

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="server-everything runs on node, which is not installed")
@pytest.mark.skipif(not EVERYTHING.exists(), reason="server-everything is not installed: npm ci --prefix tests/node")
def test_fastmcp_starting_each_server_twice_records_both_starts_under_once_and_the_next_run_replays(
    tmp_path: Path,
) -> None:
    """With a TypeScript SDK server in the config, fastmcp's `Client(config)` starts every server twice in a run (a
    process for the `server/discover` probe, then one for `initialize`): the default mode (`once`) records the
    second start into the cassette the first began, and a new host process replays both."""
    notes = tmp_path / "notes_server.py"
    shutil.copy(ROOT / "examples" / "notes_server.py", notes)  # removed before the replay
    config = tmp_path / "mcp.json"
    servers = {"notes": [sys.executable, str(notes)], "every": ["node", str(EVERYTHING), "stdio"]}
    entries = {name: {"command": command[0], "args": command[1:]} for name, command in servers.items()}
    config.write_text(json.dumps({"mcpServers": entries}))
    derived = tmp_path / "wrapped.json"
    wrap(config, derived)

    def host() -> list[Any]:
        done = subprocess.run(
            [sys.executable, "-c", FASTMCP_HOST, str(derived)],
            capture_output=True,
            text=True,
            timeout=60,
            env=child_env(),
            cwd=ROOT,  # the host hands its servers a few variables only: `-m mockmcp` finds this checkout here
        )
        assert done.returncode == 0, done.stderr
        seen: list[Any] = json.loads(done.stdout.splitlines()[-1])
        return seen

    recorded = host()
    assert "notes_read_file" in recorded[0] and "every_echo" in recorded[0]
    assert recorded[1:] == ["remember to buy milk", "Echo: hi"]
    for name in servers:  # each start a session of its own, in order
        assert len({i.session for i in load(str(tmp_path / "cassettes" / f"{name}.yaml")).interactions}) == 2
    notes.unlink()
    assert host() == recorded
