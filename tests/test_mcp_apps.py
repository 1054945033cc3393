"""MCP Apps: a `ui://` HTML resource, and the tool whose `_meta.ui` names it, replay as recorded, and the HTML
timeline shows that HTML as text, never run.

The real MCP Apps server `@modelcontextprotocol/server-basic-vanillajs` (tests/node) is recorded once for the
module through `mockmcp record` by an SDK host, which then replays the cassette with `--html`; the tests read
that one recording, its replay and its page:

- the resource's text the host read live is the server's file byte for byte, and the replayed text is the live
  one byte for byte; tools/list's `_meta.ui`, resources/list and the tool's result come back as recorded;
- that session's page, in Chromium, runs nothing of the resource (its script logs "Sending message" to the
  console at once, as the same HTML opened on its own shows) and shows its HTML as text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import pytest
from chromium import Page
from mcp import Client
from test_causal_sdk import NODE_DIR, patient_stdio, stdio, wait_for_save

pytestmark = pytest.mark.xdist_group("chromium")  # one browser per worker, and the one recording with it

APP = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist"
RESOURCE = "ui://get-time/mcp-app.html"


class Session(NamedTuple):
    """What the host saw: each result as the SDK dumps it (by alias, `_meta` included)."""

    tools: dict[str, Any]
    resources: dict[str, Any]
    called: dict[str, Any]
    read: dict[str, Any]


class Recorded(NamedTuple):
    cassette: Path
    live: Session  # through the recorder
    replayed: Session
    page: Path  # `mockmcp replay --html` of the replayed session
    report: dict[str, Any]


async def host(command: list[str]) -> Session:
    with anyio.fail_after(60):
        async with Client(patient_stdio(command)) as client:
            tools = await client.list_tools()
            resources = await client.list_resources()
            called = await client.call_tool("get-time", {})
            read = await client.read_resource(RESOURCE)
    dumped = (result.model_dump(by_alias=True, exclude_none=True) for result in (tools, resources, called, read))
    return Session(*dumped)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the MCP Apps server cannot run")
    if not (APP / "index.js").is_file():
        pytest.skip("tests/node has no server-basic-vanillajs: run `npm ci --prefix tests/node` (.ci/run does)")
    folder = tmp_path_factory.mktemp("apps")
    cassette, page, report = folder / "apps.yaml", folder / "apps.html", folder / "report.json"

    async def run() -> tuple[Session, Session]:
        live = await host([*stdio("record", "-o", str(cassette), "--"), "node", str(APP / "index.js"), "--stdio"])
        await wait_for_save(cassette)
        return live, await host(stdio("replay", str(cassette), "--html", str(page), "--report", str(report)))

    live, replayed = anyio.run(run)
    return Recorded(cassette, live, replayed, page, json.loads(report.read_text()))


def test_the_ui_resource_and_meta_ui_replay_byte_for_byte(recorded: Recorded) -> None:
    served = (APP / "mcp-app.html").read_bytes()  # what the server reads and serves
    (live,) = recorded.live.read["contents"]
    (replayed,) = recorded.replayed.read["contents"]
    assert live["text"].encode() == served and replayed["text"].encode() == served
    assert replayed == live == {"uri": RESOURCE, "mimeType": "text/html;profile=mcp-app", "text": live["text"]}
    (tool,) = recorded.replayed.tools["tools"]
    assert tool["name"] == "get-time" and tool["_meta"]["ui"] == {"resourceUri": RESOURCE}
    assert recorded.replayed == recorded.live  # tools/list, resources/list, the call's result: as recorded
    assert recorded.report["misses"] == [] and recorded.report["unplayed"] == []


def test_the_html_of_the_resource_runs_on_its_own(tab: Page, recorded: Recorded, tmp_path: Path) -> None:
    """The control: the same HTML opened as a page runs its script, which logs to the console at once."""
    alone = tmp_path / "app.html"
    alone.write_text(recorded.live.read["contents"][0]["text"], encoding="utf-8")
    tab.open(alone.as_uri(), rendered=False)
    tab.browser.wait_for("Runtime.consoleAPICalled", tab.session, tab.since)
    assert ("debug", "Sending message") in [(kind, args[0]) for kind, args in tab.console()]


def test_the_page_shows_the_ui_html_as_text_and_runs_none_of_it(tab: Page, recorded: Recorded) -> None:
    text = recorded.live.read["contents"][0]["text"]
    tab.open(recorded.page.as_uri())
    # textContent, not innerText: a row off screen is not drawn (`content-visibility: auto`), its innerText empty
    row = "Array.from(document.querySelectorAll('.row')).find(r => r.textContent.includes('resources/read'))"
    tab.evaluate(f"{row}.querySelectorAll('details.msg').forEach(d => {{ d.open = true; }})")
    tab.wait(f"Array.from({row}.querySelectorAll('details.msg')).every(d => d.dataset.filled === 'yes')")
    shown = tab.evaluate(f"Array.from({row}.querySelectorAll('pre.app')).map(p => p.textContent)")
    assert shown == [text]  # the HTML source, as text
    said = tab.evaluate(f"{row}.querySelector('pre.app').previousElementSibling.textContent")
    assert said == f"{RESOURCE} (text/html;profile=mcp-app): the MCP App's HTML, shown as text, never run"
    # Nothing of it became markup or ran: no element of its body, no script but the page's own two, no console.
    assert tab.evaluate("document.querySelectorAll('#get-time-btn, #server-time, main.main, iframe').length") == 0
    assert tab.evaluate("document.scripts.length") == 2
    assert tab.evaluate("document.title") == f"mockmcp replay: {recorded.cassette}"
    assert tab.console() == [] and tab.problems() == []
    assert tab.requests() == [recorded.page.as_uri()]
