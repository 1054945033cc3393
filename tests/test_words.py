"""mockmcp's own words: the names of JSON types, places, record modes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import MOCKMCP, child_env

from mockmcp import words
from mockmcp.errors import UsageError
from mockmcp.words import RecordMode

TYPES = [
    # (value, JSON's name, with its article, the cassette's YAML word)
    (None, "null", "null", "nothing"),
    (True, "boolean", "a boolean", "a boolean"),
    (3, "integer", "an integer", "a number"),
    (1.5, "number", "a number", "a number"),
    ("x", "string", "a string", "a string"),
    ([1], "array", "an array", "a list"),
    ({"a": 1}, "object", "an object", "a mapping"),
]


@pytest.mark.parametrize(("value", "name", "said", "yaml_word"), TYPES)
def test_type_names(value: Any, name: str, said: str, yaml_word: str) -> None:
    assert words.json_type(value) == name
    assert words.json_type(value, article=True) == said
    assert words.yaml_type(value) == yaml_word


PLACES = [
    ((), ""),
    (("interactions",), "interactions"),
    (("interactions", 3, "response"), "interactions[3].response"),
    (("interactions", 0, "server", 1, "request", "params"), "interactions[0].server[1].request.params"),
    (("_meta", "io.modelcontextprotocol/protocolVersion"), '_meta["io.modelcontextprotocol/protocolVersion"]'),
    (("arguments", "my key"), 'arguments["my key"]'),
    (("com.example/trace",), '["com.example/trace"]'),
    (("tools", ("name", "read_file"), "description"), 'tools[name="read_file"].description'),
]


@pytest.mark.parametrize(("place", "text"), PLACES)
def test_places_render_as_ignore_paths_read(place: tuple[Any, ...], text: str) -> None:
    assert words.render_place(place) == text


@pytest.mark.parametrize(
    ("mode", "exists", "records"),
    [
        ("all", False, True),
        ("all", True, True),
        ("new", False, True),
        ("new", True, True),
        ("once", False, True),
        ("once", True, False),
        ("none", False, False),
        ("none", True, False),
    ],
)
def test_when_a_record_mode_records(mode: str, exists: bool, records: bool) -> None:
    assert RecordMode(mode).records(exists) is records


def test_record_modes_parse_and_name_the_valid_ones() -> None:
    assert RecordMode.parse("new") is RecordMode.NEW
    assert RecordMode.parse("none", allow_none=True) is RecordMode.NONE
    assert RecordMode.choices() == ("all", "new", "once")
    assert RecordMode.choices(allow_none=True) == ("all", "new", "once", "none")
    with pytest.raises(UsageError) as bad:
        RecordMode.parse("sometimes", allow_none=True)
    assert bad.value.fix == "use one of: all, new, once, none"
    with pytest.raises(UsageError) as never:
        RecordMode.parse("none")
    assert "never records" in never.value.problem and "mockmcp replay" in (never.value.fix or "")


def test_record_refuses_mode_none_at_the_boundary(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    done = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--mode", "none", "--", "true"],
        capture_output=True,
        timeout=30,
        env=child_env(),
    )
    # click's Choice refuses it before anything starts, with the usage line and the valid modes.
    assert done.returncode == 2 and b"Usage: mockmcp record" in done.stderr
    assert b"'none' is not one of 'all', 'new', 'once'" in done.stderr
    assert not out.exists()
