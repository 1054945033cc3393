"""The command line: short adapters from options to the domain objects, and the one place errors become exit codes."""

from __future__ import annotations

import sys
from typing import Any

import click

from mockmcp import __version__
from mockmcp.errors import MockmcpError

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mockmcp")
def cli() -> None:
    """Record and replay MCP sessions to test MCP hosts."""


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
@click.option(
    "--ignore",
    "ignores",
    multiple=True,
    metavar="PATH",
    help="A params path left out of matching (repeatable), e.g. arguments.when.",
)
@click.option("--strict", is_flag=True, help="Exit 1 when a request missed or a recorded interaction was never played.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    help="Write the session summary as JSON to this file ({pid} in it becomes the process id).",
)
@click.option(
    "--timing",
    default="none",
    show_default=True,
    metavar="HOW",
    help="none: answer at once; recorded: as fast as the server did; or a factor scaling that (0.5 is twice as fast).",
)
@click.option(
    "--http",
    "listen",
    metavar="[HOST:]PORT",
    help="Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: 127.0.0.1; needs mockmcp[http]).",
)
def replay(
    cassette: str, ignores: tuple[str, ...], strict: bool, report_path: str | None, timing: str, listen: str | None
) -> None:
    """Serve CASSETTE as an MCP server over stdio.

    Requests are matched by method and params, never by id, and answered with the recorded
    response under the caller's id. A summary goes to stderr when the host closes stdin.
    """
    from mockmcp.cli.commands import parse_timing, replay_cassette

    status = replay_cassette(cassette, ignores, strict, report_path, parse_timing(timing), listen)
    if status:
        raise SystemExit(status)  # the cassette's `exit` knob, or 128 + the signal that ended the session


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "-o", "--output", "cassette", required=True, type=click.Path(dir_okay=False), help="The cassette to write."
)
@click.option(
    "--mode",
    default="once",
    show_default=True,
    metavar="MODE",
    help="all: record afresh; new: add what the cassette lacks; once: record only if the cassette does not exist, else replay it.",
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
@click.option(
    "--grace",
    default=2.0,
    show_default=True,
    type=float,
    help="Seconds the server gets to exit after stdin closes, and again after SIGTERM.",
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
    metavar="[HOST:]PORT",
    help="With --http-target: where the proxy listens (port 0: any free port).",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(
    cassette: str,
    mode: str,
    redact_env: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    grace: float,
    target: str | None,
    listen: str,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND as the server, proxy stdio to it, and record the session into a cassette.

    Launch `mockmcp record -o CASSETTE -- SERVER ARGS...` from the host instead of the server.
    Every line is forwarded unchanged both ways; the cassette is written atomically when the
    session ends. The default mode, once, never replaces a cassette that exists.
    """
    from mockmcp.cli.commands import RecordMode, record_http, record_session

    if (target is None) == (not command):
        raise click.UsageError("name the server to record: a command after `--`, or --http-target URL (one of them)")
    if target is not None:
        record_http(cassette, target, listen, RecordMode.parse(mode), redact_env, redact_patterns)
        return
    outcome = record_session(cassette, list(command), RecordMode.parse(mode), redact_env, redact_patterns, grace)
    if outcome.status:
        raise SystemExit(outcome.status)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
def recover(cassette: str) -> None:
    """Build CASSETTE from the journal an interrupted `mockmcp record` left beside it."""
    from mockmcp.cli.commands import recover_session

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
def show(cassette: str, color: str, width: int | None) -> None:
    """Print CASSETTE as a transcript to read at a glance.

    One line per message with direction arrows, method and a short summary, the recorded timing,
    the fault knobs marked, and counts at the end.
    """
    from mockmcp.tools.show import print_show

    print_show(cassette, color, width)


@cli.command()
@click.argument("cassettes", nargs=-1, required=True, type=click.Path())
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
def lint(cassettes: tuple[str, ...], strict: bool) -> None:
    """Check each CASSETTE before a test run: YAML, structure, JSON-RPC and MCP shapes, credentials.

    Prints every finding (file, line, place, problem, how to fix) and a summary to stdout.
    Exits 1 on any error, or with --strict on any warning.
    """
    from mockmcp.tools.lint import failed, lint_paths, summary

    findings = lint_paths(cassettes)
    for finding in findings:
        click.echo(finding.render())
    click.echo(summary(findings, len(cassettes)))
    if failed(findings, strict):
        raise SystemExit(1)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
@click.option(
    "--ignore",
    "ignores",
    multiple=True,
    metavar="PATH",
    help="A params or result path left out of the comparison (repeatable).",
)
@click.option("--update", is_flag=True, help="Write the live answers into the cassette (keeping its fault knobs).")
@click.option("--timeout", default=10.0, show_default=True, type=float, help="Seconds to wait for each live answer.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def verify(cassette: str, ignores: tuple[str, ...], update: bool, timeout: float, command: tuple[str, ...]) -> None:
    """Drive the live server COMMAND with CASSETTE's client side and report every drift.

    `mockmcp verify [OPTIONS] CASSETTE -- SERVER ARGS...` (the `--` keeps the server's own options
    apart); exit status 1 when anything drifted.
    """
    from mockmcp.cli.commands import verify_cassette

    if verify_cassette(cassette, list(command), ignores, update, timeout):
        raise SystemExit(1)


@cli.command()
@click.argument("first", type=click.Path(dir_okay=False))
@click.argument("second", type=click.Path(dir_okay=False))
@click.option(
    "--ignore",
    "ignores",
    multiple=True,
    metavar="PATH",
    help="A params or result path left out of the comparison (repeatable).",
)
def diff(first: str, second: str, ignores: tuple[str, ...]) -> None:
    """Compare two cassettes interaction by interaction; exit status 1 when they differ."""
    from mockmcp.cli.commands import diff_cassettes

    if diff_cassettes(first, second, ignores):
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the `mockmcp` command; the only place that turns errors into exit codes."""
    try:
        return cli.main(args=argv, prog_name="mockmcp", standalone_mode=False)
    except MockmcpError as error:
        click.echo(f"mockmcp: error: {error.render()}", err=True)
        sys.exit(error.exit_code)
    except OSError as error:  # a file or socket the command needed; located as far as the OS says
        where = f" ({error.filename})" if error.filename else ""
        click.echo(
            f"mockmcp: error: {error.strerror or error}{where}\n  how to fix: check the path, its folder and their permissions",
            err=True,
        )
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("mockmcp: aborted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
