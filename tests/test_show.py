"""`mockmcp show`: the transcript of every shipped cassette, the per-method summaries, the fault marks,
the width, colour and symbols, and the command run as a real subprocess."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHIPPED, child_env

from mockmcp.cassette import store as cassette
from mockmcp.cassette.model import REQUEST, Cassette, Interaction
from mockmcp.errors import CassetteError, UsageError
from mockmcp.tools import _show as show

ALL = sorted(SHIPPED.glob("*.yaml"))


def transcript(path: Path, width: int = 100, **kwargs: bool) -> list[str]:
    return show.render(cassette.load(str(path.relative_to(ROOT))), False, width, **kwargs).splitlines()


def lines_of(yaml_text: str, width: int = 100) -> list[str]:
    """The message lines (no header, no counts) of a cassette written inline."""
    loaded = cassette.loads("version: 1\ninteractions:\n" + yaml_text, "inline.yaml")
    return show.render(loaded, False, width).splitlines()[1:-1]


def in_order(lines: list[str], wanted: list[str]) -> bool:
    """Every wanted line is one of lines, in this order."""
    positions = [lines.index(line) for line in wanted]
    return positions == sorted(positions)


def test_notes_reads_as_the_session_it_is() -> None:
    lines = transcript(SHIPPED / "notes.yaml")
    assert lines == [
        "cassettes/notes.yaml: handshake era, protocol 2025-11-25, server: python examples/notes_server.py",
        "A notes server with one tool, read_file; a found note, a missing one, a mistyped method.",
        "[0] → initialize protocol 2025-11-25, client mcp 0.1.0",
        "    ← protocol 2025-11-25, server notes 1.0.0",
        "[1] → notifications/initialized",
        "[2] → tools/list",
        "    ← 1 tool: read_file",
        "[3] → tools/call read_file {path: notes.txt}",
        "    ← remember to buy milk",
        "[4] → tools/call read_file {path: missing.txt}",
        "    ← TOOL ERROR no such file: missing.txt",
        "[5] → tools/cal {name: read_file, arguments: {path: notes.txt}}",
        "    ← ERROR -32601 Method not found: tools/cal",
        "5 requests, 1 notification, 0 server messages, 1 error, 1 tool error, 0 faults, era: handshake",
    ]


def test_notes_session_shows_progress_logs_and_server_requests_in_order_with_timings() -> None:
    lines = transcript(SHIPPED / "notes-session.yaml")
    assert lines[:2] == [
        "cassettes/notes-session.yaml: handshake era, protocol 2025-11-25",
        "  server: python examples/notes_server.py, recorded 2026-12-02T15:40:29Z",
    ]
    assert in_order(
        lines,
        [
            "+0.002s [0]  → initialize protocol 2025-11-25, client mcp 0.1.0",
            "             ← protocol 2025-11-25, server notes  (580 ms)",
            "+0.641s [5]  → tools/call count_slowly {n: 2}",
            "+0.642s      ← notifications/progress progress 1/2 step 1",  # in the order the server sent them
            "+0.643s      ← notifications/message info: counted 1",
            "+0.643s      ← notifications/progress progress 2/2 step 2",
            "+0.643s      ← notifications/message info: counted 2",
            "             ← counted to 2  (3 ms)",
            "+0.645s [6]  → tools/call delete_file {path: notes.txt}",
            "+0.647s      ← elicitation/create form: Delete notes.txt?",
            "               → accept {confirm: true}",
            "             ← deleted notes.txt  (4 ms)",
            "+0.652s      ← sampling/createMessage user: Summarize: remember to buy milk",
            "               → example-model: milk",
            "+0.656s      ← roots/list",
            "               → file:///home/user/notes",
            "+0.659s [9]  → resources/read notes://notes.txt",
            "             ← notes://notes.txt: remember to buy milk  (1 ms)",
            "+0.661s [10] → prompts/get review {path: notes.txt}",
            "             ← user: Please review this note: remember to buy milk  (1 ms)",
        ],
    )
    assert (
        lines[-1] == "10 requests, 1 notification, 7 server messages, 0 errors, 1 tool error, 0 faults, era: handshake"
    )


def test_notes_2026_shows_discovery_and_the_input_required_round_trip() -> None:
    lines = transcript(SHIPPED / "notes-2026.yaml")
    assert in_order(
        lines,
        [
            "[0] → server/discover",  # the per-request _meta, the same on every request, is left out
            "    ← versions 2026-07-28, server notes",
            "[4] → tools/call delete_file {path: notes.txt}",
            "    ← input required: elicitation/create form: Delete notes.txt?",
            "[5] → tools/call delete_file {path: notes.txt} with input {action: accept, content: {confirm: true}}",
            "    ← deleted notes.txt",
        ],
    )
    assert (
        lines[-1] == "6 requests, 0 notifications, 0 server messages, 0 errors, 1 tool error, 0 faults, era: stateless"
    )


def test_notes_session_2026_and_time_summarize_their_results() -> None:
    session = transcript(SHIPPED / "notes-session-2026.yaml")
    assert "             ← input required: roots/list  (2 ms)" in session
    assert (
        session[-1]
        == "13 requests, 0 notifications, 4 server messages, 0 errors, 1 tool error, 0 faults, era: stateless"
    )
    time = transcript(SHIPPED / "time.yaml", width=200)
    assert in_order(
        time,
        [
            "            ← versions 2026-07-28, server mcp-time 2026.10.19  (874 ms)",
            "            ← 2 tools: get_current_time, convert_time  (4 ms)",
            "+0.880s [2] → tools/call convert_time {source_timezone: Europe/London, time: 12:00, target_timezone: Asia/Tokyo}",  # noqa: E501 (a literal message, as on the wire)
            "+0.923s [3] → tools/call get_current_time {timezone: Mars/Olympus}",
        ],
    )
    # pretty-printed JSON text is shown in flow style, on its line
    assert any(
        line.startswith("            ← {source: {timezone: Europe/London, datetime: 2026-12-02T12:00:00+00:00")
        for line in time
    )


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_shipped_cassette_has_one_line_per_message(path: Path) -> None:
    loaded = cassette.load(str(path))
    messages = sum(
        (item.message is not None) + (item.kind == "request") + sum(1 + (s.kind == "request") for s in item.server)
        for item in loaded.interactions
    )
    lines = transcript(path, width=400)
    assert sum(("→ " in line or "← " in line) for line in lines) == messages


@pytest.mark.parametrize("width", [20, 33, 60, 100])
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_line_is_wider_than_the_width(path: Path, width: int) -> None:
    for ascii_only in (False, True):
        lines = transcript(path, width, ascii_only=ascii_only)
        assert max(len(line) for line in lines) <= width
        assert lines[-1].startswith(("  ", "era")) or "request" in lines[-1]


def test_a_cut_summary_ends_with_an_ellipsis_and_keeps_its_timing() -> None:
    lines = transcript(SHIPPED / "time.yaml", width=60)
    assert "+0.880s [2] → tools/call convert_time {source_timezone: Eur…" in lines
    assert "            ← {source: {timezone: Europe/London, da…  (6 ms)" in lines
    assert lines[-2:] == [
        "4 requests, 0 notifications, 0 server messages, 0 errors",
        "  1 tool error, 0 faults, era: stateless",
    ]


FAULTS = """\
- server:
  - notification: {method: notifications/tools/list_changed}
  - raw: 'starting up...'
- at: 0.5
  request: {id: 1, method: tools/call, params: {name: slow, arguments: {}}}
  delay: 1.5
  response: {result: {content: [{type: text, text: done}]}}
  took: 1.52
- request: {id: 2, method: tools/list}
  times: 2
  after: unmatched
  response: {result: {tools: []}}
- request: {id: 3, method: tools/call, params: {name: lost, arguments: {}}}
  drop: true
  response: {result: {content: [{type: text, text: never sent}]}}
- request: {id: 4, method: tools/call, params: {name: garbled, arguments: {}}}
  raw_response: '{"jsonrpc": "2.0", "id": {{id}}, "result": '
- request: {id: 5, method: tools/call, params: {name: crash, arguments: {}}}
  exit: {status: 3, when: before}
  response: {result: {content: []}}
- request: {id: 6, method: ping}
  exit: 0
  response: {result: {}}
- request: {id: 7, method: prompts/list}
  after: unmatched
  response: {error: {code: -32603, message: boom}}
- notification: {method: notifications/cancelled, params: {requestId: 1, reason: too slow}}
  delay: 0.25
"""


BROKEN_OFF = """\
- request: {id: 1, method: tools/call, params: {name: halfway, arguments: {}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: halfway}}
  drop: cut
  took: 0.25
"""


def test_an_answer_that_broke_off_is_marked_cut_off_on_its_reply_line() -> None:
    assert lines_of(BROKEN_OFF) == [
        "[0] → tools/call halfway {}",
        "    ← notifications/message info: halfway",
        "    ← no response recorded  (250 ms)  ⚠ cut off",
    ]


def test_each_fault_knob_is_marked_on_the_line_it_changes() -> None:
    assert lines_of(FAULTS) == [
        "        [0] ← notifications/tools/list_changed  (unsolicited)",
        "            ← raw: starting up...  (unsolicited)  ⚠ not JSON",
        "+0.500s [1] → tools/call slow {}  ⚠ delay 1.5s",
        "            ← done  (1.52 s)",
        "        [2] → tools/list  ⚠ times 2, then unmatched",
        "            ← no tools",
        "        [3] → tools/call lost {}",
        "            ← never sent  ⚠ dropped",
        "        [4] → tools/call garbled {}",
        '            ← raw: {"jsonrpc": "2.0", "id": {{id}}, "result":   ⚠ raw reply',
        "        [5] → tools/call crash {}",
        "            ← no content  ⚠ exit 3 before reply",
        "        [6] → ping",
        "            ← {}  ⚠ exit 0 after reply",
        "        [7] → prompts/list  ⚠ then unmatched",
        "            ← ERROR -32603 boom",
        "        [8] → notifications/cancelled request 1: too slow  ⚠ delay 0.25s",
    ]


def test_the_counts_include_the_faults() -> None:
    loaded = cassette.loads("version: 1\ninteractions:\n" + FAULTS)
    last = show.render(loaded, False, 200).splitlines()[-1]
    assert last == "7 requests, 1 notification, 2 server messages, 1 error, 0 tool errors, 9 faults, era: unknown"


def test_fault_marks_stay_whole_when_the_summary_is_cut() -> None:
    line = lines_of(
        "- request: {method: tools/call, params: {name: slow, arguments: {text: " + "x" * 200 + "}}}\n  delay: 2\n"
        "  response: {result: {content: []}}\n",
        50,
    )[0]
    assert len(line) == 50 and line.endswith("…  ⚠ delay 2s")


SUMMARIES = [
    # (method, params, result, the request line, the response line)
    (
        "initialize",
        {"protocolVersion": "2025-06-18", "clientInfo": {"name": "host", "version": "2"}},
        {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "srv", "version": "1"}},
        "initialize protocol 2025-06-18, client host 2",
        "protocol 2025-06-18, server srv 1",
    ),
    (
        "server/discover",
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        {"supportedVersions": ["2025-11-25", "2026-07-28"], "capabilities": {}, "resultType": "complete"},
        "server/discover",
        "versions 2025-11-25, 2026-07-28",
    ),
    (
        "tools/list",
        None,
        {"tools": [{"name": "a", "inputSchema": {}}, {"name": "b", "inputSchema": {}}], "nextCursor": "c2"},
        "tools/list",
        "2 tools: a, b, more after nextCursor",
    ),
    (
        "tools/call",
        {"name": "get", "arguments": {"n": 1, "s": "1", "flag": True, "xs": [1, "two"]}},
        {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}, {"type": "text", "text": "t"}]},
        'tools/call get {n: 1, s: "1", flag: true, xs: [1, two]}',
        "[image image/png] (+1 more)",
    ),
    (
        "tools/call",
        {"name": "get", "arguments": {}},
        {"content": [], "structuredContent": {"ok": True}},
        "tools/call get {}",
        "{ok: true}",
    ),
    ("resources/list", None, {"resources": [{"uri": "file:///a", "name": "a"}]}, "resources/list", "1 resource: a"),
    ("prompts/list", {"cursor": "c2"}, {"prompts": []}, "prompts/list {cursor: c2}", "no prompts"),
    (
        "resources/read",
        {"uri": "file:///b"},
        {"contents": [{"uri": "file:///b", "blob": "AA==", "mimeType": "image/png"}]},
        "resources/read file:///b",
        "file:///b: image/png",
    ),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "x", "value": "a"}},
        {"completion": {"values": ["ab", "ac"]}},
        "completion/complete {type: ref/prompt, name: p} {name: x, value: a}",
        "ab, ac",
    ),
    ("logging/setLevel", {"level": "debug"}, {}, "logging/setLevel debug", "{}"),
    (
        "tasks/get",
        {"taskId": "t-1"},
        {"taskId": "t-1", "status": "working", "_meta": {"io.modelcontextprotocol/x": 1}},
        "tasks/get {taskId: t-1}",
        "{taskId: t-1, status: working}",
    ),
    # a shape the summarizer does not expect is shown as it is, never a crash (loading refuses these: a cassette
    # built in code is shown all the same)
    (
        "tools/call",
        {"arguments": {"a": 1}},
        {"content": "not a list"},
        "tools/call {arguments: {a: 1}}",
        "{content: not a list}",
    ),
    ("initialize", {}, ["odd"], "initialize", "[odd]"),
]


@pytest.mark.parametrize(("method", "params", "result", "asked", "answered"), SUMMARIES)
def test_each_method_has_its_summary(method: str, params: object, result: object, asked: str, answered: str) -> None:
    request = {"id": 1, "method": method, **({"params": params} if params is not None else {})}
    built = Cassette((Interaction(REQUEST, request, response={"result": result}),), {})
    lines = show.render(built, False, 200).splitlines()[1:-1]
    assert lines == [f"[0] → {asked}", f"    ← {answered}"]


def test_server_notifications_and_a_client_notification_are_summarized() -> None:
    text = """\
- notification: {method: notifications/initialized}
  server:
  - request: {id: 1, method: roots/list}
  - notification: {method: notifications/message, params: {level: warning, logger: db, data: {rows: 3}}}
  - notification: {method: notifications/progress, params: {progressToken: t, progress: 0.5}}
  - notification: {method: notifications/resources/updated, params: {uri: 'file:///n'}}
  - request: {id: 2, method: elicitation/create, params: {message: Sure?}}
    response: {result: {action: decline}}
  - request: {id: 3, method: sampling/createMessage, params: {messages: []}}
    response: {error: {code: -1, message: User rejected sampling request}}
"""
    assert lines_of(text) == [
        "[0] → notifications/initialized",
        "    ← roots/list",
        "      → no answer recorded",
        "    ← notifications/message warning db: {rows: 3}",
        "    ← notifications/progress progress 0.5",
        "    ← notifications/resources/updated file:///n",
        "    ← elicitation/create form: Sure?",
        "      → decline",
        "    ← sampling/createMessage nothing",
        "      → ERROR -1 User rejected sampling request",
    ]


def test_a_request_without_a_response_and_odd_text_stay_on_one_line() -> None:
    text = """\
- request: {id: 1, method: tools/call, params: {name: t, arguments: {s: "a\\nb"}}}
- notification: {method: notifications/cancelled, params: {requestId: 1}}
- request: {method: tools/call, params: {name: u}}
  response: {result: {content: [{type: text, text: "line one\\n\\n  line two\\u001b[31m red\\ttab"}]}}
"""
    assert lines_of(text) == [
        '[0] → tools/call t {s: "a\\nb"}',
        "    ← no response recorded",
        "[1] → notifications/cancelled request 1",
        "[2] → tools/call u",
        "    ← line one line two\\x1b[31m red tab",  # no line break, no escape sequence reaches the terminal
    ]


def test_both_eras_are_named_when_a_host_probed_first() -> None:
    text = """\
- request: {method: server/discover}
  response: {error: {code: -32601, message: Method not found}}
- request: {method: initialize, params: {protocolVersion: '2025-11-25', clientInfo: {name: h}}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- request: {method: tools/list, params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}}
  response: {result: {tools: []}}
"""
    loaded = cassette.loads("version: 1\ninteractions:\n" + text)
    assert (
        show.render(loaded, False, 200)
        .splitlines()[-1]
        .endswith("1 error, 0 tool errors, 0 faults, eras: handshake, stateless")
    )


def test_the_era_served_translated_is_named_for_a_server_of_both_eras() -> None:
    text = """\
- request: {method: tools/list, params: {_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}}
  response: {result: {tools: []}}
"""
    loaded = cassette.loads("version: 1\nmeta: {server_eras: [handshake, stateless]}\ninteractions:\n" + text)
    last = show.render(loaded, False, 200).splitlines()[-1]
    assert last.endswith("0 faults, era: stateless (serves handshake hosts too, translated)")


def test_colour_only_when_asked_and_never_changes_the_text() -> None:
    loaded = cassette.load(str(SHIPPED / "notes.yaml"))
    plain, coloured = show.render(loaded, False, 60), show.render(loaded, True, 60)
    assert "\x1b[" not in plain
    assert "\x1b[31mERROR -32601" in coloured and "\x1b[33mTOOL ERROR" in coloured and "\x1b[36m→" in coloured
    assert re.sub(r"\x1b\[\d+m", "", coloured) == plain


def test_ascii_symbols_for_a_terminal_that_cannot_show_arrows() -> None:
    loaded = cassette.loads("version: 1\ninteractions:\n" + FAULTS)
    text = show.render(loaded, False, 100, ascii_only=True)
    assert text.isascii()
    assert "+0.500s [1] -> tools/call slow {}  ! delay 1.5s" in text.splitlines()
    assert "            <- never sent  ! dropped" in text.splitlines()


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("choice", "tty", "environ", "wanted"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # no-color.org: an empty NO_COLOR does not count
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {}, False),
    ],
)
def test_when_to_colour(choice: str, tty: bool, environ: dict[str, str], wanted: bool) -> None:
    assert show.want_color(choice, _Stream(tty), environ) is wanted


def test_an_unknown_colour_choice_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="unknown --color 'sometimes'") as raised:
        show.want_color("sometimes", _Stream(True), {})
    assert raised.value.fix == "use one of: auto, always, never"


def test_a_broken_cassette_raises_the_located_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("version: 1\ninteractions:\n- request: {method: x}\n  respnse: {}\n")
    with pytest.raises(CassetteError, match="unknown key 'respnse'"):
        show.print_show(str(path), "never", 80)


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in child_env().items() if k not in ("COLUMNS", "NO_COLOR")}
    environ.update(env or {})
    command = [sys.executable, "-m", "mockmcp", "show", *args]
    return subprocess.run(command, capture_output=True, text=True, encoding="utf-8", timeout=30, env=environ, cwd=ROOT)


def test_the_command_prints_the_transcript_without_colour_to_a_pipe() -> None:
    done = run("cassettes/notes.yaml", env={"PYTHONIOENCODING": "utf-8"})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == transcript(SHIPPED / "notes.yaml")  # not a terminal: 100 columns, no colour


def test_the_command_colours_when_told_and_honours_the_width() -> None:
    done = run("cassettes/time.yaml", "--color", "always", "--width", "40", env={"PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 0 and "\x1b[" in done.stdout
    plain = run("cassettes/time.yaml", "--color", "never", "--width", "40", env={"PYTHONIOENCODING": "utf-8"})
    assert "\x1b[" not in plain.stdout and max(map(len, plain.stdout.splitlines())) == 40


def test_the_command_falls_back_to_ascii_symbols() -> None:
    done = run("cassettes/notes.yaml", env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0
    assert "[3] -> tools/call read_file {path: notes.txt}" in done.stdout.splitlines()


def test_the_command_reports_a_missing_cassette_and_exits_2() -> None:
    done = run("cassettes/nope.yaml")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("mockmcp: error: cassettes/nope.yaml: no such cassette")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize(("no_color", "coloured"), [("", True), ("1", False)])
def test_on_a_terminal_auto_colours_unless_no_color(no_color: str, coloured: bool) -> None:
    import os
    import pty

    leader, follower = pty.openpty()  # the transcript (about 1 kB) fits the terminal's buffer: no reader thread needed
    try:
        environ = {**child_env(), "NO_COLOR": no_color, "PYTHONIOENCODING": "utf-8"}
        command = [sys.executable, "-m", "mockmcp", "show", "cassettes/notes.yaml", "--width", "100"]
        done = subprocess.run(command, stdout=follower, stderr=subprocess.PIPE, timeout=30, env=environ, cwd=ROOT)
        os.close(follower)
        output = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # Linux: the terminal is closed once everything is read
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0
    assert (b"\x1b[" in output) is coloured
    assert "[3] → tools/call read_file {path: notes.txt}".encode() in re.sub(rb"\x1b\[\d+m", b"", output)


def test_a_cassette_of_several_sessions_marks_where_each_begins() -> None:
    lines = lines_of(
        "- request: {method: ping}\n  response: {result: {}}\n"
        "- session: 1\n  request: {method: ping}\n  response: {result: {}}\n"
        "- session: 1\n  notification: {method: notifications/initialized}\n"
        "- session: 2\n  request: {method: tools/list}\n  response: {result: {tools: []}}\n"
    )
    assert lines == [
        "── session 0: 1 interaction ──",
        "[0] → ping",
        "    ← {}",
        "── session 1: 2 interactions ──",
        "[1] → ping",
        "    ← {}",
        "[2] → notifications/initialized",
        "── session 2: 1 interaction ──",
        "[3] → tools/list",
        "    ← no tools",
    ]
    # A cassette of one session has no such line.
    assert not any("session" in line for line in transcript(SHIPPED / "notes.yaml"))


def test_a_server_message_sent_on_the_get_stream_says_so() -> None:
    text = """
- request: {id: 1, method: tools/call, params: {name: confirm, arguments: {}}}
  server:
  - request: {id: 0, method: elicitation/create, params: {message: Sure?}}
    response: {result: {action: accept}}
    stream: get
  response: {result: {content: []}}
"""
    lines = lines_of(text)
    assert lines[1].endswith("  (on the GET stream)") and "elicitation/create" in lines[1]
    assert not lines[0].endswith("stream)")
