"""The faults cookbook, docs/faults.md: each recipe, as written there, replayed to the SDK's host.

A recipe is the YAML block after a `<!-- recipe: NAME -->` line; each is put after a handshake and
a tools/list that offers `fetch` (test_faults_sdk's), replayed by `mockmcp replay`, and met by the official SDK host,
which must see what the document says it sees. A recipe without a check here, or a check whose
recipe is gone, fails too.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, child_env, served
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from sdk_host import text_of
from test_faults_sdk import HANDSHAKE  # a handshake and a tools/list that offers fetch (and more)

from mockmcp.cassette import store, validation, yamlfile
from mockmcp.tools import _lint as lint

DOC = ROOT / "docs" / "faults.md"
RECIPES = dict(re.findall(r"<!-- recipe: ([\w-]+) -->\n```yaml\n(.*?)```", DOC.read_text(), re.S))

Check = Callable[[Client], Awaitable[None]]


async def tool_error(host: Client) -> None:
    result = await host.call_tool("fetch", {})
    assert result.is_error is True and text_of(result) == "quota exceeded, try again tomorrow"


async def protocol_error(host: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {})
    assert (raised.value.error.code, raised.value.error.message) == (-32603, "internal error")
    assert raised.value.error.data == {"retry_after": 5}


async def slow_call(host: Client) -> None:
    start = time.monotonic()
    assert text_of(await host.call_tool("fetch", {})) == "at last"
    assert time.monotonic() - start >= 1.5


async def hang(host: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {}, read_timeout_seconds=0.5)
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert (await host.list_tools()).tools[0].name == "fetch"  # the session goes on


async def crash(host: Client) -> None:
    await host.list_tools()
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {})
    assert raised.value.error.code == CONNECTION_CLOSED


async def broken_off(host: Client) -> None:
    # over stdio (and in process) the answer cannot break off alone: no reply comes (over HTTP: below)
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {}, read_timeout_seconds=0.5)
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert LOGS == ["fetching"]
    assert (await host.list_tools()).tools[0].name == "fetch"


async def malformed_line(host: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {}, read_timeout_seconds=1)
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert (await host.list_tools()).tools[0].name == "fetch"


async def retry(host: Client) -> None:
    outcomes = []
    for _ in range(4):
        try:
            outcomes.append(text_of(await host.call_tool("fetch", {})))
        except MCPError as error:
            outcomes.append(f"{error.error.code} {error.error.message}")
    assert outcomes[:3] == ["-32603 try again", "-32603 try again", "ok"]
    assert outcomes[3].startswith("-32099 mockmcp: no recorded interaction matches")


async def server_messages(host: Client) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, _message: str | None) -> None:
        progress.append(value)

    assert text_of(await host.call_tool("fetch", {}, progress_callback=on_progress)) == "done"
    assert progress == [1, 2]
    assert LOGS == ["disk almost full"]


async def structured(host: Client) -> None:
    # Against the recipes' opening the tool is not listed, so the SDK has no schema to check (it warns); the
    # check against mcp-server-time's own tools/list is test_the_structured_recipe_is_what_the_sdk_asks_of_*.
    result = await host.call_tool("get_current_time", {"timezone": "UTC"})
    assert result.structured_content is not None and result.structured_content["day_of_week"] == "Thursday"


async def scripted(host: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {})
    assert raised.value.error.message == "try again"
    with pytest.raises(MCPError) as raised:
        await host.call_tool("fetch", {}, read_timeout_seconds=0.5)
    assert raised.value.error.code == REQUEST_TIMEOUT
    assert [text_of(await host.call_tool("fetch", {})) for _ in range(2)] == ["ok", "ok"]  # the last answers again


LOGS: list[Any] = []
CHECKS: dict[str, Check] = {
    "tool-error": tool_error,
    "protocol-error": protocol_error,
    "slow-call": slow_call,
    "hang": hang,
    "crash": crash,
    "broken-off": broken_off,
    "malformed-line": malformed_line,
    "retry": retry,
    "server-messages": server_messages,
    "structured": structured,
    "scripted": scripted,
}


def test_every_recipe_has_a_check_and_every_check_a_recipe() -> None:
    assert sorted(RECIPES) == sorted(CHECKS)


# The same opening in the 2026-07-28 revision, written as the recipes are, without `_meta` versions:
# what `server/discover` shows makes the session of that era alone, so the recipes speak it too.
STATELESS_OPENING = """\
version: 1
interactions:
- request: {method: server/discover}
  response:
    result:
      supportedVersions: ['2026-07-28']
      capabilities: {tools: {}, logging: {}}
      resultType: complete
      _meta: {io.modelcontextprotocol/serverInfo: {name: faults, version: '1'}}
- request: {method: tools/list}
  response:
    result:
      tools: [{name: fetch, inputSchema: {type: object}}]
"""
# the opening, and how the SDK's host speaks to it (`legacy`: the handshake; `auto` tries 2026-07-28 first)
ERAS = {"handshake": (HANDSHAKE, "legacy"), "2026-07-28": (STATELESS_OPENING, "auto")}


@pytest.mark.parametrize("era", sorted(ERAS))
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_each_recipe_loads_and_lints_without_a_finding_in_either_era(name: str, era: str) -> None:
    # what `mockmcp lint --strict` asks: no error and no warning (a deliberate fault says `expect: fault`)
    text = ERAS[era][0] + RECIPES[name]
    validation.from_data(yamlfile.load(text))
    assert lint.lint_text(text, name) == []


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("era", sorted(ERAS))
@pytest.mark.parametrize("name", sorted(CHECKS))
async def test_each_recipe_replays_to_the_sdk_host_as_documented(name: str, era: str, tmp_path: Path) -> None:
    opening, mode = ERAS[era]
    path = tmp_path / f"{name}.yaml"
    path.write_text(opening + RECIPES[name])
    store.load(str(path))
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mockmcp", "replay", str(path)], env=child_env(), cwd=str(ROOT)
    )
    LOGS.clear()

    async def on_log(params: Any) -> None:
        LOGS.append(params.data)

    with anyio.fail_after(30):
        async with Client(server, mode=mode, logging_callback=on_log) as host:
            await CHECKS[name](host)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("era", sorted(ERAS))
async def test_the_broken_off_recipe_cuts_the_call_s_stream_over_http_and_the_session_goes_on(
    era: str, tmp_path: Path
) -> None:
    opening, mode = ERAS[era]
    path = tmp_path / "broken-off.yaml"
    path.write_text(opening + RECIPES["broken-off"])
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with served(path, tmp_path) as server:
        with anyio.fail_after(30):
            async with Client(server.url, mode=mode, logging_callback=on_log) as host:
                with pytest.raises(MCPError) as raised:
                    await host.call_tool("fetch", {})
                assert (raised.value.error.code, raised.value.error.message) == (
                    CONNECTION_CLOSED,
                    "SSE stream ended without a response",
                )
                assert logs == ["fetching"]
                assert (await host.list_tools()).tools[0].name == "fetch"
        report = server.stop()
    assert report["faults"] and "broke off before its reply" in report["faults"][0]


# mcp-server-time's own opening: its discovery and its tools/list, whose tools declare an outputSchema.
TIME_OPENING = (ROOT / "cassettes" / "time.yaml").read_text().split("\n- at: 0.8798\n")[0] + "\n"


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_structured_recipe_is_what_the_sdk_asks_of_mcp_server_time(tmp_path: Path) -> None:
    """With its `structuredContent` the recipe lints clean and the SDK's host takes it; without, lint says why the
    host would raise, and the host raises just that."""
    whole = TIME_OPENING + RECIPES["structured"]
    bare = re.sub(r"\n +structuredContent: .*", "", whole)
    assert bare != whole and lint.lint_text(whole, "time.yaml") == []
    [finding] = lint.lint_text(bare, "time.yaml")
    assert finding.severity == "error" and "did not return structured content" in finding.problem
    got = []
    for name, text in (("whole", whole), ("bare", bare)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "mockmcp", "replay", str(path)], env=child_env(), cwd=str(ROOT)
        )
        with anyio.fail_after(30):
            async with Client(server, mode="auto") as host:
                try:
                    result = await host.call_tool("get_current_time", {"timezone": "UTC"})
                    got.append(result.structured_content["is_dst"] if result.structured_content else None)
                except RuntimeError as error:
                    got.append(str(error))
    assert got == [False, "Tool get_current_time has an output schema but did not return structured content"]


def test_lint_says_when_it_cannot_check_a_result_against_an_output_schema() -> None:
    """With no tools/list in the cassette, the note (never a failure) says so; the command prints it."""
    text = HANDSHAKE.split("- request: {method: tools/list}")[0] + RECIPES["structured"]
    assert lint.lint_text(text, "c.yaml") == []
    [note] = lint.lint_text(text, "c.yaml", notes=True)
    assert note.severity == "note" and "cannot check this result against the tool's outputSchema" in note.problem
    assert not lint.failed([note], strict=True)
    assert lint.summary([note], 1) == "1 file: 0 errors, 0 warnings, 1 note"
