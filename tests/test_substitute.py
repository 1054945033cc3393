"""Substitutions (`engine/redact.py`, carried by its `Redactor`): values of the recording machine
written as `${NAME}`, and the live machine's values put back. Tables in memory, then the shells that take
a Redactor: the engine (stdio and in process), the HTTP endpoint, the in-process recorder, and the CLI.

Covered:
- `--substitute` as the command line reads it; names, values, the environment, the longest value first;
- text both ways, keys too, ids never; secrets before substitutions, and never put back;
- what replay needs: each name of `meta.substitute` that the recording uses given by the user (never read from
  the environment unasked), else a located refusal;
- the engine: a live request matches, and every kind of thing it sends carries the live values;
  the host's answers are compared in placeholders;
- over HTTP (the endpoint, in memory) and in process (recorded with `mockmcp.recording`, replayed from
  another folder with `mockmcp.transport`); `mockmcp replay` without a value exits 2 saying which.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MOCKMCP, SHIPPED, child_env
from mcp import Client
from mcp.server.mcpserver import MCPServer

import mockmcp
from mockmcp._wire.words import parse_substitution
from mockmcp.cassette.model import NOTIFICATION, REQUEST, Cassette, Interaction, ServerItem
from mockmcp.cassette.store import loads
from mockmcp.cli.project import project_folder
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor, Substitutions, mentioned
from mockmcp.engine.replay import Replay, Send
from mockmcp.errors import CassetteError, UsageError
from mockmcp.http._endpoint import Endpoint, SessionParts
from mockmcp.http._stream import Respond
from mockmcp.http._streamable import LOOPBACK

# --- the words ---------------------------------------------------------------------------------------

PARSED = [
    ("PROJECT=/home/ann/app", ("PROJECT", "/home/ann/app")),
    ("HOME", ("HOME", None)),
    ("A_1=x=y", ("A_1", "x=y")),
    ("_tmp=/tmp/t", ("_tmp", "/tmp/t")),
]


@pytest.mark.parametrize(("text", "parsed"), PARSED)
def test_the_option_reads_a_name_and_a_value(text: str, parsed: tuple[str, str | None]) -> None:
    assert parse_substitution(text) == parsed


@pytest.mark.parametrize("text", ["1A=/x", "A-B=/x", "=/x", "A=", "", "A B"])
def test_the_option_refuses_a_bad_name_or_an_empty_value(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_substitution(text)
    assert caught.value.fix


BUILT = [
    # (given, environment, the (value, placeholder) pairs, longest value first)
    ([("PROJECT", "/home/ann/app")], {}, (("/home/ann/app", "${PROJECT}"),)),
    ([("HOME", None)], {"HOME": "/home/ann"}, (("/home/ann", "${HOME}"),)),
    (
        [("PROJECT", "/home/ann/app"), ("TMP", "/home/ann/app/.tmp/t0"), ("HOME", "/home/ann")],
        {},
        (("/home/ann/app/.tmp/t0", "${TMP}"), ("/home/ann/app", "${PROJECT}"), ("/home/ann", "${HOME}")),
    ),
]


@pytest.mark.parametrize(("given", "environ", "pairs"), BUILT)
def test_values_are_taken_as_given_or_from_the_environment(
    given: list[tuple[str, str | None]], environ: dict[str, str], pairs: tuple[tuple[str, str], ...]
) -> None:
    built = Substitutions.build(given, environ, "--substitute")
    assert built.pairs == pairs and built.names == tuple(name for name, _ in given)


REFUSED = [
    ([("HOME", None)], {}, "--substitute HOME: the environment variable HOME is not set"),
    ([("A", "/x/y"), ("A", "/z/w")], {}, "--substitute A is given twice"),
    ([("A", "/")], {}, "a value this short would be found in text that has nothing to do with it"),
    ([("A", "  x ")], {}, "a value this short"),
]


@pytest.mark.parametrize(("given", "environ", "problem"), REFUSED)
def test_a_value_that_cannot_stand_for_anything_is_refused(
    given: list[tuple[str, str | None]], environ: dict[str, str], problem: str
) -> None:
    with pytest.raises(UsageError) as caught:
        Substitutions.build(given, environ, "--substitute")
    assert problem in caught.value.problem and caught.value.fix


# --- text both ways ------------------------------------------------------------------------------------

SUBS = Substitutions.build([("PROJECT", "/home/ann/app"), ("TMP", "/home/ann/app/.tmp")], {}, "--substitute")

BOTH_WAYS = [
    ("/home/ann/app/data/todo.txt", "${PROJECT}/data/todo.txt"),
    ("file:///home/ann/app", "file://${PROJECT}"),
    ("/home/ann/app/.tmp/x and /home/ann/app/y", "${TMP}/x and ${PROJECT}/y"),
    ("/home/ann/application", "${PROJECT}lication"),  # text, not path segments: it still comes back whole
    ("nothing here", "nothing here"),
]


@pytest.mark.parametrize(("live", "written"), BOTH_WAYS)
def test_a_value_is_written_as_its_placeholder_and_comes_back(live: str, written: str) -> None:
    assert SUBS.text(live) == written
    assert SUBS.expand_text(written) == live


def test_keys_are_substituted_and_ids_never() -> None:
    redactor = Redactor()._replace(substitutions=SUBS)
    message = {"jsonrpc": "2.0", "id": "/home/ann/app", "result": {"/home/ann/app/a": ["/home/ann/app/b", 1]}}
    written = redactor.message(message)
    assert written == {"jsonrpc": "2.0", "id": "/home/ann/app", "result": {"${PROJECT}/a": ["${PROJECT}/b", 1]}}
    assert SUBS.expand({"id": "${PROJECT}", "params": written["result"]}) == {
        "id": "${PROJECT}",
        "params": {"/home/ann/app/a": ["/home/ann/app/b", 1]},
    }


def test_a_secret_goes_first_and_never_comes_back() -> None:
    environ = {"TOKEN": "s3cr3t-value"}
    redactor = Redactor.for_recording(("TOKEN",), (), environ, substitute=[("PROJECT", "/home/ann/app")])
    line = b'{"jsonrpc":"2.0","id":1,"result":{"text":"/home/ann/app/s3cr3t-value"}}'
    written = json.loads(redactor.line(line))
    assert written["result"]["text"] == "${PROJECT}/[REDACTED:TOKEN]"
    assert redactor.substitutions.expand(written)["result"]["text"] == "/home/ann/app/[REDACTED:TOKEN]"


# --- what replay needs ------------------------------------------------------------------------------------


def cassette_of(meta: dict[str, Any], text: str = "${PROJECT} ${DATA} ${GITHUB_TOKEN}") -> Cassette:
    """A cassette with `meta` whose one answer writes `text`."""
    response = {"result": {"content": [{"type": "text", "text": text}]}}
    return Cassette((Interaction(REQUEST, {"method": "tools/call"}, response=response),), meta, "c.yaml")


def test_replay_takes_each_name_as_given_and_only_those() -> None:
    meta = {"substitute": ["PROJECT", "DATA"]}
    given = [("PROJECT", "/ci/app"), ("DATA", None), ("OTHER", "/not/listed")]  # one the cassette lacks: left out
    redactor = Redactor.for_replay(cassette_of(meta), {"DATA": "/srv/data"}, given, "c.yaml")
    assert redactor is not None
    assert redactor.substitutions.pairs == (("/srv/data", "${DATA}"), ("/ci/app", "${PROJECT}"))
    assert Redactor.for_replay(cassette_of({}), {}, given, "c.yaml") is None  # nothing to do: nothing built


ENVIRON = {"GITHUB_TOKEN": "ghp_real_token_value", "PROJECT": "/home/ann/app", "DATA": "/srv/data"}


@pytest.mark.parametrize(
    ("names", "given", "asker", "text", "refused"),
    [
        # A name the user did not give is refused, its variable set or not: a cassette cannot read a token.
        (["GITHUB_TOKEN"], [], "mockmcp replay --substitute", "token=${GITHUB_TOKEN}", "meta.substitute[0]"),
        (["PROJECT", "GITHUB_TOKEN"], [("PROJECT", "/ci")], "substitute=", "${GITHUB_TOKEN}", "meta.substitute[1]"),
        (["PROJECT"], [], "mockmcp verify --substitute", "${PROJECT}/a", "meta.substitute[0]"),
        # A name no recorded message writes needs no value, given or not.
        (["PROJECT"], [], "substitute=", "no placeholder here", None),
        (["GITHUB_TOKEN"], [], "mockmcp replay --substitute", "$GITHUB_TOKEN {GITHUB_TOKEN}", None),
        # Given by the user (a value None: the variable's, which the user named): expanded.
        (["GITHUB_TOKEN"], [("GITHUB_TOKEN", None)], "mockmcp replay --substitute", "${GITHUB_TOKEN}", None),
    ],
)
def test_replay_expands_only_the_names_its_user_gave(
    names: list[str], given: list[tuple[str, str | None]], asker: str, text: str, refused: str | None
) -> None:
    cassette = cassette_of({"substitute": names}, text)
    if refused is None:
        redactor = Redactor.for_replay(cassette, ENVIRON, given, "c.yaml", asker)
        assert redactor is not None
        assert {name for name, _value in given} >= set(redactor.substitutions.names)
        return
    with pytest.raises(CassetteError) as caught:
        Redactor.for_replay(cassette, ENVIRON, given, "c.yaml", asker)
    name = names[int(refused[-2])]
    assert caught.value.render().startswith(f"c.yaml: {refused}: the recording writes `${{{name}}}`")
    assert f"{name} is not given: replay fills in only the values its user names" in caught.value.problem
    credential = f"{name} reads like a credential's name: its value would reach the host, its model and its logs"
    said = (caught.value.fix or "").split("; take it out of meta.substitute, or ")
    assert said[-1].startswith(f"if {name} is meant, give it: {asker}" if name == "PROJECT" else "if that is meant")
    assert (said[0] == credential) is (name == "GITHUB_TOKEN")  # warned before it is given


def test_a_placeholder_anywhere_in_the_recording_is_a_use() -> None:
    server = ServerItem(NOTIFICATION, {"method": "notifications/message", "params": {"data": {"${B}": 1}}})
    raw = Interaction(REQUEST, {"method": "x"}, raw_response='{"r": "${C}"}', server=(server,))
    cassette = Cassette((raw,), {"server": ["srv", "${A}"]})
    assert mentioned(cassette, ["A", "B", "C", "D"]) == {"A", "B", "C"}


# --- the engine ----------------------------------------------------------------------------------------

FILES = """
version: 1
meta: {substitute: [PROJECT], redact: {env: [TOKEN]}}
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25', capabilities: {roots: {}}}}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: files, version: '1'}}
- request: {method: tools/call, params: {name: read, arguments: {path: '${PROJECT}/todo.txt'}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: {'${PROJECT}/todo.txt': read}}}
  - request: {id: 0, method: roots/list}
    response: {result: {roots: [{uri: 'file://${PROJECT}'}]}}
  - raw: 'plain text about ${PROJECT}'
  response: {result: {content: [{type: text, text: 'read ${PROJECT}/todo.txt [REDACTED:TOKEN]'}]}}
- request: {method: tools/call, params: {name: raw, arguments: {path: '${PROJECT}'}}}
  raw_response: '{"jsonrpc":"2.0","id":{{id}},"result":{"path":"${PROJECT}"}}'
"""


def request(id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()


def sent(actions: list[Any]) -> list[Any]:
    """What the engine sent: each line as JSON, a line that is not JSON as text."""
    out = []
    for action in actions:
        if isinstance(action, Send):
            text = action.data.decode().strip()
            out.append(json.loads(text) if text.startswith("{") else text)
    return out


def test_replay_matches_with_the_live_value_and_sends_it_back_everywhere() -> None:
    cassette = loads(FILES, "files.yaml")
    environ = {"TOKEN": "tok-123456"}
    redactor = Redactor.for_replay(cassette, environ, [("PROJECT", "/ci/app")], "files.yaml")
    engine = Replay(cassette, Matcher.build(), redactor)
    opening = {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}}
    engine.receive(request(1, "initialize", opening))
    first = sent(engine.receive(request(2, "tools/call", {"name": "read", "arguments": {"path": "/ci/app/todo.txt"}})))
    assert first == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": {"/ci/app/todo.txt": "read"}},
        },
        {"jsonrpc": "2.0", "id": 0, "method": "roots/list"},
    ]
    # The host answers with its own folder, which is compared as the recording's placeholder: no mismatch.
    answer = json.dumps({"jsonrpc": "2.0", "id": 0, "result": {"roots": [{"uri": "file:///ci/app"}]}}).encode()
    rest = sent(engine.receive(answer))
    assert rest == [
        "plain text about /ci/app",
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "read /ci/app/todo.txt [REDACTED:TOKEN]"}]},
        },
    ]  # the secret's placeholder is never put back
    raw = sent(engine.receive(request(3, "tools/call", {"name": "raw", "arguments": {"path": "/ci/app"}})))
    assert raw == [{"jsonrpc": "2.0", "id": 3, "result": {"path": "/ci/app"}}]
    assert not engine.report.mismatches and not engine.report.misses


def test_a_request_with_the_recording_machines_path_misses() -> None:
    cassette = loads(FILES, "files.yaml")
    redactor = Redactor.for_replay(cassette, {}, [("PROJECT", "/ci/app")], "files.yaml")
    engine = Replay(cassette, Matcher.build(), redactor)
    missed = sent(
        engine.receive(request(2, "tools/call", {"name": "read", "arguments": {"path": "/home/ann/todo.txt"}}))
    )
    difference = missed[0]["error"]["data"]["differences"][0]
    assert difference == 'arguments.path: recorded "${PROJECT}/todo.txt", incoming "/home/ann/todo.txt"'


# --- over HTTP, in process, and at the command line ---------------------------------------------------------

STATELESS = """
version: 1
meta: {substitute: [DATA]}
interactions:
- request:
    method: tools/call
    params: {name: list, arguments: {root: '${DATA}'}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  response: {result: {content: [{type: text, text: '${DATA}/a.txt'}], resultType: complete}}
"""


def test_the_http_endpoint_substitutes_as_the_engine_does() -> None:
    cassette = loads(STATELESS, "list.yaml")
    redactor = Redactor.for_replay(cassette, {}, [("DATA", "/srv/data")], "list.yaml")
    endpoint = Endpoint(SessionParts(cassette, Matcher.build(), redactor), LOOPBACK)
    params = {
        "name": "list",
        "arguments": {"root": "/srv/data"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    }
    headers = {
        "host": "127.0.0.1:8000",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "list",
    }
    [answer] = [
        out
        for out in endpoint.request("c1", b"POST", "/mcp", headers, request(7, "tools/call", params))
        if isinstance(out, Respond)
    ]
    assert json.loads(answer.answer.body)["result"]["content"] == [{"type": "text", "text": "/srv/data/a.txt"}]


files = MCPServer("files")


@files.tool()
def where(folder: str) -> str:
    """Echo a folder, as a server that speaks in absolute paths does."""
    return f"listed {folder}"


@pytest.mark.anyio
async def test_recorded_in_process_in_one_folder_replayed_in_process_in_another(tmp_path: Path) -> None:
    cassette = tmp_path / "where.yaml"
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    with anyio.fail_after(30):
        async with Client(mockmcp.recording(files, cassette, substitute={"DATA": first})) as client:
            said = await client.call_tool("where", {"folder": first})
        assert said.content[0].text == f"listed {first}"
        text = cassette.read_text()
        assert first not in text and "listed ${DATA}" in text and "substitute: [DATA]" in text
        async with Client(mockmcp.transport(cassette, strict=True, substitute={"DATA": second})) as client:
            said = await client.call_tool("where", {"folder": second})
    assert said.content[0].text == f"listed {second}"


@pytest.mark.anyio
async def test_the_transport_asks_no_value_of_a_name_no_answer_uses(tmp_path: Path) -> None:
    cassette = tmp_path / "notes.yaml"
    cassette.write_text((SHIPPED / "notes.yaml").read_text().replace("meta:\n", "meta:\n  substitute: [PROJECT]\n", 1))
    with anyio.fail_after(30):
        async with Client(mockmcp.transport(cassette), mode="legacy") as client:  # no substitute=, no PROJECT
            said = await client.call_tool("read_file", {"path": "notes.txt"})
    assert said.content[0].text == "remember to buy milk"


def test_replay_of_a_name_not_given_exits_2_naming_it_though_the_variable_is_set(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text(STATELESS)
    env = {**child_env(), "DATA": "/a/value/of/this/machine"}
    done = subprocess.run([*MOCKMCP, "replay", str(path)], input=b"", capture_output=True, env=env, timeout=60)
    assert done.returncode == 2
    assert f"{path}: meta.substitute[0]: the recording writes `${{DATA}}`".encode() in done.stderr
    assert b"mockmcp replay --substitute DATA=VALUE, or mockmcp replay --substitute DATA " in done.stderr


# A server that answers whether the path it was sent exists (`${DATA}/todo.txt` as written does not).
EXISTS = """
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        exists = os.path.exists(message["params"]["arguments"]["path"])
        result = {"content": [], "structuredContent": {"exists": exists}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def test_verify_finds_the_project_folder_as_the_plugin_does_sends_it_and_compares_in_placeholders(
    tmp_path: Path,
) -> None:
    (tmp_path / "todo.txt").write_text("buy milk")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'app'\n\n[tool.pytest.ini_options]\n")
    (tmp_path / "tests" / "cassettes").mkdir(parents=True)
    path = tmp_path / "tests" / "cassettes" / "files.yaml"
    path.write_text(
        "version: 1\nmeta: {substitute: [PROJECT]}\ninteractions:\n"
        "- request: {method: tools/call, params: {name: stat, arguments: {path: '${PROJECT}/todo.txt'}}}\n"
        "  response: {result: {content: [], structuredContent: {exists: true}}}\n"
    )
    env = {**child_env(), "PROJECT": "/not/the/project"}  # never read: the user did not name it
    command = [*MOCKMCP, "verify", str(path), "--", sys.executable, "-c", EXISTS]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same     [0] tools/call stat" in done.stdout
    assert f"${{PROJECT}} is {tmp_path}, the project's folder as the pytest plugin finds it" in done.stderr
    assert "(pytest's rootdir: the folder of pyproject.toml above" in done.stderr
    assert "mockmcp verify --substitute PROJECT=PATH gives another" in done.stderr


@pytest.mark.parametrize(
    ("files", "start", "found"),
    [
        ({"pytest.ini": ""}, "tests/cassettes", (".", "pytest.ini")),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\n", "tests/tox.ini": "[tox]\n"},
            "tests",
            (".", "pyproject.toml"),
        ),
        ({"pyproject.toml": "[tool.pytest]\nminversion = '9'\n"}, "a/b", (".", "pyproject.toml")),
        ({"tox.ini": "[pytest]\n", "sub/setup.cfg": "[metadata]\n"}, "sub", (".", "tox.ini")),
        ({"setup.cfg": "[tool:pytest]\n", "pyproject.toml": "[project]\n"}, "x", (".", "setup.cfg")),
        # a configuration file wins over setup.py, setup.py over a pyproject.toml without pytest's table
        ({"setup.py": "", "pytest.ini": ""}, "x", (".", "pytest.ini")),
        ({"setup.py": "", "sub/pyproject.toml": "[project]\n"}, "sub/x", (".", "setup.py")),
        ({"sub/pyproject.toml": "[project]\n"}, "sub/x", ("sub", "pyproject.toml")),
        ({"pyproject.toml": "[project]\n", "sub/pytest.ini": "[pytest]\n"}, "sub/x", ("sub", "pytest.ini")),
    ],
)
def test_the_project_folder_is_found_as_pytest_finds_its_rootdir(
    tmp_path: Path, files: dict[str, str], start: str, found: tuple[str, str]
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / start).mkdir(parents=True, exist_ok=True)
    assert project_folder(str(tmp_path / start)) == (str((tmp_path / found[0]).resolve()), found[1])
