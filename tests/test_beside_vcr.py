"""mockmcp beside pytest-recording (vcrpy) in one test: the model's API goes to the VCR cassette, MCP to mockmcp's.

The host is the SDK's `Client` over Streamable HTTP (httpx2, which vcrpy patches) and a plain httpx2 POST as its
model. Each row of a table is one test of a pytester run: a record mode of vcrpy (pytest-recording's marker, or
`vcr.use_cassette` entered before or after mockmcp's fixture), mockmcp replaying or recording, through the
plugin's HTTP mock server or through interception. The "real" MCP server recorded from is a mockmcp replay of a
shipped cassette, the model a small local endpoint.
"""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from typing import NamedTuple

import pytest
import yaml
from conftest import SHIPPED, served
from test_pytest_plugin import run

from mockmcp.cassette import store

pytestmark = pytest.mark.timeout(120)
pytest_plugins = ["pytester"]
pytest.importorskip("pytest_recording", reason="pytest-recording is not installed")

ANSWER = {"answer": "hello"}


class _Model(http.server.BaseHTTPRequestHandler):
    """A model's API in small: any POST gets one JSON answer."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def model() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat"
    server.shutdown()
    server.server_close()


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


def vcr_cassette(model: str) -> str:
    """A VCR cassette holding the model's answer, as vcrpy writes one."""
    interaction = {
        "request": {"body": '{"prompt":"hi"}', "headers": {}, "method": "POST", "uri": model},
        "response": {
            "body": {"string": json.dumps(ANSWER)},
            "headers": {"content-type": ["application/json"]},
            "status": {"code": 200, "message": "OK"},
        },
    }
    return yaml.safe_dump({"interactions": [interaction], "version": 1})


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
