"""The command line: short adapters from options to the domain objects, and the one place errors become exit codes."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from mockmcp import __version__
from mockmcp.errors import MockmcpError, StrictFailure

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mockmcp")
def cli() -> None:
    """Record and replay MCP sessions to test MCP hosts."""


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
@click.option("--ignore", "ignores", multiple=True, metavar="PATH", help="A params path left out of matching (repeatable), e.g. arguments.when.")
@click.option("--strict", is_flag=True, help="Exit 1 when a request missed or a recorded interaction was never played.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write the session summary as JSON to this file.")
def replay(cassette: str, ignores: tuple[str, ...], strict: bool, report_path: str | None) -> None:
    """Serve CASSETTE as an MCP server over stdio.

    Requests are matched by method and params, never by id, and answered with the recorded
    response under the caller's id. A summary goes to stderr when the host closes stdin.
    """
    from mockmcp import cassette as cassettes
    from mockmcp.matching import Matcher
    from mockmcp.replay import Replay
    from mockmcp.stdio import serve
    from mockmcp.yamlfile import atomic_write

    matcher = Matcher.build(ignores)
    engine = Replay(cassettes.load(cassette), matcher)
    serve(engine)
    print(engine.report.summary(), file=sys.stderr, flush=True)
    if report_path:
        atomic_write(report_path, json.dumps(engine.report.to_json(), indent=2, ensure_ascii=False) + "\n")
    if strict and not engine.report.strict_ok:
        raise StrictFailure("--strict: the session had misses or unplayed interactions (see the summary above)")


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the `mockmcp` command; the only place that turns errors into exit codes."""
    try:
        return cli.main(args=argv, prog_name="mockmcp", standalone_mode=False)
    except MockmcpError as error:
        click.echo(f"mockmcp: error: {error.render()}", err=True)
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        click.echo("mockmcp: aborted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
