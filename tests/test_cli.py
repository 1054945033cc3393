"""The command line: the launcher's reading of `replay` agrees with click's, and bad options fail at the boundary.

- `mockmcp.cli.options.read_plain` (the launcher's reader) and the click command built from the
  same table give the same values for every plain command line, and the reader declines the rest.
- Bad values of --record-mode, --timing, --http and seconds, and an option typo before `--`, end with
  click's usage and exit status 2, before anything starts; a server's own options still reach it.
- One spelling per concept in every command's help, docs/cli.md names every option and no other, and
  each spelling of mockmcp 0.x still works for a release, saying its new spelling on stderr.
- An error past the options reads the same whichever reader took the command line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp.cli import options
from mockmcp.cli.app import cli
from mockmcp.cli.state import read_taken, write_taken
from mockmcp.errors import UsageError

NOTES = str(SHIPPED / "notes.yaml")
REPLAY = cli.commands["replay"]


def mockmcp(*args: str, stdin: bytes = b"", timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MOCKMCP, *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
        cwd=ROOT,
    )


def read_by_click(args: list[str]) -> dict[str, Any] | None:
    """The values click gives the replay command for args, or None when click refuses them (or shows help)."""
    try:
        with REPLAY.make_context("replay", list(args)) as ctx:
            return dict(ctx.params)
    except (click.ClickException, click.exceptions.Exit):
        return None


def read_fast(args: list[str]) -> dict[str, Any] | None:
    return options.read_plain(options.REPLAY, args, declined=("listen",))


# Command lines the launcher reads itself: it must read them exactly as click does.
PLAIN = [
    ["C.yaml"],
    [""],
    ["C.yaml", "--strict"],
    ["--strict", "C.yaml"],
    ["C.yaml", "--ignore", "arguments.when", "--ignore=params._meta"],
    ["C.yaml", "--timing", "recorded"],
    ["C.yaml", "--timing=0.5"],
    ["C.yaml", "--timing", "none"],
    ["C.yaml", "--timing", "2"],
    ["C.yaml", "--report", "report-{pid}.json"],
    ["--report=r.json", "--timing", "1e-3", "C.yaml", "--ignore", "x.y", "--strict"],
    ["C.yaml", "--ignore="],
    ["C.yaml", "--ignore", "a["],  # not a valid path: refused later, by the matcher, alike on both paths
    ["C.yaml", "--state", "state.json"],
    ["C.yaml", "--substitute", "PROJECT=/srv/app", "--substitute=HOME"],
    ["C.yaml", "--substitute", "A=x=y"],  # the value is what follows the first `=`
    ["C.yaml", "--session-idle", "never"],  # taken, and meaningful with --http only
    ["C.yaml", "--session-idle=90"],
]

# Command lines the launcher leaves to click: click reads or refuses them, and explains.
DECLINED = [
    [],
    ["-h"],
    ["--help"],
    ["C.yaml", "D.yaml"],
    ["--", "C.yaml"],
    ["-"],
    ["C.yaml", "--nope"],
    ["C.yaml", "--strict=yes"],
    ["C.yaml", "--strict", "--strict"],
    ["C.yaml", "--timing", "1", "--timing", "2"],
    ["C.yaml", "--timing", "fast"],
    ["C.yaml", "--timing", "-1"],
    ["C.yaml", "--timing", "inf"],
    ["C.yaml", "--timing", "nan"],
    ["C.yaml", "--timing="],
    ["C.yaml", "--timing"],
    ["C.yaml", "--ignore"],
    ["C.yaml", "--ignore", "-x"],
    ["C.yaml", "--http", "8000"],
    ["C.yaml", "--http=127.0.0.1:0"],
    ["C.yaml", "--http", "99999"],
    ["{folder}"],
    ["C.yaml", "--report", "{folder}"],
    ["C.yaml", "--substitute", "1A=/x"],
    ["C.yaml", "--session-idle", "0"],
    ["C.yaml", "--session-idle", "soon"],
    ["C.yaml", "--substitute", "A="],
    ["C.yaml", "--substitute"],
]


@pytest.mark.parametrize("args", PLAIN, ids=" ".join)
def test_the_launcher_reads_a_plain_command_line_as_click_does(args: list[str]) -> None:
    fast = read_fast(args)
    assert fast is not None, "the launcher should have taken this command line"
    assert fast == read_by_click(args)


@pytest.mark.parametrize("args", DECLINED, ids=" ".join)
def test_the_launcher_leaves_anything_else_to_click(args: list[str], tmp_path: Path) -> None:
    args = [arg.replace("{folder}", str(tmp_path)) for arg in args]
    assert read_fast(args) is None
    clicked = read_by_click(args)
    if clicked is not None:  # click reads some of them (a repeated option, --http): the values must be sane
        assert set(clicked) == {param.dest for param in options.REPLAY}


def test_click_builds_replay_from_the_table() -> None:
    assert [param.name for param in REPLAY.params if param.name != "help"] == [p.dest for p in options.REPLAY]
    for param in options.REPLAY:
        assert param.kind == "flag" or param.kind in options.PARSERS
        built = next(p for p in REPLAY.params if p.name == param.dest)
        assert tuple(getattr(built, "opts", ())) == param.flags or not param.flags
        assert built.multiple == param.multiple
    help_text = mockmcp("replay", "--help").stdout
    for param in options.REPLAY:
        assert all(flag in help_text for flag in param.flags)
        assert param.help[:30] in " ".join(help_text.split())
    summary = " ".join(help_text.split("\n\n")[1].split())
    assert summary == "Serve CASSETTE as an MCP server over stdio, or over Streamable HTTP with --http."


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["replay", NOTES, "--timing", "fast"], "Invalid value for '--timing': 'fast' is neither none, recorded"),
        (["replay", NOTES, "--http", "99999"], "Invalid value for '--http': cannot read '99999' as [HOST:]PORT"),
        (["replay", NOTES, "--http", "localhost"], "Invalid value for '--http': cannot read 'localhost'"),
        (
            ["record", "-o", "x.yaml", "--http-target", "http://127.0.0.1:9/mcp", "--http", "nine"],
            "Invalid value for '--http': cannot read 'nine' as [HOST:]PORT",
        ),
        (
            ["record", "-o", "x.yaml", "--record-mode", "sometimes", "--", "true"],
            "unknown record mode 'sometimes'\n  how to fix: use one of: once, new_episodes, rewrite",
        ),
        (["record", "-o", "x.yaml", "--record-mode", "ALL", "--", "true"], "unknown record mode 'ALL'"),
        (["record", "-o", "x.yaml", "--record-mode", "none", "--", "true"], "record mode 'none' never records"),
        (
            ["record", "-o", "x.yaml", "--record-mdoe", "rewrite", "--", "true"],
            "No such option '--record-mdoe'. Did you mean '--record-mode'?",
        ),
        (["record", "-o", "x.yaml", "--grace", "-1", "--", "true"], "cannot read '-1' as seconds"),
        (["verify", NOTES, "--tiemout", "3", "--", "true"], "No such option '--tiemout'. Did you mean '--timeout'?"),
        (["verify", NOTES, "--timeout", "soon", "--", "true"], "cannot read 'soon' as seconds"),
    ],
)
def test_a_bad_option_fails_at_the_boundary_with_usage(args: list[str], expected: str, tmp_path: Path) -> None:
    args = [str(tmp_path / arg) if arg == "x.yaml" else arg for arg in args]
    proc = mockmcp(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"Usage: mockmcp {args[0]} [OPTIONS]"), proc.stderr
    assert expected in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert not list(tmp_path.iterdir())  # nothing recorded, no journal: nothing started


def test_a_bad_value_says_how_to_fix_it() -> None:
    stderr = mockmcp("replay", NOTES, "--timing", "fast").stderr
    assert "how to fix: write e.g. `--timing recorded`, or `--timing 0.5`" in stderr
    stderr = mockmcp("replay", NOTES, "--http", "x").stderr
    assert "how to fix: write e.g. 8000 or 127.0.0.1:8000" in stderr


ARGV_SERVER = "import sys; open(sys.argv[1], 'w').write(' '.join(sys.argv[2:]))"


@pytest.mark.parametrize("dashes", [["--"], []], ids=["with --", "without --"])
def test_record_passes_the_servers_own_options_to_it(dashes: list[str], tmp_path: Path) -> None:
    seen = tmp_path / "argv.txt"
    out = tmp_path / "c.yaml"
    server = [sys.executable, "-c", ARGV_SERVER, str(seen), "--its-flag", "--mode", "x"]
    proc = mockmcp("record", "-o", str(out), "--record-mode", "rewrite", "--grace", "5", *dashes, *server)
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text() == "--its-flag --mode x"


def test_verify_passes_the_servers_own_options_to_it(tmp_path: Path) -> None:
    seen = tmp_path / "argv.txt"
    server = [sys.executable, "-c", ARGV_SERVER, str(seen), "--its-flag"]
    proc = mockmcp("verify", NOTES, "--timeout", "5", "--", *server)
    assert proc.returncode != 0  # the server answers nothing: everything drifted
    assert seen.read_text() == "--its-flag"


@pytest.mark.parametrize(
    "case",
    ["missing cassette", "report into a file's folder", "a state file that is not one"],
)
def test_an_error_past_the_options_reads_the_same_on_both_paths(case: str, tmp_path: Path) -> None:
    """The launcher takes the first command line; the repeated --strict sends the second through click."""
    plain = tmp_path / "plain"
    plain.write_text("")
    args = [str(tmp_path / "missing.yaml")] if case == "missing cassette" else [NOTES, "--report", f"{plain}/r.json"]
    if case == "a state file that is not one":
        args = [NOTES, "--state", str(plain)]
    assert read_fast([*args, "--strict"]) is not None
    assert read_fast([*args, "--strict", "--strict"]) is None
    fast = mockmcp("replay", *args, "--strict")
    slow = mockmcp("replay", *args, "--strict", "--strict")
    assert fast.returncode == slow.returncode == 2
    assert fast.stderr == slow.stderr
    assert "mockmcp: error: " in fast.stderr and "how to fix: " in fast.stderr


def test_version_and_help_go_through_click() -> None:
    version = mockmcp("--version")
    assert version.returncode == 0 and version.stdout.startswith("mockmcp, version ")
    usage = mockmcp("replay")
    assert usage.returncode == 2 and "Missing argument 'CASSETTE'" in usage.stderr


@pytest.mark.parametrize(
    ("text", "cassette", "said"),
    [
        (None, "c.yaml", ()),  # no file yet: nothing taken
        ('{"cassette": "{c}", "taken": [0, 2]}', "c.yaml", (0, 2)),
        ("", "c.yaml", "not a mockmcp replay state file (Expecting value: line 1 column 1 (char 0))"),
        ('{"cassette": "{c}"}', "c.yaml", "not a mockmcp replay state file ('taken')"),
        ('{"cassette": "{c}", "taken": ["0"]}', "c.yaml", "`taken` must list recorded session numbers"),
        ('{"cassette": "{c}", "taken": [0]}', "other.yaml", "holds the recorded sessions taken from "),
    ],
    ids=["missing", "taken", "empty", "no-taken", "not-numbers", "another-cassette"],
)
def test_a_state_file_is_read_or_refused_with_its_path_and_how_to_fix(
    text: str | None, cassette: str, said: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    state = tmp_path / "state.json"
    if text is not None:
        state.write_text(text.replace("{c}", str(tmp_path / "c.yaml")))
    if isinstance(said, tuple):
        assert read_taken(str(state), cassette) == said
        write_taken(str(state), cassette, {*said, 1})
        assert read_taken(str(state), cassette) == tuple(sorted({*said, 1}))
        return
    with pytest.raises(UsageError) as raised:
        read_taken(str(state), cassette)
    assert str(raised.value).startswith(f"{state}: ") and said in str(raised.value)
    assert f"delete {state}" in str(raised.value.fix)


def test_a_state_file_is_for_replay_over_stdio() -> None:
    refused = mockmcp("replay", NOTES, "--http", "0", "--state", "s.json")
    assert refused.returncode == 2 and "--state is for replay over stdio" in refused.stderr
