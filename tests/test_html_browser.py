"""The HTML timeline in a real headless browser: the system's Chromium, over its DevTools pipe (tests/chromium.py).

One browser for the run (conftest's `browser`; one worker: the xdist group), a tab per page. Without a Chromium
these tests skip, saying so; `.ci/run` installs the distribution's package when it is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Page
from conftest import SHIPPED
from test_html import replay

from mockmcp.cassette import store
from mockmcp.html import Model
from mockmcp.html._page import lane_for, write_page

pytestmark = pytest.mark.xdist_group("chromium")


@pytest.fixture(scope="module")
def failed_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`mockmcp replay --html` of the README's demo session: one miss, three interactions unplayed."""
    out = tmp_path_factory.mktemp("pages") / "demo.html"
    done = replay("cassettes/notes.yaml", "--html", str(out))
    assert done.returncode == 0 and out.exists(), done.stderr
    return out


def visible_text(tab: Page, selector: str) -> list[str]:
    """The text a person sees in each element the selector finds (hidden ones left out), each scrolled into view
    first: a row off screen is not drawn (`content-visibility: auto`), and its innerText may be empty then."""
    found = f"Array.from(document.querySelectorAll({json.dumps(selector)})).filter(e => e.offsetParent !== null)"
    frame = "new Promise(done => requestAnimationFrame(() => done()))"
    script = f"(async () => {{ const out = []; for (const e of {found}) {{ e.scrollIntoView({{block: 'nearest'}}); "
    script += f"await {frame}; out.push(e.innerText); }} return out; }})()"
    return list(tab.evaluate(script))


def test_the_failed_page_opens_from_disk_with_no_console_error_and_no_request(tab: Page, failed_page: Path) -> None:
    tab.open(failed_page.as_uri())
    assert tab.problems() == []
    assert tab.requests() == [failed_page.as_uri()]  # its own document, nothing else
    assert tab.evaluate("document.title") == "mockmcp replay: cassettes/notes.yaml"
    assert visible_text(tab, "#verdict") == ["replayed: 1 miss, 3 unplayed, 0 answers differed"]


def test_the_seeded_miss_shows_where_it_differs_and_unplayed_entries_are_marked(tab: Page, failed_page: Path) -> None:
    tab.open(failed_page.as_uri())
    (miss,) = visible_text(tab, ".row.miss")
    assert 'arguments.path: recorded "notes.txt", incoming "note.txt"' in miss
    assert "→ tools/call read_file {path: note.txt}" in miss
    assert "mockmcp record --record-mode rewrite -o cassettes/notes.yaml" in miss
    assert tab.evaluate("document.querySelector('.row.miss .path').innerText") == "arguments.path"
    # The miss stands after the recording closest to it; the greyed rows are the three the host never asked for.
    order = tab.evaluate("Array.from(document.querySelectorAll('.row')).map(r => r.id || 'miss')")
    assert order == ["l0-i0", "l0-i1", "l0-i2", "l0-i3", "miss", "l0-i4", "l0-i5"]
    unplayed = tab.evaluate(
        "Array.from(document.querySelectorAll('.row.unplayed')).map(r => "
        "[r.id, r.querySelector('.badge').innerText, getComputedStyle(r.querySelector('.rec')).opacity])"
    )
    assert unplayed == [[f"l0-i{n}", "never asked: unplayed", "0.55"] for n in (2, 4, 5)]


def test_a_message_folds_and_unfolds_from_the_keyboard(tab: Page, failed_page: Path) -> None:
    tab.open(failed_page.as_uri())
    summary = "document.querySelector('#l0-i3 details.msg > summary')"
    tab.evaluate(f"{summary}.focus()")
    tab.press("Enter", "Enter", "\r")
    assert tab.evaluate(f"{summary}.parentElement.open") is True
    tab.wait(f"{summary}.parentElement.dataset.filled === 'yes'")  # built when first unfolded
    unfolded = tab.evaluate(f"{summary}.parentElement.querySelector('.body').innerText")
    assert "cassettes/notes.yaml:39" in unfolded and '"read_file"' in unfolded and '"notes.txt"' in unfolded
    tab.press("Enter", "Enter", "\r")
    assert tab.evaluate(f"{summary}.parentElement.open") is False
    # The keys: `n` moves to the first problem, `/` to the search field.
    tab.evaluate("document.activeElement.blur()")
    tab.press("n", "KeyN", "n")
    assert tab.evaluate("document.activeElement.closest('.row').id") == "l0-i2"
    tab.press("/", "Slash", "/")
    assert tab.evaluate("document.activeElement.id") == "q"


def test_filters_by_kind_method_tool_direction_and_search(tab: Page, failed_page: Path) -> None:
    tab.open(failed_page.as_uri())

    def shown(**chosen: str) -> list[str]:
        for name in ("q", "method", "tool", "dir", "kind"):
            value = json.dumps(chosen.get(name, ""))
            field = f"document.getElementById('{name}')"
            tab.evaluate(f"(e => {{ e.value = {value}; e.dispatchEvent(new Event('input')); }})({field})")
        return list(
            tab.evaluate("Array.from(document.querySelectorAll('.row:not([hidden])')).map(r => r.id || 'miss')")
        )

    assert shown(kind="miss") == ["miss"]
    assert shown(kind="unplayed") == ["l0-i2", "l0-i4", "l0-i5"]
    assert shown(kind="error") == ["l0-i4", "l0-i5"]  # a tool error and a protocol error
    assert shown(method="tools/list") == ["l0-i2"]
    assert shown(tool="read_file", kind="problem") == ["miss", "l0-i4", "l0-i5"]
    assert shown(dir="to", method="notifications/initialized") == ["l0-i1"]
    assert shown(dir="from", method="notifications/initialized") == []
    assert shown(q="No Such File") == ["l0-i4"]  # any case
    assert tab.evaluate("document.getElementById('shown').innerText") == "1 of 7 rows"
    tab.press("Escape", "Escape")
    assert len(shown()) == 7


def test_readable_at_1280x800_and_on_a_narrow_window_with_one_lane_per_server(tab: Page, tmp_path: Path) -> None:
    out = tmp_path / "two.html"
    lanes = [
        lane_for(str(SHIPPED / "notes-session.yaml"), name="notes"),
        lane_for(str(SHIPPED / "time.yaml"), name="time"),
    ]
    write_page(str(out), lanes, "two servers", "pytest")
    tab.open(out.as_uri())
    assert tab.problems() == []
    boxes = tab.evaluate("Array.from(document.querySelectorAll('.lane')).map(l => l.getBoundingClientRect().toJSON())")
    assert [round(b["top"]) for b in boxes] == [round(boxes[0]["top"])] * 2  # side by side at 1280
    assert boxes[1]["left"] > boxes[0]["right"] and boxes[1]["right"] <= 1280
    assert tab.evaluate("document.scrollingElement.scrollWidth") <= 1280
    tab.resize(420, 800)
    tab.wait("document.querySelector('.lane:nth-child(2)').getBoundingClientRect().left < 50")  # stacked
    assert tab.evaluate("document.scrollingElement.scrollWidth") <= 420
    notes = visible_text(tab, ".lanehead h2")
    assert notes[0].startswith("notes") and notes[1].startswith("time")


def test_hostile_text_in_a_cassette_shows_as_text_and_runs_nothing(tab: Page, tmp_path: Path) -> None:
    hostile = "</script><script>window.pwned = 1</script><img src=x onerror=window.pwned=2>"
    cassette = tmp_path / "hostile.yaml"
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": hostile}}
    answer = {"result": {"content": [{"type": "text", "text": hostile}]}}
    cassette.write_text(
        "version: 1\ninteractions:\n- request: " + json.dumps(message) + "\n  response: " + json.dumps(answer) + "\n"
    )
    store.load(str(cassette))
    out = tmp_path / "hostile.html"
    write_page(str(out), [lane_for(str(cassette))], hostile, "cli")
    tab.open(out.as_uri())
    assert tab.evaluate("typeof window.pwned") == "undefined" and tab.problems() == []
    assert tab.evaluate("document.querySelectorAll('img').length") == 0
    assert tab.evaluate("document.title") == hostile
    assert hostile in tab.evaluate("document.querySelector('.row').innerText")
    assert tab.requests() == [out.as_uri()]


def test_a_tests_model_is_a_lane_beside_its_server_each_exchange_linked_to_the_mcp_message_before_it(
    tab: Page, tmp_path: Path
) -> None:
    hostile = "</script><script>window.pwned = 1</script><img src=x onerror=window.pwned=2>"
    lane = lane_for(str(SHIPPED / "notes-session.yaml"))
    count = len(lane.cassette.interactions)
    played = [0.1, 0.2, None, 0.3] + [None] * (count - 4)  # initialize, initialized, then tools/call read_file
    report = {"plays": [int(at is not None) for at in played], "started": 100.0, "played_at": played}
    chat = {"method": "POST", "url": "http://127.0.0.1:9/v1/chat", "answer": "{}", "status": 200, "how": "played"}
    exchanges = ({**chat, "request": hostile, "at": 100.05}, {**chat, "request": '{"n": 2}', "at": 100.5})
    out = tmp_path / "model.html"
    write_page(str(out), [lane._replace(reports=(report,))], "t", "pytest", Model("cassettes/t.yaml", exchanges))
    tab.open(out.as_uri())
    assert tab.evaluate("typeof window.pwned") == "undefined" and tab.problems() == []
    assert tab.evaluate("document.querySelectorAll('img').length") == 0
    lanes = "Array.from(document.querySelectorAll('section.lane')).map(s => s.getAttribute('aria-label'))"
    assert tab.evaluate(lanes) == [str(SHIPPED / "notes-session.yaml"), "model: cassettes/t.yaml"]
    first, second = visible_text(tab, "section.lane:last-child .row")
    assert hostile in first and "played by vcrpy; in time: before any MCP message" in first
    assert "in time: after [3] tools/call" in second
    link = "document.querySelector('section.lane:last-child .row:last-child a.jump').getAttribute('href')"
    assert tab.evaluate(link) == "#l0-i3" and tab.evaluate("document.getElementById('l0-i3') !== null")
    assert visible_text(tab, "section.lane:first-child .row .live .at") == ["at +0.050s", "at +0.150s", "at +0.250s"]


def test_a_value_nested_300_deep_draws_its_deep_levels_as_one_folded_text(tab: Page, tmp_path: Path) -> None:
    """A browser lays out hundreds of nested boxes for seconds (300 levels froze the page): past 32 levels the
    value is one line of text, folded, which reads back as the same JSON."""
    value: object = "leaf"
    for level in range(300):
        value = {"k": value, "n": level} if level % 2 else [value, level]
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {"v": value}}}
    cassette = tmp_path / "deep.yaml"
    cassette.write_text(
        "version: 1\ninteractions:\n- request: " + json.dumps(message) + "\n  response: {result: {content: []}}\n"
    )
    out = tmp_path / "deep.html"
    write_page(str(out), [lane_for(str(cassette))], "deep", "cli")
    tab.open(out.as_uri())
    fold = "document.querySelector('details.msg')"
    tab.evaluate(f"{fold}.open = true")
    tab.wait(f"{fold}.dataset.filled === 'yes'")
    # The message (its line and 4 keys), params (2), arguments (1): v is at level 3, drawn as a tree (2 lines a
    # level) down to level 31; level 32 is text.
    assert tab.evaluate(f"{fold}.querySelectorAll('.jl').length") == 1 + 4 + 2 + 1 + 29 * 2
    deep = f"{fold}.querySelector('details.jf.deep')"
    assert "deeper than 32 levels: shown as text" in tab.evaluate(f"{deep}.innerText")
    tab.evaluate(f"{deep}.open = true")
    tab.wait(f"{deep}.dataset.filled === 'yes'")
    inner = value
    for _level in range(29):
        inner = inner["k"] if isinstance(inner, dict) else inner[0]  # type: ignore[index,call-overload]
    assert json.loads(tab.evaluate(f"{deep}.querySelector('pre').textContent")) == inner
    assert tab.problems() == []
