"""`mockmcp stub`: a cassette from a server's contract alone, a placeholder answer per tool.

The plainest value a schema accepts is a table; the command is run against real servers (mcp-server-time from
PyPI, the TypeScript SDK's server-everything, and a Streamable HTTP endpoint), its cassette linted (notes for
the placeholders, nothing else), replayed to the official SDK's host in both modes with no server, and, filled
in, answering as written.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
import yaml
from conftest import MOCKMCP, ROOT, SDK_PYTHON, SHIPPED, child_env, served
from mcp import Client, StdioServerParameters

from mockmcp._wire import protocol
from mockmcp.cassette import store
from mockmcp.tools import _lint as lint
from mockmcp.tools._stub import example

EVERYTHING = (
    ROOT / "tests" / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
TIME = [*SDK_PYTHON, "-m", "mcp_server_time", "--local-timezone", "UTC"]

pytestmark = pytest.mark.xdist_group("stub")  # one worker: each stub is written once (the module's fixtures)

S = {"type": "string"}
SCHEMAS = [
    ({"type": "object", "properties": {"a": S, "b": {"type": "boolean"}}}, {"a": "", "b": False}),
    ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]}, {"n": 3}),
    ({"type": "object", "properties": {"u": {"enum": ["c", "f"]}, "k": {"const": 1}}}, {"u": "c", "k": 1}),
    ({"properties": {"o": {"anyOf": [{"type": "number"}, {"type": "null"}]}}}, {"o": 0}),
    ({"type": "array", "items": S, "minItems": 2}, ["", ""]),
    ({"type": "string", "minLength": 3}, "xxx"),
    ({"type": ["null", "integer"]}, 0),
    ({"$defs": {"R": {"properties": {"t": S}}}, "properties": {"r": {"$ref": "#/$defs/R"}}}, {"r": {"t": ""}}),
    ({"type": "object", "properties": {"d": {"type": "string", "default": "now"}}}, {"d": "now"}),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "value"), SCHEMAS)
def test_a_placeholder_is_the_plainest_value_its_schema_accepts(schema: dict[str, Any], value: Any) -> None:
    assert example(schema) == value
    jsonschema.validate(value, schema)


def stub(tmp_path: Path, name: str, *server: str, target: str | None = None) -> Path:
    path = tmp_path / f"{name}.yaml"
    asked = ["--http-target", target] if target else ["--", *server]
    proc = subprocess.run(
        [*MOCKMCP, "stub", "-o", str(path), *asked], capture_output=True, text=True, timeout=120, env=child_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert f"mockmcp: wrote {path}: the server's contract and " in proc.stderr
    return path


@pytest.fixture(scope="module")
def time_stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mcp-server-time's stub, written once for the module (each test copies it before it edits)."""
    return stub(tmp_path_factory.mktemp("time"), "time", *TIME)


@pytest.fixture(scope="module")
def everything_stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("node") is None or not EVERYTHING.exists():
        pytest.skip("node and tests/node/node_modules are needed to run server-everything")
    return stub(tmp_path_factory.mktemp("everything"), "everything", "node", str(EVERYTHING), "stdio")


def only_placeholder_notes(path: Path) -> int:
    findings = lint.lint_file(str(path), notes=True)
    assert {(f.severity, "still the placeholder" in f.problem) for f in findings} == {("note", True)}, findings
    return len(findings)


async def replay(path: Path, mode: str, tool: str, arguments: dict[str, Any]) -> Any:
    server = StdioServerParameters(command=sys.executable, args=["-m", "mockmcp", "replay", str(path)], env=child_env())
    with anyio.fail_after(30):
        async with Client(server, mode=mode) as host:
            listed = [t.name for t in (await host.list_tools()).tools]
            assert tool in listed
            return await host.call_tool(tool, arguments)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_stub_of_mcp_server_time_replays_to_the_sdk_host_and_filled_in_answers_as_written(
    tmp_path: Path, time_stub: Path, mode: str
) -> None:
    path = tmp_path / "time.yaml"
    shutil.copyfile(time_stub, path)
    text = path.read_text()
    assert text.splitlines()[1].startswith("# Written by `mockmcp stub`") and "# get_current_time: write its" in text
    assert only_placeholder_notes(path) == 2
    placeholder = await replay(path, mode, "get_current_time", {"timezone": "Asia/Tokyo"})
    assert placeholder.structured_content == {"timezone": "", "datetime": "", "day_of_week": "", "is_dst": False}
    # Filled in: the person's answer, as written.
    data = yaml.safe_load(text)
    [call] = [
        i for i in data["interactions"] if i.get("request", {}).get("params", {}).get("name") == "get_current_time"
    ]
    answer = {
        "timezone": "Asia/Tokyo",
        "datetime": "2026-01-01T21:00:00+09:00",
        "day_of_week": "Thursday",
        "is_dst": False,
    }
    call["response"]["result"] = {
        "content": [{"type": "text", "text": json.dumps(answer)}],
        "structuredContent": answer,
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert only_placeholder_notes(path) == 1  # convert_time's is left
    filled = await replay(path, mode, "get_current_time", {"timezone": "Asia/Tokyo"})
    assert filled.structured_content == answer and json.loads(filled.content[0].text) == answer


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_stub_of_server_everything_replays_to_the_sdk_host(everything_stub: Path, mode: str) -> None:
    path = everything_stub
    assert only_placeholder_notes(path) >= 10
    data = yaml.safe_load(path.read_text())
    methods = {i["request"]["method"] for i in data["interactions"] if "request" in i}
    assert methods == {
        "initialize",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "tools/call",
    }
    shaped = await replay(path, mode, "get-structured-content", {"location": "New York"})
    assert shaped.structured_content is not None and not shaped.is_error
    plain = await replay(path, mode, "echo", {"message": "hi"})
    assert plain.content[0].text == "mockmcp stub: a placeholder; write what this tool answers"


def test_a_stub_over_http_asks_the_endpoint_only_its_contract(tmp_path: Path) -> None:
    with served(SHIPPED / "notes-session.yaml", tmp_path) as server:
        path = stub(tmp_path, "notes", target=server.url)
        asked = [call["method"] for call in server.stop()["calls"]]
    assert set(asked) <= {"initialize", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
    recorded = store.load(str(SHIPPED / "notes-session.yaml")).interactions
    tools = protocol.listed(((i.message, i.response) for i in recorded), protocol.TOOLS_LIST) or []
    assert only_placeholder_notes(path) == len(tools) > 0


def test_stub_writes_a_new_cassette_only(tmp_path: Path) -> None:
    path = tmp_path / "there.yaml"
    path.write_text("kept")
    proc = subprocess.run(
        [*MOCKMCP, "stub", "-o", str(path), "--", *TIME], capture_output=True, text=True, timeout=60, env=child_env()
    )
    assert proc.returncode == 2 and "exists, and `mockmcp stub` writes a new cassette" in proc.stderr
    assert path.read_text() == "kept"
