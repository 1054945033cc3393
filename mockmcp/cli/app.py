"""The command line: short adapters from options to the domain objects, built with click.

`mockmcp.cli.launch` is the entry point: it reads a plain `mockmcp replay` command line itself and
hands everything else here. `replay`'s parameters are therefore built from the table in
`mockmcp.cli.options`, and every option value with a parser of its own is read by that parser,
through a click parameter type, so that a bad value fails here, with usage, and completes in a shell.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from mockmcp import __version__
from mockmcp.cli import options
from mockmcp.cli.commands import (
    diff_cassettes,
    record_http,
    record_session,
    recover_session,
    verify_cassette,
    write_schema,
)
from mockmcp.cli.executing import exec_cassette
from mockmcp.cli.exits import abort, fail
from mockmcp.cli.replaying import replay_cassette
from mockmcp.cli.wrapping import serve_config, unwrap_config, wrap_config
from mockmcp.errors import MockmcpError, UsageError
from mockmcp.tools.hostconfig import FORMATS
from mockmcp.tools.lint import failed, lint_paths, summary
from mockmcp.tools.show import print_show
from mockmcp.words import RecordMode

__all__ = ["ParsedValue", "cli", "main", "param_type"]

if TYPE_CHECKING:
    _ParamType = click.ParamType[Any]  # generic from click 8.4 on; subscripted for the type checker only
else:
    _ParamType = click.ParamType


class ParsedValue(_ParamType):
    """An option value read by its parser in `mockmcp.cli.options`; what the parser refuses fails with usage."""

    def __init__(self, name: str, parse: Callable[[str], Any]) -> None:
        self.name = name
        self.parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # already read (click converts a default that was given as the value itself)
        try:
            return self.parse(value)
        except UsageError as error:
            self.fail(error.render(), param, ctx)


def param_type(kind: str) -> _ParamType:
    """The click type of a value kind of `mockmcp.cli.options` (a file: click.Path, which also completes it)."""
    if kind == "file":
        return click.Path(dir_okay=False)
    if kind == "text":
        return click.STRING
    return ParsedValue(kind, options.PARSERS[kind])


def _params(table: Sequence[options.Param]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding the parameters of a table of `mockmcp.cli.options`, in the table's order."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for param in reversed(table):  # decorators apply bottom-up
            function = _param(param)(function)
        return function

    return decorate


def _param(param: options.Param) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if not param.flags:
        return click.argument(param.dest, type=param_type(param.kind))
    if param.kind == "flag":
        return click.option(*param.flags, param.dest, is_flag=True, help=param.help)
    # A required option is given no default at all: from click 8.3 on, an explicit default=None satisfies it.
    default: dict[str, Any] = {} if param.required else {"default": param.default}
    return click.option(
        *param.flags,
        param.dest,
        type=param_type(param.kind),
        **default,
        show_default=param.default is not None,
        metavar=param.metavar,
        multiple=param.multiple,
        required=param.required,
        help=param.help,
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mockmcp")
def cli() -> None:
    """Record and replay MCP sessions to test MCP hosts."""


@cli.command()
@_params(options.REPLAY)
def replay(
    cassette: str,
    ignores: tuple[str, ...],
    substitutions: tuple[tuple[str, str | None], ...],
    strict: bool,
    report_path: str | None,
    html_path: str | None,
    timing: float,
    listen: tuple[str, int] | None,
    allow_hosts: tuple[str, ...],
    state_path: str | None,
    session_idle: float | None,
) -> None:
    """Serve CASSETTE as an MCP server over stdio, or over Streamable HTTP with --http.

    Requests are matched by method and params, never by id, and answered with the recorded
    response under the caller's id. A summary goes to stderr when the session ends: over stdio
    when the host closes stdin, over HTTP at SIGINT or SIGTERM.
    """
    status = replay_cassette(
        cassette,
        ignores,
        strict,
        report_path,
        timing,
        listen,
        allow_hosts,
        state_path,
        substitutions,
        html_path,
        session_idle,
    )
    if status:
        raise SystemExit(status)  # the cassette's `exit` knob, or 128 + the signal that ended the session


_substitute = click.option(
    "--substitute",
    "substitutions",
    multiple=True,
    type=param_type("substitution"),
    metavar="NAME[=VALUE]",
    help="The placeholder ${NAME} stands for VALUE on this machine (NAME alone: the environment variable NAME's "
    "value): recording writes it in VALUE's place, replay and verify put VALUE back (repeatable).",
)


# Not interspersed: from the first word of COMMAND on, every argument is the server's, its options too
# (a `--` before COMMAND says the same); an unknown option before it is a typo, reported as such.
@cli.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "-o", "--output", "cassette", required=True, type=click.Path(dir_okay=False), help="The cassette to write."
)
@click.option(
    "--mode",
    default=RecordMode.ONCE.value,
    show_default=True,
    type=click.Choice(RecordMode.choices()),
    help=(
        "all: record afresh; new: add this session to the cassette; "
        "once: record only if the cassette does not exist, else replay it."
    ),
)
@click.option(
    "--redact-env",
    "redact_env",
    multiple=True,
    metavar="NAME",
    help="Replace the value of this environment variable wherever it appears (repeatable).",
)
@click.option(
    "--redact",
    "redact_patterns",
    multiple=True,
    metavar="REGEX",
    help="Replace whatever matches this pattern (repeatable).",
)
@_substitute
@click.option(
    "--grace",
    default=2.0,
    show_default=True,
    type=float,
    help=(
        "Seconds the server gets to exit after stdin closes and the requests in flight are answered "
        "(a line it is sending is let through first), "
        "and again after SIGTERM."
    ),
)
@click.option(
    "--http-target",
    "target",
    metavar="URL",
    help="Record a Streamable HTTP server instead: a reverse proxy to this endpoint URL (needs mockmcp[http]).",
)
@click.option(
    "--listen",
    default="127.0.0.1:0",
    show_default=True,
    type=param_type("listen"),
    metavar="[HOST:]PORT",
    help="With --http-target: where the proxy listens (port 0: any free port).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="With --http-target: a host name or address requests may name in Host and Origin, beyond loopback "
    "and the --listen address (repeatable).",
)
@click.option(
    "--upstream-timeout",
    default=60.0,
    show_default=True,
    type=float,
    metavar="SECONDS",
    help="With --http-target: how long the target may take to start answering a request (504 after).",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(
    cassette: str,
    mode: str,
    redact_env: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    substitutions: tuple[tuple[str, str | None], ...],
    grace: float,
    target: str | None,
    listen: tuple[str, int],
    allow_hosts: tuple[str, ...],
    upstream_timeout: float,
    command: tuple[str, ...],
) -> None:
    """Record a session into a cassette: run COMMAND as the server and proxy stdio to it, or proxy HTTP.

    Launch `mockmcp record -o CASSETTE -- SERVER ARGS...` from the host instead of the server, or
    run `mockmcp record -o CASSETTE --http-target URL` and point the host at the proxy. Every
    message is forwarded unchanged both ways; the cassette is written atomically when the session
    ends. The default mode, once, never replaces a cassette that exists.
    """
    if (target is None) == (not command):
        raise click.UsageError("name the server to record: a command after `--`, or --http-target URL (one of them)")
    if target is not None:
        record_http(
            cassette,
            target,
            listen,
            RecordMode(mode),
            redact_env,
            redact_patterns,
            allow_hosts,
            upstream_timeout,
            substitutions,
        )
        return
    outcome = record_session(
        cassette, list(command), RecordMode(mode), redact_env, redact_patterns, grace, substitutions
    )
    if outcome.status:
        raise SystemExit(outcome.status)


# Not interspersed, as `record`: from the first word of the server's command on, every argument is the server's.
@cli.command("exec", context_settings={"allow_interspersed_args": False})
@_params(options.EXEC)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def exec_(
    cassette: str,
    mode: RecordMode,
    strict: bool,
    report_path: str | None,
    ignores: tuple[str, ...],
    substitutions: tuple[tuple[str, str | None], ...],
    grace: float,
    listen: tuple[str, int] | None,
    command: tuple[str, ...],
) -> None:
    """Replay CASSETTE, or record the server COMMAND into it, as the record mode says: for test runners.

    `mockmcp exec --cassette C --record-mode once -- SERVER ARGS...` is what a host's test launches
    instead of its server. The verdict is the exit status and the --report file (docs/report.md).
    """
    status = exec_cassette(cassette, mode, list(command), strict, report_path, ignores, substitutions, grace, listen)
    if status:
        raise SystemExit(status)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--record", "replay", flag_value=False, default=False, help="Every server records (the default).")
@click.option("--replay", "replay", flag_value=True, help="Every server replays its cassette.")
@click.option(
    "--mode",
    default=RecordMode.ONCE.value,
    show_default=True,
    type=click.Choice(RecordMode.choices()),
    help="With --record, as `mockmcp record --mode`: once records what has no cassette yet and replays the rest.",
)
@click.option(
    "--cassettes",
    type=click.Path(file_okay=False),
    help="Where the cassettes go, one per server (default: cassettes/ beside the derived config).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="The derived config (default: NAME.mockmcp.EXT beside CONFIG).",
)
@click.option(
    "--in-place", is_flag=True, help="Change CONFIG itself, after a backup beside it (`mockmcp unwrap` restores it)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(FORMATS)),
    help="The config's format, when its name and shape do not tell.",
)
def wrap(
    config: str, replay: bool, mode: str, cassettes: str | None, output: str | None, in_place: bool, fmt: str | None
) -> None:
    """Write a host's MCP CONFIG again with every server going through mockmcp: record, or replay.

    Stdio servers run `mockmcp record` (or `replay`) in front of their command; remote servers point at a
    local port that `mockmcp serve DERIVED` serves. Everything else in the file stays as it was.
    """
    if in_place and output:
        raise click.UsageError("--in-place changes CONFIG itself: leave out -o")
    wrap_config(config, output, in_place, replay, RecordMode(mode), cassettes, fmt)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
def unwrap(config: str) -> None:
    """Undo `mockmcp wrap` on the file it wrote (a derived copy, or CONFIG wrapped --in-place)."""
    unwrap_config(config)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
def serve(config: str) -> None:
    """Run the recording proxies (or replays) of every remote server of a wrapped CONFIG until Ctrl-C or SIGTERM."""
    serve_config(config)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
def recover(cassette: str) -> None:
    """Build CASSETTE from the journal an interrupted `mockmcp record` left beside it."""
    recover_session(cassette)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
@click.option(
    "--color",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "always", "never"]),
    help="auto: colour when stdout is a terminal and NO_COLOR is not set.",
)
@click.option(
    "--width", type=click.IntRange(min=20), metavar="COLUMNS", help="Line width (default: the terminal's, else 100)."
)
@click.option("--html", "html", is_flag=True, help="Write an HTML timeline instead (to the -o file).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE", help="With --html: the page to write.")
@click.option(
    "--report",
    "reports",
    multiple=True,
    type=click.Path(dir_okay=False),
    metavar="REPORT",
    help="With --html: a replay's --report of this cassette, shown beside it (repeatable, one per live session).",
)
def show(
    cassette: str, color: str, width: int | None, html: bool, output: str | None, reports: tuple[str, ...]
) -> None:
    """Print CASSETTE as a transcript to read at a glance, or with --html write it as a page.

    One line per message with direction arrows, method and a short summary, the recorded timing,
    the fault knobs marked, and counts at the end. `--html -o FILE.html` draws the same as a timeline
    in one self-contained file; with `--report`, what a live replay did is beside what was recorded.
    """
    if not html:
        if output or reports:
            raise UsageError("-o and --report are options of `show --html`", "add --html, or leave them out")
        print_show(cassette, color, width)
        return
    if not output:
        raise UsageError(
            "`show --html` needs the file to write", f"add -o FILE.html: mockmcp show --html {cassette} -o page.html"
        )
    from mockmcp.tools.html_page import write_show_page  # deferred: only --html draws a page

    click.echo(f"mockmcp: wrote {write_show_page(cassette, reports, output)}", err=True)


@cli.command()
@click.argument("cassettes", nargs=-1, required=True, type=click.Path())
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
def lint(cassettes: tuple[str, ...], strict: bool) -> None:
    """Check each CASSETTE before a test run: YAML, structure, JSON-RPC and MCP shapes, credentials.

    Prints every finding (file, line, place, problem, how to fix) and a summary to stdout.
    Exits 1 on any error, or with --strict on any warning.
    """
    findings = lint_paths(cassettes)
    for finding in findings:
        click.echo(finding.render())
    click.echo(summary(findings, len(cassettes)))
    if failed(findings, strict):
        raise SystemExit(1)


# `verify` and `diff` compare the same way, so they leave the same paths out.
_comparison_ignores = click.option(
    "--ignore",
    "ignores",
    multiple=True,
    metavar="PATH",
    help="A params or result path left out of the comparison (repeatable).",
)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
@_comparison_ignores
@_substitute
@click.option("--update", is_flag=True, help="Write the live answers into the cassette (keeping its fault knobs).")
@click.option("--timeout", default=10.0, show_default=True, type=float, help="Seconds to wait for each live answer.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def verify(
    cassette: str,
    ignores: tuple[str, ...],
    substitutions: tuple[tuple[str, str | None], ...],
    update: bool,
    timeout: float,
    command: tuple[str, ...],
) -> None:
    """Drive the live server COMMAND with CASSETTE's client side and report every drift.

    `mockmcp verify [OPTIONS] CASSETTE -- SERVER ARGS...` (the `--` keeps the server's own options
    apart; without it, the server the cassette's meta.server names); exit status 1 when anything drifted.
    """
    if verify_cassette(cassette, list(command), ignores, update, timeout, substitutions):
        raise SystemExit(1)


@cli.command()
@click.argument("first", type=click.Path(dir_okay=False))
@click.argument("second", type=click.Path(dir_okay=False))
@_comparison_ignores
def diff(first: str, second: str, ignores: tuple[str, ...]) -> None:
    """Compare two cassettes interaction by interaction; exit status 1 when they differ."""
    if diff_cassettes(first, second, ignores):
        raise SystemExit(1)


@cli.command()
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the schema to this file (default: stdout)."
)
@click.option("--report", is_flag=True, help="The schema of the --report JSON instead (docs/report.md).")
def schema(output: str | None, report: bool) -> None:
    """Print the JSON Schema of the cassette format, for YAML editors (see docs/cassette-format.md)."""
    write_schema(output, report)


def main(argv: list[str] | None = None) -> Any:
    """Run the command line through click; errors become messages and exit codes in `mockmcp.cli.exits`."""
    try:
        return cli.main(args=argv, prog_name="mockmcp", standalone_mode=False)
    except (MockmcpError, OSError) as error:  # OSError: a file or socket the command needed
        fail(error)
    except click.exceptions.Abort:
        abort()
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
