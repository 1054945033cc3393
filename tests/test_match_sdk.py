"""Match rules met by the official SDK host through `mockmcp replay`: arguments that vary from run to run,
as a model-driven host sends them, answered by the cassette's own rules with no option on the command line.

One session exercises every matcher (any, type, {type: NAME}, {regex: ...}, subset, unordered) and
`meta.match.ignore`; a call a rule refuses arrives as the SDK's MCPError, whose data names the rule.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from conftest import ROOT, child_env
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio

CASSETTE = """\
version: 1
meta:
  match: {ignore: [arguments.request_id]}
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: agentic, version: '1'}}
- notification: {method: notifications/initialized}
- request: {method: tools/list}
  response:
    result:
      tools:
      - {name: search, inputSchema: {type: object}}
      - {name: plan, inputSchema: {type: object}}
- request:
    method: tools/call
    params:
      name: search
      arguments:
        {query: weather in Paris, limit: 10, tags: [rain, wind], filters: {lang: en}, trace: t-1, request_id: 1}
  match:
    arguments.query: {regex: 'weather in \\w+'}
    arguments.limit: type
    arguments.tags: unordered
    arguments.filters: subset
    arguments.trace: any
  response: {result: {content: [{type: text, text: 'rain, 12 C'}], isError: false}}
- request: {method: tools/call, params: {name: plan, arguments: {steps: 3, note: first draft}}}
  match:
    arguments.steps: {type: number}
    arguments.note: {type: string}
  response: {result: {content: [{type: text, text: planned}], isError: false}}
"""


async def test_every_matcher_answers_the_host_and_a_refused_call_names_the_rule(tmp_path: Path) -> None:
    cassette, report = tmp_path / "agentic.yaml", tmp_path / "report.json"
    cassette.write_text(CASSETTE)
    args = ["-m", "mockmcp", "replay", str(cassette), "--report", str(report)]
    server = StdioServerParameters(command=sys.executable, args=args, env=child_env(), cwd=str(ROOT))
    asked = {"query": "weather in Rome", "limit": 3, "tags": ["wind", "rain"], "filters": {"lang": "en", "unit": "C"}}
    with anyio.fail_after(30):
        async with Client(server, mode="legacy") as host:
            found = await host.call_tool("search", {**asked, "request_id": 2})  # no trace at all: `any` takes none
            again = await host.call_tool("search", {**asked, "trace": "t-9", "request_id": 3})
            planned = await host.call_tool("plan", {"steps": 4.5, "note": "second draft"})
            with pytest.raises(MCPError) as refused:
                await host.call_tool("search", {**asked, "query": "rain in Rome"})
    assert [found.content[0].text, again.content[0].text, planned.content[0].text] == ["rain, 12 C"] * 2 + ["planned"]
    assert refused.value.error.code == -32099
    [difference] = refused.value.error.data["differences"]
    assert difference == (
        "arguments.query: its match rule `{regex: 'weather in \\w+'}` refuses \"rain in Rome\": "
        "the pattern does not match it whole"
    )
    summary = json.loads(report.read_text())
    assert [miss["method"] for miss in summary["misses"]] == ["tools/call"]
    assert "interactions[3].match" in summary["misses"][0]["fixes"][-1]
