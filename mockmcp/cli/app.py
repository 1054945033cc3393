"""The click application: short adapters from the tables of `mockmcp.cli.options` to the commands.

A value is read by its parser through a click type, so a bad one fails with usage. The spellings of
mockmcp 0.x are rewritten to today's before click reads them, each said once on stderr (`_Command`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from mockmcp import __version__
from mockmcp._wire.words import RecordMode
from mockmcp.cli import commands, options
from mockmcp.cli.executing import exec_command
from mockmcp.cli.exits import abort, fail
from mockmcp.cli.options import option
from mockmcp.cli.replaying import deprecated, note, replay_cassette
from mockmcp.errors import MockmcpError, UsageError
from mockmcp.options import Bounds, RecordOptions, ReplayOptions
from mockmcp.wrap import FORMATS, Wrapping, serve_config, unwrap_config, wrap_config

__all__ = ["ParsedValue", "TITLE", "cli", "main", "param_type"]

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
    if kind == "folder":
        return click.Path(file_okay=False)
    if kind == "columns":
        return click.IntRange(min=20)
    if kind.startswith("choice:"):
        return click.Choice(kind.removeprefix("choice:").split("|"))
    if kind in ("record_mode", "any_mode"):  # the launcher refuses 0.x's words; here they work, and say so
        return ParsedValue(kind, lambda text: _record_mode(text, kind == "any_mode"))
    return ParsedValue(kind, options.PARSERS[kind])


def _record_mode(text: str, allow_none: bool) -> RecordMode:
    mode = RecordMode.parse(text, allow_none)
    said = RecordMode.deprecated(text)
    if said:
        note(said)
    return mode


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


class _Command(click.Command):
    """A command that still reads the spellings of mockmcp 0.x for one release: each old option is rewritten
    to today's before click reads the command line, with one line on stderr saying which (docs/cli.md)."""

    def __init__(self, *args: Any, renamed: dict[str, tuple[str, ...]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = renamed or {}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """args with the old options rewritten, up to `--` or (not interspersed) the server's first word."""
        valued = {flag for p in self.params if isinstance(p, click.Option) and not p.is_flag for flag in p.opts}
        old = [arg.partition("=")[0] for arg in args if arg.partition("=")[0] in self.renamed]
        # `show --html -o FILE` (0.x) is `show --html FILE`: the bare --html goes once -o takes its place.
        out, rest = [], [arg for arg in args if not (arg == "--html" and {"-o", "--output"} & set(old))]
        while rest:
            arg = rest.pop(0)
            flag, equals, value = arg.partition("=")
            if arg == "--" or (not flag.startswith("-") and not ctx.allow_interspersed_args):
                out += [arg, *rest]
                break
            new = self.renamed.get(flag)
            if new is not None:
                deprecated(flag, " ".join(new))
                flag = new[0]
            out += [arg] if new is None else [f"{flag}={value}"] if equals else list(new)
            if flag in valued and not equals and rest:
                out.append(rest.pop(0))
        return super().parse_args(ctx, out)


# The other commands' parameters, written as the tables of `mockmcp.cli.options` are.
# fmt: off
WRAP = (
    options.RECORD_MODE._replace(help="With --record: as record --record-mode, for every server."),
    option("--cassettes DIR", "cassettes", "folder", "Where the cassettes go (default: cassettes/ beside the output)."),
    option("-o --output FILE", "output", "file", "The derived config (default: NAME.mockmcp.EXT beside CONFIG)."),
    option("--in-place", "in_place", "flag", "Change CONFIG itself, after a backup beside it (unwrap restores it)."),
    option("--format", "fmt", "choice:" + "|".join(sorted(FORMATS)), "The config's format, if its name and shape "
           "do not tell."),
)
SHOW = (
    option("--color", "color", "choice:auto|always|never", "auto: colour when stdout is a terminal and NO_COLOR is "
           "not set.", default="auto"),
    option("--width COLUMNS", "width", "columns", "Line width (default: the terminal's, else 100)."),
    options.HTML._replace(help="Write the cassette as an HTML timeline to FILE instead."),
    option("--with-report FILE", "reports", "file", "With --html: a replay's --report of this cassette, shown "
           "beside it (repeatable, one per live session).", multiple=True),
)
SCHEMA = (
    option("-o --output FILE", "output", "file", "Write the schema to this file (default: stdout)."),
    option("--for", "which", "choice:cassette|report", "report: the --report JSON's (docs/report.md).",
           default="cassette"),
)
RUN = (
    options.RECORD_MODE._replace(kind="any_mode", default="none", help="none: replay, a server with no cassette "
                                 f"fails the run; {options.RECORD_MODE.help}"),
    options.CASSETTES,
    option("--name NAME=FRAGMENT", "names", "text", "Call the servers whose command line holds FRAGMENT NAME: "
           "their cassette is NAME.yaml (repeatable).", multiple=True),
    option("--allow FRAGMENT", "allow", "text", "Servers whose command line holds FRAGMENT run live, untouched "
           "(repeatable).", multiple=True),
    options.STRICT, options.IGNORE, options.SUBSTITUTE, options.REDACT_ENV, options.REDACT,
)
DRIFT = (  # how `verify` and `diff` compare, and what they say
    options.IGNORE._replace(help="A params or result path left out of the comparison (repeatable)."),
    option("--fail-on TIER", "fail_on", "choice:any|minor|dangerous|breaking", "Exit 1 on a change of the "
           "contract of this tier or worse (breaking > dangerous > minor); any: on any drift, an answer too.",
           default="any"),
    option("--output-format FORMAT", "output_format", "choice:text|json|markdown", "How the report is written "
           "to stdout (markdown: for a pull-request comment).", default="text"),
)
VERIFY = (
    *DRIFT,
    options.SUBSTITUTE,
    option("--update", "update", "flag", "Write the live answers into the cassette (keeping its fault knobs)."),
    option("--timeout SECONDS", "timeout", "seconds", "Seconds to wait for each live answer.", default="10"),
)
# fmt: on


# The first line of `--help` and `--version`: another tool (a .NET global tool) also installs a `mockmcp` command.
TITLE = f"mockmcp {__version__}: record/replay mock server for testing MCP hosts (Python)"


class _Titled(click.Group):
    """The command group whose help opens with `TITLE`, as `--version` does."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_text(TITLE)
        formatter.write_paragraph()
        super().format_help(ctx, formatter)


@click.group(cls=_Titled, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mockmcp", message=TITLE)
def cli() -> None:
    """Record and replay MCP sessions to test MCP hosts."""


@cli.command()
@_params(options.REPLAY)
def replay(**values: Any) -> None:
    """Serve CASSETTE as an MCP server over stdio, or over Streamable HTTP with --http.

    Requests are matched by method and params, never by id, and answered with the recorded
    response under the caller's id. A summary goes to stderr when the session ends: over stdio
    when the host closes stdin, over HTTP at SIGINT or SIGTERM.
    """
    status = replay_cassette(*options.replay_call(values))
    if status:
        raise SystemExit(status)  # the cassette's `exit` knob, or 128 + the signal that ended the session


# Not interspersed: from the first word of COMMAND on, every argument is the server's, its options too
# (a `--` before COMMAND says the same); an unknown option before it is a typo, reported as such.
@cli.command(
    cls=_Command,
    context_settings={"allow_interspersed_args": False},
    renamed={"--mode": ("--record-mode",), "--listen": ("--http",)},
)
@_params(options.RECORD)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(cassette: str, target: str | None, command: tuple[str, ...], **values: Any) -> None:
    """Record a session into a cassette: run COMMAND as the server and proxy stdio to it, or proxy HTTP.

    Launch `mockmcp record -o CASSETTE -- SERVER ARGS...` from the host instead of the server, or
    run `mockmcp record -o CASSETTE --http-target URL` and point the host at the proxy. Every
    message is forwarded unchanged both ways; the cassette is written atomically when the session
    ends. The default record mode, once, never replaces a cassette that exists.
    """
    if (target is None) == (not command):
        raise click.UsageError("name the server to record: a command after `--`, or --http-target URL (one of them)")
    recording = options.build(RecordOptions, values)
    if target is not None:
        commands.record_http(
            cassette, target, recording, options.build(options.Serving, values), options.build(Bounds, values)
        )
        return
    outcome = commands.record_session(cassette, list(command), recording)
    if outcome.status:
        raise SystemExit(outcome.status)


# Not interspersed, as `record`: from the first word of the server's command on, every argument is the server's.
@cli.command(
    "exec", cls=_Command, context_settings={"allow_interspersed_args": False}, renamed={"--cassette": ("--output",)}
)
@_params(options.EXEC)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def exec_(**values: Any) -> None:
    """Replay CASSETTE, or record the server COMMAND into it, as the record mode says: for test runners.

    `mockmcp exec -o CASSETTE --record-mode once -- SERVER ARGS...` is what a host's test launches
    instead of its server. The verdict is the exit status and the --report file (docs/report.md).
    """
    status = exec_command(values)
    if status:
        raise SystemExit(status)


# Not interspersed, as `record`: from the first word of the program's command on, every argument is the program's.
@cli.command(cls=_Command, context_settings={"allow_interspersed_args": False})
@_params(RUN)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(command: tuple[str, ...], **values: Any) -> None:
    """Run a Python program with every MCP server it starts replayed from a cassette, or recorded into one.

    `mockmcp run --record-mode once -- python my_agent.py` records the servers the program (and the Python
    programs it starts) connect to through the MCP SDK's stdio client, a cassette each in --cassettes;
    `mockmcp run -- python my_agent.py` replays them, starting none. The exit status is the program's, or 1
    when a cassette could not serve it (the explanation on stderr).
    """
    status, said = commands.run_program(list(command), values)
    note(*said)
    raise SystemExit(status or (1 if said else 0))


@cli.command(cls=_Command, renamed={"--mode": ("--record-mode",)})
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--record", "replay", flag_value=False, default=False, help="Every server records (the default).")
@click.option("--replay", "replay", flag_value=True, help="Every server replays its cassette.")
@_params(WRAP)
def wrap(config: str, **values: Any) -> None:
    """Write a host's MCP CONFIG again with every server going through mockmcp: record, or replay.

    Stdio servers run `mockmcp record` (or `replay`) in front of their command; remote servers point at a
    local port that `mockmcp serve DERIVED` serves. Everything else in the file stays as it was.
    """
    if values["in_place"] and values["output"]:
        raise click.UsageError("--in-place changes CONFIG itself: leave out -o")
    wrap_config(config, options.build(Wrapping, values))


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


STUB = (
    options.CASSETTE_OPTION._replace(help="The cassette to write (a new file)."),
    options.TARGET._replace(help="Ask a Streamable HTTP server at this endpoint URL instead of running a command."),
    option("--timeout SECONDS", "timeout", "seconds", "Seconds to wait for each answer.", default="10"),
)


@cli.command(cls=_Command, context_settings={"allow_interspersed_args": False})
@_params(STUB)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def stub(cassette: str, target: str | None, timeout: float, command: tuple[str, ...]) -> None:
    """Write a cassette from a server's contract, without recording a session: the answers are yours to write.

    `mockmcp stub -o CASSETTE -- SERVER ARGS...` (or `--http-target URL`) asks the server only what has no
    side effect (the handshake, then its tools, prompts, resources and templates, every page) and writes
    that, with a placeholder answer for each tool (shaped by its outputSchema) and comments on what to edit.
    """
    if (target is None) == (not command):
        raise click.UsageError("name the server to ask: a command after `--`, or --http-target URL (one of them)")
    commands.stub_server(cassette, list(command), target, timeout)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False), metavar="CASSETTE")
def recover(cassette: str) -> None:
    """Build CASSETTE from the journal an interrupted `mockmcp record` left beside it."""
    commands.recover_session(cassette)


@cli.command(cls=_Command, renamed={"-o": ("--html",), "--output": ("--html",), "--report": ("--with-report",)})
@click.argument("cassette", type=click.Path(dir_okay=False), metavar="CASSETTE")
@_params(SHOW)
def show(cassette: str, color: str, width: int | None, html: str | None, reports: tuple[str, ...]) -> None:
    """Print CASSETTE as a transcript to read at a glance, or with --html FILE write it as a page.

    One line per message with direction arrows, method and a short summary, the recorded timing,
    the fault knobs marked, and counts at the end. `--html FILE.html` draws the same as a timeline
    in one self-contained file; with `--with-report`, what a live replay did is beside what was recorded.
    """
    if not html:
        if reports:
            raise UsageError("--with-report is an option of `show --html FILE`", "add --html FILE, or leave it out")
        from mockmcp.tools import print_show  # deferred, as every command but its own needs none of the tools

        print_show(cassette, color, width)
        return
    from mockmcp.html import write_show_page

    options.apart_from(cassette, [("--html", html)])
    click.echo(f"mockmcp: wrote {write_show_page(cassette, reports, html)}", err=True)


@cli.command(cls=_Command, renamed={"--strict": ("--fail-on-warning",)})
@click.argument("cassettes", nargs=-1, required=True, type=click.Path(), metavar="CASSETTE...")
@click.option("--fail-on-warning", "strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@click.option(
    "--secrets", is_flag=True, help="Scan for credentials only, and exit 1 on any (a pre-commit hook's check)."
)
def lint(cassettes: tuple[str, ...], strict: bool, secrets: bool) -> None:
    """Check each CASSETTE before a test run: YAML, structure, JSON-RPC and MCP shapes, credentials.

    Prints every finding (file, line, place, problem, how to fix), the eras whose hosts each CASSETTE
    serves, and a summary to stdout.
    Exits 1 on any error, or with --fail-on-warning on any warning (a note, what lint could not
    check or a placeholder still to fill in, never fails it).
    """
    from mockmcp.tools import failed, lint_paths, serves, summary  # deferred: see show

    findings = lint_paths(cassettes, secrets_only=secrets, notes=not secrets)
    for finding in findings:
        click.echo(finding.render())
    for said in filter(None, map(serves, () if secrets else cassettes)):
        click.echo(said)
    click.echo(summary(findings, len(cassettes)))
    if failed(findings, strict or secrets):
        raise SystemExit(1)


@cli.command()
@click.argument("cassette", type=click.Path(dir_okay=False), metavar="CASSETTE")
@_params(VERIFY)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def verify(cassette: str, command: tuple[str, ...], update: bool, timeout: float, **values: Any) -> None:
    """Drive the live server COMMAND with CASSETTE's client side and report every drift.

    `mockmcp verify [OPTIONS] CASSETTE -- SERVER ARGS...` (the `--` keeps the server's own options
    apart; without it, the server the cassette's meta.server names); exit status 1 when anything drifted,
    or with --fail-on TIER when the server's contract changed at that tier or worse.
    """
    said = options.build(commands.Said, values)
    if commands.verify_cassette(cassette, list(command), options.build(ReplayOptions, values), update, timeout, said):
        raise SystemExit(1)


@cli.command()
@click.argument("first", type=click.Path(dir_okay=False), metavar="CASSETTE")
@click.argument("second", type=click.Path(dir_okay=False), metavar="CASSETTE")
@_params(DRIFT)  # `verify` and `diff` compare the same way, so they leave the same paths out and say it alike
def diff(first: str, second: str, ignores: tuple[str, ...], fail_on: str, output_format: str) -> None:
    """Compare two cassettes interaction by interaction; exit status 1 when they differ (see --fail-on)."""
    if commands.diff_cassettes(first, second, ignores, commands.Said(fail_on, output_format)):
        raise SystemExit(1)


@cli.command(cls=_Command, renamed={"--report": ("--for", "report")})
@_params(SCHEMA)
def schema(output: str | None, which: str) -> None:
    """Print the JSON Schema of the cassette format, for YAML editors (see docs/cassette-format.md)."""
    commands.write_schema(output, which == "report")


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
