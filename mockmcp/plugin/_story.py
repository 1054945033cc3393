"""A test's story after its run, in pytest's terms: why it cannot run, what its replays could not do.

A replay's own report speaks to someone at a shell (`--ignore`, `mockmcp record`); a test's failure is
read by someone running pytest, so each miss is told again (by the same `Miss`) with that person's fixes,
its request without `_meta` (long enough, in the 2026-07-28 era, to push the tool's arguments out of view).
It reads what each launch left in the test's folder (see `launch`); a failed test's sessions make a page.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockmcp._wire.words import RecordMode
from mockmcp.engine.explain import Candidate, Miss, record_fix, shown
from mockmcp.engine.redact import Redactor
from mockmcp.errors import CassetteError, MockmcpError, UsageError
from mockmcp.plugin import _keeping as keeping
from mockmcp.plugin import _launch as launch
from mockmcp.plugin._harness import Harness
from mockmcp.plugin._naming import CASSETTE_RULE, cassette_name

if TYPE_CHECKING:
    from mockmcp.cassette.model import Cassette
    from mockmcp.inprocess import Interception

__all__ = ["days_old", "intercepted", "kept", "never_started", "problem_before", "reports", "too_old", "verdict"]
__all__ += ["write_timeline"]


def _told(miss: dict[str, Any], nodeid: str, hand_made: bool) -> Miss:
    """One miss of a replay report (`Miss.to_json`) with a pytest user's fixes (no recording when `hand_made`)."""
    closest = tuple(
        Candidate(c["interaction"], tuple(c["differences"]), c.get("first_path", ""), c["plays"], c.get("ruled", False))
        for c in miss.get("closest", [])
    )
    fixes, path = [], closest[0].first_path if closest else ""
    if path:
        fixes.append(
            f"if {path} varies from run to run, leave it out of matching: "
            f"@pytest.mark.mockmcp(ignore=[{path!r}]), or `mockmcp_ignore = {path}` in the ini file, or in the "
            f"cassette `meta.match: {{ignore: [{path!r}]}}` (for one request: a rule in "
            f"interactions[{closest[0].index}].match)"
        )
    mode = miss.get("record", "new")
    if not hand_made:
        fixes.append(record_fix(mode, f"pytest --mockmcp-record-mode={{mode}} {shlex.quote(nodeid)}"))
    fixes.append(miss["fixes"][-1])  # editing the cassette by hand: the same at a shell and in pytest
    cut = miss.get("params_cut")
    return Miss(
        miss["id"],
        miss["method"],
        shown(miss["params"]),
        miss["code"],
        miss["reason"],
        closest,
        tuple(fixes),
        mode,
        cut,
    )


def days_old(recorded_at: Any, now: datetime.datetime) -> float | None:
    """How many days before `now` a cassette's `meta.recorded_at` is; None when it has no readable date."""
    try:
        when = datetime.datetime.fromisoformat(recorded_at.replace("Z", "+00:00"))  # 3.10 reads no Z
    except (AttributeError, ValueError):  # not a string (the cassette's YAML reads no dates), or not a date
        return None
    return (now - (when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc))).total_seconds() / 86400


def problem_before(mock: Harness, nodeid: str) -> str | None:
    """Why the test cannot run at all (a missing or broken cassette, no server to record from), or None: asked
    before the test body, so a cassette that cannot load fails with its located error, not as a replay that died."""
    live, cassette = mock.target.live, mock.cassette
    if (mock.recording or live) and not mock.target.server:
        asked = "--mockmcp-live" if live else f"--mockmcp-record-mode={mock.mode.value}"
        return (
            f"{asked} needs the real server {'of' if live else 'to record'} {cassette}: name it with "
            "--mockmcp-server, @pytest.mark.mockmcp(server=[...]), a `mockmcp_server` fixture, or the "
            "`mockmcp_server` ini option"
        )
    if live:
        return None
    if mock.recording:
        record = mock.record
        try:  # what the recorder refuses: a variable to redact or substitute that is not set, a bad pattern
            subs = record.substitutions
            Redactor.for_recording(
                record.redact_env, record.redact_patterns, mock.env, "redact_env", subs, "substitute"
            )
        except UsageError as error:
            return f"mockmcp cannot record {cassette}: {error.render()}"
    if not mock.recording and not mock.source.exists():
        return _missing(mock, nodeid)
    if mock.source.exists() and (not mock.recording or mock.mode is RecordMode.NEW):
        try:
            _loaded(mock)
        except CassetteError as error:
            return f"mockmcp: the cassette of this test cannot be loaded:\n{error.render()}"
    return None


def _missing(mock: Harness, nodeid: str) -> str:
    said, target = f"no cassette at {mock.cassette}", mock.target
    if target.given is not None:
        said += (
            f"; the marker's cassette={target.given!r} is a path from the module's cassette folder, "
            f"{CASSETTE_RULE} (here {target.folder}); move the file there, or give cassette= that path "
            "(an absolute one, or `../` to leave the folder)"
        )
    if target.hand_made:
        return (
            f'{said}.\nThis test is marked record="none": its cassette is hand-made, never recorded. Write it '
            "there by hand (docs/faults.md has recipes), or copy a recorded cassette there and edit it; or remove "
            "record= from the marker to let --mockmcp-record-mode=once record it"
        )
    return (
        f"{said}; record it by running this test with --mockmcp-record-mode=once:\n"
        f"  pytest --mockmcp-record-mode=once {shlex.quote(nodeid)}"
    )


def _loaded(mock: Harness) -> Cassette:
    """The cassette replay reads, loaded (and cached); raises CassetteError."""
    from mockmcp.cassette import store  # deferred: the plugin's load path stays without YAML

    return store.load(str(mock.source))


def too_old(mock: Harness, max_days: float | None, nodeid: str) -> str | None:
    """Why the replayed cassette is older than `max_days` by its `meta.recorded_at`, or None."""
    if max_days is None or mock.recording or mock.target.live or mock.target.hand_made or not mock.source.exists():
        return None
    try:
        recorded_at = _loaded(mock).meta.get("recorded_at")
    except CassetteError:
        return None  # told by `problem_before`
    age = days_old(recorded_at, datetime.datetime.now(datetime.timezone.utc))
    if age is None or age <= max_days:
        return None
    return (
        f"mockmcp: {mock.source} was recorded {age:.0f} days ago ({recorded_at}), more than the "
        f"{max_days:g} days --mockmcp-max-age (or mockmcp_max_age) allows: check it against the real server "
        f"(`mockmcp verify {shlex.quote(str(mock.source))}`) or record it again "
        f"(pytest --mockmcp-record-mode=all {shlex.quote(nodeid)})"
    )


def _report(mock: Harness, pid: int, wait: float) -> dict[str, Any] | str:
    """The report of the replay `pid`, or why there is none (waiting a little for one still exiting)."""
    path = Path(str(mock.replay.report).replace("{pid}", str(pid)))
    deadline = time.monotonic() + wait
    while not path.exists() and keeping.alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        report: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        return (
            f"the replay the host launched (pid {pid}) ended without writing its report: it was killed or "
            "stopped before it could say whether the cassette served every request, so this test cannot pass"
            + _last_words(mock, pid, 20, "; its last words:")
        )
    except ValueError as error:
        return f"the report of the replay the host launched (pid {pid}) is unreadable ({error})"
    return report


def reports(mock: Harness, wait: float = 3.0) -> list[dict[str, Any] | str]:
    """The replay report of every launch in the test, oldest first, then of every session in process;
    a string says why one is missing."""
    inprocess = [] if mock.recording or mock.inprocess is None else mock.inprocess.reports
    return [*(_report(mock, pid, wait) for pid in mock.launches()), *(report.to_json() for report in inprocess)]


def never_started(mock: Harness) -> str | None:
    """Why it is suspicious that the test took this server and no host started it (nothing judged), or None."""
    if not mock.handed_out or mock.target.live or mock.sessions():  # live: the real server, never judged
        return None
    return (
        f"mockmcp: the test took the mock server of {mock.source} but no host started it, so nothing of "
        "the cassette was played or judged (launch `mockmcp.command` or `mockmcp.stdio_params` as the host's "
        "server, or connect the host to `mockmcp.transport`)"
    )


def verdict(mock: Harness, nodeid: str) -> str | None:
    """After the test `nodeid`: the full explanation of what the cassette could not do, or None if all is well."""
    strict, problems = mock.replay.strict, []
    if strict and (unstarted := never_started(mock)):
        problems.append("never started (strict): " + unstarted.removeprefix("mockmcp: "))
    for report in reports(mock):
        if isinstance(report, str):
            problems.append(report)
            continue
        problems.extend(_told(miss, nodeid, mock.target.hand_made).render() for miss in report["misses"])
        # The host's answers to the server's requests count: a handler that regressed fails its test;
        # so do the capabilities it declares: a server request it no longer declares one for was withheld.
        problems.extend(told["explanation"] for told in [*report.get("mismatches", []), *report.get("withheld", [])])
        if strict:
            problems.extend(f"never asked for (strict): {_at(unplayed)}" for unplayed in report["unplayed"])
            problems.extend(_repeated(repeat) for repeat in report["repeats"])
    if not problems:
        return None
    return f"mockmcp: {mock.source} could not serve this test as recorded:\n" + "\n".join(problems)


def intercepted(interception: Interception, nodeid: str, children: list[str]) -> str | None:
    """After the test `nodeid`: what its intercepted servers' cassettes could not do (`children`: what its Python
    child processes said of theirs), or None if all is well."""
    said = "\n".join(filter(None, [interception.verdict(lambda miss: _told(miss, nodeid, False).render()), *children]))
    where = interception.folder
    return said and f"mockmcp: the intercepted servers' cassettes in {where} could not serve this test:\n{said}"


def kept(mock: Harness, finish: Callable[[Cassette], Cassette]) -> str | None:
    """Make the finished recording the test's cassette, `finish` applied (see `keeping.keep`); returns why
    the test fails instead (the recorder failed, the recording could not be kept), or None."""
    try:
        if keeping.keep(mock.staged, mock.cassette, finish, mock.replay.ignores, mock.target.legacy):
            return None
    except MockmcpError as error:  # a before_record that broke a message: the cassette stays as it was
        keeping.discard(mock.staged)
        return f"mockmcp: the recording of {mock.cassette} could not be kept: {error}"
    journal = keeping.journal(mock.staged)
    if journal.exists():  # the session is in it: never delete it
        return (
            f"mockmcp: the recording of {mock.cassette} was not saved (the recorder's stderr says why); "
            f"the session is kept in {journal}: `mockmcp recover {journal.with_suffix('')}`"
        )
    keeping.discard(mock.staged)
    ended = [(pid, launch.status(str(mock.workdir), pid)) for pid in mock.launches()]
    refused = [
        f"the recorder (pid {pid}) exited with status {status}{_last_words(mock, pid, 12, ':')}"
        for pid, status in ended
        if status
    ]
    if refused:  # as the CLI: no cassette that would lie, and the test says why
        return f"mockmcp: no recording of {mock.cassette} was kept: " + "\n".join(refused)
    # The recorder ended without a recording: the host sent nothing. As at the CLI, no cassette is written.
    if mock.sessions() and not any(map(keeping.alive, mock.launches())):
        return None
    return f"mockmcp: the recording of {mock.cassette} did not finish (did the host close the server?)"


def _last_words(mock: Harness, pid: int, lines: int, head: str) -> str:
    """The last `lines` the server `pid` wrote to stderr, after `head`; "" when it said nothing."""
    said = mock.stderr(pid).splitlines()[-lines:]
    return head + "".join(f"\n  | {line}" for line in said) if said else ""


def _at(entry: dict[str, Any]) -> str:
    return f"interactions[{entry['interaction']}] {entry['method']}"


def _repeated(repeat: dict[str, Any]) -> str:
    extra = repeat["extra"]
    return (
        f"asked more often than recorded (strict): {_at(repeat)}, {extra} more time{'s' * (extra != 1)} (the last "
        "recording answered again); if the host may ask it as often as it likes, write `times: any` in that interaction"
    )


def write_timeline(
    mocks: dict[str, Harness],
    nodeid: str,
    test_name: str,
    root: Path,
    intercepted: tuple[Interception, Path] | None,
    model: tuple[Path, list[dict[str, Any]]] | None = None,
) -> Path | None:
    """The page of the test's replayed sessions, a lane per server, its intercepted servers' too (None when it
    replayed nothing), in the first mock's work folder, else the interception's; cassettes are named from `root`,
    the run's root folder, as a node id is. `model`: a paired test's VCR cassette and the exchanges noted of it,
    a lane after the servers'."""
    from mockmcp.html import Model, lane_for, write_page

    replayed = [
        (name, mock.source, [told for told in reports(mock, wait=0.0) if isinstance(told, dict)], mock.target.hand_made)
        for name, mock in mocks.items()
        if not (mock.recording or mock.target.live) and mock.source.exists()
    ]
    replayed += [(name, path, told, False) for name, path, told in (intercepted[0].lanes() if intercepted else ())]
    lanes = []
    for name, cassette, told, hand_made in replayed:
        shown = os.path.relpath(cassette, root) if cassette.is_relative_to(root) else None
        fixed = [
            {**report, "misses": [_fixed(miss, nodeid, hand_made, cassette, shown) for miss in report["misses"]]}
            for report in told
        ]
        try:
            lanes.append(lane_for(str(cassette), fixed, name, shown))
        except MockmcpError:  # a cassette that cannot load: the test fails with its own located error
            continue
    folder = next(iter(mocks.values())).workdir if mocks else intercepted and intercepted[1]
    if not lanes or not folder:
        return None
    page = folder / cassette_name([test_name], ".html")
    beside = None
    if model is not None:
        vcr, exchanges = model
        shown = os.path.relpath(vcr, root) if vcr.is_relative_to(root) else str(vcr)
        beside = Model(shown, tuple(exchanges), vcr.absolute().as_uri() if vcr.exists() else "")
    write_page(str(page), lanes, f"mockmcp: {nodeid}", runner="pytest", model=beside)
    return page


def _fixed(miss: dict[str, Any], nodeid: str, hand_made: bool, cassette: Path, shown: str | None) -> dict[str, Any]:
    """A miss with its fixes in pytest's terms, naming the cassette as the page does."""
    fixes = _told(miss, nodeid, hand_made).fixes
    return {**miss, "fixes": [fix.replace(str(cassette), shown) for fix in fixes] if shown else list(fixes)}
