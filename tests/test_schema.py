"""The cassette format's JSON Schema: built from validation's own definitions, accepting what loads.

`jsonschema` (a dependency of the `mcp` SDK, named in the test extra) checks the schema the way
a YAML editor does; mockmcp itself never needs it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp.cassette import schema, store, validation, yamlfile
from mockmcp.errors import CassetteError

VALIDATOR = jsonschema.Draft7Validator(schema.schema())
CASSETTES = sorted([*SHIPPED.glob("*.yaml"), *(ROOT / "examples").glob("*.yaml")])


def test_the_schema_is_a_valid_draft_7_schema() -> None:
    jsonschema.Draft7Validator.check_schema(schema.schema())


def _rows(row: validation.Field) -> list[validation.Field]:
    return [row, *(below for child in row.rows for below in _rows(child))]


def test_its_properties_are_the_rows_of_validations_table_in_order() -> None:
    built = schema.schema()
    definitions = built["definitions"]
    interaction = definitions["interaction"]["properties"]
    assert tuple(built["properties"]) == ("version", "meta", "interactions")
    assert tuple(built["properties"]["meta"]["properties"]) == ("redact", "substitute", "match", "closed_world", "http")
    # The order an unknown key's fix lists them in ("use one of: at, request, ...").
    assert tuple(interaction) == (
        *("at", "request", "notification", "match", "delay", "times", "after", "server"),
        *("drop", "raw_response", "response", "exit", "took", "session", "expect", "answers", "optional"),
    )
    server_item = ("at", "notification", "request", "response", "raw", "stream", "took")
    assert tuple(definitions["server_item"]["properties"]) == server_item
    assert tuple(interaction["exit"]["oneOf"][1]["properties"]) == ("status", "when")
    assert set(definitions["interaction"]["dependencies"]) == {*validation.REQUEST_ONLY, "response"}
    # Every kind a row has is one validation checks and the schema emits.
    assert {row.kind for row in _rows(validation.CASSETTE)} <= set(validation.KINDS) == set(schema._EMIT)


def test_a_rows_values_and_bounds_are_the_schemas() -> None:
    built = schema.schema()
    interaction = built["definitions"]["interaction"]["properties"]
    assert interaction["delay"] == {
        "type": ["number", "null"],
        "minimum": 0,
        "maximum": 86400.0,
        "description": "seconds to wait before replaying this interaction",
    }
    assert interaction["drop"]["enum"] == [False, True, "cut"]
    assert interaction["exit"]["oneOf"][0] == {"type": "integer", "minimum": 0, "maximum": 255}
    assert built["properties"]["version"]["const"] == 1
    assert built["required"] == ["version", "interactions"]
    http = built["properties"]["meta"]["properties"]["http"]
    assert http["properties"]["framing"]["enum"] == ["json", "sse", None]
    assert http["properties"]["session_errors"]["properties"]["missing"]["required"] == ["status", "error"]


def test_the_shipped_schema_file_is_the_one_built() -> None:
    assert (ROOT / "docs" / "cassette.schema.json").read_text() == schema.text()


@pytest.mark.parametrize("path", CASSETTES, ids=lambda path: path.name)
def test_every_shipped_cassette_is_valid(path: Path) -> None:
    errors = [error.message for error in VALIDATOR.iter_errors(yamlfile.load(path.read_text()))]
    assert errors == []


RECIPES = re.findall(r"<!-- recipe: ([\w-]+) -->\n```yaml\n(.*?)```", (ROOT / "docs" / "faults.md").read_text(), re.S)


@pytest.mark.parametrize(("name", "recipe"), RECIPES, ids=[name for name, _recipe in RECIPES])
def test_every_fault_recipe_in_the_docs_is_valid_for_both(name: str, recipe: str) -> None:
    data = yamlfile.load("version: 1\ninteractions:\n" + recipe)
    validation.from_data(data)
    assert [error.message for error in VALIDATOR.iter_errors(data)] == []


REQUEST = "version: 1\ninteractions:\n- request: {method: tools/call, params: {name: a}}\n"
ANSWER = "  response: {result: {content: []}}\n"
GOOD = REQUEST + ANSWER

# Each edit the loader refuses; the schema refuses it too.
REFUSED = [
    ("respnse: {result: {}}", "an unknown interaction key"),
    ("tims: 2", "a misspelled knob"),
    ("times: 0", "times below 1"),
    ("after: never", "an unknown `after`"),
    ("delay: -1", "a negative delay"),
    ("drop: 'yes'", "a flag that is not a boolean"),
    ("drop: cutt", "a drop that is neither a flag nor `cut`"),
    ("exit: {status: 1, wen: before}", "an unknown exit key"),
    ("exit: 300", "an exit status above 255"),
    ("response: {result: {}, error: {code: 1, message: m}}", "a response with both"),
    ("response: {error: {code: x, message: m}}", "an error code that is not an integer"),
    ("server: [{rawe: x}]", "an unknown server item key"),
    ("server: [{notification: {method: m}, response: {result: {}}}]", "a response to a notification"),
    ("notification: {method: m}", "both a request and a notification"),
    ("match: {arguments.q: anything}", "an unknown matcher"),
    ("match: {arguments.q: {type: text}}", "an unknown JSON type"),
    ("match: {arguments.q: {regex: a, type: string}}", "a matcher of two keys"),
    ("match: {arguments.q: {regx: a}}", "a misspelled matcher argument"),
    ("match: [arguments.q]", "match rules that are not a mapping"),
    ("delay: 100000", "a delay over a day"),
    ("took: -1", "a negative took"),
    ("session: -1", "a session below 0"),
    ("expect: faults", "an unknown `expect`"),
    ("raw_response: 3", "a raw response that is no string"),
    ("server: [{notification: {method: m}, stream: post}]", "an unknown stream"),
]


@pytest.mark.parametrize(("line", "what"), REFUSED, ids=[what for _line, what in REFUSED])
def test_what_the_loader_refuses_the_schema_refuses(line: str, what: str) -> None:
    data: Any = yamlfile.load(REQUEST + f"  {line}\n" + ("" if line.startswith("response:") else ANSWER))
    with pytest.raises(CassetteError):
        validation.from_data(data)
    assert list(VALIDATOR.iter_errors(data)), what


@pytest.mark.parametrize("line", ["drop: true", "drop: cut", "drop: false"])
def test_what_the_loader_takes_the_schema_takes(line: str) -> None:
    data: Any = yamlfile.load(REQUEST + f"  {line}\n" + ANSWER)
    validation.from_data(data)
    assert list(VALIDATOR.iter_errors(data)) == []


@pytest.mark.parametrize(
    "text",
    [
        "version: 2\ninteractions: []\n",
        "version: 1\nintercations: []\n",
        "version: 1\ninteractions:\n- notification: {id: 1, method: m}\n",
        "version: 1\ninteractions:\n- delay: 1\n",
        "version: 1\nmeta: {match: {ignor: [a]}}\ninteractions: []\n",
        "version: 1\nmeta: {substitute: [PROJECT, 1abc]}\ninteractions: []\n",
        "version: 1\ninteractions:\n- notification: {method: m}\n  match: {a: any}\n",
        "version: true\ninteractions: []\n",
        "version: 1\nmeta: []\ninteractions: []\n",
        "version: 1\nmeta: {redact: {env: A}}\ninteractions: []\n",
        "version: 1\nmeta: {redact: {names: [A]}}\ninteractions: []\n",
        "version: 1\nmeta: {http: {framing: xml}}\ninteractions: []\n",
        "version: 1\nmeta: {http: {session_errors: {unknown: {status: 200, error: {code: 1, message: m}}}}}\n"
        "interactions: []\n",
    ],
    ids=[
        "version",
        "top-level typo",
        "notification with an id",
        "empty interaction",
        "meta.match typo",
        "a bad substitution name",
        "match rules on a notification",
        "a version that is no number",
        "meta that is no mapping",
        "redacted names that are no list",
        "an unknown redact key",
        "an unknown framing",
        "a session error's status that is no error",
    ],
)
def test_more_that_both_refuse(text: str) -> None:
    data = yamlfile.load(text)
    with pytest.raises(CassetteError):
        validation.from_data(data)
    assert list(VALIDATOR.iter_errors(data))


def test_an_editor_is_offered_the_keys_of_a_methods_result() -> None:
    # Not enforced (the loader keeps unknown keys), but named, so an editor completes `isError`.
    offered = schema.schema()["definitions"]["interaction"]["allOf"]
    [tools_call] = [
        rule for rule in offered if rule["if"]["properties"]["request"]["properties"]["method"]["const"] == "tools/call"
    ]
    assert "isError" in tools_call["then"]["properties"]["response"]["properties"]["result"]["properties"]


def test_a_key_not_every_revision_defines_says_which_do() -> None:
    # The same spans lint judges a session's messages by: the editor shows them beside the key.
    built = schema.schema()
    [tools_call] = [
        rule
        for rule in built["definitions"]["interaction"]["allOf"]
        if rule["if"]["properties"]["request"]["properties"]["method"]["const"] == "tools/call"
    ]
    result = tools_call["then"]["properties"]["response"]["properties"]["result"]["properties"]
    assert result["resultType"]["description"] == "MCP 2026-07-28"
    assert result["structuredContent"]["description"] == "MCP 2025-06-18 and later"
    assert "description" not in result["isError"]  # in every revision
    tool = built["definitions"]["tool"]["properties"]
    assert tool["execution"]["description"] == "MCP 2025-11-25"
    assert tool["title"]["description"] == "MCP 2025-06-18 and later"


def test_the_command_prints_the_schema_and_writes_it(tmp_path: Path) -> None:
    printed = subprocess.run([*MOCKMCP, "schema"], capture_output=True, text=True, timeout=60, env=child_env())
    assert printed.returncode == 0 and json.loads(printed.stdout) == schema.schema()
    out = tmp_path / "cassette.schema.json"
    written = subprocess.run([*MOCKMCP, "schema", "-o", str(out)], capture_output=True, timeout=60, env=child_env())
    assert written.returncode == 0 and out.read_text() == schema.text()


def test_a_cassette_mockmcp_writes_names_the_schema_on_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    store.save(validation.from_data(yamlfile.load(GOOD)), str(path))
    assert path.read_text().splitlines()[0] == f"# yaml-language-server: $schema={schema.SCHEMA_URL}"
    # A file written by hand without it keeps its own first lines when mockmcp rewrites it.
    path.write_text("# mine\n" + GOOD)
    loaded = store.load(str(path))
    store.save(loaded._replace(meta={"description": "x"}), str(path))
    assert path.read_text().startswith("# mine\nversion: 1\n")


def test_the_schema_address_is_the_file_in_the_projects_declared_repository() -> None:
    """The first line of every written cassette points where the project publishes this very file."""
    declared = re.search(r'^Repository = "https://github\.com/([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared is not None, "pyproject.toml names no Repository under [project.urls]"
    published = f"https://raw.githubusercontent.com/{declared[1]}/main/docs/cassette.schema.json"
    assert published == schema.SCHEMA_URL
    assert (ROOT / "docs" / "cassette.schema.json").read_text() == schema.text()
