"""What the commands other than replay do, over the wings: diagnostics to stderr, MockmcpError raised, no exit."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp._wire.words import REDACTED, RecordMode
from mockmcp.cassette import files, schema
from mockmcp.cassette import store as cassettes
from mockmcp.cassette.model import recorded_url
from mockmcp.cli.options import STDIO, Serving, build
from mockmcp.cli.project import with_project
from mockmcp.cli.replaying import address, http_extra, note, replay_cassette
from mockmcp.engine.matching import Matcher
from mockmcp.engine.redact import Redactor
from mockmcp.errors import CassetteError, UsageError
from mockmcp.options import BOUNDS, Bounds, RecordOptions, ReplayOptions
from mockmcp.record import (
    Journal,
    ask_contract,
    ask_contract_http,
    drive,
    finish,
    journal_path,
    later_start,
    saved,
    silent,
)
from mockmcp.stdio.record import Outcome, run_proxy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.stdio.toolkit import Signals
    from mockmcp.tools import Drift

__all__ = [
    "Said",
    "diff_cassettes",
    "record_http",
    "record_session",
    "recorded_command",
    "recover_session",
    "stub_server",
    "verify_cassette",
    "write_schema",
]


def record_session(path: str, command: list[str], options: RecordOptions) -> Outcome:
    """Record one session through the proxy; returns how it ended (with `once` and a cassette: how its replay ended)."""
    replayed = _replayed(path, options)
    if replayed is not None:
        return Outcome(replayed, "replayed the existing cassette")
    redactor = _redactor(options)
    journal = Journal.fresh(path, RecordMode(options.mode), redactor, command, runs=True)
    try:
        outcome = run_proxy(command, journal, redactor, options.grace)
    except UsageError:
        journal.discard()  # the server never started: nothing to recover later
        raise
    finally:
        journal.close()
    note(*saved(path, outcome.why()))
    journal.raise_failure(path)
    return outcome


def _replayed(path: str, options: RecordOptions, serving: Serving = STDIO) -> int | None:
    """With `once` and a cassette this run did not save: the cassette replayed instead (said), its exit status."""
    if RecordMode(options.mode) is not RecordMode.ONCE or not os.path.exists(path) or later_start(path):
        return None
    how = " over HTTP" if serving.listen else ""
    note(f"{path} exists and the mode is once: replaying it{how} (record afresh with --record-mode rewrite)")
    return replay_cassette(path, ReplayOptions(substitutions=options.substitutions), serving, command="mockmcp record")


def record_http(path: str, target: str, options: RecordOptions, serving: Serving, bounds: Bounds = BOUNDS) -> None:
    """Record every session through a reverse proxy to a Streamable HTTP server, until SIGINT or SIGTERM."""
    try:  # h11 is optional (mockmcp[http])
        from mockmcp.http import ProxyOptions, RecordingProxy, serve_until_signalled
    except ImportError as exc:
        raise http_extra("recording", exc) from None
    listen = serving.listen or ("127.0.0.1", 0)
    if _replayed(path, options, serving._replace(listen=listen)) is not None:
        return
    redactor = _redactor(options)
    journal = Journal.fresh(path, RecordMode(options.mode), redactor, [target], runs=True)
    try:
        proxy = RecordingProxy(target, listen, journal, redactor, ProxyOptions(serving.allow_hosts, bounds))
    except (UsageError, OSError) as exc:
        journal.discard()  # nothing can have been recorded
        if isinstance(exc, OSError):
            raise UsageError(
                f"cannot listen on {address(listen)}: {exc.strerror or exc}",
                "choose another --http port (0 takes any free one)",
            ) from None
        raise
    said = f"recording {proxy.url} -> {target} into {path} (Ctrl-C or SIGTERM to stop and save)"
    again: list[int] = []

    def save(signals: Signals) -> None:
        """The answers under way, then the cassette, signals still caught: a second one cuts short the wait for
        those answers (the exit status says it), never the save."""
        first = signals.count
        try:
            unfinished = proxy.finish_answers(10.0, signals)
            if unfinished:
                cut = "when asked again to stop" if signals.count > first else "after 10 s"
                note(f"{unfinished} answer(s) still coming from the target {cut} are left out")
        finally:
            journal.close()
        trouble = f"; {proxy.trouble}" if proxy.trouble else ""
        note(*saved(path, "stopped by a signal" + trouble))
        journal.raise_failure(path)
        if signals.count > first and signals.received is not None:
            again.append(128 + signals.received)

    try:  # said once a signal stops it (see replaying._serve_http)
        serve_until_signalled(proxy, lambda: note(said), after=save)
    finally:
        journal.close()  # again is harmless; what it holds is recovered by `mockmcp recover`
    if again:
        raise SystemExit(again[0])


def _redactor(options: RecordOptions) -> Redactor:
    """What a recording keeps out of the cassette and writes as `${NAME}`: the same for every way of recording."""
    env, patterns, substitute = options.redact_env, options.redact_patterns, options.substitutions
    return Redactor.for_recording(env, patterns, os.environ, substitute=substitute)


def run_program(command: list[str], values: dict[str, Any]) -> tuple[int, list[str]]:
    """`mockmcp run`: the program's exit status, and what its cassettes could not do."""
    from mockmcp.inprocess import Interception
    from mockmcp.inprocess import run_program as run

    names = {}
    for given in values["names"]:
        name, equals, fragment = given.partition("=")
        if not (equals and name and fragment):
            raise UsageError(f"--name {given!r}: write NAME=FRAGMENT", "e.g. --name time=mcp-server-time")
        names[name] = fragment
    mode: RecordMode = values["mode"]
    record = build(RecordOptions, values)._replace(mode=mode.value)
    if mode is not RecordMode.NONE:
        _redactor(record)  # a variable to redact that is not set, a bad pattern: said before the program starts
    again = shlex.join(["mockmcp", "run", "--record-mode", "once", "--cassettes", values["folder"], "--", *command])
    interception = Interception(
        os.path.abspath(values["folder"]),
        mode,
        names=names,
        allow=tuple(values["allow"]),
        replay=build(ReplayOptions, values),
        record=record,
        project=Path.cwd(),  # paths in a server's command line are written relative to where the run started
        how_to_record=f"record it: {again}",
    )
    return run(command, interception)


def recover_session(path: str) -> None:
    """Turn the journal of an interrupted recording into the cassette."""
    if not os.path.exists(journal_path(path)):
        raise CassetteError(
            "no journal to recover", path=journal_path(path), fix="nothing to do: the last recording finished"
        )
    _written, recovered, notes = finish(path)
    note(*notes)
    torn = "; the last line was cut off and left out" if recovered.torn else ""
    asked = silent(recovered.cassette.interactions)
    if asked:
        kept = f"{path} was left as it was" if os.path.exists(path) else f"no cassette was written to {path}"
        note(f"the server answered none of the {asked} request(s) the journal holds, so {kept}{torn}")
        return
    if not recovered.cassette.interactions and not os.path.exists(path):
        note(f"the journal held no interaction, so no cassette was written to {path}{torn}")
        return
    note(f"recovered {len(recovered.cassette.interactions)} interactions into {path}{torn}")


class Said(NamedTuple):
    """What `verify` and `diff` fail on (`--fail-on`: a tier of the contract's changes, or any drift) and how
    their report is written (`--output-format`)."""

    fail_on: str | None = None  # None: any drift (the tools' ANY)
    output_format: str = "text"

    def tell(self, drift: Drift, title: str) -> bool:
        """Print the report to stdout; whether the drift fails."""
        from mockmcp.tools import ANY, as_json, as_markdown

        fail_on = self.fail_on or ANY
        if self.output_format == "json":
            print(as_json(drift, title, fail_on))
        elif self.output_format == "markdown":
            print(as_markdown(drift, title, fail_on), end="")
        else:
            print(drift.render(title))
        return drift.fails(fail_on)


def verify_cassette(
    path: str, command: list[str], compared: ReplayOptions, update: bool, timeout: float, said: Said | None = None
) -> bool:
    """Compare a live server with the cassette (printing the drift report); with update, rewrite it. Of compared,
    ignores and substitutions count. Returns True when the drift fails (`said.fail_on`) and remains: found, and not
    written into the cassette."""
    recorded = cassettes.load(path)
    given = with_project(recorded, compared.substitutions, "mockmcp verify")
    if not command:
        redactor = Redactor.for_replay(recorded, os.environ, given, path, "mockmcp verify --substitute") or Redactor()
        command = recorded_command(recorded.meta, redactor.substitutions.expand_text, sys.executable, path)
    matcher = Matcher.build(compared.ignores, recorded.meta)
    live = drive(recorded, command, timeout, substitutions=given)
    from mockmcp.tools import compare, updated  # deferred: recording and replay need none of the tools

    drift = compare(recorded, live, matcher, "live")
    fails = (said or Said()).tell(drift, f"mockmcp verify: {path} against {shlex.join(command)}")
    if not (update and drift.drifted):
        return fails
    new, kept = updated(recorded, live, drift)
    cassettes.save(new, path)
    for sentence in kept:
        print(f"  {sentence}")
    print(f"updated {path} with the live answers")
    return False


def recorded_command(meta: dict[str, Any], expand: Callable[[str], str], python: str, where: str) -> list[str]:
    """The server command a cassette's `meta.server` names, as this machine runs it; raises UsageError.
    `${NAME}` goes through `expand`, `python` (the plugin's word for its interpreter) this one, `~/` the
    home folder; relative paths stay relative to the folder verify runs in (the plugin's: the project's)."""
    server = meta.get("server")
    if not (isinstance(server, list) and server and all(isinstance(part, str) for part in server)):
        raise UsageError(
            f"{where} names no server command in meta.server, and none was given",
            f"give it after `--`: mockmcp verify {where} -- SERVER ARGS...",
        )
    url = recorded_url(meta)
    if url:
        raise UsageError(
            f"{where} was recorded from {url} over HTTP, which verify cannot drive",
            f"give a command that runs the server over stdio after `--`: mockmcp verify {where} -- SERVER ARGS...",
        )
    command = [expand(part) for part in server]
    cut = [part for part in command if REDACTED in part]
    if cut:
        raise UsageError(
            f"{where}: meta.server holds {cut[0]!r}: a credential on the recorded command line, kept out of the "
            "cassette, which verify cannot pass on",
            f"give the command with its credential after `--`: mockmcp verify {where} -- SERVER ARGS...",
        )
    if command[0] == "python":
        command[0] = python
    return [os.path.expanduser(part) if part.startswith("~/") else part for part in command]


def diff_cassettes(first: str, second: str, ignores: tuple[str, ...], said: Said | None = None) -> bool:
    """Compare two cassettes the way verify compares a cassette with a live server; True when the drift fails."""
    recorded = cassettes.load(first)
    from mockmcp.tools import compare

    drift = compare(recorded, cassettes.load(second), Matcher.build(ignores, recorded.meta), "other")
    return (said or Said()).tell(drift, f"mockmcp diff: {first} (recorded) against {second} (other)")


def stub_server(path: str, command: list[str], target: str | None, timeout: float) -> None:
    """Write a new cassette from a live server's contract, a placeholder answer per tool; raises UsageError."""
    if os.path.exists(path):
        raise UsageError(f"{path} exists, and `mockmcp stub` writes a new cassette", "name another file, or delete it")
    from mockmcp.tools import stub_cassette, stub_text

    contract = ask_contract_http(target, timeout) if target is not None else ask_contract(command, timeout)
    cassette = stub_cassette(contract._replace(meta={**contract.meta, "recorded_at": cassettes.now_iso()}))
    files.atomic_write(path, stub_text(cassette))
    tools = sum(1 for interaction in cassette.interactions if interaction.times == "any")
    note(f"wrote {path}: the server's contract and {tools} placeholder answer(s); write each, then `mockmcp lint` it")


def write_schema(output: str | None, report: bool = False) -> None:
    """The cassette format's JSON Schema (with report: the --report JSON's) to stdout, or atomically to a file."""
    from mockmcp.tools import report_schema_text

    text = report_schema_text() if report else schema.text()
    if output is None:
        sys.stdout.write(text)
        return
    files.atomic_write(output, text)
    note(f"wrote the {'report' if report else 'cassette'} schema to {output}")
