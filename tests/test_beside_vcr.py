"""mockmcp beside pytest-recording (vcrpy) in one test: the model's API goes to the VCR cassette, MCP to mockmcp's.

The host is the SDK's `Client` over Streamable HTTP (httpx2, which vcrpy patches) and a plain httpx2 POST as its
model. Each row of a table is one test of a pytester run: a record mode of vcrpy (pytest-recording's marker, or
`vcr.use_cassette` entered before or after mockmcp's fixture), mockmcp replaying or recording, through the
plugin's HTTP mock server or through interception. The "real" MCP server recorded from is a mockmcp replay of a
shipped cassette, the model a small local endpoint.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import pytest
import sdk1
import yaml
from agent_run.model import serving
from conftest import ROOT, SDK_PYTHON, SHIPPED, child_env, served
from test_html import page_data
from test_pytest_plugin import run

from mockmcp.cassette import store
from mockmcp.plugin import _pairing as pairing

pytestmark = pytest.mark.timeout(120)
pytest_plugins = ["pytester"]
pytest.importorskip("pytest_recording", reason="pytest-recording is not installed")

ANSWER = {"answer": "hello"}


@pytest.fixture(scope="module")
def model() -> Iterator[str]:
    """A model's API in small: the example's stand-in, answering any POST with one JSON answer."""
    with serving(lambda request: ANSWER) as url:
        yield f"{url}/chat"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The MCP server recorded from: a replay of the shipped notes session, over HTTP."""
    with served(SHIPPED / "notes-session.yaml", tmp_path_factory.mktemp("real")) as server:
        yield server.url


class Row(NamedTuple):
    name: str
    vcr: str  # vcrpy's record mode (pytest-recording's, with `rewrite`, for the marker)
    entered: str  # marker: pytest-recording's; before / after: vcr.use_cassette before / after mockmcp's fixture
    mcp: str  # mockmcp's record mode: none replays a cassette put in place, once records it
    path: str  # http: the plugin's HTTP mock server (`start_http()`); intercept: the host reaches the real URL


# Each vcrpy mode, each way in, mockmcp replaying and recording, over both paths; split between the two orders
# in which the plugins load.
ROWS = {
    "mockmcp,recording": [
        Row("none_marker", "none", "marker", "none", "http"),
        Row("once_before", "once", "before", "once", "http"),
        Row("new_episodes_after", "new_episodes", "after", "none", "intercept"),
        Row("all_marker", "all", "marker", "once", "intercept"),
    ],
    "recording,mockmcp": [
        Row("rewrite_marker", "rewrite", "marker", "none", "http"),
        Row("all_after", "all", "after", "once", "http"),
        Row("none_before", "none", "before", "none", "intercept"),
        Row("once_after", "once", "after", "once", "intercept"),
    ],
}

HEAD = """
import httpx2
import pytest
import vcr
from mcp import Client

MODEL, REAL = {model!r}, {real!r}

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def agent(url):
    async with httpx2.AsyncClient() as http:
        said = (await http.post(MODEL, json={{"prompt": "hi"}})).json()
    async with Client(url, mode="legacy") as client:
        result = await client.call_tool("read_file", {{"path": "notes.txt"}})
    return said["answer"], result.content[0].text

EXPECTED = ("hello", "remember to buy milk")
"""


def row_test(row: Row) -> str:
    """One row as a test of the module `test_pair`."""
    cassette = f"cassettes/test_pair/test_{row.name}.yaml"
    marks = ["@pytest.mark.anyio"]
    settings = {"record": row.mcp}
    if row.path == "intercept":
        settings |= {"intercept": True, "names": {"notes": "127.0.0.1"}}
    elif row.mcp != "none":
        settings["server"] = "REAL"
    if row.entered == "marker":
        marks.append(f"@pytest.mark.vcr(record_mode={row.vcr!r})")
    marks.append(f"@pytest.mark.mockmcp(**{settings!r})".replace("'REAL'", "REAL"))
    url = "REAL" if row.path == "intercept" else "mockmcp.start_http()"
    fixtures = ["mockmcp"] if row.path == "http" else []
    entered = f"vcr.use_cassette({cassette!r}, record_mode={row.vcr!r})"
    text, call = "", "assert await agent(url) == EXPECTED"
    if row.entered == "before":  # a fixture the test asks for before mockmcp's
        fixtures.insert(0, f"first_{row.name}")
        text = f"@pytest.fixture\ndef first_{row.name}():\n    with {entered}:\n        yield\n\n"
    elif row.entered == "after":
        call = f"with {entered}:\n        {call}"
    head = "\n".join(marks) + f"\nasync def test_{row.name}({', '.join(fixtures)}):\n"
    return f"{text}{head}    url = {url}\n    {call}\n\n"


def vcr_cassette(model: str, bodies: tuple[str, ...] = ('{"n": 1, "prompt": "hi"}',)) -> str:
    """A VCR cassette holding the model's answer to each request body, as vcrpy writes one."""
    interactions = [
        {
            "request": {"body": body, "headers": {}, "method": "POST", "uri": model},
            "response": {
                "body": {"string": json.dumps(ANSWER)},
                "headers": {"content-type": ["application/json"]},
                "status": {"code": 200, "message": "OK"},
            },
        }
        for body in bodies
    ]
    return yaml.safe_dump({"interactions": interactions, "version": 1})


@pytest.mark.parametrize("order", list(ROWS))
def test_mcp_traffic_never_reaches_the_vcr_cassette_in_any_mode_either_order(
    pytester: pytest.Pytester, model: str, real: str, order: str
) -> None:
    rows = ROWS[order]
    pytester.makepyfile(test_pair=HEAD.format(model=model, real=real) + "\n".join(map(row_test, rows)))
    folder = pytester.path / "cassettes" / "test_pair"
    folder.mkdir(parents=True)
    for row in rows:
        if row.vcr in ("none", "new_episodes"):  # vcrpy replays the model's answer
            (folder / f"test_{row.name}.yaml").write_text(vcr_cassette(model))
        if row.mcp == "none":
            mcp = folder / (f"test_{row.name}/notes.yaml" if row.path == "intercept" else f"test_{row.name}.mcp.yaml")
            mcp.parent.mkdir(exist_ok=True)
            shutil.copyfile(SHIPPED / "notes-session.yaml", mcp)
    plugins = [arg for name in order.split(",") for arg in ("-p", name)]
    result = run(pytester, *plugins)
    result.assert_outcomes(passed=len(rows))
    for row in rows:
        vcr = yaml.safe_load((folder / f"test_{row.name}.yaml").read_text())
        uris = [interaction["request"]["uri"] for interaction in vcr["interactions"]]
        assert uris and set(uris) == {model}, (row, uris)  # the model's API, and nothing of MCP's
        mcp = folder / (f"test_{row.name}/notes.yaml" if row.path == "intercept" else f"test_{row.name}.mcp.yaml")
        assert "tools/call" in [interaction.method for interaction in store.load(str(mcp)).interactions], row


# --- the SDK's 1.x line: httpx, which vcrpy patches too (a virtual environment of its own, tests/sdk1.py) --------

SDK1_ROWS = [("none", "served"), ("once", "intercept"), ("new_episodes", "served"), ("all", "intercept")]


@pytest.mark.parametrize("version", [pytest.param("1.30.0", marks=[pytest.mark.xdist_group("sdk1-1.30.0-more")])])
def test_on_the_sdk_1x_line_no_mcp_request_reaches_the_vcr_cassette_in_any_mode(
    version: str, model: str, real: str, tmp_path: Path
) -> None:
    python = sdk1.environment(version, sdk1.FRAMEWORKS).python  # the environment that has vcrpy
    for mode, how in SDK1_ROWS:
        cassette, folder = tmp_path / f"{mode}-{how}.yaml", tmp_path / f"{mode}-{how}"
        if mode in ("none", "new_episodes"):
            cassette.write_text(vcr_cassette(model))
        url = real
        with contextlib.ExitStack() as stack:
            if how == "served":  # a replay mockmcp serves, as the plugin's start_http() does
                url = stack.enter_context(served(SHIPPED / "notes-session.yaml", tmp_path)).url
            args = [url, model, str(cassette), mode, how, str(folder)]
            done = subprocess.run(
                [str(python), str(ROOT / "tests" / "sdk1_vcr_host.py"), *args],
                capture_output=True,
                text=True,
                timeout=120,
                env=child_env(),
                cwd=tmp_path,
            )
        assert done.returncode == 0, (mode, how, done.stderr)
        assert json.loads(done.stdout) == {"answer": "hello", "text": "remember to buy milk"}
        uris = [each["request"]["uri"] for each in yaml.safe_load(cassette.read_text())["interactions"]]
        assert uris and set(uris) == {model}, (mode, how, uris)
        if how == "intercept":
            [recorded] = folder.glob("*.yaml")
            assert "tools/call" in [each.method for each in store.load(str(recorded)).interactions]


# --- one switch: pytest-recording's --record-mode, mapped ----------------------------------------------------------

MODES = [
    # (--mockmcp-record-mode, --record-mode, the run's mode)
    (None, None, "none"),
    (None, "none", "none"),
    (None, "once", "once"),
    (None, "new_episodes", "new_episodes"),
    (None, "all", "rewrite"),  # vcrpy's all records every request again: a session, recorded whole, is rewritten
    (None, "rewrite", "rewrite"),
    ("none", "once", "none"),  # mockmcp's own option wins
    ("once", "all", "once"),
    ("rewrite", None, "rewrite"),
]


@pytest.mark.parametrize(("own", "vcr", "mode"), MODES)
def test_mockmcp_follows_pytest_recordings_record_mode_unless_its_own_is_given(
    own: str | None, vcr: str | None, mode: str
) -> None:
    assert pairing.mode_word(own, vcr) == mode


def test_every_record_mode_of_pytest_recording_is_mapped() -> None:
    from pytest_recording.plugin import RECORD_MODES

    assert set(pairing.VCR_MODES) == set(RECORD_MODES)


PAIRED = """
import httpx2
import pytest
from mcp import Client

MODEL, REAL = {model!r}, {real!r}

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.fixture
def mockmcp_server():
    return REAL

@pytest.fixture
def vcr_config():  # the model's requests matched by their JSON body too (docs/agent-run.md)
    return {{"match_on": ["method", "scheme", "host", "port", "path", "query", "json_body"]}}

@pytest.mark.anyio
@pytest.mark.vcr
async def test_agent(mockmcp):
    async with httpx2.AsyncClient() as http:
        said = (await http.post(MODEL, json={{"prompt": {prompt!r}, "n": 1}})).json()
    async with Client(mockmcp.start_http(), mode="legacy") as client:
        result = await client.call_tool("read_file", {{"path": {path!r}}})
    assert (said["answer"], result.content[0].text) == ("hello", "remember to buy milk")
"""


def test_record_mode_once_records_only_the_missing_side_and_the_summary_tells_each(
    pytester: pytest.Pytester, model: str, real: str
) -> None:
    pytester.makepyfile(test_agent=PAIRED.format(model=model, real=real, prompt="hi", path="notes.txt"))
    folder = pytester.path / "cassettes" / "test_agent"
    folder.mkdir(parents=True)
    vcr, mcp = folder / "test_agent.yaml", folder / "test_agent.mcp.yaml"
    vcr.write_text(vcr_cassette(model))
    written = vcr.read_bytes()
    result = run(pytester, "--record-mode=once")  # the MCP side is missing: only it is recorded
    result.assert_outcomes(passed=1)
    assert vcr.read_bytes() == written and "tools/call" in mcp.read_text()
    said = result.stdout.str()
    assert "model replayed: cassettes/test_agent/test_agent.yaml" in said
    assert "MCP recorded: cassettes/test_agent/test_agent.mcp.yaml" in said
    recorded = mcp.read_bytes()
    vcr.unlink()  # now the model's side is missing
    result = run(pytester, "--record-mode=once")
    result.assert_outcomes(passed=1)
    assert mcp.read_bytes() == recorded and model in vcr.read_text()
    said = result.stdout.str()
    assert "model recorded: cassettes/test_agent/test_agent.yaml" in said
    assert "MCP replayed: cassettes/test_agent/test_agent.mcp.yaml" in said
    mcp.unlink()  # mockmcp's own option wins: none never records
    result = run(pytester, "--record-mode=once", "--mockmcp-record-mode=none")
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "the MCP side (mockmcp): " in said and "no cassette" in said and not mcp.exists()


# --- one verdict: the side that missed, with its explanation -------------------------------------------------------


def test_a_changed_prompt_fails_naming_the_model_side_a_changed_argument_the_mcp_side(
    pytester: pytest.Pytester, model: str, real: str
) -> None:
    paired = functools.partial(PAIRED.format, model=model, real=real)
    pytester.makepyfile(test_agent=paired(prompt="hi", path="notes.txt"))
    run(pytester, "--record-mode=once").assert_outcomes(passed=1)
    pytester.makepyfile(test_agent=paired(prompt="hello", path="notes.txt"))
    result = run(pytester)  # both replayed: the model's request differs in its body
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*the model side missed (its VCR cassette): POST {model} could not be played from "
            "cassettes/test_agent/test_agent.yaml (record mode none): no recorded request matches it "
            '(json_body: prompt: recorded "hi", incoming "hello"); '
            "to record it: pytest --record-mode=all 'test_agent.py::test_agent'"
        ]
    )
    assert "the MCP side missed" not in result.stdout.str()
    pytester.makepyfile(test_agent=paired(prompt="hi", path="todo.md"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "the model side missed" not in said
    result.stdout.fnmatch_lines(
        ["*the MCP side missed (mockmcp): *", '*arguments.path: recorded "notes.txt", incoming "todo.md"*']
    )


BODIES = [
    # (incoming, recorded, the difference named; None: the same)
    (b'{"a": 1, "b": [1, 2]}', b'{"b":[1,2],"a":1}', None),  # key order and spacing aside
    (
        b'{"messages": [{"content": "hi"}]}',
        b'{"messages": [{"content": "hello"}]}',
        'messages[0].content: recorded "hello", incoming "hi"',
    ),
    (b'{"a": 1}', b'{"a": 1, "tools": []}', "tools: only recorded"),
    (b'{"a": [1, 2, 3]}', b'{"a": [1, 2]}', "a: 2 items recorded, 3 incoming"),
    (b'{"a": 1}', b'{"a": 1.0}', "a: recorded 1.0, incoming 1"),
    (b"plain text", b"plain text", None),
    (b"plain", b"text", 'body: recorded "text", incoming "plain"'),
    (None, None, None),
]


@pytest.mark.parametrize(("incoming", "recorded", "named"), BODIES)
def test_the_json_body_matcher_compares_bodies_as_json_and_names_the_first_difference(
    incoming: bytes | None, recorded: bytes | None, named: str | None
) -> None:
    one, two = SimpleNamespace(body=incoming), SimpleNamespace(body=recorded)
    if named is None:
        assert pairing.json_body(one, two) is None
    else:
        with pytest.raises(AssertionError) as raised:
            pairing.json_body(one, two)
        assert str(raised.value) == named


# --- the failed test's page: the model's exchanges among the MCP messages, in the order they happened -------------

TIMED = """
import httpx2
import pytest
from mcp import Client

MODEL = {model!r}

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.fixture
def vcr_config():
    return {{"match_on": ["method", "scheme", "host", "port", "path", "query", "json_body"]}}

@pytest.mark.anyio
@pytest.mark.vcr
async def test_agent(mockmcp):
    async with httpx2.AsyncClient() as http:
        await http.post(MODEL, json={{"n": 1, "prompt": "hi"}})
        async with Client(mockmcp.start_http(), mode="legacy") as client:
            await client.call_tool("read_file", {{"path": "notes.txt"}})
        await http.post(MODEL, json={{"n": 2, "prompt": "again"}})
    assert False, "failing on purpose, for its page"
"""


def test_the_failed_tests_page_shows_the_model_and_mcp_exchanges_in_the_order_of_the_calls(
    pytester: pytest.Pytester,
) -> None:
    model = "http://127.0.0.1:9/v1/chat"  # nothing listens: vcrpy answers both requests
    pytester.makepyfile(test_agent=TIMED.format(model=model))
    folder = pytester.path / "cassettes" / "test_agent"
    folder.mkdir(parents=True)
    asked = ('{"n": 1, "prompt": "hi"}', '{"n": 2, "prompt": "again"}')
    (folder / "test_agent.yaml").write_text(vcr_cassette(model, asked))
    shutil.copyfile(SHIPPED / "notes-session.yaml", folder / "test_agent.mcp.yaml")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    found = re.search(r"mockmcp: the session as a timeline: (\S+\.html)", result.stdout.str())
    assert found, result.stdout.str()
    data = page_data(Path(found.group(1)).read_text(encoding="utf-8"))
    said = []
    for entry in data["order"]:  # the page's one order in time, its rows as the page draws them
        lane = data["lanes"][entry["lane"]]
        first = lane["rows"][entry["n"]]["msgs"][0]
        said.append(("model", json.loads(first["json"])["prompt"]) if lane.get("kind") == "model" else first["method"])
    calls = [each for each in said if each[0] == "model" or each == "tools/call"]
    assert calls == [("model", "hi"), "tools/call", ("model", "again")]
    assert said[0] == ("model", "hi") and said[-1] == ("model", "again")  # the whole MCP session between them
    assert "initialize" in said and [lane.get("kind") for lane in data["lanes"]] == [None, "model"]
    beside = data["lanes"][-1]
    assert beside["cassette"] == "cassettes/test_agent/test_agent.yaml" and beside["rows"][0]["after"] is None
    assert [row["how"] for row in beside["rows"]] == ["played", "played"]


def test_each_exchange_the_vcr_cassette_plays_or_records_is_noted_with_its_time() -> None:
    """The wrappers sit on the cassette object (what vcrpy's stubs call), around its own methods."""
    kept: list[tuple[object, object]] = []
    answer = {"status": {"code": 200, "message": "OK"}, "body": {"string": b'{"answer":  "hello"}'}}

    def play_response(request: object) -> object:
        if getattr(request, "body", None) == b"unknown":
            raise LookupError("not in the cassette")  # vcrpy's UnhandledHTTPRequestError in small
        return answer

    cassette = SimpleNamespace(play_response=play_response, append=lambda *pair: kept.append(pair))
    clock = iter([10.0, 11.5])
    noted = pairing.note_exchanges(cassette, lambda: next(clock))
    asked = SimpleNamespace(method="POST", uri="http://model/v1/chat", body=b'{"prompt": "hi"}')
    assert cassette.play_response(asked) is answer
    with pytest.raises(LookupError):
        cassette.play_response(SimpleNamespace(method="POST", uri="http://model/v1/chat", body=b"unknown"))
    failed = {"status": {"code": 500, "message": "Internal"}, "body": {"string": "x" * 300}}
    cassette.append(SimpleNamespace(method="GET", uri="http://model/v1/models", body=None), failed)
    assert len(kept) == 1 and kept[0][1] is failed
    said = {
        "method": "POST",
        "url": "http://model/v1/chat",
        "request": '{"prompt":"hi"}',
        "answer": '{"answer":"hello"}',
    }
    assert noted == [
        {**said, "status": 200, "how": "played", "at": 10.0},
        {"method": "GET", "url": "http://model/v1/models", "request": "", "answer": "x" * 199 + "…", "status": 500}
        | {"how": "recorded", "at": 11.5},
    ]


# --- the pair id ---------------------------------------------------------------------------------------------------


PAIRS = [
    # (the model's id, the MCP cassettes' ids, whether a file is missing, told)
    ("a1", ["a1", "a1"], False, None),
    (None, [None], False, None),  # recorded before pair ids, or by hand: nothing to compare
    ("a1", ["b2"], False, "t.yaml (a1), t/notes.yaml (b2)"),
    (None, ["a1"], False, "t.yaml (no id), t/notes.yaml (a1)"),  # vcrpy rewrote its file
    ("a1", ["a1", "b2"], False, "t.yaml (a1), t/notes.yaml (a1), t/notes.yaml (b2)"),
    ("a1", ["b2"], True, None),  # a missing file: its side's miss tells
]


@pytest.mark.parametrize(("model_id", "mcp_ids", "missing", "told"), PAIRS)
def test_a_pair_whose_ids_differ_is_told_naming_each_file_and_its_id(
    model_id: str | None, mcp_ids: list[str | None], missing: bool, told: str | None
) -> None:
    root = Path("/project")
    sides = [pairing.Side("model", root / "t.yaml", (1, 1), None, "x", model_id)]
    sides += [
        pairing.Side("MCP", root / "t" / "notes.yaml", None if missing else (1, 1), False, "y", i) for i in mcp_ids
    ]
    said = pairing.mismatch(sides, root, "test_t.py::test_t")
    if told is None:
        assert said is None
    else:
        assert said is not None and f"(their pair ids differ: {told})" in said
        assert said.endswith("record both again with pytest --record-mode=all 'test_t.py::test_t'")


def test_a_pair_recorded_together_carries_one_id_and_a_side_rewritten_alone_warns(
    pytester: pytest.Pytester, model: str, real: str
) -> None:
    pytester.makepyfile(test_agent=PAIRED.format(model=model, real=real, prompt="hi", path="notes.txt"))
    run(pytester, "--record-mode=once").assert_outcomes(passed=1)
    folder = pytester.path / "cassettes" / "test_agent"
    vcr, mcp = folder / "test_agent.yaml", folder / "test_agent.mcp.yaml"
    first, rest = vcr.read_text().split("\n", 1)
    pair = store.load(str(mcp)).meta["pair"]
    assert first.startswith(f"# mockmcp pair: {pair} ") and yaml.safe_load(rest)["interactions"]
    written = vcr.read_bytes(), mcp.read_bytes()
    run(pytester, "--record-mode=all").assert_outcomes(passed=1)  # both recorded again, and nothing changed
    assert (vcr.read_bytes(), mcp.read_bytes()) == written  # the id stands: no churn in a diff
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert "not recorded together" not in result.stdout.str()
    vcr.write_text(rest)  # as vcrpy leaves its file when it rewrites it: no id
    result = run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*the model's VCR cassette and the MCP cassettes of test_agent.py::test_agent were not recorded together "
            f"(their pair ids differ: cassettes/test_agent/test_agent.yaml (no id), "
            f"cassettes/test_agent/test_agent.mcp.yaml ({pair}))*"
        ]
    )
    result = run(pytester, "--mockmcp-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*were not recorded together*record both again with pytest --record-mode=all*"])


# --- the worked example, end to end: examples/agent_run ------------------------------------------------------------

EXAMPLE = ROOT / "examples" / "agent_run"


@pytest.mark.slow
def test_the_agent_run_example_records_once_then_replays_with_no_model_and_no_servers(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("agents", reason="openai-agents is not installed")  # imported here once, not in each run
    for name in ("agent.py", "model.py", "weather_server.py"):
        shutil.copyfile(EXAMPLE / name, pytester.path / name)
    source = (EXAMPLE / "test_agent_run.py").read_text()
    notes = 'str(HERE.parent / "notes_server.py")'
    assert notes in source
    recording = source.replace(notes, repr(str(ROOT / "examples" / "notes_server.py")))
    pytester.makepyfile(test_agent_run=recording.replace("[sys.executable, ", f"[*{SDK_PYTHON!r}, "))
    run(pytester, "--record-mode=once").assert_outcomes(passed=1)  # the stand-in model and the real servers
    folder = pytester.path / "cassettes" / "test_agent_run"
    name = "test_the_agent_answers_from_its_notes_and_the_weather"
    vcr, servers = folder / f"{name}.yaml", folder / name
    assert sorted(path.name for path in servers.glob("*.yaml")) == ["notes.yaml", "weather.yaml"]
    # Replayed: the stand-in stopped (nothing listens where the model is asked), the servers' commands absent. The
    # test's own assertions hold the final answer and each tool call, with its arguments, to the recorded ones.
    absent = source.replace(notes, '"absent-notes-server"').replace('str(HERE / "weather_server.py")', '"absent"')
    absent = absent.replace("[sys.executable, ", "[")
    pytester.makepyfile(test_agent_run=absent)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert f"model replayed: cassettes/test_agent_run/{name}.yaml" in result.stdout.str()
    # A changed prompt: the model's side misses, by its body.
    pytester.makepyfile(test_agent_run=absent.replace("What does notes.txt say", "What does todo.md say"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "the model side missed (its VCR cassette): POST http://127.0.0.1:9/v1/chat/completions" in said
    assert "json_body: messages[1].content: recorded" in said and "the MCP side missed" not in said
    # The same prompt, the model's recorded answer edited to call the tool with another argument: the MCP side.
    pytester.makepyfile(test_agent_run=absent)
    vcr.write_text(vcr.read_text().replace('\\"path\\": \\"notes.txt\\"', '\\"path\\": \\"todo.md\\"', 1))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    said = result.stdout.str()
    assert "the MCP side missed (mockmcp)" in said
    assert 'arguments.path: recorded "notes.txt", incoming "todo.md"' in said
