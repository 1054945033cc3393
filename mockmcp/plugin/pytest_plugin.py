"""pytest plugin: a cassette per test, replayed by default, recorded when asked; misses fail the test.

Only hooks and small fixtures, each answering one question; the rules are in `harness`,
`naming`, `privacy` and `story`; what a test sees is `mock_server.MockServer`. Nothing here is
autouse: a test that does not ask for the `mockmcp` fixture is untouched.

    def test_reads_a_note(mockmcp):
        async with Client(mockmcp.stdio_params) as client: ...   # or Client(mockmcp.start_http())

Options: `--mockmcp-record={none,once,new,all}` (default none), `--mockmcp-server "CMD ARGS"`,
`--mockmcp-strict`, `--mockmcp-keep-failed`, `--mockmcp-max-age=DAYS`, `--mockmcp-orphans`,
`--mockmcp-live`. Marker (and the `mockmcp_config` fixture): see
`naming.MARKER_ARGUMENTS`. Ini: `mockmcp_server`, `mockmcp_cassette_dir`, `mockmcp_max_age`, `mockmcp_ignore`,
`mockmcp_redact_env`, `mockmcp_redact`, `mockmcp_substitute`. Fixtures to override: `mockmcp_server`, `mockmcp_servers`,
`mockmcp_config`, `mockmcp_cassette_dir`, `mockmcp_cassette_path`, `mockmcp_record_mode`.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mockmcp.errors import MockmcpError, UsageError
from mockmcp.plugin import keeping, orphans, timeline
from mockmcp.plugin.configured import Configured, config_path, read_configured
from mockmcp.plugin.harness import MODES, Harness, check_mode, server_command
from mockmcp.plugin.mock_server import MockServer, MockServers
from mockmcp.plugin.naming import Origin, cassette_name, merge_settings
from mockmcp.plugin.privacy import Privacy
from mockmcp.words import parse_substitution

__all__ = [
    "mockmcp",
    "mockmcp_cassette_dir",
    "mockmcp_cassette_path",
    "mockmcp_config",
    "mockmcp_record_mode",
    "mockmcp_server",
    "mockmcp_servers",
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
]

_KEY = pytest.StashKey[list[Harness]]()
_PROBLEM = pytest.StashKey[str]()  # why the test cannot run as asked (a bad marker, a shared cassette)
_PASSED = pytest.StashKey[bool]()  # the test body passed, so its recording may be kept
_CLAIMED = pytest.StashKey[dict[Path, str]]()  # cassette -> the test that uses it, in this process
_MAX_AGE = pytest.StashKey[float | None]()  # --mockmcp-max-age, or the ini option, in days
_USED = pytest.StashKey[orphans.Used]()  # for --mockmcp-orphans: the cassette folders and the cassettes tests use
_NAMES = pytest.StashKey[list[str]]()  # the test's servers by name ("" for a test's one server)
_PAGE = pytest.StashKey[Path]()  # the test's timeline page, once written


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockmcp", "mockmcp: replay and record MCP sessions")
    group.addoption("--mockmcp-record", choices=MODES, default="none", help="record mode (default: none, never record)")
    group.addoption("--mockmcp-server", default=None, help="the real server to record from, as a command line")
    group.addoption(
        "--mockmcp-strict", action="store_true", help="fail tests that leave recorded interactions unplayed"
    )
    group.addoption("--mockmcp-keep-failed", action="store_true", help="keep recordings of failed tests too")
    group.addoption(
        "--mockmcp-max-age",
        default=None,
        metavar="DAYS",
        help="warn about a replayed cassette recorded more than DAYS ago (fail with --mockmcp-strict)",
    )
    group.addoption(
        "--mockmcp-orphans",
        action="store_true",
        help="list the cassettes in the cassette folders that no collected test uses; the run fails if any",
    )
    group.addoption(
        "--mockmcp-html",
        choices=timeline.WHEN,
        default="failed",
        help="write an HTML timeline of the replayed session for each failed test (the default), every test, or none",
    )
    group.addoption(
        "--mockmcp-live",
        action="store_true",
        help="run the tests against the real servers: no cassette is read or written, nothing judged",
    )
    parser.addini("mockmcp_server", "the real server to record from, as a command line")
    parser.addini(
        "mockmcp_cassette_dir", "cassette folder, relative to each test file; a folder per test module goes in it"
    )
    parser.addini("mockmcp_max_age", "as --mockmcp-max-age: the age in days past which a cassette is old")
    parser.addini("mockmcp_ignore", "params paths left out of matching", type="linelist")
    parser.addini("mockmcp_redact_env", "environment variables whose values never reach a cassette", type="linelist")
    parser.addini("mockmcp_redact", "regular expressions whose matches never reach a cassette", type="linelist")
    parser.addini(
        "mockmcp_substitute",
        "NAME=VALUE (or NAME: the environment variable's value): VALUE is written as ${NAME} in cassettes, and "
        "replayed as this machine's value; PROJECT is the project's folder unless given",
        type="linelist",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mockmcp(server=None, servers=None, config=None, cassette=None, strict=False, ignore=(), record=None, "
        "redact_env=(), redact=(), before_record=None, substitute=None): "
        "settings of this test's mock MCP server",
    )
    config.stash[_CLAIMED] = {}
    config.stash[_MAX_AGE] = _max_age(config)
    config.stash[_USED] = orphans.Used()


def _max_age(config: pytest.Config) -> float | None:
    given = config.getoption("--mockmcp-max-age") or config.getini("mockmcp_max_age")
    if not given:
        return None
    try:
        days = float(given)
    except ValueError:
        days = -1.0
    if not days >= 0:  # also NaN
        raise pytest.UsageError(
            f"mockmcp: the max age of a cassette is a number of days, got {given!r}: e.g. --mockmcp-max-age=90"
        )
    return days


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --mockmcp-orphans: note the cassettes every collected test would use, by the naming rule."""
    if config.getoption("--mockmcp-orphans"):
        folder = config.getini("mockmcp_cassette_dir") or "cassettes"
        for item in items:
            config.stash[_USED].collect(item, folder)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """With --mockmcp-orphans: the cassettes no collected test uses."""
    if config.getoption("--mockmcp-orphans"):
        used = config.stash[_USED]
        used.add(config.stash[_CLAIMED])  # what tests that ran named, fixtures included
        terminalreporter.write_line(orphans.report(used.orphans(), config.rootpath))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """--mockmcp-orphans fails a run that found any (exit status 1), so CI holds the line."""
    config = session.config
    if config.getoption("--mockmcp-orphans") and exitstatus == 0:
        used = config.stash[_USED]
        used.add(config.stash[_CLAIMED])
        if used.orphans():
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _marker(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The test's settings: the `mockmcp_config` fixture's, then a module's or class's marker, then the test's own."""
    markers = [(marker.args, marker.kwargs) for marker in request.node.iter_markers("mockmcp")]
    merged, problem = merge_settings(request.getfixturevalue("mockmcp_config"), markers[::-1])
    if problem:
        request.node.stash.setdefault(_PROBLEM, problem)
    return merged


@pytest.fixture
def mockmcp_config() -> dict[str, Any]:
    """Settings for every test in its scope, as the marker takes them; override it in a conftest.py.

    A marker's arguments win over it, one by one.
    """
    return {}


@pytest.fixture
def mockmcp_record_mode(request: pytest.FixtureRequest) -> str:
    """The record mode of this test: the marker's `record=`, else the run's `--mockmcp-record`.

    The marker wins, so a hand-made fault cassette marked `record="none"` survives `--mockmcp-record=all`.
    """
    chosen = _marker(request).get("record")
    if chosen is not None:
        try:
            return check_mode(str(chosen))
        except UsageError as error:
            request.node.stash.setdefault(_PROBLEM, f"@pytest.mark.mockmcp(record={chosen!r}): {error}")
    return str(request.config.getoption("--mockmcp-record"))


@pytest.fixture
def mockmcp_server() -> Any:
    """The real server to record from; override this fixture to name it in code: a command line (a list, or a
    string split as a shell would), a URL, or for `mockmcp.transport` an SDK server object such as an `MCPServer`."""
    return None


@pytest.fixture
def mockmcp_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """This module's cassette folder: `<ini mockmcp_cassette_dir, default cassettes>/<module>` beside the test."""
    test_file = Path(request.node.path)
    folder = request.config.getini("mockmcp_cassette_dir") or "cassettes"
    return (test_file.parent / folder / test_file.stem).resolve()


@pytest.fixture
def mockmcp_cassette_path(request: pytest.FixtureRequest, mockmcp_cassette_dir: Path) -> Path:
    """This test's cassette: the marker's `cassette` (a path from the cassette folder), else `<Class>.<test>.yaml`."""
    given = _marker(request).get("cassette")
    if given:
        return (mockmcp_cassette_dir / str(given)).resolve()
    classes = [node.name for node in request.node.listchain() if isinstance(node, pytest.Class)]
    return mockmcp_cassette_dir / cassette_name([*classes, request.node.name])


def _claim(request: pytest.FixtureRequest, cassette: Path) -> None:
    """Two tests whose names differ only in characters a file name cannot hold would share a cassette."""
    claimed = request.config.stash[_CLAIMED]
    other = claimed.setdefault(cassette, request.node.nodeid)
    if other != request.node.nodeid and not _marker(request).get("cassette"):
        request.node.stash.setdefault(
            _PROBLEM,
            f"{request.node.nodeid} and {other} would share the cassette {cassette}; give this test its own "
            "with @pytest.mark.mockmcp(cassette=...)",
        )


@pytest.fixture
def mockmcp_servers() -> dict[str, Any]:
    """The servers of a test that talks to several, by name, each with the real one to record from.

    Override this fixture to name them in code; the marker's `servers=` adds to it and wins by name.
    """
    return {}


@pytest.fixture
def mockmcp(
    request: pytest.FixtureRequest,
    mockmcp_record_mode: str,
    mockmcp_server: Any,
    mockmcp_servers: dict[str, Any],
    mockmcp_cassette_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[MockServer | MockServers]:
    """The mock server of this test: `.command` and `.env` (or `.stdio_params`) to launch, or `.start_http()`.

    A test whose marker (or `mockmcp_servers` fixture) names several servers gets them by name
    instead, `mockmcp["notes"]`, each with its cassette in a folder named after the test.
    """
    config, marker = request.config, _marker(request)
    strict = bool(config.getoption("--mockmcp-strict") or marker.get("strict"))
    ignores = [*config.getini("mockmcp_ignore"), *marker.get("ignore", ())]
    named = {**mockmcp_servers, **dict(marker.get("servers") or {})}
    hosted = _configured(request, marker)
    if hosted is not None:
        named = {**hosted.servers, **named}
    privacy = Privacy(
        tuple([*config.getini("mockmcp_redact_env"), *marker.get("redact_env", ())]),
        tuple([*config.getini("mockmcp_redact"), *marker.get("redact", ())]),
        marker.get("before_record"),
        config.rootpath,
        _substitutions(request, marker),
    )

    given = marker.get("cassette")
    origin = Origin(
        None if not given or named else str(given),
        request.getfixturevalue("mockmcp_cassette_dir"),
        marker.get("record") == "none",
    )
    live = bool(config.getoption("--mockmcp-live"))

    def harness(cassette: Path, server: list[str] | None, name: str | None = None) -> Harness:
        _claim(request, cassette)
        for said in keeping.leftovers(cassette):
            request.node.warn(pytest.PytestWarning(f"mockmcp: {said}"))
        workdir = tmp_path_factory.mktemp("mockmcp")
        own = privacy
        if hosted is not None and name in hosted.secrets:  # a config's env keys: the host hands them to the server
            own = privacy._replace(redact_env=tuple(dict.fromkeys([*privacy.redact_env, *hosted.secrets[name]])))
        mock = Harness(cassette, mockmcp_record_mode, server, workdir, ignores, strict, own, origin=origin, live=live)
        if hosted is not None and name in hosted.env:
            mock.env.update(hosted.env[name])
        return mock

    mock_server: MockServer | MockServers
    if named:
        folder = mockmcp_cassette_path.with_suffix("")
        mocks = [
            harness(folder / cassette_name([str(name)]), server_command(command), str(name))
            for name, command in named.items()
        ]
        mock_server = MockServers((str(name), MockServer(mock)) for name, mock in zip(named, mocks, strict=True))
        if hosted is not None:
            by_name = dict(zip(named, mocks, strict=True))
            mock_server.derive = lambda: hosted.derived(
                tmp_path_factory.mktemp("config"),
                {name: by_name[name].command() for name in hosted.servers},
                lambda name: by_name[name].start_http(),
            )
    else:
        server = server_command(
            config.getoption("--mockmcp-server"), marker.get("server"), mockmcp_server, config.getini("mockmcp_server")
        )
        mocks = [harness(mockmcp_cassette_path, server)]
        mock_server = MockServer(mocks[0])
    request.node.stash[_KEY] = mocks  # a problem found before the test fails it in its call (see below)
    request.node.stash[_NAMES] = [str(name) for name in named] if named else [""]
    _check_age(request, mocks, strict)
    yield mock_server
    for mock in mocks:
        mock.stop()
    for mock in mocks:
        if mock.recording:
            _finish_recording(request, mock)


def _configured(request: pytest.FixtureRequest, marker: dict[str, Any]) -> Configured | None:
    """The host config the marker's `config=` names, read (a config that cannot be read fails the test)."""
    given = marker.get("config")
    if not given:
        return None
    try:
        return read_configured(config_path(request.config.rootpath, given), os.environ)
    except MockmcpError as error:
        request.node.stash.setdefault(_PROBLEM, f"@pytest.mark.mockmcp(config={given!r}): {error.render()}")
        return None


def _check_age(request: pytest.FixtureRequest, mocks: list[Harness], strict: bool) -> None:
    """A replayed cassette older than the max age: a warning, or with strict a failure of the test."""
    max_age = request.config.stash[_MAX_AGE]
    if max_age is None:
        return
    for mock in mocks:
        told = mock.too_old(max_age, request.node.nodeid)
        if told and strict:
            request.node.stash.setdefault(_PROBLEM, told)
        elif told:
            request.node.warn(pytest.PytestWarning(told))


def _substitutions(request: pytest.FixtureRequest, marker: dict[str, Any]) -> tuple[tuple[str, str | None], ...]:
    """The test's substitutions: PROJECT (pytest's rootpath), the ini option's, the marker's (a bad one fails it)."""
    ini = []
    for line in request.config.getini("mockmcp_substitute"):
        try:
            ini.append(parse_substitution(line))
        except UsageError as error:
            request.node.stash.setdefault(_PROBLEM, f"the mockmcp_substitute ini option: {error}")
    given = {str(k): None if v is None else str(v) for k, v in (marker.get("substitute") or {}).items()}
    return Privacy.substitutions(request.config.rootpath, ini, given.items())


def _finish_recording(request: pytest.FixtureRequest, mock: Harness) -> None:
    if not mock.sessions():  # a server never launched recorded nothing (in mode new, its staged copy goes)
        mock.discard_recording()
        if mock.handed_out and _PROBLEM not in request.node.stash and request.node.stash.get(_PASSED, False):
            pytest.fail(
                f"mockmcp: nothing was recorded into {mock.cassette}: the test took the mock server's command "
                "but never launched it (launch `mockmcp.command` or `mockmcp.stdio_params` as the host's server, or "
                "connect the host to `mockmcp.transport`)",
                pytrace=False,
            )
        return
    if _PROBLEM in request.node.stash:
        return
    if request.node.stash.get(_PASSED, False) or request.config.getoption("--mockmcp-keep-failed"):
        try:
            kept = mock.keep_recording()
        except MockmcpError as error:  # a before_record that broke a message: the cassette stays as it was
            mock.discard_recording()
            pytest.fail(f"mockmcp: the recording of {mock.cassette} could not be kept: {error}", pytrace=False)
        if not kept:
            journal = mock.unfinished_journal()
            if journal is not None:  # the session is in it: never delete it
                pytest.fail(
                    f"mockmcp: the recording of {mock.cassette} was not saved (the recorder's stderr says why); "
                    f"the session is kept in {journal}: `mockmcp recover {journal.with_suffix('')}`",
                    pytrace=False,
                )
            mock.discard_recording()
            refused = mock.refused_recordings()
            if refused:  # as the CLI: no cassette that would lie, and the test says why
                pytest.fail(f"mockmcp: no recording of {mock.cassette} was kept: " + "\n".join(refused), pytrace=False)
            if mock.recorded_nothing():  # as the CLI: no cassette written, an existing one left as it was
                return
            pytest.fail(
                f"mockmcp: the recording of {mock.cassette} did not finish (did the host close the server?)",
                pytrace=False,
            )
    else:
        mock.discard_recording()


def _verdict(mocks: list[Harness], nodeid: str) -> str | None:
    """What the replays of this test's servers could not do, each server's in turn; None if all went well."""
    found = [mock.verdict(nodeid) for mock in mocks if not mock.recording]
    return "\n\n".join(verdict for verdict in found if verdict) or None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test body: fail it with the replay's explanation if the cassette could not serve it."""
    mocks = item.stash.get(_KEY, [])
    problems = [problem for mock in mocks if (problem := mock.problem_before(item.nodeid))]
    problem = item.stash.get(_PROBLEM, None) or "\n".join(problems)
    if problem:
        pytest.fail(problem, pytrace=False)  # a failure of the test itself, not an error of its set-up
    try:
        result = yield
    except Exception as error:
        failure: Exception | None = error
    else:
        failure = None
    for mock in mocks:  # an HTTP mock server writes its report (or saves its recording) when stopped
        mock.stop()
    # Out of the except block, so that pytest shows the verdict alone, not after the host's traceback.
    verdict = _verdict(mocks, item.nodeid)
    page = _timeline(item, mocks, failed=bool(verdict) or failure is not None)
    shown = f"\n\nmockmcp: the session as a timeline: {page}" if page else ""
    if verdict:
        said = f"\n\nThe test failed with: {failure!r}" if failure else ""
        pytest.fail(verdict + said + shown, pytrace=False)
    if failure is not None:
        for mock in mocks:  # the replay's notes (a cancelled request, a fault played) may say why
            for title, text in mock.sections():
                item.add_report_section("call", title, text)
        if page:
            item.add_report_section("call", "mockmcp timeline", shown.strip())
        raise failure
    for mock in mocks:  # strict failed it above; a test that is not strict is told
        unstarted = None if mock.recording or mock.strict else mock.never_started()
        if unstarted:
            item.warn(pytest.PytestWarning(unstarted))
    item.stash[_PASSED] = True
    return result


def _timeline(item: pytest.Item, mocks: list[Harness], failed: bool) -> Path | None:
    """The test's timeline page, when --mockmcp-html asks for one for this test (by default: a failed one)."""
    when = item.config.getoption("--mockmcp-html")
    if not mocks or when == "none" or (when == "failed" and not failed):
        return None
    names = item.stash.get(_NAMES, [""] * len(mocks))
    try:
        page = timeline.write_timeline(mocks, names, item.nodeid, item.name, item.config.rootpath)
    except OSError as error:  # the page is an aid: the test's verdict stands without it
        item.warn(pytest.PytestWarning(f"mockmcp: the timeline page could not be written: {error}"))
        return None
    if page is not None:
        item.stash[_PAGE] = page
    return page


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """With pytest-html: a link to the test's timeline page among the extras of its report."""
    report = yield
    page = item.stash.get(_PAGE, None)
    if page is not None and report.when == "call" and item.config.pluginmanager.hasplugin("html"):
        from pytest_html import extras  # type: ignore[import-untyped]  # present: the plugin registered as "html"

        report.extras = [*getattr(report, "extras", []), extras.url(page.as_uri(), name="mockmcp timeline")]
    return report
