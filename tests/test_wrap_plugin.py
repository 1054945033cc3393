"""The marker's `config=`: every server of a host's own config is a mock server of the test, with its own
cassette and verdict, and `mockmcp.config` is the config a host reads (here fastmcp's `Client(config)`)."""

from __future__ import annotations

import json
import sys

# Imported once here, not again inside each pytester run (a second copy of a class fails isinstance checks):
# the host, and what its client proxies load while a test runs.
import fastmcp
import fastmcp.server.providers.proxy  # noqa: F401
import mcp.server.request_state  # noqa: F401
import pytest
import yaml
from conftest import ROOT

pytest_plugins = ["pytester"]

SECRET = "k-secret-7a6b5c"

TESTS = """
import json
import pytest
from fastmcp import Client

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
@pytest.mark.mockmcp(config="hosts/mcp.json")
async def test_plans_the_day(mockmcp):
    assert sorted(mockmcp) == ["notes", "time"]
    async with Client(json.loads(mockmcp.config.read_text())) as client:
        note = await client.call_tool("notes_read_file", {"path": "notes.txt"})
        when = await client.call_tool("time_convert_time", {"source_timezone": "UTC", "time": "12:00",
                                                             "target_timezone": "TARGET"})
    assert note.content[0].text == "remember to buy milk" and "TARGET" in when.content[0].text
"""


def write(pytester: pytest.Pytester, target: str) -> None:
    hosts = pytester.path / "hosts"
    hosts.mkdir(exist_ok=True)
    config = {
        "mcpServers": {
            "notes": {
                "command": sys.executable,
                "args": [str(ROOT / "examples" / "notes_server.py")],
                "env": {"NOTES_KEY": SECRET},
            },
            "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        }
    }
    (hosts / "mcp.json").write_text(json.dumps(config, indent=2))
    pytester.makepyfile(test_host=TESTS.replace("TARGET", target))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


@pytest.mark.slow
def test_a_host_config_gives_each_server_its_cassette_and_verdict(pytester: pytest.Pytester) -> None:
    write(pytester, "Asia/Tokyo")
    run(pytester, "--mockmcp-record=once").assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_host" / "test_plans_the_day"
    assert sorted(p.name for p in folder.glob("*.yaml")) == ["notes.yaml", "time.yaml"]
    notes = yaml.safe_load((folder / "notes.yaml").read_text())
    assert notes["meta"]["redact"] == {"env": ["NOTES_KEY"]}  # the config's env key, a redaction
    assert SECRET not in (folder / "notes.yaml").read_text()

    run(pytester).assert_outcomes(passed=1)  # replayed, the servers never started

    write(pytester, "Europe/Paris")  # a request only the time server's cassette cannot answer
    result = run(pytester)
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert f"{folder / 'time.yaml'} could not serve this test" in said
    assert "notes.yaml could not serve" not in said
