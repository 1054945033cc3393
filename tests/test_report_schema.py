"""The report is a contract (docs/report.md): its JSON Schema is built from the keys the writers write, and
every kind of report validates against it: a clean replay, misses, repeats, unplayed interactions, answers
that differed, withheld server requests, several sessions over HTTP, and `mockmcp exec`'s reports of a
recording and of a launch that could not start. (tests/conftest.py validates every report file the rest of
the suite writes as well.)
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import subprocess
from typing import Any

import jsonschema
import pytest
from conftest import MOCKMCP, ROOT, child_env

from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay, Send
from mockmcp.engine.report import REPORT_VERSION, Report
from mockmcp.tools import _report_schema as report_schema

VALIDATOR = jsonschema.Draft7Validator(report_schema.schema())

CASSETTE = """
version: 1
interactions:
- request: {id: 1, method: initialize, params: {protocolVersion: '2025-11-25', capabilities: {roots: {}},
    clientInfo: {name: h, version: '1'}}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: s, version: '1'}}}
- request: {id: 2, method: tools/call, params: {name: read, arguments: {path: a.txt}}}
  response: {result: {content: [{type: text, text: milk}]}}
- request: {id: 3, method: tools/call, params: {name: ask}}
  server:
  - request: {id: 0, method: roots/list}
    response: {result: {roots: [{uri: 'file:///x'}]}}
  response: {result: {content: []}}
- request: {id: 4, method: tools/list}
  response: {result: {tools: []}}
"""


def line(id_: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def opening(capabilities: dict[str, Any]) -> bytes:
    params = {"protocolVersion": "2025-11-25", "capabilities": capabilities}
    params["clientInfo"] = {"name": "t", "version": "2"}
    return line(1, "initialize", params)


READ = line(2, "tools/call", {"name": "read", "arguments": {"path": "a.txt"}})
# A call no recording answers, of over a megabyte: a long text and a long list.
HUGE_PARAMS = {"name": "read", "arguments": {"path": "b", "text": "x" * 1_000_000, "items": list(range(50_000))}}
HUGE = line(2, "tools/call", HUGE_PARAMS)


def session(*lines: bytes, answer: dict[str, Any] | None = None, start: float | None = None) -> Report:
    """The report of one session fed these lines; a server request is answered with `answer`. With `start`, timed
    by a clock that says `start` first, then half a second more each time it is read."""
    engine = Replay(loads(CASSETTE, "cassettes/x.yaml"), Matcher.build())
    if start is not None:
        engine.report.timed(functools.partial(next, itertools.count(start, 0.5)))
    for each in lines:
        for action in engine.receive(each):
            asked = [json.loads(x) for x in action.data.splitlines()] if isinstance(action, Send) else []
            for message in asked:
                if "method" in message and "id" in message:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer or {"roots": []}}
                    engine.receive(json.dumps(reply).encode())
    return engine.report


def kinds() -> dict[str, dict[str, Any]]:
    roots = {"roots": {}}
    ask = line(3, "tools/call", {"name": "ask"})
    every = [opening(roots), READ, ask, line(4, "tools/list")]
    clean = session(*every, answer={"roots": [{"uri": "file:///x"}]})
    http = Report.combine(clean.cassette, [clean, session(opening(roots), line(9, "nope"))])
    timed = session(*every, READ, answer={"roots": [{"uri": "file:///x"}]}, start=100.0)
    later = session(opening(roots), line(4, "tools/list"), start=100.25)
    return {
        "clean": clean.to_json(),
        "miss": session(opening(roots), line(2, "tools/call", {"name": "read", "arguments": {"path": "b"}})).to_json(),
        "unknown method": session(line(5, "prompts/list")).to_json(),
        "miss with its params cut": session(opening(roots), HUGE).to_json(),
        "unplayed": session(opening(roots)).to_json(),
        "repeat": session(*every, READ, answer={"roots": [{"uri": "file:///x"}]}).to_json(),
        "mismatch": session(*every, answer={"roots": []}).to_json(),
        "withheld": session(opening({}), ask).to_json(),
        "http, two sessions": http.to_json(),
        "timed": timed.to_json(),
        "http, two timed sessions": Report.combine(timed.cassette, [timed, later]).to_json(),
        "exec recorded": {
            "version": REPORT_VERSION,
            "cassette": "c.yaml",
            "recorded": {"mode": "once", "status": 0, "outcome": "the host closed stdin"},
        },
        "exec error": {"version": REPORT_VERSION, "cassette": "c.yaml", "error": "no cassette at c.yaml"},
    }


KINDS = kinds()


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_report_validates(kind: str) -> None:
    VALIDATOR.validate(KINDS[kind])


def test_a_miss_keeps_a_few_kib_of_its_params_and_says_how_many_bytes_they_were() -> None:
    """In memory and in the report alike: what names the call stays whole, a long string keeps its first KiB, a
    long list its first items, each cut saying what it left out; a small miss's params stay whole."""
    [miss] = session(opening({"roots": {}}), HUGE).misses
    size = len(json.dumps(HUGE_PARAMS, separators=(",", ":")).encode())
    assert miss.params_cut == size > 1_000_000
    assert len(json.dumps(miss.params)) < 8192
    arguments = miss.params["arguments"]
    assert (miss.params["name"], arguments["path"]) == ("read", "b")
    assert arguments["text"] == "x" * 1024 + "... (998976 more characters cut)"
    *items, said = arguments["items"]
    assert items == list(range(len(items))) and said == f"... {50_000 - len(items)} more items cut"
    assert f"(cut: {size} bytes of params in all)" in miss.render()
    [written] = KINDS["miss with its params cut"]["misses"]
    assert (written["params"], written["params_cut"]) == (miss.params, size)
    [small] = KINDS["miss"]["misses"]
    assert small["params"] == {"name": "read", "arguments": {"path": "b"}} and small["params_cut"] is None


def test_a_timed_session_says_when_it_started_and_when_each_interaction_was_first_played() -> None:
    """The clock is read when the session starts and at each interaction's first play, never again for a repeat;
    sessions told together (HTTP) are on the first one's clock, each interaction at its earliest play."""
    timed = KINDS["timed"]
    assert (timed["started"], timed["played_at"], timed["plays"]) == (100.0, [0.5, 1.0, 1.5, 2.0], [1, 2, 1, 1])
    both = KINDS["http, two timed sessions"]
    # tools/list: the later session (started at 100.25) played it first, 1.0 after its start: 1.25 after the first's
    assert (both["started"], both["played_at"]) == (100.0, [0.5, 1.0, 1.5, 1.25])
    assert "started" not in KINDS["clean"] and "played_at" not in KINDS["http, two sessions"]


def test_the_kinds_cover_what_a_report_can_say() -> None:
    said = {key for report in KINDS.values() for key, value in report.items() if value}
    assert said >= {"misses", "repeats", "unplayed", "mismatches", "withheld", "capabilities", "recorded", "error"}
    assert KINDS["clean"]["strict_ok"] and not KINDS["miss"]["strict_ok"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: r.pop("version"), "version"),
        (lambda r: r.update(version=2), "version"),
        (lambda r: r.pop("misses"), "misses"),
        (lambda r: r["misses"][0].pop("explanation"), "explanation"),
        (lambda r: r.update(played="3"), "played"),
        (lambda r: r.update(error="both"), "error"),
    ],
)
def test_what_the_schema_refuses(change: Any, why: str) -> None:
    report = json.loads(json.dumps(KINDS["miss"]))
    change(report)
    assert not VALIDATOR.is_valid(report), why


def test_the_schemas_keys_are_the_writers_keys_in_order() -> None:
    assert tuple(KINDS["clean"]) == report_schema.REPLAY_KEYS
    assert tuple(KINDS["timed"]) == report_schema.REPLAY_KEYS + report_schema.TIMED_KEYS
    assert tuple(KINDS["miss"]["misses"][0]) == tuple(report_schema.MISS_KEYS)
    assert tuple(KINDS["exec recorded"]) == report_schema.RECORDED_KEYS
    jsonschema.Draft7Validator.check_schema(report_schema.schema())


def test_docs_report_describes_every_key_as_the_schema_does() -> None:
    page = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z_.\[\]]+)` \| (.*) \|$", page, re.M))
    described = {key: text for key, (_shape, text) in report_schema.KEYS.items()}
    described |= {f"misses[].{key}": text for key, (_shape, text) in report_schema.MISS_KEYS.items()}
    assert rows == described


def test_the_command_prints_the_report_schema() -> None:
    done = subprocess.run(
        [*MOCKMCP, "schema", "--report"], capture_output=True, text=True, env=child_env(), timeout=30, check=True
    )
    assert json.loads(done.stdout) == report_schema.schema()
