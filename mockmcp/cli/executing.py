"""`mockmcp exec`: one command for a test runner in any language, with the pytest plugin's record modes.

It decides, as the plugin does, whether this launch records or replays (`RecordMode.records`), then
runs `mockmcp record`'s or `mockmcp replay`'s code path. A host's transport rarely shows the exit
status, so the `--report` file says every outcome (docs/report.md). A replay by exec is on the launch
path (docs/architecture.md, "Start-up rules"): what only a recording or a failure needs is imported there.
"""

from __future__ import annotations

import os

from mockmcp._wire.words import RecordMode
from mockmcp.cassette.files import atomic_write, begun_by_this_run
from mockmcp.cli.options import Serving, apart_from, build
from mockmcp.cli.replaying import deprecated, replay_cassette
from mockmcp.engine.report import REPORT_VERSION
from mockmcp.errors import MockmcpError, StrictFailure, UsageError
from mockmcp.options import RecordOptions, ReplayOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["exec_command"]


def exec_command(values: dict[str, Any]) -> int:
    """Record the server into the cassette or replay it, as the record mode says, from the values of
    `options.EXEC` and the command after `--` (as both readers give them); returns the exit status.
    Raises what `record` and `replay` raise, the report saying it first."""
    server, target = list(values["command"]), values["target"]
    serving = build(Serving, values)
    if target is not None:
        if server:
            raise UsageError("name one server: --http-target URL, or a command after `--`", "leave one of them out")
        server, serving = [target], serving._replace(listen=serving.listen or ("127.0.0.1", 0))
    elif serving.listen is not None and len(server) == 1 and server[0].startswith(("http://", "https://")):
        deprecated("a URL after `--` in exec --http", f"--http-target {server[0]}")
    replay, record = build(ReplayOptions, values), build(RecordOptions, values)
    cassette = _cassette(values, server, record)
    apart_from(cassette, [("--report", replay.report), ("--html", replay.html)])  # before a report is written
    report = replay.report.replace("{pid}", str(os.getpid())) if replay.report else None
    mode = RecordMode(record.mode)
    try:
        exists = os.path.exists(cassette)
        later = exists and mode is RecordMode.ONCE and begun_by_this_run(cassette)  # only `once` would replay it
        if mode.records(exists, later):
            return _record(cassette, server, record, serving, report)
        if not exists:
            import shlex

            raise UsageError(
                f"no cassette at {cassette}, and record mode none never records",
                f"record it once: mockmcp exec -o {shlex.quote(cassette)} --record-mode once -- "
                f"{shlex.join(server) if server else 'SERVER ARGS...'} "
                '(a test helper: record: "once"), or check the cassette\'s path',
            )
        return replay_cassette(cassette, replay._replace(report=report), serving, command="mockmcp exec")
    except StrictFailure:
        raise  # the replay's own report says it
    except MockmcpError as error:
        _write(report, {"version": REPORT_VERSION, "cassette": cassette, "error": error.render()})
        raise


def _cassette(values: dict[str, Any], server: list[str], record: RecordOptions) -> str:
    """The cassette: `-o`'s, or the one in `--cassettes` named after the server as interception names it."""
    cassette, folder = values["cassette"], values.get("folder")
    if (cassette is None) == (folder is None):
        raise UsageError(
            "name the cassette: -o CASSETTE, or --cassettes DIR (one cassette per server, named after it)",
            "give one of them",
        )
    if folder is None:
        return cassette
    if not server:
        raise UsageError("--cassettes names a cassette after its server: give the server after `--`", "or use -o")
    from pathlib import Path

    from mockmcp._wire.identity import identify
    from mockmcp.engine.redact import Redactor

    if server[0].startswith(("http://", "https://")):
        return os.path.join(folder, identify(None, url=server[0]).name + ".yaml")
    here = Path.cwd()
    project = Path(values.get("project") or here).resolve()
    unsaid = Redactor.build(record.redact_env, record.redact_patterns, os.environ)
    identity = identify(
        server[0], server[1:], str(here), project=project, substitutions=record.substitutions, unsaid=unsaid.text
    )
    return os.path.join(folder, identity.name + ".yaml")


def _record(cassette: str, server: list[str], record: RecordOptions, serving: Serving, report: str | None) -> int:
    import shlex

    from mockmcp.cli.commands import record_http, record_session  # deferred: not on the launch path

    mode = RecordMode(record.mode)
    if not server:
        raise UsageError(
            f"record mode {mode.word} records {cassette}, and no server was given to record from",
            f"name the real server after `--`: mockmcp exec -o {shlex.quote(cassette)} "
            f"--record-mode {mode.word} -- SERVER ARGS... (a test helper: its server: option)",
        )
    if serving.listen is not None:
        if len(server) != 1 or not server[0].startswith(("http://", "https://")):
            raise UsageError(
                f"with --http, the server to record from is its URL, got {shlex.join(server)}",
                "name it: mockmcp exec --http 0 -o C --record-mode once --http-target http://HOST:PORT/mcp",
            )
        record_http(cassette, server[0], record, serving)
        status, outcome = 0, "stopped by a signal"
    else:
        ended = record_session(cassette, server, record)
        status, outcome = ended.status, ended.why()
    recorded = {"mode": mode.value, "status": status, "outcome": outcome}
    _write(report, {"version": REPORT_VERSION, "cassette": cassette, "recorded": recorded})
    return status


def _write(report: str | None, data: dict[str, object]) -> None:
    if report:
        import json

        atomic_write(report, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
