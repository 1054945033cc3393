"""The HTML timeline's data and page without a browser: what each row holds, the escaping of untrusted data, the
commands that write a page, and the plugin's page per failed test (pytester). tests/test_html_browser.py looks at
the pages in a real browser."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import jsonschema
import mcp  # noqa: F401
import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp.cassette import store
from mockmcp.cli.app import cli
from mockmcp.cli.app import main as cli_main
from mockmcp.errors import UsageError
from mockmcp.html import _page as html_page
from mockmcp.html import _view as html_view
from mockmcp.html._page import lane_for, read_report, render_page, write_page
from mockmcp.tools import report_problem
from mockmcp.tools._report_schema import schema

pytest_plugins = ["pytester"]

# The README's example: the demo host's first session, and a read of a note the cassette never recorded.
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo-host", "version": "1.0"}}
DEMO = [
    {"jsonrpc": "2.0", "id": 100, "method": "initialize", "params": HELLO},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 101,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "notes.txt"}},
    },
    {
        "jsonrpc": "2.0",
        "id": 102,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "note.txt"}},
    },
]


def replay(cassette: str, *options: str, session: list[dict[str, Any]] = DEMO) -> subprocess.CompletedProcess[str]:
    lines = "".join(json.dumps(message) + "\n" for message in session)
    return subprocess.run(
        [*MOCKMCP, "replay", cassette, *options],
        input=lines,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env(),
        timeout=30,
    )


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of the README's demo session replayed against cassettes/notes.yaml: one miss, three unplayed."""
    report = tmp_path_factory.mktemp("demo") / "report.json"
    done = replay("cassettes/notes.yaml", "--report", str(report))
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(report.read_text())
    return loaded


def page_data(text: str) -> Any:
    """The data block of a page, as the page's script reads it."""
    found = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S)
    assert found is not None
    return json.loads(found.group(1))


def view_of(yaml_text: str, reports: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    cassette = store.loads(yaml_text, "inline.yaml")
    return html_view.lane_view(html_view.Lane("", cassette, reports))


# --- what the rows hold ---------------------------------------------------------------------------------


def test_a_lane_holds_every_message_with_shows_words_and_its_line_in_the_file() -> None:
    lane = html_view.lane_view(lane_for(str(SHIPPED / "notes-session.yaml")))
    rows = {row["n"]: row for row in lane["rows"]}
    count = rows[5]["msgs"]
    assert [(m["dir"], m["kind"], m["method"], m["text"]) for m in count] == [
        ("to", "request", "tools/call", "count_slowly {n: 2}"),
        ("from", "notification", "notifications/progress", "progress 1/2 step 1"),
        ("from", "notification", "notifications/message", "info: counted 1"),
        ("from", "notification", "notifications/progress", "progress 2/2 step 2"),
        ("from", "notification", "notifications/message", "info: counted 2"),
        ("from", "response", "tools/call", "counted to 2"),
    ]
    assert [m["depth"] for m in count[1:5]] == [1, 1, 1, 1]  # progress and logs under their request
    asked, answered = rows[6]["msgs"][1:3]  # a server request, and the host's answer under it
    assert (asked["method"], answered["dir"], answered["kind"], answered["text"]) == (
        "elicitation/create",
        "to",
        "answer",
        "accept {confirm: true}",
    )
    text = (SHIPPED / "notes-session.yaml").read_text().splitlines()
    assert text[rows[6]["line"] - 1] == "- at: 0.645"  # the interaction's own line, 1-based
    assert text[asked["line"] - 1].strip().startswith("- at: 0.647")
    assert rows[4]["msgs"][1]["error"] and rows[4]["msgs"][1]["style"] == "tool"  # a tool error is an error
    assert lane["counts"][-1] == "era: handshake" and "protocol 2025-11-25" in lane["facts"]


FLOW = """{"version": 1, "interactions": [
  {"request": {"id": 1, "method": "ping"}, "response": {"result": {}}},
  {"request": {"id": 2}, "server": [{"notification": {}},
   {"request": {"id": 3}, "response": {}}], "response": {"result": {"a": [1, {"b": 2}]}}}]}
"""


@pytest.mark.parametrize("text", [*(path.read_text() for path in sorted(SHIPPED.glob("*.yaml"))), FLOW])
def test_shallow_lines_agree_with_the_node_tree_to_their_depth(text: str) -> None:
    from mockmcp.cassette.yamlfile import compose, lines, nodes, shallow_lines

    deep = {place: line for place, line in lines(nodes(compose(text))).items() if len(place) <= 5}
    assert shallow_lines(text, 5) == deep and len(deep) > 5


def test_input_required_rounds_are_grouped() -> None:
    rows = html_view.lane_view(lane_for(str(SHIPPED / "notes-session-2026.yaml")))["rows"]
    rounds = {row["n"]: row.get("round") for row in rows}
    assert rounds[5] == {"first": 5, "k": 1, "of": 2} and rounds[6] == {"first": 5, "k": 2, "of": 2}
    assert rounds[9] == {"first": 9, "k": 1, "of": 2} and rounds[10]["k"] == 2
    assert rounds[4] is None and rounds[11] is None


FAULTS = """\
- request: {id: 1, method: tools/call, params: {name: slow}}
  delay: 2.5
  times: 2
  drop: true
- at: 1.0
  request: {id: 2, method: tools/call, params: {name: long}}
  server:
  - {at: 1.1, notification: {method: notifications/progress, params: {progressToken: 2, progress: 1}}}
  - {at: 1.6, notification: {method: notifications/progress, params: {progressToken: 2, progress: 2}}}
  response: {error: {code: -32800, message: Request cancelled}}
  took: 0.8
- at: 1.5
  notification: {method: notifications/cancelled, params: {requestId: 2}}
- request: {id: 3, method: tools/call, params: {name: raw}}
  raw_response: 'not json {'
  exit: {status: 3, when: after}
"""


def test_an_answer_that_broke_off_is_marked_as_show_marks_it() -> None:
    text = "version: 1\ninteractions:\n- request: {id: 1, method: tools/call, params: {name: x}}\n  drop: cut\n"
    assert view_of(text)["rows"][0]["msgs"][1]["marks"] == ["cut off"]


def test_fault_knobs_are_marked_as_show_marks_them_and_cancellations_with_their_late_answers() -> None:
    rows = view_of("version: 1\ninteractions:\n" + FAULTS)["rows"]
    assert rows[0]["msgs"][0]["marks"] == ["delay 2.5s", "times 2"]  # show's words, on the first line
    assert rows[0]["msgs"][1]["marks"] == ["dropped"]
    assert rows[1]["cancelled"] == 2 and rows[2]["cancels"] == 1
    late = ["after the cancel", "late answer, after the cancel"]
    assert [m.get("late") for m in rows[1]["msgs"]] == [None, None, *late]
    raw = rows[3]["msgs"][1]
    assert (raw["text"], raw["style"], raw["json"]) == ("raw: not json {", "fault", "not json {")
    assert raw["marks"] == ["raw reply", "exit 3 after reply"]


def test_a_report_puts_each_miss_after_its_closest_recording_and_marks_what_was_not_played(
    demo_report: dict[str, Any],
) -> None:
    lane = html_view.lane_view(lane_for(str(SHIPPED / "notes.yaml"), [demo_report]))
    order = [("miss" if row.get("miss") else row["n"]) for row in lane["rows"]]
    assert order == [0, 1, 2, 3, "miss", 4, 5]
    miss = lane["rows"][4]
    assert (miss["method"], miss["name"], miss["text"]) == ("tools/call", "read_file", "read_file {path: note.txt}")
    assert miss["closest"][0]["interaction"] == 3 and miss["closest"][0]["line"] == 39
    assert miss["closest"][0]["differences"] == ['arguments.path: recorded "notes.txt", incoming "note.txt"']
    assert miss["fixes"][1].endswith(
        "mockmcp record --record-mode rewrite -o cassettes/notes.yaml -- python examples/notes_server.py"
    )
    states = {row["n"]: row["live"]["state"] for row in lane["rows"] if "n" in row}
    assert states == {0: "played", 1: "played", 2: "unplayed", 3: "played", 4: "unplayed", 5: "unplayed"}
    assert lane["live"] | {"notes": []} == {
        "sessions": 1,
        "played": 3,
        "total": 6,
        "missed": 1,
        "unplayed": 3,
        "differed": 0,
        "notes": [],
    }


def test_answers_that_differed_and_withheld_requests_are_marked_on_the_server_request() -> None:
    cassette = store.load(str(SHIPPED / "notes-session.yaml"))
    report = {
        "plays": [1] * len(cassette.interactions),
        "mismatches": [
            {
                "interaction": 6,
                "method": "elicitation/create",
                "differences": ["action: recorded accept, live decline"],
            },
            {"interaction": None, "method": "tools/call", "differences": [], "explanation": "left every session"},
        ],
        "withheld": [{"interaction": 8, "method": "roots/list", "explanation": "withheld roots/list: no roots"}],
        "faults": ["dropped the reply of interactions[0]"],
    }
    lane = html_view.lane_view(html_view.Lane("", cassette, (report,)))
    rows = {row["n"]: row for row in lane["rows"]}
    assert rows[6]["msgs"][1]["differed"] == ["action: recorded accept, live decline"] and rows[6]["live"]["differed"]
    assert rows[8]["msgs"][1]["withheld"] == ["withheld roots/list: no roots"]
    assert lane["live"]["notes"] == ["left every session", "fault: dropped the reply of interactions[0]"]


def test_placeholders_stay_as_the_cassette_holds_them_and_nothing_of_this_machine_enters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROJECT", "/srv/the-live-project")
    monkeypatch.setenv("API_KEY", "sk-live-value")
    cassette = tmp_path / "secret.yaml"
    cassette.write_text(
        "version: 1\nmeta: {substitute: [PROJECT], redact: {env: [API_KEY]}}\ninteractions:\n"
        "- request: {id: 1, method: tools/call, params: {name: open, arguments: {path: '${PROJECT}/a.txt'}}}\n"
        "  response: {result: {content: [{type: text, text: 'key [REDACTED:API_KEY]'}]}}\n"
    )
    page = html_page.render_page(html_view.page_view([lane_for(str(cassette))], "t", "cli"))
    assert "${PROJECT}/a.txt" in page and "[REDACTED:API_KEY]" in page
    assert "/srv/the-live-project" not in page and "sk-live-value" not in page


# --- a test's model beside its servers: one order in time -------------------------------------------------------

SESSION = """version: 1
interactions:
- request: {id: 1, method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- notification: {method: notifications/initialized}
- request: {id: 2, method: tools/call, params: {name: read_file, arguments: {path: notes.txt}}}
  response: {result: {content: [{type: text, text: milk}]}}
"""
CHAT = {"method": "POST", "url": "http://model/v1/chat", "request": '{"prompt":"hi"}', "answer": "{}", "status": 200}

# (each lane's reports as (started, played_at), the model's exchanges' times, the page's order, each model
# exchange's MCP message just before it). Times are seconds since the epoch, as the clocks say them.
IN_TIME = [
    # the model, then the session, then the model: the call order
    (
        [[(100.0, [0.5, 0.6, 0.9])]],
        [100.2, 101.5],
        ["model 0", "initialize", "initialized", "tools/call", "model 1"],
        [None, "[2] tools/call"],
    ),
    # one exchange between the handshake and the tool call; one before the replay even started
    (
        [[(100.0, [0.1, 0.2, 0.9])]],
        [99.0, 100.5],
        ["model 0", "initialize", "initialized", "model 1", "tools/call"],
        [None, "[1] notifications/initialized"],
    ),
    # a request never played has no place in time; the model's exchanges keep the order they came in
    (
        [[(100.0, [0.1, None, None])]],
        [100.3, 100.3],
        ["initialize", "model 0", "model 1"],
        ["[0] initialize", "[0] initialize"],
    ),
    # the same instant: the MCP play first
    ([[(100.0, [0.0, 0.5, 1.0])]], [101.0], ["initialize", "initialized", "tools/call", "model 0"], ["[2] tools/call"]),
    # two sessions of one server: each interaction at its earliest play, on the clock of its own session
    (
        [[(100.0, [0.1, 0.2, None]), (102.0, [0.1, 0.2, 0.3])]],
        [101.0, 103.0],
        ["initialize", "initialized", "model 0", "tools/call", "model 1"],
        ["[1] notifications/initialized", "[2] tools/call"],
    ),
    # two servers: the lanes interleave by time
    (
        [[(100.0, [0.1, 0.2, 2.0])], [(101.0, [0.1, 0.2, 0.3])]],
        [100.5],
        [
            "initialize",
            "initialized",
            "model 0",
            "more initialize",
            "more initialized",
            "more tools/call",
            "tools/call",
        ],
        ["[1] notifications/initialized"],
    ),
    # a report written before times: the model's exchanges alone
    ([[(None, None)]], [100.0, 101.0], ["model 0", "model 1"], [None, None]),
]


@pytest.mark.parametrize(("reports", "model", "order", "after"), IN_TIME)
def test_a_tests_model_exchanges_take_their_place_among_the_mcp_messages_by_the_clock(
    reports: list[list[tuple[float | None, list[float | None] | None]]],
    model: list[float],
    order: list[str],
    after: list[str | None],
) -> None:
    cassette = store.loads(SESSION, "cassettes/t.yaml")
    lanes = []
    for name, sessions in zip(["", "more"], reports, strict=False):
        timed = [{"plays": [1 if at is not None else 0 for at in played or [1, 1, 1]]} for _started, played in sessions]
        for report, (started, played) in zip(timed, sessions, strict=True):
            report |= {} if started is None else {"started": started, "played_at": played}
        lanes.append(html_view.Lane(name, cassette, tuple(timed)))
    exchanges = tuple({**CHAT, "how": "played", "at": at} for at in model)
    view = html_view.page_view(lanes, "t", "pytest", html_view.Model("cassettes/t.yaml", exchanges))
    *servers, beside = view["lanes"]
    assert beside["kind"] == "model" and [lane["name"] for lane in servers] == ["", "more"][: len(reports)]

    def said(entry: dict[str, Any]) -> str:
        lane = view["lanes"][entry["lane"]]
        if lane["kind" if "kind" in lane else "name"] == "model":
            return f"model {entry['n']}"
        method = lane["rows"][entry["n"]]["msgs"][0]["method"].removeprefix("notifications/")
        return f"{lane['name']} {method}".strip()

    assert [said(entry) for entry in view["order"]] == order
    placed = [row["after"] and f"[{row['after']['n']}] {row['after']['method']}" for row in beside["rows"]]
    assert placed == after
    played = [s + at for lane in reports for s, ats in lane if s is not None for at in ats or () if at is not None]
    first = min([*model, *played])  # the page's times: seconds after the first thing that happened
    assert [row["at"] for row in beside["rows"]] == pytest.approx([at - first for at in model])
    asked, answered = beside["rows"][0]["msgs"]
    assert (asked["dir"], asked["method"], asked["text"]) == ("to", "POST", 'http://model/v1/chat {"prompt":"hi"}')
    assert (answered["dir"], answered["text"], answered["error"]) == ("from", "200 {}", False)


def test_a_page_without_a_model_has_no_order_and_its_rows_no_times(demo_report: dict[str, Any]) -> None:
    timed = {**demo_report, "started": 100.0, "played_at": [0.1] * len(demo_report["plays"])}
    view = html_view.page_view([lane_for(str(SHIPPED / "notes.yaml"), [timed])], "t", "cli")
    assert "order" not in view and not any("at" in row.get("live", {}) for row in view["lanes"][0]["rows"])


# --- the page: one self-contained file, safe with any data ---------------------------------------------------

HOSTILE = "</script><script>window.pwned = 1</script><!-- <img src=x onerror=alert(1)> \u2028 {{data}}"


def test_untrusted_text_cannot_leave_the_data_block_and_reads_back_whole(tmp_path: Path) -> None:
    folder = tmp_path / "<b>{{style}}"
    folder.mkdir()
    cassette = folder / "hostile.yaml"
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": HOSTILE}}
    answer = {"result": {"content": [{"type": "text", "text": HOSTILE}]}}
    cassette.write_text(
        "version: 1\ninteractions:\n- request: " + json.dumps(message) + "\n  response: " + json.dumps(answer) + "\n"
    )
    lane = lane_for(str(cassette))
    said = {"method": HOSTILE, "url": HOSTILE, "request": HOSTILE, "answer": HOSTILE, "status": 200, "how": HOSTILE}
    model = html_view.Model(HOSTILE, ({**said, "at": 1.0},))  # a model's exchange: shown as text alike
    view = html_view.page_view([lane], f"mockmcp: {cassette}", "cli", model)
    page = render_page(view)
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data block and the page's script
    assert "<!--" not in page and "<img" not in page and "<b>" not in page
    assert f"<title>mockmcp: {html.escape(str(cassette))}</title>" in page
    assert page_data(page) == json.loads(json.dumps(view))  # every character comes back as it was


def test_a_lone_surrogate_from_a_host_still_makes_a_page_that_utf8_holds(
    tmp_path: Path, demo_report: dict[str, Any]
) -> None:
    odd = "\udc80"  # a host's id or arguments may hold one; the report keeps it escaped
    report = {**demo_report, "misses": [{**demo_report["misses"][0], "id": odd}]}
    out = tmp_path / "lone.html"
    write_page(str(out), [lane_for(str(SHIPPED / "notes.yaml"), [report])], f"title {odd}", "cli")
    data = page_data(out.read_text(encoding="utf-8"))
    assert [row["id"] for row in data["lanes"][0]["rows"] if row.get("miss")] == [odd]


def test_the_page_asks_nothing_of_the_network() -> None:
    page = render_page(html_view.page_view([lane_for(str(SHIPPED / "notes.yaml"))], "t", "cli"))
    assert "default-src 'none'" in page  # the Content-Security-Policy forbids every fetch
    assert not re.search(r"https?://|@import|url\(|\bsrc=|<link", page)


# --- the commands --------------------------------------------------------------------------------------------


def test_show_html_with_a_report_and_replay_html_write_the_same_session(
    tmp_path: Path, demo_report: dict[str, Any]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps(demo_report))
    shown = tmp_path / "shown.html"
    cli.main(
        ["show", "cassettes/notes.yaml", "--html", str(shown), "--with-report", str(report)], standalone_mode=False
    )
    done = replay("cassettes/notes.yaml", "--html", str(tmp_path / "replay-{pid}.html"))
    assert done.returncode == 0, done.stderr
    (replayed,) = tmp_path.glob("replay-*.html")
    assert f"mockmcp: the session as a timeline: {replayed}" in done.stderr
    lanes = [page_data(page.read_text())["lanes"][0] for page in (shown, replayed)]
    assert lanes[0]["rows"] == lanes[1]["rows"] and lanes[0]["live"] == lanes[1]["live"]
    assert lanes[0]["href"] == (ROOT / "cassettes" / "notes.yaml").as_uri()


@pytest.mark.parametrize(
    ("args", "error", "said"),
    [
        (["--html"], click.UsageError, "Option '--html' requires an argument"),
        (["--with-report", "r.json"], UsageError, "--with-report is an option of `show --html FILE`"),
        (["--html", "x.html", "--with-report", "missing.json"], UsageError, "missing.json: cannot read the report"),
    ],
)
def test_show_html_refuses_what_it_cannot_use(args: list[str], error: type, said: str, tmp_path: Path) -> None:
    with pytest.raises(error, match=re.escape(said)):
        cli.main(["show", "cassettes/notes.yaml", *args], standalone_mode=False)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{", "its JSON does not parse"),
        ("[]", "the report: must be an object"),
        ("[" * 100_000 + "]" * 100_000, "its JSON does not parse"),
        ("{PLAYS}", "the report counts 2 interactions, the cassette has 6"),
        ("{OTHER}", "is of the cassette "),
    ],
)
def test_a_report_that_is_not_one_of_this_cassette_is_refused_with_its_file(
    text: str, said: str, tmp_path: Path, demo_report: dict[str, Any]
) -> None:
    report = tmp_path / "report.json"
    other = {**demo_report, "cassette": str(ROOT / "examples" / "weather.yaml")}
    text = {"{PLAYS}": json.dumps({**demo_report, "plays": [1, 1]}), "{OTHER}": json.dumps(other)}.get(text, text)
    report.write_text(text)
    with pytest.raises(UsageError, match=re.escape(said)) as refused:
        read_report(str(report), 6, str(ROOT / "cassettes" / "notes.yaml"))
    assert refused.value.problem.startswith(f"{report}: ") and "mockmcp replay --report FILE" in str(refused.value.fix)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change of the report at a dotted path (`misses.0.method`); the value `...` removes the key."""

    def change(report: dict[str, Any]) -> None:
        *parents, last = [int(key) if key.isdigit() else key for key in path.split(".")]
        holder: Any = report
        for key in parents:
            holder = holder[key]
        if value is ...:
            del holder[last]
        else:
            holder[last] = value

    return change


# Hand-made reports: each is refused with the key path the schema finds wrong (`mockmcp schema --for report`).
TAMPERED = [
    ("misses.0.method", ..., "misses[0].method: is missing"),
    ("misses.0.closest.0.differences", "x", "misses[0].closest[0].differences: must be array"),
    ("misses.0.closest", [{}] * 4, "misses[0].closest: must hold at most 3 items"),
    ("misses.0.code", 1.5, "misses[0].code: must be integer"),
    ("misses.0.record", "once", 'misses[0].record: must be one of "new", "all"'),
    ("misses.0", "a miss", "misses[0]: must be object"),
    ("unplayed.0.interaction", "x", "unplayed[0].interaction: must be integer"),
    ("repeats", {}, "repeats: must be array"),
    ("mismatches", [{"interaction": 0, "method": "m", "differences": [1], "explanation": ""}], "differences[0]"),
    ("withheld", [{"interaction": 0, "method": "m", "explanation": ""}], "withheld[0].capability: is missing"),
    ("plays.1", -1, "plays[1]: must be 0 or more"),
    ("plays.0", True, "plays[0]: must be integer"),
    ("faults", "x", "faults: must be array"),
    ("missed", "many", "missed: must be integer"),
    ("strict_ok", 1, "strict_ok: must be boolean"),
    ("version", 99, "version: must be 1"),
    ("unanswered", ..., "unanswered: is missing"),
]


@pytest.mark.parametrize(("path", "value", "said"), TAMPERED, ids=[row[2] for row in TAMPERED])
def test_a_hand_made_report_is_refused_with_the_key_the_schema_finds_wrong(
    path: str, value: Any, said: str, demo_report: dict[str, Any]
) -> None:
    report = json.loads(json.dumps(demo_report))
    assert report_problem(report) is None and report["misses"][0]["closest"]
    _set(path, value)(report)
    assert said in str(report_problem(report))
    assert list(jsonschema.Draft7Validator(schema()).iter_errors(report))  # the schema's own validator agrees


def test_show_html_says_what_is_wrong_with_a_report_and_no_traceback(
    tmp_path: Path, demo_report: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "hand-made.txt"  # not .json: the session checks every report written there
    report.write_text(json.dumps({**demo_report, "misses": [{"id": 1}]}))
    with pytest.raises(SystemExit):
        cli_main(["show", "cassettes/notes.yaml", "--html", str(tmp_path / "p.html"), "--with-report", str(report)])
    said = capsys.readouterr().err
    assert f"{report}: not a replay report: misses[0].method: is missing" in said and "Traceback" not in said
    assert not (tmp_path / "p.html").exists()


# --- the plugin: a page per failed test ----------------------------------------------------------------------

HOST = """
import pytest
from mcp import Client

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def read(server, path):
    async with Client(server.transport, mode="legacy") as client:
        return (await client.call_tool("read_file", {"path": path})).content[0].text

@pytest.mark.anyio
@pytest.mark.mockmcp(cassette="notes.yaml", record="none")
async def test_reads_a_note(mockmcp):
    assert await read(mockmcp, "notes.txt") == "remember to buy milk"

@pytest.mark.anyio
@pytest.mark.mockmcp(cassette="notes.yaml", record="none")
async def test_reads_another_note(mockmcp):
    assert await read(mockmcp, "note.txt") == "remember to buy milk"

@pytest.mark.anyio
@pytest.mark.mockmcp(servers={"notes": None, "more": None}, record="none")
async def test_reads_from_two_servers(mockmcp):
    assert await read(mockmcp["notes"], "notes.txt") == "remember to buy milk"
    assert await read(mockmcp["more"], "notes.txt") == "milk"
"""


def test_a_failed_test_leaves_one_page_named_in_its_failure_and_a_passed_test_none(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=HOST)
    folder = pytester.path / "cassettes" / "test_host"
    for target in (
        folder / "notes.yaml",
        *(folder / "test_reads_from_two_servers" / f"{n}.yaml" for n in ("notes", "more")),
    ):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--basetemp=basetemp", "--html=report.html")
    result.assert_outcomes(passed=1, failed=2)
    pages = sorted(pytester.path.rglob("*.html"))
    pages.remove(pytester.path / "report.html")  # pytest-html's own report
    assert [page.name for page in pages] == [
        "test_reads_another_note.html",
        "test_reads_from_two_servers.html",
    ]
    output = result.stdout.str()
    for page in pages:  # each named in its test's failure (the verdict, or a section after the host's failure)
        assert f"mockmcp: the session as a timeline: {page}" in output
    one, two = (page_data(page.read_text()) for page in pages)
    assert one["runner"] == "pytest" and [lane["name"] for lane in two["lanes"]] == ["notes", "more"]
    (miss,) = [row for row in one["lanes"][0]["rows"] if row.get("miss")]
    assert not any("--mockmcp-record" in fix for fix in miss["fixes"])
    assert miss["fixes"][-1].startswith("or edit ")  # record="none": a hand-made cassette, no recording suggested
    assert "@pytest.mark.mockmcp(ignore=['arguments.path'])" in miss["fixes"][0]
    linked = (pytester.path / "report.html").read_text()
    assert all(page.as_uri() in linked or json.dumps(page.as_uri())[1:-1] in linked for page in pages)


def test_mockmcp_html_all_writes_a_page_for_a_passed_test_too_and_none_writes_none(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_host=HOST)
    target = pytester.path / "cassettes" / "test_host" / "notes.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "notes-session.yaml", target)
    every = pytester.runpytest_inprocess("--basetemp=basetemp", "-k", "reads_a_note", "--mockmcp-html=all")
    every.assert_outcomes(passed=1)
    assert [page.name for page in pytester.path.rglob("*.html")] == ["test_reads_a_note.html"]
    shutil.rmtree(pytester.path / "basetemp")
    none = pytester.runpytest_inprocess("--basetemp=basetemp", "-k", "another", "--mockmcp-html=none")
    none.assert_outcomes(failed=1)
    assert not list(pytester.path.rglob("*.html")) and "as a timeline" not in none.stdout.str()


def test_the_page_module_stays_off_the_plugin_and_replay_paths() -> None:
    loaded = "import sys, mockmcp.plugin.pytest_plugin, mockmcp.cli.replaying"
    code = f"{loaded}; print('mockmcp.html._page' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=30)
    assert done.stdout.strip() == "False", done.stderr
