"""pytest plugin: a cassette per test, replayed by default, recorded when asked; misses fail the test.

Hooks, and small fixtures each answering one question, which a conftest.py overrides one at a time
(docs/pytest.md lists them). A test that asks for no fixture of mockmcp's (nor interception) is untouched.
"""

from __future__ import annotations

import io
import os
import shlex
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mockmcp._wire.words import RecordMode, parse_substitution
from mockmcp.errors import MockmcpError, UsageError
from mockmcp.inprocess import Interception, child_environment, read_verdicts, run_settings
from mockmcp.options import RecordOptions, ReplayOptions
from mockmcp.plugin import _keeping as keeping
from mockmcp.plugin import _naming as naming
from mockmcp.plugin import _pairing as pairing
from mockmcp.plugin import _story as story
from mockmcp.plugin._harness import Harness, Target, server_command
from mockmcp.plugin._mock_server import Configured, MockServer, MockServers, read_configured
from mockmcp.plugin._privacy import Privacy

# The fixtures, each of which a conftest.py may override.
__all__ = ["mockmcp", "mockmcp_cassette_dir", "mockmcp_cassette_name", "mockmcp_cassette_path", "mockmcp_config"]
__all__ += ["mockmcp_privacy", "mockmcp_record_mode", "mockmcp_record_options", "mockmcp_replay_options"]
__all__ += ["mockmcp_server", "mockmcp_servers", "mockmcp_settings"]

_MOCKS = pytest.StashKey[dict[str, Harness]]()  # the test's servers by name ("" for a test's one server)
_PROBLEM = pytest.StashKey[str]()  # why the test cannot run as asked (a bad marker, a shared cassette)
_PASSED = pytest.StashKey[bool]()  # the test body passed, so its recording may be kept
_PAGE = pytest.StashKey[Path]()  # the test's timeline page, once written
_OWN = pytest.StashKey[pytest.ExceptionInfo[BaseException]]()  # the test's own failure, when a verdict fails it too
_CLAIMED = pytest.StashKey[dict[Path, str]]()  # cassette -> the test that uses it, in this process
_MODE = pytest.StashKey[str]()  # the run's record mode, parsed
_MAX_AGE = pytest.StashKey[float | None]()  # --mockmcp-max-age, or the ini option, in days
_BY_SWITCH = pytest.StashKey[bool]()  # the test is intercepted by --mockmcp-intercept alone
_INTERCEPTION = pytest.StashKey[tuple[Interception, Path]]()  # the test's interception and its work folder
_USED = pytest.StashKey[tuple[set[Path], set[Path]]]()  # --mockmcp-orphans: the cassette folders, the cassettes used
_SIDES = pytest.StashKey[list[pairing.Side]]()  # a paired test's files (the model's VCR cassette, the MCP ones)
_PAIRS = pytest.StashKey[list[tuple[str, list[str]]]]()  # the paired tests' node ids, and what became of each side
_EXCHANGES = pytest.StashKey[tuple[Path, list[dict[str, Any]]]]()  # a paired test's VCR cassette, its exchanges
_PAIRED = "mockmcp_pair"  # the user property a paired test's teardown report carries its sides in (xdist too)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockmcp", "mockmcp: replay and record MCP sessions")
    modes, server = ", ".join(RecordMode.words(allow_none=True)), "the real server"
    valued = {"record-mode": "MODE", "record": "MODE", "server": None, "max-age": "DAYS"}  # the rest are flags
    for name, told in {  # --mockmcp-NAME
        "record-mode": f"{modes} (default: none, never record)",
        "record": "deprecated spelling of --mockmcp-record-mode",
        "server": f"{server} to record from, as a command line",
        "strict": "fail tests that leave recorded interactions unplayed",
        "keep-failed": "keep recordings of failed tests too",
        "max-age": "warn about a replayed cassette recorded more than DAYS ago (fail with --mockmcp-strict)",
        "orphans": "list the cassettes in the cassette folders that no collected test uses; the run fails if any",
        "html": "write an HTML timeline of the replayed session for each failed test (the default), every test, "
        "or none",
        "live": f"run the tests against {server}s: no cassette is read or written, nothing judged",
        "intercept": "intercept the MCP servers every test's host starts (the SDK's own client, the host's code "
        "unchanged): each replayed from, or recorded into, cassettes/<module>/<test>/<server>.yaml",
    }.items():
        how = {"metavar": valued[name]} if name in valued else {"action": "store_true"}
        how = {"choices": ("failed", "all", "none"), "default": "failed"} if name == "html" else how
        group.addoption(f"--mockmcp-{name}", help=told, **how)
    for name, told in {  # the ini option mockmcp_NAME
        "server": f"{server} to record from, as a command line",
        "cassette_dir": "cassette folder, relative to each test file; a folder per test module goes in it",
        "max_age": "as --mockmcp-max-age: the age in days past which a cassette is old",
        "ignore": "params paths left out of matching",
        "redact_env": "environment variables whose values never reach a cassette",
        "redact": "regular expressions whose matches never reach a cassette",
        "substitute": "NAME=VALUE (or NAME: the environment variable's value): VALUE is written as ${NAME} in "
        "cassettes, and replayed as this machine's value; PROJECT is the project's folder unless given",
    }.items():
        kind = "linelist" if name.startswith(("ignore", "redact", "substitute")) else None
        parser.addini(f"mockmcp_{name}", told, type=kind)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mockmcp(server=None, servers=None, config=None, cassette=None, strict=False, closed_world=False, ignore=(), "
        "record=None, "
        "redact_env=(), redact=(), before_record=None, substitute=None, intercept=False, names=None, allow=()): "
        "settings of this test's mock MCP server",
    )
    config.stash[_MODE] = _record_mode(config)
    config.stash[_CLAIMED] = {}
    config.stash[_MAX_AGE] = _max_age(config)
    config.stash[_USED] = (set(), set())
    config.stash[_PAIRS] = []
    config.pluginmanager.register(_Pairs(config.stash[_PAIRS]))


def _record_mode(config: pytest.Config) -> str:
    """--mockmcp-record-mode, or its old spelling with a warning; else, with pytest-recording, the mode its
    --record-mode maps to (`pairing.VCR_MODES`)."""
    given, old = config.getoption("--mockmcp-record-mode"), config.getoption("--mockmcp-record")
    text = pairing.mode_word(given or old, config.getoption("--record-mode", default=None))
    deprecated = f"--mockmcp-record is deprecated, write --mockmcp-record-mode={old}" if old is not None else None
    for said in [] if hasattr(config, "workerinput") else [deprecated, RecordMode.deprecated(text)]:  # told once
        if said:  # by xdist's controller
            config.issue_config_time_warning(pytest.PytestDeprecationWarning(f"mockmcp: {said}"), stacklevel=2)
    try:
        mode = RecordMode.parse(text, allow_none=True).value
    except UsageError as error:
        raise pytest.UsageError(f"mockmcp: --mockmcp-record-mode={text}: {error}") from None
    # A conftest that reads either option gets the mode the run uses ("none" when neither is given).
    config.option.mockmcp_record_mode = config.option.mockmcp_record = mode
    return mode


def _max_age(config: pytest.Config) -> float | None:
    given = config.getoption("--mockmcp-max-age") or config.getini("mockmcp_max_age")
    try:
        days = float(given) if given else None
    except ValueError:
        days = -1.0
    if days is not None and not days >= 0:  # also NaN
        raise pytest.UsageError(
            f"mockmcp: the max age of a cassette is a number of days, got {given!r}: e.g. --mockmcp-max-age=90"
        )
    return days


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --mockmcp-orphans: note the cassettes every collected test would use, by the naming rule."""
    folders, used = config.stash[_USED]
    for item in items if config.getoption("--mockmcp-orphans") else []:
        if "mockmcp" in getattr(item, "fixturenames", ()):
            folders.add((Path(item.path).parent / _folder_name(config)).resolve())
            settings, _problem = naming.merge_settings({}, naming.markers(item))
            given, servers = settings.get("cassette"), settings.get("servers") or {}
            folder = naming.module_folder(Path(item.path), _folder_name(config))
            own = (folder / str(given)).resolve() if given else folder / _own_name(item)
            used.update([naming.server_cassette(own, name) for name in servers] or [own])
            found = None if given or servers else naming.legacy(own, folder / _own_name(item, old=True))
            used.update([found] if found else [])  # read under its old name, so used


def _orphans(config: pytest.Config) -> list[Path]:
    folders, used = config.stash[_USED]
    return naming.orphans(folders, [*used, *config.stash[_CLAIMED]])  # and what tests that ran named, fixtures included


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """A test with a VCR cassette (pytest-recording's marker) and mock servers is paired: its files noted as
    they stand before it runs, told after it (`pytest_runtest_teardown`)."""
    result = yield
    cassette, mocks = pairing.vcr_cassette(item), item.stash.get(_MOCKS, {})
    intercepted = item.stash.get(_INTERCEPTION, None)
    live = item.config.getoption("--mockmcp-live")  # the real servers: no MCP cassette is read or written
    if cassette is not None and (mocks or intercepted) and not live:
        sides = [pairing.Side.of("model", cassette._path)]
        sides += [pairing.Side.of("MCP", mock.cassette, mock.recording) for mock in mocks.values()]
        folder = intercepted[0].folder if intercepted else None  # its servers' files, known once they are used
        sides += [pairing.Side.of("MCP", path) for path in sorted(folder.glob("*.yaml"))] if folder else []
        item.stash[_SIDES] = sides
        item.stash[_EXCHANGES] = Path(cassette._path), pairing.note_exchanges(cassette)  # for its page, in time
        replayed = cassette.write_protected and not any(mock.recording for mock in mocks.values())
        replayed = replayed and not (intercepted and intercepted[0].mode.records(True))
        told = pairing.mismatch(sides, item.config.rootpath, item.nodeid) if replayed else None
        strict = [mock.replay.strict for mock in mocks.values()] + (
            [intercepted[0].replay.strict] if intercepted else []
        )
        if told and any(strict):  # a failure of the test (pytest_runtest_call), as an old cassette's
            item.stash.setdefault(_PROBLEM, told)
        elif told:
            item.warn(pytest.PytestWarning(told))
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    """After the fixtures (vcrpy saves its cassette as its fixture ends): what became of each side's file."""
    result = yield
    sides = item.stash.get(_SIDES, None)
    intercepted = item.stash.get(_INTERCEPTION, None)
    if sides is not None:
        used = [server.path for server in intercepted[0].servers.values()] if intercepted else []
        sides = pairing.used(sides, [mock.cassette for mock in item.stash.get(_MOCKS, {}).values()], used)
        pairing.pair(sides)  # the files recorded together carry one id
        item.user_properties.append((_PAIRED, [side.told(item.config.rootpath) for side in sides]))
    return result


class _Pairs:
    """The paired tests' sides, gathered for the summary from the teardown reports (with xdist, the workers')."""

    def __init__(self, pairs: list[tuple[str, list[str]]]) -> None:
        self.pairs = pairs

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, told in report.user_properties if report.when == "teardown" else ():
            if name == _PAIRED:
                self.pairs.append((report.nodeid, list(told)))


@pytest.hookimpl(optionalhook=True)
def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
    """pytest-recording's VCR of a test: its matcher `json_body` (the model's request body compared as JSON) is
    there for the test's `vcr_config` to name in `match_on`."""
    vcr.register_matcher("json_body", pairing.json_body)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Each paired test's sides, one line each; with --mockmcp-orphans: the cassettes no collected test uses."""
    for line in pairing.summary(config.stash[_PAIRS]):
        terminalreporter.write_line(line)
    if config.getoption("--mockmcp-orphans"):
        terminalreporter.write_line(naming.orphans_report(_orphans(config), config.rootpath))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """--mockmcp-orphans fails a run that found any (exit status 1), so CI holds the line."""
    if session.config.getoption("--mockmcp-orphans") and exitstatus == 0 and _orphans(session.config):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _problem(request: pytest.FixtureRequest, told: str) -> None:
    """Why the test cannot run as asked: the first one told fails it in its call (see pytest_runtest_call)."""
    request.node.stash.setdefault(_PROBLEM, told)


def _folder_name(config: pytest.Config) -> str:
    return str(config.getini("mockmcp_cassette_dir") or "cassettes")


def _own_name(item: pytest.Item, old: bool = False) -> str:
    """A test's cassette when its marker names none: its classes (outermost first), then itself, `.mcp.yaml`
    (`old`: the `.yaml` it was named before, which pytest-recording's cassette of the test has too)."""
    parts = [*(node.name for node in item.listchain() if isinstance(node, pytest.Class)), item.name]
    return naming.cassette_name(parts) if old else naming.cassette_name(parts, naming.OWN_SUFFIX)


# --- the fixtures, each answering one question; a conftest.py overrides any of them --------------------


@pytest.fixture
def mockmcp_config() -> dict[str, Any]:
    """Settings for every test in its scope, as the marker takes them; a marker's arguments win over it, one by one."""
    return {}


@pytest.fixture
def mockmcp_settings(request: pytest.FixtureRequest, mockmcp_config: dict[str, Any]) -> dict[str, Any]:
    """The test's settings: the `mockmcp_config` fixture's, then a module's or class's marker, then the test's own."""
    merged, problem = naming.merge_settings(mockmcp_config, naming.markers(request.node))
    if problem:
        _problem(request, problem)
    return merged


@pytest.fixture
def mockmcp_record_mode(request: pytest.FixtureRequest, mockmcp_settings: dict[str, Any]) -> str:
    """The record mode of this test: the marker's `record=` (so a hand-made cassette marked `record="none"` survives
    `--mockmcp-record-mode=all`), else the run's `--mockmcp-record-mode`."""
    chosen = mockmcp_settings.get("record")
    if chosen is not None:
        try:
            return RecordMode.parse(str(chosen), allow_none=True).value
        except UsageError as error:
            _problem(request, f"@pytest.mark.mockmcp(record={chosen!r}): {error}")
    return request.config.stash[_MODE]


@pytest.fixture
def mockmcp_server() -> Any:
    """The real server to record from; override this fixture to name it in code: a command line (a list, or a
    string split as a shell would), a URL, or for `mockmcp.transport` an SDK server object such as an `MCPServer`."""
    return None


@pytest.fixture
def mockmcp_servers() -> dict[str, Any]:
    """The servers of a test that talks to several, by name, each with the real one to record from; the marker's
    `servers=` adds to them and wins by name."""
    return {}


@pytest.fixture
def mockmcp_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """This module's cassette folder: `<ini mockmcp_cassette_dir, default cassettes>/<module>` beside the test."""
    return naming.module_folder(Path(request.node.path), _folder_name(request.config))


@pytest.fixture
def mockmcp_cassette_name(request: pytest.FixtureRequest, mockmcp_settings: dict[str, Any]) -> str:
    """This test's cassette as a path from the cassette folder: the marker's `cassette=`, else
    `<Class>.<test>[params].mcp.yaml`."""
    return str(mockmcp_settings.get("cassette") or _own_name(request.node))


@pytest.fixture
def mockmcp_cassette_path(
    mockmcp_cassette_dir: Path, mockmcp_cassette_name: str, mockmcp_settings: dict[str, Any]
) -> Path:
    """This test's cassette (with several servers, the folder of theirs is named after it)."""
    path = mockmcp_cassette_dir / mockmcp_cassette_name
    given = mockmcp_settings.get("cassette") or path.name != mockmcp_cassette_name  # it may leave the folder
    return path.resolve() if given else path


@pytest.fixture
def mockmcp_privacy(request: pytest.FixtureRequest, mockmcp_settings: dict[str, Any]) -> Privacy:
    """What this test's recordings keep: redaction and substitutions, the ini options' then the marker's."""
    ini, settings, project = request.config.getini, mockmcp_settings, request.config.rootpath
    substitute = dict([("PROJECT", str(project))] if len(str(project)) > 1 else [])  # the root folder: no project
    substitute.update(_ini_substitutions(request))  # then the marker's, each winning by name
    substitute.update((str(k), None if v is None else str(v)) for k, v in (settings.get("substitute") or {}).items())
    redact_env = tuple([*ini("mockmcp_redact_env"), *settings.get("redact_env", ())])
    redact = tuple([*ini("mockmcp_redact"), *settings.get("redact", ())])
    return Privacy(redact_env, redact, settings.get("before_record"), project, tuple(substitute.items()))


def _ini_substitutions(request: pytest.FixtureRequest) -> list[tuple[str, str | None]]:
    """The mockmcp_substitute ini option's substitutions (a bad one fails the test)."""
    read = []
    for line in request.config.getini("mockmcp_substitute"):
        try:
            read.append(parse_substitution(line))
        except UsageError as error:
            _problem(request, f"the mockmcp_substitute ini option: {error}")
    return read


@pytest.fixture
def mockmcp_record_options(mockmcp_record_mode: str, mockmcp_privacy: Privacy) -> RecordOptions:
    """How this test's servers are recorded: its record mode, and what the recorder redacts and substitutes."""
    try:
        mode = RecordMode.parse(mockmcp_record_mode, allow_none=True).value
    except UsageError as error:  # a conftest's own mode
        pytest.fail(f"mockmcp: the mockmcp_record_mode fixture returned {mockmcp_record_mode!r}: {error}", False)
    return RecordOptions(mode, mockmcp_privacy.redact_env, mockmcp_privacy.redact, mockmcp_privacy.substitute)


@pytest.fixture
def mockmcp_replay_options(
    request: pytest.FixtureRequest, mockmcp_settings: dict[str, Any], mockmcp_privacy: Privacy
) -> ReplayOptions:
    """How this test's cassettes are replayed: the params paths left out of matching, strict, the substitutions,
    and whether the marker closed the world (`closed_world=True`: a call of a tool no recording answers fails)."""
    config = request.config
    ignores = (*config.getini("mockmcp_ignore"), *mockmcp_settings.get("ignore", ()))
    strict = bool(config.getoption("--mockmcp-strict") or mockmcp_settings.get("strict"))
    closed = bool(mockmcp_settings.get("closed_world"))
    return ReplayOptions(tuple(ignores), strict, substitutions=mockmcp_privacy.substitute, closed_world=closed)


@pytest.fixture
def mockmcp(
    request: pytest.FixtureRequest,
    mockmcp_settings: dict[str, Any],
    mockmcp_server: Any,
    mockmcp_servers: dict[str, Any],
    mockmcp_cassette_dir: Path,
    mockmcp_cassette_path: Path,
    mockmcp_privacy: Privacy,
    mockmcp_record_options: RecordOptions,
    mockmcp_replay_options: ReplayOptions,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[MockServer | MockServers]:
    """The mock server of this test: `.command` and `.env` (or `.stdio_params`) to launch, or `.start_http()`;
    with several servers, each by name, `mockmcp["notes"]`, its cassette in a folder named after the test."""
    config, settings = request.config, mockmcp_settings
    hosted = _configured(request, settings)
    named = {**(hosted.servers if hosted else {}), **mockmcp_servers, **dict(settings.get("servers") or {})}
    given = None if not settings.get("cassette") or named else str(settings["cassette"])
    live = bool(config.getoption("--mockmcp-live"))
    legacy = None if live or named else _legacy(request, settings, mockmcp_cassette_path)
    target = Target(mockmcp_cassette_path, None, given, mockmcp_cassette_dir, _hand_made(settings), live, legacy)
    if not named:
        choices = (config.getoption("--mockmcp-server"), settings.get("server"), mockmcp_server)
        target = target._replace(server=server_command(*choices, config.getini("mockmcp_server")))
    targets = {str(name): _target(target, name, command) for name, command in named.items()} or {"": target}
    options = (mockmcp_record_options, mockmcp_replay_options)
    envs = hosted.env if hosted else {}  # what a host config's entry adds to a server's environment
    mocks = {name: _harness(request, target, options, envs.get(name, {})) for name, target in targets.items()}
    request.node.stash[_MOCKS] = mocks  # a problem found before the test fails it in its call (see below)
    yield MockServers(mocks, hosted, tmp_path_factory) if named else MockServer(mocks[""])
    for mock in mocks.values():
        mock.stop()
    for mock in mocks.values():
        if mock.recording:
            _finish_recording(request, mock, mockmcp_privacy)


@pytest.fixture
def mockmcp_intercept(
    request: pytest.FixtureRequest,
    mockmcp_settings: dict[str, Any],
    mockmcp_cassette_path: Path,
    mockmcp_record_mode: str,
    mockmcp_privacy: Privacy,
    mockmcp_record_options: RecordOptions,
    mockmcp_replay_options: ReplayOptions,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Interception]:
    """Intercept the MCP servers this test's host starts, its code unchanged: each is replayed from (or, by the
    record mode, recorded into) `<cassette folder>/<module>/<test>/<server>.yaml`. The marker's `names=` names
    servers by a fragment of their command line, `allow=` lists those that run live. Yields the `Interception`
    (its `reports`, by server). A recording is kept as the test's would be: when it passed."""
    node, settings = request.node, mockmcp_settings
    switch = " --mockmcp-intercept" if node.stash.get(_BY_SWITCH, False) else ""
    how = f"record it: pytest{switch} --mockmcp-record-mode=once {shlex.quote(node.nodeid)}"
    workdir = tmp_path_factory.mktemp("mockmcp")
    try:
        interception = Interception(
            naming.servers_folder(mockmcp_cassette_path),
            mockmcp_record_mode,
            names=dict(settings.get("names") or {}),
            allow=tuple(settings.get("allow") or ()),
            replay=mockmcp_replay_options,
            record=mockmcp_record_options,
            project=request.config.rootpath,
            how_to_record=how,
            stage=lambda cassette: keeping.staged_path(cassette, os.getpid()),
            registry=workdir,
            log=io.StringIO(),  # the notes and summaries: shown with a failure, not told twice with the verdict
        )
    except UsageError as error:
        pytest.fail(f"mockmcp: {error.render()}", pytrace=False)
    stage = keeping.staged_path(Path("{stem}.yaml"), os.getpid()).name
    with interception, pytest.MonkeyPatch.context() as patch:
        # The test's Python child processes are intercepted too (as under `mockmcp run`): each tells its verdict
        # in the work folder, and records into staged files, which the test's verdict keeps or discards.
        for name, value in child_environment(run_settings(interception, stage), str(workdir)).items():
            patch.setenv(name, value)
        node.stash[_INTERCEPTION] = interception, workdir
        yield interception
    _keep_intercepted(request, interception, mockmcp_privacy)


def _fate(request: pytest.FixtureRequest, launched: bool, handed_out: bool) -> str:
    """What becomes of the test's recording (`keeping.fate`)."""
    stash, keep_failed = request.node.stash, bool(request.config.getoption("--mockmcp-keep-failed"))
    return keeping.fate(launched, _PROBLEM in stash, stash.get(_PASSED, False), keep_failed, handed_out)


def _keep_intercepted(request: pytest.FixtureRequest, interception: Interception, privacy: Privacy) -> None:
    """Each intercepted recording made its server's cassette if the test passed (or --mockmcp-keep-failed)."""
    keep, told = _fate(request, True, False) == "keep", []
    for cassette, staged in interception.recorded():
        assert staged is not None
        if not keep:
            keeping.discard(staged)
            continue
        try:
            if not keeping.keep(staged, cassette, privacy.finish, interception.replay.ignores):
                told.append(f"mockmcp: the recording of {cassette} was not saved")
        except MockmcpError as error:
            keeping.discard(staged)
            told.append(f"mockmcp: the recording of {cassette} could not be kept: {error}")
    if told:
        pytest.fail("\n".join(told), pytrace=False)


@pytest.fixture(autouse=True)
def _mockmcp_intercepting(request: pytest.FixtureRequest) -> None:
    """Interception for a test that asks for it without the fixture: `--mockmcp-intercept`, or the marker's
    `intercept=True` (on a module: `pytestmark`)."""
    config = request.config
    if config.getoption("--mockmcp-live") or "mockmcp_intercept" in request.fixturenames:
        return
    marked = any(kwargs.get("intercept") for _args, kwargs in naming.markers(request.node))
    if marked or config.getoption("--mockmcp-intercept"):
        request.node.stash[_BY_SWITCH] = not marked
        request.getfixturevalue("mockmcp_intercept")


def _legacy(request: pytest.FixtureRequest, settings: dict[str, Any], path: Path) -> Path | None:
    """The test's cassette under its old name, while the new one is missing (see `naming.legacy`); never for a
    marker's `cassette=` or a conftest's own name, which are used as given."""
    if settings.get("cassette") or path.name != _own_name(request.node):
        return None
    return naming.legacy(path, path.with_name(_own_name(request.node, old=True)))


def _hand_made(settings: dict[str, Any]) -> bool:
    """Whether the marker says `record="none"`: the cassette is written by hand, and no record mode applies."""
    try:
        return RecordMode.parse(str(settings.get("record")), allow_none=True) is RecordMode.NONE
    except UsageError:
        return False


def _configured(request: pytest.FixtureRequest, settings: dict[str, Any]) -> Configured | None:
    """The host config the marker's `config=` names, read (a config that cannot be read fails the test)."""
    given = settings.get("config")
    try:  # a path from the project's folder (an absolute one as it is)
        return read_configured(Path(request.config.rootpath, os.fspath(given)), os.environ) if given else None
    except MockmcpError as error:
        _problem(request, f"@pytest.mark.mockmcp(config={given!r}): {error.render()}")
        return None


def _target(test: Target, name: Any, command: Any) -> Target:
    """One server of a test that talks to several: its own cassette, in a folder named after the test's."""
    return test._replace(cassette=naming.server_cassette(test.cassette, name), server=server_command(command))


def _harness(
    request: pytest.FixtureRequest, target: Target, options: tuple[RecordOptions, ReplayOptions], env: dict[str, str]
) -> Harness:
    """One mock server of the test, in a folder of its own, once its cassette is claimed and cleared of leftovers;
    `env`, what a host config's entry adds to its environment, is redacted from its recording."""
    nodeid, claimed = request.node.nodeid, request.config.stash[_CLAIMED]
    other = claimed.setdefault(target.cassette, nodeid)
    if other != nodeid and not request.getfixturevalue("mockmcp_settings").get("cassette"):
        _problem(
            request,
            f"{nodeid} and {other} would share the cassette {target.cassette}; give this test its own "
            "with @pytest.mark.mockmcp(cassette=...)",
        )
    notes = [f"mockmcp: {said}" for said in keeping.leftovers(target.cassette)]
    record, replay = options
    record = record._replace(redact_env=tuple(dict.fromkeys([*record.redact_env, *env])))
    workdir = request.getfixturevalue("tmp_path_factory").mktemp("mockmcp")
    mock = Harness(target, record, replay, workdir, {**os.environ, **env})
    if target.legacy and not mock.recording:
        notes.append(
            f"mockmcp: replayed {target.legacy}, this test's cassette under its old name (the one pytest-recording "
            f"gives its own); the next recording of the test moves it to {target.cassette.name}"
        )
    told = story.too_old(mock, request.config.stash[_MAX_AGE], nodeid)
    if told and replay.strict:  # an old cassette: a warning, or with strict a failure of the test
        _problem(request, told)
    elif told:
        notes.append(told)
    for said in notes:
        request.node.warn(pytest.PytestWarning(said))
    return mock


def _finish_recording(request: pytest.FixtureRequest, mock: Harness, privacy: Privacy) -> None:
    """Keep the test's recording as its cassette if the test passed (or --mockmcp-keep-failed), else forget it."""
    fate = _fate(request, mock.sessions() > 0, mock.handed_out)
    told = story.kept(mock, privacy.finish) if fate == "keep" else None
    if fate in ("discard", "unlaunched"):
        keeping.discard(mock.staged)
    if fate == "unlaunched":
        told = (
            f"mockmcp: nothing was recorded into {mock.cassette}: the test took the mock server's command "
            "but never launched it (launch `mockmcp.command` or `mockmcp.stdio_params` as the host's server, or "
            "connect the host to `mockmcp.transport`)"
        )
    if told:
        pytest.fail(told, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test body: fail it with the replay's explanation if the cassette could not serve it."""
    mocks = item.stash.get(_MOCKS, {})
    problems = [problem for mock in mocks.values() if (problem := story.problem_before(mock, item.nodeid))]
    if problems and pairing.vcr_cassette(item) is not None:  # a paired test: the side named, as in its verdict
        problems = [f"the MCP side (mockmcp): {problem.removeprefix('mockmcp: ')}" for problem in problems]
    problem = item.stash.get(_PROBLEM, None) or "\n".join(problems)
    if problem:
        pytest.fail(problem, pytrace=False)  # a failure of the test itself, not an error of its set-up
    failure: Exception | None = None
    try:
        result = yield
    except Exception as error:
        failure = error
    for mock in mocks.values():  # an HTTP mock server writes its report (or saves its recording) when stopped
        mock.stop()
    # Out of the except block: the verdict is the failure, not an error raised while handling the test's own.
    intercepted = item.stash.get(_INTERCEPTION, None)
    verdict = _verdict(item, mocks, intercepted, failure)
    page = _timeline(item, mocks, bool(verdict) or failure is not None, intercepted)
    shown = f"\n\nmockmcp: the session as a timeline: {page}" if page else ""
    if verdict:
        if failure is not None:  # its traceback, down to the test's own line, comes first (pytest_runtest_makereport)
            item.stash[_OWN] = pytest.ExceptionInfo.from_exception(failure)
        pytest.fail(verdict + shown, pytrace=False)
    if failure is not None:
        for mock in mocks.values():  # what each server said: a replay's notes (a cancelled request, a fault played)
            verb = "record" if mock.recording else "replay"
            said = [(f"mockmcp {verb} {pid} stderr", mock.stderr(pid)) for pid in mock.launches()]
            for title, text in [*said, ("mockmcp in process", mock.said.getvalue())]:
                if text:
                    item.add_report_section("call", title, text)
        log = intercepted[0].log if intercepted is not None else None
        if isinstance(log, io.StringIO) and log.getvalue():
            item.add_report_section("call", "mockmcp intercepted", log.getvalue())
        if page:
            item.add_report_section("call", "mockmcp timeline", shown.strip())
        raise failure
    for mock in mocks.values():  # strict failed it above; a test that is not strict is told
        unstarted = None if mock.recording or mock.replay.strict else story.never_started(mock)
        if unstarted:
            item.warn(pytest.PytestWarning(unstarted))
    item.stash[_PASSED] = True
    return result


def _verdict(
    item: pytest.Item, mocks: dict[str, Harness], intercepted: tuple[Interception, Path] | None, failure: Any
) -> str:
    """What the cassettes could not serve; for a test with a VCR cassette too, each side named. When both missed,
    the MCP side's came first: vcrpy's miss raises, and ends the host's run (`failure` holds it)."""
    found = [story.verdict(mock, item.nodeid) for mock in mocks.values() if not mock.recording]
    if intercepted is not None:
        children = [said for said in read_verdicts(intercepted[1]) if not said.startswith(f"process {os.getpid()}:")]
        found.append(story.intercepted(intercepted[0], item.nodeid, children))
    verdict = "\n\n".join(told for told in found if told)
    model = pairing.vcr_miss(failure, item.config.rootpath, item.nodeid) if (mocks or intercepted) else None
    if model is None and not (verdict and pairing.vcr_cassette(item) is not None):
        return verdict
    mcp = f"the MCP side missed (mockmcp): {verdict.removeprefix('mockmcp: ')}" if verdict else ""
    model = f"{'then ' if mcp else ''}the model side missed (its VCR cassette): {model}" if model else ""
    return "\n\n".join(told for told in (mcp, model) if told)


def _timeline(
    item: pytest.Item, mocks: dict[str, Harness], failed: bool, intercepted: tuple[Interception, Path] | None
) -> Path | None:
    """The test's timeline page, when --mockmcp-html asks for one for this test (by default: a failed one)."""
    when = item.config.getoption("--mockmcp-html")
    if not (mocks or intercepted) or when == "none" or (when == "failed" and not failed):
        return None
    try:
        model = item.stash.get(_EXCHANGES, None)
        page = story.write_timeline(mocks, item.nodeid, item.name, item.config.rootpath, intercepted, model)
    except OSError as error:  # the page is an aid: the test's verdict stands without it
        item.warn(pytest.PytestWarning(f"mockmcp: the timeline page could not be written: {error}"))
        return None
    if page is not None:
        item.stash[_PAGE] = page
    return page


_VERDICT_FOLLOWS = "and mockmcp failed the same test:"


def _own_failure_first(own: Any, verdict: Any) -> Any:
    """One report of a test's own failure and its verdict's, as pytest shows a chain of exceptions: the test's
    traceback first, then the verdict, whose message stays the summary line (`own`, `verdict`: each one's
    `repr_failure`: a chain, or with `--tb=native` one traceback)."""
    first = list(getattr(own, "chain", None) or [(own.reprtraceback, own.reprcrash, None)])
    first[-1] = (*first[-1][:2], _VERDICT_FOLLOWS)
    both = type(verdict)([*first, *verdict.chain])
    for section in verdict.sections:
        both.addsection(*section)
    return both


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A verdict's failure shown after the test's own failure, if it had one; with pytest-html: a link to the
    test's timeline page among the extras of its report."""
    report = yield
    own = item.stash.get(_OWN, None)
    if own is not None and report.when == "call" and report.failed and hasattr(report.longrepr, "chain"):
        report.longrepr = _own_failure_first(item.repr_failure(own), report.longrepr)
    page = item.stash.get(_PAGE, None)
    if page is not None and report.when == "call" and item.config.pluginmanager.hasplugin("html"):
        from pytest_html import extras  # type: ignore[import-untyped]  # present: the plugin registered as "html"

        report.extras = [*getattr(report, "extras", []), extras.url(page.as_uri(), name="mockmcp timeline")]
    return report
