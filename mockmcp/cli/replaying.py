"""`mockmcp replay`, on the launch path (docs/architecture.md, "Start-up rules"): what only some replays use (a
journal beside the cassette, redaction, HTTP) is imported where used. Diagnostics to stderr; raises, never exits.
"""

from __future__ import annotations

import gc
import os
import sys
import time

from mockmcp.cassette import store as cassettes
from mockmcp.cassette.files import atomic_write, journal_path
from mockmcp.cassette.model import closed
from mockmcp.cli.options import PLAIN, STDIO, Serving, apart_from
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay
from mockmcp.engine.report import Report
from mockmcp.engine.selection import Recordings
from mockmcp.errors import StrictFailure, UsageError
from mockmcp.options import BOUNDS, Bounds, ReplayOptions
from mockmcp.stdio.replay import serve
from mockmcp.stdio.toolkit import Signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.cassette.model import Cassette
    from mockmcp.engine.redact import Redactor

__all__ = ["address", "deprecated", "http_extra", "note", "replay_cassette"]


def note(*texts: str) -> None:
    """A diagnostic line on stderr for each text, as every command says it."""
    for text in texts:
        print(f"mockmcp: {text}", file=sys.stderr, flush=True)


def deprecated(old: str, new: str) -> None:
    """The one line an old spelling earns: it still works for this release, and which spelling replaces it."""
    note(f"{old} is deprecated: write {new} (the old spelling goes in the next release)")


def replay_cassette(
    cassette: str,
    options: ReplayOptions = PLAIN,
    serving: Serving = STDIO,
    bounds: Bounds = BOUNDS,
    command: str = "mockmcp replay",
) -> int:
    """Serve a cassette over stdio (or over HTTP at serving.listen) until the host leaves; summary to stderr,
    report to a file; `command`: the one notes and fixes name. Returns the status of the cassette's `exit` knob
    (0 when none), or over stdio 128 + the signal that ended the session."""
    if serving.state is not None and serving.listen is not None:
        raise UsageError(
            "--state is for replay over stdio, one process per live session",
            "leave it out: over --http one process serves every live session, each its own recorded session",
        )
    apart_from(cassette, [("--report", options.report), ("--html", options.html), ("--state", serving.state)])
    recorded = closed(cassettes.load(cassette), options.closed_world)
    matcher = Matcher.build(options.ignores, recorded.meta)
    taken: tuple[int, ...] = ()
    if serving.state is not None:
        from mockmcp.cli.state import read_taken, write_taken  # deferred: only --state uses it

        taken = read_taken(serving.state, cassette)
    if os.path.exists(journal_path(cassette)) and (said := _journal_note(cassette, journal_path(cassette))):
        note(said)
    redactor = _recorded_redactor(recorded, options.substitutions, command)
    # The cassette lives as long as the process: the collector would walk it again and again (the launcher may
    # have turned the collector off while starting up: it is on from here).
    gc.freeze()
    gc.enable()
    # A host ends a server by closing stdin (or the plugin its HTTP one by SIGTERM), maybe signalling again:
    # signals stay caught until the report is written, so the report is always written.
    with Signals() as signals:  # over HTTP the serving loop catches the first signal; this one, any after it
        if serving.listen is not None:
            reports = _serve_http((recorded, matcher, redactor, options.timing), serving, bounds)
            report, status = Report.combine(recorded, reports), 0
        else:
            recordings = Recordings(recorded, matcher, taken) if taken else None
            engine = Replay(recorded, matcher, redactor, options.timing, recordings)
            engine.report.timed(time.time)  # when it started, and each first play (the plugin's page)
            status = serve(engine, signals=signals)
            report = engine.report
            if serving.state is not None:  # before the report: a host may start the next process once it is written
                write_taken(serving.state, cassette, {*taken, *report.sessions})
        _write_report(report, options)
    if options.strict and not report.strict_ok:
        raise StrictFailure(f"--strict: the session had {report.strict_failures()} (see the summary above)")
    return status


def _journal_note(cassette: str, journal: str) -> str | None:
    """What replay says of a journal beside its cassette: a recording running now, or one interrupted; nothing for
    one stopped after its host left, whose cassette holds all a replay needs (`record.settled`)."""
    from mockmcp.record import holder, settled

    live = holder(journal)
    if live is not None:
        return f"a recording of {cassette} is running (process {live or 'unknown'}); replaying the cassette as it was"
    if settled(cassette):
        return None
    return f"an interrupted recording of {cassette} exists; `mockmcp recover {cassette}` turns it into the cassette"


def _write_report(report: Report, options: ReplayOptions) -> None:
    """The --report file and the --html page (written first: stderr may be a pipe nobody reads), then the summary
    on stderr."""
    if options.report:
        # {pid} lets one --report option serve a host that launches the server several times.
        atomic_write(options.report.replace("{pid}", str(os.getpid())), report.json_text())
    if options.html:
        from mockmcp.html import write_replay_page

        page = write_replay_page(report, options.html.replace("{pid}", str(os.getpid())))
        note(f"the session as a timeline: {page}")
    print(report.summary(), file=sys.stderr, flush=True)


def _recorded_redactor(recorded: Cassette, given: tuple[tuple[str, str | None], ...], command: str) -> Redactor | None:
    """The redaction rules and substitutions the cassette was recorded with, if any (most have none: no import
    then), `${PROJECT}` the project's folder unless given; raises CassetteError for a substitution not given."""
    if not recorded.meta.get("redact") and not recorded.meta.get("substitute"):
        return None
    from mockmcp.cli.project import with_project
    from mockmcp.engine.redact import Redactor

    given = with_project(recorded, given, command)
    return Redactor.for_replay(recorded, os.environ, given, recorded.path or "the cassette", f"{command} --substitute")


def _serve_http(
    engine: tuple[Cassette, Matcher, Redactor | None, float], serving: Serving, bounds: Bounds
) -> list[Report]:
    """Serve the cassette over Streamable HTTP (and legacy HTTP+SSE) until SIGINT or SIGTERM; returns each live
    session's report.
    engine: what each session's engine is built from (the cassette, its matcher and redactor, the timing)."""
    try:
        from mockmcp.http import HttpReplay, SessionParts, serve_until_signalled
    except ImportError as exc:
        raise http_extra("replay", exc) from None
    listen = serving.listen or ("127.0.0.1", 0)
    try:
        server = HttpReplay(SessionParts(*engine), listen, allow_hosts=serving.allow_hosts, bounds=bounds)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {address(listen)}: {exc.strerror or exc}", "choose another port (0 takes any free one)"
        ) from None
    # Said once a signal would stop the serving loop: the plugin may send SIGTERM as soon as it reads it.
    said = f"serving {engine[0].path} at {server.url} (legacy HTTP+SSE: {server.sse_url}) (Ctrl-C or SIGTERM to stop)"
    serve_until_signalled(server, lambda: note(said))
    return server.shutdown()


def http_extra(what: str, missing: ImportError) -> UsageError:
    """What a command says when serving over HTTP needs h11, the http extra, and it is not installed."""
    said = f"{what} over HTTP needs the http extra ({missing.name or missing} is missing)"
    return UsageError(said, "pip install 'mockmcp[http]'")


def address(listen: tuple[str, int]) -> str:
    """HOST:PORT as a person writes it ([HOST]:PORT for IPv6)."""
    host, port = listen
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
