"""pytest plugin: a cassette per test, replayed by default, recorded when asked; misses fail the test.

Only hooks and small fixtures, each answering one question; the rules are in `mockmcp.testing`.
Nothing here is autouse: a test that does not ask for the `mockmcp` fixture is untouched.

    def test_reads_a_note(mockmcp):
        async with Client(mockmcp.stdio_params) as client: ...

Options: `--mockmcp-record={none,once,new,all}` (default none), `--mockmcp-server "CMD ARGS"`,
`--mockmcp-strict`, `--mockmcp-keep-failed`. Marker: `@pytest.mark.mockmcp(server=..., cassette=...,
strict=..., ignore=[...])`. Ini: `mockmcp_server`, `mockmcp_cassette_dir`, `mockmcp_ignore`.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mockmcp.plugin.mock_server import MODES, MockServer, cassette_name, server_command

__all__ = [
    "mockmcp",
    "mockmcp_cassette_path",
    "mockmcp_record_mode",
    "mockmcp_server",
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_call",
]

_KEY = pytest.StashKey[MockServer]()
_PASSED = pytest.StashKey[bool]()  # the test body passed, so its recording may be kept


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockmcp", "mockmcp: replay and record MCP sessions")
    group.addoption("--mockmcp-record", choices=MODES, default="none", help="record mode (default: none, never record)")
    group.addoption("--mockmcp-server", default=None, help="the real server to record from, as a command line")
    group.addoption(
        "--mockmcp-strict", action="store_true", help="fail tests that leave recorded interactions unplayed"
    )
    group.addoption("--mockmcp-keep-failed", action="store_true", help="keep recordings of failed tests too")
    parser.addini("mockmcp_server", "the real server to record from, as a command line")
    parser.addini(
        "mockmcp_cassette_dir", "cassette folder, relative to each test file (default: cassettes/<test module>)"
    )
    parser.addini("mockmcp_ignore", "params paths left out of matching", type="linelist")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mockmcp(server=None, cassette=None, strict=False, ignore=()): settings of this test's mock MCP server",
    )


def _marker(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("mockmcp")
    return dict(marker.kwargs) if marker else {}


@pytest.fixture
def mockmcp_record_mode(request: pytest.FixtureRequest) -> str:
    """The record mode of this run."""
    return str(request.config.getoption("--mockmcp-record"))


@pytest.fixture
def mockmcp_server() -> list[str] | str | None:
    """The real server to record from; override this fixture to name it in code."""
    return None


@pytest.fixture
def mockmcp_cassette_path(request: pytest.FixtureRequest) -> Path:
    """This test's cassette: the marker's `cassette`, else `cassettes/<module>/<test name>.yaml` beside the test."""
    test_file = Path(request.node.path)
    folder = request.config.getini("mockmcp_cassette_dir") or str(Path("cassettes") / test_file.stem)
    name = _marker(request).get("cassette") or cassette_name(request.node.name)
    return (test_file.parent / folder / name).resolve()


@pytest.fixture
def mockmcp(
    request: pytest.FixtureRequest,
    mockmcp_record_mode: str,
    mockmcp_server: list[str] | str | None,
    mockmcp_cassette_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[MockServer]:
    """The mock server of this test: `.command`, `.stdio_params` and `.env` for the host to launch."""
    config, marker = request.config, _marker(request)
    server = server_command(
        config.getoption("--mockmcp-server"), marker.get("server"), mockmcp_server, config.getini("mockmcp_server")
    )
    strict = bool(config.getoption("--mockmcp-strict") or marker.get("strict"))
    ignores = [*config.getini("mockmcp_ignore"), *marker.get("ignore", ())]
    mock = MockServer(
        mockmcp_cassette_path, mockmcp_record_mode, server, tmp_path_factory.mktemp("mockmcp"), ignores, strict
    )
    request.node.stash[_KEY] = mock  # a problem found before the test fails it in its call (see below)
    yield mock
    _finish_recording(request, mock)


def _finish_recording(request: pytest.FixtureRequest, mock: MockServer) -> None:
    if not mock.recording:
        return
    if request.node.stash.get(_PASSED, False) or request.config.getoption("--mockmcp-keep-failed"):
        if not mock.keep_recording():
            journal = mock.unfinished_journal()
            if journal is not None:  # the session is in it: never delete it
                pytest.fail(
                    f"mockmcp: the recording of {mock.cassette} was not saved (the recorder's stderr says why); "
                    f"the session is kept in {journal}: `mockmcp recover {journal.with_suffix('')}`",
                    pytrace=False,
                )
            mock.discard_recording()
            pytest.fail(
                f"mockmcp: the recording of {mock.cassette} did not finish (did the host close the server?)",
                pytrace=False,
            )
    else:
        mock.discard_recording()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test body: fail it with the replay's explanation if the cassette could not serve it."""
    mock = item.stash.get(_KEY, None)
    problem = None if mock is None else mock.problem_before(item.nodeid)
    if problem:
        pytest.fail(problem, pytrace=False)  # a failure of the test itself, not an error of its set-up
    try:
        result = yield
    except Exception as error:
        # A miss usually surfaces in the host as an error first; say why the cassette missed.
        verdict = None if mock is None or mock.recording else mock.verdict()
        if verdict:
            pytest.fail(f"{verdict}\n\nThe test failed with: {error!r}", pytrace=False)
        raise
    if mock is not None:
        verdict = None if mock.recording else mock.verdict()
        if verdict:
            pytest.fail(verdict, pytrace=False)
        item.stash[_PASSED] = True
    return result
