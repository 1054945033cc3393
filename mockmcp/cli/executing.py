"""`mockmcp exec`: one command for a test runner in any language, with the pytest plugin's record modes.

Theory of operation. A host's test in TypeScript, Go or Rust spawns its server as a command; it
points that command at `mockmcp exec --cassette C --record-mode M -- SERVER...`, which decides, as
the plugin does, whether this launch records or replays (`RecordMode.records`: `none` replays and a
missing cassette is an error; `once` records only when the cassette is missing; `new` and `all`
record), then runs the very code paths of `mockmcp record` and `mockmcp replay`. The verdict is the
exit status and the `--report` file; a host's transport rarely shows the status, so the report says
every outcome (docs/report.md): the replay's report, or that this launch recorded, or why it could
do neither.

A replay by exec is on the launch path (docs/architecture.md, "Start-up rules"): what only a
recording or a failure needs is imported where it is used.
"""

from __future__ import annotations

import os

from mockmcp.cassette.files import atomic_write
from mockmcp.cli.replaying import replay_cassette
from mockmcp.core.report import REPORT_VERSION
from mockmcp.errors import MockmcpError, StrictFailure, UsageError
from mockmcp.words import RecordMode

__all__ = ["exec_cassette"]


def exec_cassette(
    cassette: str,
    mode: RecordMode,
    command: list[str],
    strict: bool = False,
    report_path: str | None = None,
    ignores: tuple[str, ...] = (),
    substitutions: tuple[tuple[str, str | None], ...] = (),
    grace: float = 2.0,
    listen: tuple[str, int] | None = None,
) -> int:
    """Record COMMAND into the cassette or replay it, as `mode` says; returns the exit status.

    With listen, over Streamable HTTP until SIGINT or SIGTERM: replay serves there, and a recording is a
    proxy there to the URL that COMMAND is.
    Raises what `record` and `replay` raise (the report says it first), and UsageError for a missing
    cassette under `none` or a recording without a server command.
    """
    report = report_path.replace("{pid}", str(os.getpid())) if report_path else None
    try:
        if mode.records(os.path.exists(cassette)):
            return _record(cassette, mode, command, report, substitutions, grace, listen)
        if not os.path.exists(cassette):
            raise _missing(cassette, command)
        return replay_cassette(cassette, ignores, strict, report, listen=listen, substitutions=substitutions)
    except StrictFailure:
        raise  # the replay's own report says it
    except MockmcpError as error:
        _write(report, {"version": REPORT_VERSION, "cassette": cassette, "error": error.render()})
        raise


def _record(
    cassette: str,
    mode: RecordMode,
    command: list[str],
    report: str | None,
    substitutions: tuple[tuple[str, str | None], ...],
    grace: float,
    listen: tuple[str, int] | None,
) -> int:
    import shlex

    from mockmcp.cli.commands import record_http, record_session  # deferred: not on the launch path

    if not command:
        raise UsageError(
            f"record mode {mode.value} records {cassette}, and no server was given to record from",
            f"name the real server after `--`: mockmcp exec --cassette {shlex.quote(cassette)} "
            f"--record-mode {mode.value} -- SERVER ARGS...",
        )
    if listen is not None:
        if len(command) != 1 or not command[0].startswith(("http://", "https://")):
            raise UsageError(
                f"with --http, the server to record from is its URL, got {shlex.join(command)}",
                "name it after `--`: mockmcp exec --http 0 --cassette C --record-mode once -- http://HOST:PORT/mcp",
            )
        record_http(cassette, command[0], listen, mode, (), (), substitutions=substitutions)
        recorded = {"mode": mode.value, "status": 0, "outcome": "stopped by a signal"}
        _write(report, {"version": REPORT_VERSION, "cassette": cassette, "recorded": recorded})
        return 0
    outcome = record_session(cassette, command, mode, (), (), grace, substitutions)
    recorded = {"mode": mode.value, "status": outcome.status, "outcome": outcome.why()}
    _write(report, {"version": REPORT_VERSION, "cassette": cassette, "recorded": recorded})
    return outcome.status


def _missing(cassette: str, command: list[str]) -> UsageError:
    import shlex

    server = shlex.join(command) if command else "SERVER ARGS..."
    return UsageError(
        f"no cassette at {cassette}, and record mode none never records",
        f"record it once: mockmcp exec --cassette {shlex.quote(cassette)} --record-mode once -- {server} "
        '(a test helper: record: "once"), or check the cassette\'s path',
    )


def _write(report: str | None, data: dict[str, object]) -> None:
    if report:
        import json

        atomic_write(report, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
