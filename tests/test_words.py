"""mockmcp's own words: the names of JSON types, places, record modes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import MOCKMCP, child_env

from mockmcp._wire import credentials, words
from mockmcp._wire.words import REDACTED, RecordMode
from mockmcp.errors import UsageError

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


@pytest.mark.parametrize(("mode", "records"), [("all", True), ("new", True), ("once", True), ("none", False)])
def test_a_later_start_in_the_run_that_saved_the_cassette_records_under_every_mode_but_none(
    mode: str, records: bool
) -> None:
    """A cassette the host's run saved is still being recorded: `once` records into it instead of replaying."""
    assert RecordMode(mode).records(True, later=True) is records


@pytest.mark.parametrize(
    ("text", "old", "mode", "note"),
    [
        ("none", False, RecordMode.NONE, None),
        ("once", False, RecordMode.ONCE, None),
        ("new_episodes", False, RecordMode.NEW, None),
        ("rewrite", False, RecordMode.ALL, None),
        ("new", True, RecordMode.NEW, "record mode new is deprecated: write new_episodes"),
        (
            "all",
            True,
            RecordMode.ALL,
            "record mode all is deprecated: write rewrite "
            "(which pytest-recording's all means here too: every request recorded again)",
        ),
    ],
)
def test_record_modes_are_pytest_recordings_words_and_0x_words_say_their_new_name(
    text: str, old: bool, mode: RecordMode, note: str | None
) -> None:
    assert RecordMode.parse(text, allow_none=True) is mode
    assert RecordMode.deprecated(text) == note
    assert mode.word == (text if not old else {"new": "new_episodes", "all": "rewrite"}[text])
    if old:  # the launcher's reading refuses them, so that click reads them and says so
        with pytest.raises(UsageError):
            RecordMode.parse(text, allow_none=True, old=False)
    else:
        assert RecordMode.parse(text, allow_none=True, old=False) is mode


def test_record_modes_name_the_valid_ones() -> None:
    assert RecordMode.words() == ("once", "new_episodes", "rewrite")
    assert RecordMode.words(allow_none=True) == ("none", "once", "new_episodes", "rewrite")
    assert [mode.value for mode in RecordMode] == ["all", "new", "once", "none"]  # what journals and reports store
    with pytest.raises(UsageError) as bad:
        RecordMode.parse("sometimes", allow_none=True)
    assert bad.value.fix == "use one of: none, once, new_episodes, rewrite"
    with pytest.raises(UsageError) as never:
        RecordMode.parse("none")
    assert "never records" in never.value.problem and "mockmcp replay" in (never.value.fix or "")


def test_record_refuses_mode_none_at_the_boundary(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    done = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--record-mode", "none", "--", "true"],
        capture_output=True,
        timeout=30,
        env=child_env(),
    )
    # Refused before anything starts, with the usage line and the valid modes.
    assert done.returncode == 2 and b"Usage: mockmcp record" in done.stderr
    assert b"record mode 'none' never records" in done.stderr and b"use once, new_episodes, rewrite" in done.stderr
    assert not out.exists()


# --- a server's command line as a cassette names it: no credential ----------------------------------------------

GH = "ghp_" + "a1B2" * 9  # built here, so that no secret-shaped literal sits in the repository

SERVER_WORDS = [
    # (the command line, as meta.server keeps it, what each changed word held)
    (["npx", "-y", "srv", "--api-key", GH], ["npx", "-y", "srv", "--api-key", REDACTED], {4: "the value of --api-key"}),
    (["srv", "--token", "X"], ["srv", "--token", REDACTED], {2: "the value of --token"}),
    (["srv", "--token=X", "--port", "80"], ["srv", f"--token={REDACTED}", "--port", "80"], {1: "the value of --token"}),
    (["srv", "--GITHUB_TOKEN", "X"], ["srv", "--GITHUB_TOKEN", REDACTED], {2: "the value of --GITHUB_TOKEN"}),
    (["srv", "-password", "X"], ["srv", "-password", REDACTED], {2: "the value of -password"}),
    (
        ["srv", "--client-secret", "X", "--key", "Y"],
        ["srv", "--client-secret", REDACTED, "--key", REDACTED],
        {2: "the value of --client-secret", 4: "the value of --key"},
    ),
    (
        ["pg", "postgres://app:PASS@host:5432/db?sslmode=require"],
        ["pg", f"postgres://app:{REDACTED}@host:5432/db?sslmode=require"],
        {1: "a URL's password"},
    ),
    (["x", "redis://h/0?password=s&db=1"], ["x", f"redis://h/0?password={REDACTED}&db=1"], {1: "a URL's ?password="}),
    (  # an argument keeps what is no secret in its query: the server is run with it again by verify
        ["x", "https://user:pass@h.example/mcp?key=abc&region=eu#f"],
        ["x", f"https://user:{REDACTED}@h.example/mcp?key={REDACTED}&region=eu#f"],
        {1: "a URL's password and a URL's ?key="},
    ),
    (
        ["x", "--url=https://u:p@h.example/x?token=1&a=2", "--endpoint", "https://h.example/api?region=eu"],
        [
            "x",
            f"--url=https://u:{REDACTED}@h.example/x?token={REDACTED}&a=2",
            "--endpoint",
            "https://h.example/api?region=eu",
        ],
        {1: "a URL's password and a URL's ?token="},
    ),
    (["https://h.example/mcp?key=abc"], ["https://h.example/mcp"], {0: "a URL's credentials or query"}),
    (
        ["x", f"--header=Authorization: token {GH}"],
        ["x", f"--header=Authorization: token {REDACTED}"],
        {1: "a known key's shape"},
    ),
    # Kept: a switch, a flag's value that is a placeholder already, flags not named for a secret, JSON, plain URLs.
    (["srv", "--token"], ["srv", "--token"], {}),
    (["srv", "--token", "--verbose"], ["srv", "--token", "--verbose"], {}),
    (["srv", "--token", "${GITHUB_TOKEN}", "--key=${KEY}"], ["srv", "--token", "${GITHUB_TOKEN}", "--key=${KEY}"], {}),
    (
        ["srv", "--no-auth", "srv.py", "--sort-key", "name", "--keyboard", "us"],
        ["srv", "--no-auth", "srv.py", "--sort-key", "name", "--keyboard", "us"],
        {},
    ),
    (
        ["srv", "--config", '{"opt": 1}', "--token-file", "t.txt"],
        ["srv", "--config", '{"opt": 1}', "--token-file", "t.txt"],
        {},
    ),
    (
        ["srv", "postgres://host/db", "http://127.0.0.1:8000/mcp"],
        ["srv", "postgres://host/db", "http://127.0.0.1:8000/mcp"],
        {},
    ),
]


@pytest.mark.parametrize(("words", "kept", "held"), SERVER_WORDS)
def test_a_server_command_line_keeps_no_credential(words: list[str], kept: list[str], held: dict[int, str]) -> None:
    assert credentials.server_words(words) == kept
    assert dict(credentials.credentials_in(words)) == held
    assert credentials.server_words(kept) == kept  # what it keeps holds nothing more
