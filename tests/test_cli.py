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

import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

from mockmcp import __version__
from mockmcp.cassette import store
from mockmcp.cli import options
from mockmcp.cli.app import TITLE, cli
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
    said = ARGV_SERVER + "; print('said')"  # a line to record: a cassette is saved
    server = [sys.executable, "-c", said, str(seen), "--its-flag", "--mode", "x", "--api-key", "k3y-of-mine"]
    proc = mockmcp("record", "-o", str(out), "--record-mode", "rewrite", "--grace", "5", *dashes, *server)
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text() == "--its-flag --mode x --api-key k3y-of-mine"
    assert store.load(str(out)).meta["server"][-2:] == ["--api-key", "[REDACTED]"]  # never the credential
    assert "k3y-of-mine" not in out.read_text()


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
    assert version.returncode == 0 and version.stdout == TITLE + "\n"
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
    if "not a mockmcp replay state file" in said:  # another file: deleting it only if it is a spoiled state file
        assert str(raised.value.fix).startswith("give --state a file of its own")


def test_a_state_file_is_for_replay_over_stdio() -> None:
    refused = mockmcp("replay", NOTES, "--http", "0", "--state", "s.json")
    assert refused.returncode == 2 and "--state is for replay over stdio" in refused.stderr


# Another tool (a .NET global tool) also installs a command named `mockmcp`: ours says what it is first.
@pytest.mark.parametrize(
    ("args", "status"),
    [(["--version"], 0), (["--help"], 0), (["-h"], 0), ([], 2)],  # no command: the help, as a usage error
    ids=["version", "help", "h", "bare"],
)
def test_the_first_line_of_help_and_version_names_the_product(args: list[str], status: int) -> None:
    done = CliRunner().invoke(cli, args, prog_name="mockmcp")
    assert done.exit_code == status, done.output
    first = done.output.splitlines()[0]
    assert first == f"mockmcp {__version__}: record/replay mock server for testing MCP hosts (Python)"
    assert first == TITLE


# --- one word per concept ------------------------------------------------------------------------------------

COMMANDS = sorted(cli.commands)


@functools.cache
def help_text(*command: str) -> str:
    """What `mockmcp [COMMAND] --help` prints (click's own rendering, in this process)."""
    done = CliRunner().invoke(cli, [*command, "--help"], prog_name="mockmcp", terminal_width=80)
    assert done.exit_code == 0, done.output
    return done.output


OPTION_LINE = re.compile(r"^  (-\w, )?(--[\w-]+)(?: (\S+))?(?:\s{2,}|$)")


def help_options(command: str) -> dict[str, str]:
    """The options `mockmcp COMMAND --help` shows: each long spelling -> its metavar ("" for a flag), "-o" too."""
    text = help_text(command)
    shown: dict[str, str] = {}
    for line in text.split("Options:", 1)[1].splitlines():
        found = OPTION_LINE.match(line)
        if found and found.group(2) != "--help":
            short, flag, metavar = found.groups()
            shown[flag] = metavar or ""
            if short:
                shown[short.rstrip(", ")] = f"{flag} {metavar or ''}".strip()
    return shown


HELP = {command: help_options(command) for command in COMMANDS}

# Each concept's one spelling: the option and its metavar wherever a command takes it.
SPELLINGS = {
    "--output": {"CASSETTE", "FILE"},  # the one file a command writes: the cassette where a server command follows
    "-o": {"--output CASSETTE", "--output FILE"},
    "--report": {"FILE"},
    "--html": {"FILE"},
    "--with-report": {"FILE"},
    "--http": {"[HOST:]PORT"},
    "--http-target": {"URL"},
    "--record-mode": {"MODE"},
    "--grace": {"SECONDS"},
    "--timeout": {"SECONDS"},
    "--upstream-timeout": {"SECONDS"},
    "--session-idle": {"SECONDS"},
    "--strict": {""},
    "--fail-on-warning": {""},
}
OLD = ["--mode", "--listen", "--cassette"]  # spellings no command's help may show
SECONDS = {"--grace", "--timeout", "--upstream-timeout", "--session-idle"}


def test_every_commands_help_spells_each_concept_one_way() -> None:
    for flag, spellings in SPELLINGS.items():
        metavars = {shown[flag] for shown in HELP.values() if flag in shown}
        assert metavars and metavars <= spellings, (flag, metavars)
    for command, shown in HELP.items():
        assert not set(OLD) & set(shown), command
        # a duration is SECONDS, and SECONDS is a duration
        assert {flag for flag, metavar in shown.items() if metavar == "SECONDS"} <= SECONDS, command
        usage = help_text(command).splitlines()[0]
        # the cassette: positional, or the option that writes it where a server command follows; never both
        assert not ("CASSETTE" in usage and shown.get("--output") == "CASSETTE"), command
    assert {c for c, shown in HELP.items() if "--strict" in shown} == {"replay", "exec", "run"}
    assert {c for c, shown in HELP.items() if shown.get("--output") == "CASSETTE"} == {"record", "exec", "stub"}
    positional = {c for c in COMMANDS if "CASSETTE" in help_text(c).splitlines()[0]}
    assert positional == {"replay", "recover", "lint", "show", "verify", "diff"}
    assert all(f"  {command} " in help_text() for command in COMMANDS)


def documented() -> dict[frozenset[str], set[str]]:
    """docs/cli.md's option tables: the commands a section names in its heading -> the options its tables name."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    tables: dict[frozenset[str], set[str]] = {}
    for section in text.split("\n## ")[1:]:
        heading, _, body = section.partition("\n")
        commands = frozenset(re.findall(r"`mockmcp (\w+)`", heading))
        if not commands:
            continue
        rows = [line.split(" | ")[0] for line in body.splitlines() if line.startswith("| `-")]
        tables[commands] = {flag for row in rows for flag in re.findall(r"`(--?[a-z][\w-]*)", row)}
    return tables


def test_docs_name_every_option_of_every_command_and_no_other() -> None:
    tables = documented()
    assert set().union(*tables) == set(COMMANDS)
    for commands, named in tables.items():
        options = {flag for command in commands for flag in HELP[command]}
        assert named == options, (
            f"{sorted(commands)}: only in docs/cli.md {named - options}, undocumented {options - named}"
        )


# Each spelling of mockmcp 0.x, the spelling that replaces it, and the note it earns; click reads both alike.
DEPRECATED = [
    (
        "record",
        ["-o", "c.yaml", "--mode", "all", "--", "srv"],
        ["-o", "c.yaml", "--record-mode", "rewrite", "--", "srv"],
        ["--mode is deprecated: write --record-mode", "record mode all is deprecated: write rewrite"],
    ),
    (
        "record",
        ["-o", "c.yaml", "--mode=new", "srv", "--mode", "x"],
        ["-o", "c.yaml", "--record-mode=new_episodes", "srv", "--mode", "x"],
        ["--mode is deprecated: write --record-mode", "record mode new is deprecated: write new_episodes"],
    ),
    (
        "record",
        ["-o", "c.yaml", "--http-target", "http://h/mcp", "--listen", "8000"],
        ["-o", "c.yaml", "--http-target", "http://h/mcp", "--http", "8000"],
        ["--listen is deprecated: write --http"],
    ),
    (
        "wrap",
        ["cfg.json", "--mode", "once"],
        ["cfg.json", "--record-mode", "once"],
        ["--mode is deprecated: write --record-mode"],
    ),
    (
        "exec",
        ["--cassette", "c.yaml", "--", "srv"],
        ["-o", "c.yaml", "--", "srv"],
        ["--cassette is deprecated: write --output"],
    ),
    (
        "exec",
        ["-o", "c.yaml", "--record-mode", "new"],
        ["-o", "c.yaml", "--record-mode", "new_episodes"],
        ["record mode new is deprecated: write new_episodes"],
    ),
    (
        "lint",
        ["--strict", "c.yaml"],
        ["--fail-on-warning", "c.yaml"],
        ["--strict is deprecated: write --fail-on-warning"],
    ),
    ("show", ["--html", "c.yaml", "-o", "p.html"], ["c.yaml", "--html", "p.html"], ["-o is deprecated: write --html"]),
    (
        "show",
        ["c.yaml", "--html", "--output=p.html", "--report", "r.json"],
        ["c.yaml", "--html", "p.html", "--with-report", "r.json"],
        ["--output is deprecated: write --html", "--report is deprecated: write --with-report"],
    ),
    ("schema", ["--report"], ["--for", "report"], ["--report is deprecated: write --for report"]),
]


def parsed(command: str, args: list[str]) -> dict[str, Any]:
    with cli.commands[command].make_context(command, list(args)) as ctx:
        return dict(ctx.params)


@pytest.mark.parametrize(
    ("command", "old", "new", "notes"), DEPRECATED, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_an_old_spelling_still_works_for_a_release_and_names_its_new_one(
    command: str, old: list[str], new: list[str], notes: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert parsed(command, new) == parsed(command, old)
    said = capsys.readouterr().err.splitlines()
    assert [line for line in said if "deprecated" in line] == [f"mockmcp: {note}" + said_rest(note) for note in notes]


def said_rest(note: str) -> str:
    return (
        " (the old spelling goes in the next release)"
        if not note.startswith("record mode")
        else (
            " (which pytest-recording's all means here too: every request recorded again)"
            if note.endswith("rewrite")
            else ""
        )
    )


@pytest.mark.parametrize(
    ("old", "status", "out"),
    [
        (["lint", "--strict", "examples/weather.yaml"], 1, "1 file: 0 errors, 1 warning"),
        (["schema", "--report"], 0, '"title"'),
    ],
)
def test_old_spellings_run_as_before(old: list[str], status: int, out: str) -> None:
    done = mockmcp(*old)
    assert done.returncode == status and out in done.stdout, done.stderr
    assert done.stderr.startswith(f"mockmcp: {old[1]} is deprecated: write "), done.stderr


def test_show_html_dash_o_still_writes_the_page(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    done = mockmcp("show", "--html", NOTES, "-o", str(page))
    assert done.returncode == 0 and page.read_text().startswith("<!doctype html>"), done.stderr
    assert "mockmcp: -o is deprecated: write --html" in done.stderr


def test_apart_from_refuses_an_output_that_is_the_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path, written otherwise, or the same file by another name (a link); a new file is compared by its
    resolved path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "c.yaml").write_text("version: 1\n")
    (tmp_path / "hard.yaml").hardlink_to(tmp_path / "c.yaml")
    (tmp_path / "soft.yaml").symlink_to(tmp_path / "c.yaml")
    (tmp_path / "other.yaml").write_text("version: 1\n")
    for same in ["c.yaml", "./sub/../c.yaml", str(tmp_path / "c.yaml"), "hard.yaml", "soft.yaml"]:
        with pytest.raises(UsageError, match="names the cassette itself") as raised:
            options.apart_from("c.yaml", [("--report", None), ("--html", same)])
        assert raised.value.fix == "write html to another file, e.g. --html c.html"
    options.apart_from("c.yaml", [("--report", "other.yaml"), ("--html", "new.html"), ("--report", "")])
    with pytest.raises(UsageError, match=r"--report \./new\.json names"):
        options.apart_from("new.json", [("--report", "./new.json")])  # neither exists yet
    with pytest.raises(UsageError, match=r"--html \./r\.json names the output of --report") as raised:
        options.apart_from("c.yaml", [("--report", "r.json"), ("--html", "./r.json")])  # nor would the other output
    assert raised.value.fix == "write html to another file, e.g. --html c.html"
    with pytest.raises(UsageError, match=r"--state c\.yaml names the cassette itself") as raised:
        options.apart_from("c.yaml", [("--state", "c.yaml")])  # its fix never says to delete it
    assert raised.value.fix == "write state to another file, e.g. --state c.state.json"


SELF_WRITES = [
    ["show", "{c}", "--html", "{c}"],
    ["show", "{c}", "-o", "{c}"],
    ["replay", "{c}", "--html", "{c}"],
    ["replay", "{c}", "--report", "{c}"],
    ["replay", "{c}", "--state", "{c}"],
    ["exec", "--cassette", "{c}", "--report", "{c}", "--", "python", "server.py"],
    ["exec", "-o", "{c}", "--report", "{d}/./c.yaml", "--record-mode", "none"],
]


@pytest.mark.parametrize("command", SELF_WRITES, ids=[" ".join(c[:4]) for c in SELF_WRITES])
def test_no_command_writes_its_page_or_report_over_the_cassette(tmp_path: Path, command: list[str]) -> None:
    cassette = tmp_path / "c.yaml"
    shutil.copy(NOTES, cassette)
    before = cassette.read_bytes()
    done = CliRunner().invoke(cli, [arg.format(c=cassette, d=tmp_path) for arg in command], input="")
    assert isinstance(done.exception, UsageError), done.output
    assert "names the cassette itself" in done.exception.render()
    assert cassette.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]
