"""`mockmcp verify` against live servers, and `mockmcp diff` between cassettes."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest
from conftest import MOCKMCP, NOTES_COMMAND, ROOT, SDK_PYTHON, SHIPPED, child_env

from mockmcp.cassette import store as cassette
from mockmcp.cassette.model import Cassette, Interaction
from mockmcp.cli.commands import recorded_command
from mockmcp.engine.matching import Matcher
from mockmcp.errors import UsageError
from mockmcp.record._live import drive
from mockmcp.tools import _drift as drift

NOTES = NOTES_COMMAND
VARIANT = [*SDK_PYTHON, str(ROOT / "tests" / "servers" / "notes_variant.py")]
SCRIPTED = [sys.executable, str(ROOT / "tests" / "servers" / "scripted.py")]


def verify(path: Path, *server: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MOCKMCP, "verify", str(path), *extra, "--", *server],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
        cwd=ROOT,
    )


def copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copyfile(SHIPPED / name, target)
    return target


@pytest.mark.parametrize("name", ["notes-session.yaml", "notes-session-2026.yaml"], ids=["handshake", "stateless"])
def test_the_server_a_cassette_was_recorded_from_has_not_drifted(name: str, tmp_path: Path) -> None:
    # The stateless session has requestState values the server mints anew on every run: verify takes
    # the live ones for the retried requests, and does not count them as drift.
    proc = verify(SHIPPED / name, *NOTES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " 0 changed, 0 missing, 0 new" in proc.stdout


def _answered(interaction: Interaction, method: str, change: Callable[[dict[str, Any]], None]) -> Interaction:
    """The interaction, its result changed by `change` if it is a `method` request (a copy: the original stays)."""
    if interaction.method != method or interaction.response is None:
        return interaction
    response = deepcopy(interaction.response)
    change(response["result"])
    return interaction._replace(response=response)


def _bread(result: dict[str, Any]) -> None:
    for item in result.get("content", []):
        if item.get("text") == "remember to buy milk":
            item["text"] = "remember to buy bread"


def _titled(result: dict[str, Any]) -> None:
    next(tool for tool in result["tools"] if tool["name"] == "read_file")["title"] = "Read a note"


def _no_summarize(result: dict[str, Any]) -> None:
    result["tools"] = [tool for tool in result["tools"] if tool["name"] != "summarize"]


# Each variant of the notes server, as the change it makes to what a session hears (see notes_variant.py).
LIVE_CHANGES: dict[str, Callable[[Interaction], Interaction]] = {
    "changed-output": lambda i: _answered(i, "tools/call", _bread),
    "removed-tool": lambda i: _answered(i, "tools/list", _no_summarize),
    "new-field": lambda i: _answered(i, "tools/list", _titled),
}


@pytest.mark.parametrize(
    ("variant", "status", "detail"),
    [
        (
            "changed-output",
            "changed  [3] tools/call read_file",
            'content[0].text: recorded "remember to buy milk", live "remember to buy bread"',
        ),
        (
            "removed-tool",
            "missing  [7] tools/call summarize",
            "the tool 'summarize' is no longer offered by tools/list",
        ),
        (
            "new-field",
            "changed  [2] tools/list",
            'tools[name="read_file"].title: only in the live answer ("Read a note")',
        ),
    ],
)
def test_each_drift_is_reported_precisely(variant: str, status: str, detail: str) -> None:
    """What verify says of each change of tests/servers/notes_variant.py, from the live session it would see.

    The live session is the shipped one with the variant's change made by hand: comparing and telling
    are pure (`drift`); verify's driving of a live variant is test_update_writes_the_live_answers_*'s.
    """
    recorded = cassette.load(str(SHIPPED / "notes-session.yaml"))
    live = recorded._replace(interactions=tuple(LIVE_CHANGES[variant](i) for i in recorded.interactions))
    found = drift.compare(recorded, live, Matcher.build())
    assert found.drifted
    lines = found.render("mockmcp verify").splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"  {status}")))
    assert lines[start + 1].strip() == f"- {detail}"


def test_a_different_error_code_is_drift(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    lines = b'{"jsonrpc":"2.0","id":1,"method":"tools/fail","params":{"name":"x"}}\n'
    recorded = subprocess.run(
        [*MOCKMCP, "record", "-o", str(path), "--record-mode", "rewrite", "--", *SCRIPTED, "--fail-code", "-32000"],
        input=lines,
        capture_output=True,
        timeout=60,
        env=child_env(),
    )
    assert recorded.returncode == 0, recorded.stderr
    assert verify(path, *SCRIPTED, "--fail-code", "-32000").returncode == 0
    proc = verify(path, *SCRIPTED, "--fail-code", "-32603")
    assert proc.returncode == 1
    assert "- error.code: recorded -32000, live -32603" in proc.stdout


@pytest.mark.slow
def test_update_writes_the_live_answers_keeps_the_knobs_then_verifies_clean(tmp_path: Path) -> None:
    path = copy("notes-session.yaml", tmp_path)
    text = path.read_text()
    # A hand-made knob on the read_file interaction (the first `took:` after its request).
    path.write_text(
        text.replace(
            "      arguments: {path: notes.txt}\n  response:",
            "      arguments: {path: notes.txt}\n  delay: 0.25\n  response:",
            1,
        )
    )
    assert cassette.load(str(path)).interactions[3].delay == 0.25
    updated = verify(path, *VARIANT, "changed-output", extra=("--update",))
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert "kept delay on [3] tools/call read_file" in updated.stdout
    new = cassette.load(str(path))
    assert new.interactions[3].delay == 0.25
    assert new.interactions[3].response["result"]["content"][0]["text"] == "remember to buy bread"
    again = verify(path, *VARIANT, "changed-output")
    assert again.returncode == 0, again.stdout
    assert verify(path, *NOTES).returncode == 1  # and the original server now drifts from it


@pytest.mark.slow
def test_update_keeps_a_commented_cassette_byte_identical_outside_the_answers_that_changed(tmp_path: Path) -> None:
    path = copy("notes-session.yaml", tmp_path)
    edited = (
        path.read_text()
        .replace("interactions:\n", "# Hand-edited: the read is slow.\ninteractions:\n", 1)
        .replace(
            "      arguments: {path: notes.txt}\n  response:",
            "      arguments: {path: notes.txt}   # the first note\n  delay: 0.25  # the spinner\n  response:",
            1,
        )
    )
    path.write_text(edited)
    assert verify(path, *VARIANT, "changed-output", extra=("--update",)).returncode == 0
    after = path.read_text()
    # In meta, the server that answered; in the interactions, only the answers that drifted (the
    # note's text) and their timings.
    before_meta, before_rest = edited.split("interactions:\n", 1)
    after_meta, after_rest = after.split("interactions:\n", 1)
    assert after_meta.replace(after_meta.split("  server:", 1)[1].split("\n  recorder:")[0], "") == (
        before_meta.replace(before_meta.split("  server:", 1)[1].split("\n  recorder:")[0], "")
    )
    changed = [line for line in difflib.ndiff(before_rest.splitlines(), after_rest.splitlines()) if line[:1] in "+-"]
    assert changed and all("bread" in line or "milk" in line or "took:" in line or " at:" in line for line in changed)
    assert "{path: notes.txt}   # the first note\n  delay: 0.25  # the spinner\n" in after


def diff(first: Path, second: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MOCKMCP, "diff", str(first), str(second)], capture_output=True, text=True, timeout=60, env=child_env()
    )


def edited(tmp_path: Path, name: str, change: str) -> Path:
    data = deepcopy(cassette.load(str(SHIPPED / "notes-session.yaml")).to_data())  # the loaded one is shared
    interactions = data["interactions"]
    if change == "answer":
        interactions[3]["response"]["result"]["content"][0]["text"] = "remember to buy tea"
    elif change == "drop":
        del interactions[10]
    elif change == "log":
        interactions[5]["server"][1]["notification"]["params"]["data"] = "counted one"
    elif change == "add":
        interactions.append({"request": {"method": "ping"}, "response": {"result": {}}})
    path = tmp_path / name
    cassette.save(cassette.from_data(data), str(path))
    return path


@pytest.mark.parametrize(
    ("change", "code", "line"),
    [
        ("none", 0, "11 interactions: 11 same, 0 changed, 0 missing, 0 new"),
        ("answer", 1, '- content[0].text: recorded "remember to buy milk", other "remember to buy tea"'),
        ("drop", 1, "missing  [10] prompts/get review"),
        ("add", 1, "new      other[11] ping"),
        ("log", 1, '- server[1].params.data: recorded "counted 1", other "counted one"'),
    ],
)
def test_diff_between_two_cassettes(tmp_path: Path, change: str, code: int, line: str) -> None:
    proc = diff(SHIPPED / "notes-session.yaml", edited(tmp_path, "b.yaml", change))
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert line in proc.stdout


def test_diff_of_two_recordings_of_the_stateless_era_ignores_minted_state(tmp_path: Path) -> None:
    """Two runs mint different requestState values; echoed back, they are not a difference."""
    recorded = cassette.load(str(SHIPPED / "notes-session-2026.yaml"))
    again = tmp_path / "again.yaml"
    cassette.save(drive(recorded, NOTES), str(again))
    states = [
        i.params.get("requestState")
        for c in (recorded, cassette.load(str(again)))
        for i in c.interactions
        if i.params and "requestState" in i.params
    ]
    assert len(states) == 6 and not set(states[:3]) & set(states[3:])  # fresh values on the second run
    proc = diff(SHIPPED / "notes-session-2026.yaml", again)
    assert proc.returncode == 0, proc.stdout


def _paged(first_page: list[str]) -> Cassette:
    return cassette.from_data(
        {
            "version": 1,
            "interactions": [
                {
                    "request": {"id": 1, "method": "tools/list"},
                    "response": {
                        "result": {"tools": [{"name": n, "inputSchema": {}} for n in first_page], "nextCursor": "c"}
                    },
                },
                {
                    "request": {"id": 2, "method": "tools/list", "params": {"cursor": "c"}},
                    "response": {"result": {"tools": [{"name": "write", "inputSchema": {}}]}},
                },
                {
                    "request": {"id": 3, "method": "tools/call", "params": {"name": "read"}},
                    "response": {"result": {"content": []}},
                },
            ],
        }
    )


@pytest.mark.parametrize(("first_page", "status"), [(["read"], "same"), ([], "missing")])
def test_a_tool_listed_on_an_earlier_page_is_still_offered(first_page: list[str], status: str) -> None:
    found = drift.compare(_paged(["read"]), _paged(first_page), Matcher.build())
    call = found.entries[2]
    assert (call.label, call.status) == ("tools/call read", status)
    if status == "missing":
        assert call.details == ("the tool 'read' is no longer offered by tools/list",)


@pytest.mark.parametrize(
    ("server", "command"),
    [
        (["python", "server.py", "--root", "${PROJECT}/data"], ["/usr/bin/python3", "server.py", "--root", "/p/data"]),
        (["~/bin/notes", "-v"], [os.path.expanduser("~/bin/notes"), "-v"]),
        (["node", "python"], ["node", "python"]),  # only the command itself is the interpreter
        (None, "names no server command in meta.server"),
        ([], "names no server command in meta.server"),
        (["http://127.0.0.1:8000/mcp"], "over HTTP, which verify cannot drive"),
        (["notes", "--token", "[REDACTED]"], "a credential on the recorded command line"),  # never passed on
    ],
)
def test_verify_without_a_command_runs_the_server_meta_server_names(server: Any, command: Any) -> None:
    meta = {} if server is None else {"server": server}

    def expand(text: str) -> str:
        return text.replace("${PROJECT}", "/p")

    if isinstance(command, list):
        assert recorded_command(meta, expand, "/usr/bin/python3", "c.yaml") == command
    else:
        with pytest.raises(UsageError, match=command) as caught:
            recorded_command(meta, expand, "/usr/bin/python3", "c.yaml")
        assert "mockmcp verify c.yaml -- SERVER ARGS" in str(caught.value.fix)


def test_update_keeps_the_redaction_rules_and_substitutions_of_both_sessions_and_the_live_rest_of_meta() -> None:
    recorded = Cassette(
        (),
        {"server": ["old"], "redact": {"env": ["TOKEN"]}, "substitute": ["PROJECT"], "note": "hand-written"},
    )
    live = Cassette((), {"server": ["new"], "redact": {"patterns": ["sk-[a-z]+"]}, "recorded_at": "2026-12-04"})
    meta = drift.updated(recorded, live, drift.compare(recorded, live, Matcher.build()))[0].meta
    assert meta == {
        "server": ["new"],
        "note": "hand-written",
        "recorded_at": "2026-12-04",
        "redact": {"env": ["TOKEN"], "patterns": ["sk-[a-z]+"]},
        "substitute": ["PROJECT"],
    }


@pytest.mark.parametrize(("expect", "kept"), [(None, False), ("fault", "cut")])
def test_update_replaces_a_recorded_cut_with_the_live_answer_but_keeps_one_written_as_a_fault(
    expect: str | None, kept: Any
) -> None:
    call = {"id": 1, "method": "tools/call", "params": {"name": "halfway", "arguments": {}}}
    recorded = Cassette(
        (Interaction("request", call, drop="cut", took=0.1, marks=() if expect is None else (expect,)),), {}
    )
    answer = {"result": {"content": [{"type": "text", "text": "whole"}]}}
    live = Cassette((Interaction("request", call, response=answer, took=0.2),), {})
    made, notes = drift.updated(recorded, live, drift.compare(recorded, live, Matcher.build()))
    [interaction] = made.interactions
    assert (interaction.drop, interaction.response, interaction.took) == (kept, answer, 0.2)
    assert notes == ([] if expect is None else ["kept drop on [0] tools/call halfway"])
