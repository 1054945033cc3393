"""Shared helpers: where the cassettes are, and how a test launches `mockmcp replay` (over stdio or HTTP).

Test modules import what they share from here (`from conftest import ...`), never from each other.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import forkserver
import pytest
import sdk1

import mockmcp

if TYPE_CHECKING:
    from chromium import Chromium, Page

ROOT = Path(__file__).resolve().parent.parent
# The suite's subprocesses (hundreds: replays, recorders, servers, pytest runs and the plugin's launches) write
# and read bytecode caches as on an ordinary machine: an environment that turns them off would have each one
# compile all it imports again. This process itself is started already; only its children see the change.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Every process the suite starts imports this checkout's mockmcp, whatever the environment's install points at (a
# copy of this folder, a second clone sharing one virtual environment): children inherit os.environ, so the
# plugin's own launches and the pytest runs inside tests, which never see child_env(), get it too.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
SHIPPED = ROOT / "cassettes"
MOCKMCP = [sys.executable, "-m", "mockmcp"]
# The interpreter for a script that starts as an ordinary SDK server: forked from one that imported the SDK already
# (tests/forkserver.py), where this run started one; the cassettes it records name this command.
SDK_PYTHON = [sys.executable, str(ROOT / "tests" / "forkserver.py"), "run"]
NOTES_COMMAND = [*SDK_PYTHON, str(ROOT / "examples" / "notes_server.py")]


def forked(*args: str) -> str:
    """The shell command (for a shim on PATH) that starts the SDK server `args` (a script, or `-m MODULE`) as
    SDK_PYTHON does: the SDK hands a server a cut-down environment, so the command names the fork server itself."""
    where = f"{forkserver.SOCKET}={shlex.quote(os.environ.get(forkserver.SOCKET, ''))}"
    return f"{where} exec {shlex.join([*SDK_PYTHON, *args])}"


# A host of its own for a command: a shell that starts it and waits, so its parent is a process of its own, as
# when a test suite runs again. A later start by the same host (the parent) records into the cassette its run
# began instead of replaying it (`files.begun_by_this_run`); a test that means "the next run" says so with this.
ANOTHER_HOST = ["sh", "-c", '"$@"; exit $?', "sh"]
sys.path.insert(0, str(ROOT / "examples"))  # the tests' SDK host is examples/sdk_host.py

# What the SDK host sees of examples/notes_server.py in `sdk_host.full_session` (both eras).
NOTES_SESSION = {
    "read": "remember to buy milk",
    "missing": (True, "Error executing tool read_file: no such file: nope.txt"),
    "count": "counted to 2",
    "progress": [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")],
    "delete": "deleted notes.txt",
    "summary": "milk",
    "roots": "file:///home/user/notes",
    "resource": "remember to buy milk",
    "prompt": "Please review this note:\n\nremember to buy milk",
}


def speaks_both(shipped: str, folder: Path) -> Path:
    """A copy in `folder` of a shipped session of the notes server (an SDK 2.x server, which speaks both eras)
    saying so, as its messages cannot (its discovery lists 2026-07-28 alone, its initialize answer one handshake
    revision): `meta.server_eras`."""
    copy = folder / shipped
    copy.write_text(
        (SHIPPED / shipped).read_text().replace("meta:\n", "meta:\n  server_eras: [handshake, stateless]\n", 1)
    )
    return copy


# mockmcp caches parsed cassettes in the user's cache folder; the tests (and every mockmcp they
# start, which inherits the environment) use a folder of their own instead.
_CACHE = tempfile.mkdtemp(prefix="mockmcp-test-cache-")
os.environ["MOCKMCP_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def is_report(data: Any) -> bool:
    """Whether JSON data is a `--report` (a replay's, or `mockmcp exec`'s of a recording or a failed launch)."""
    return isinstance(data, dict) and (
        "strict_ok" in data or ("cassette" in data and ("recorded" in data or "error" in data))
    )


@pytest.fixture(scope="session", autouse=True)
def reports_keep_their_contract(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every report this run's tests wrote (all in its temporary folders) validates against the report's JSON
    Schema (docs/report.md): checked once the tests are done, failing the last one's teardown if one does not."""
    yield
    import jsonschema

    from mockmcp.tools._report_schema import schema

    validator = jsonschema.Draft7Validator(schema())
    wrong = []
    for path in tmp_path_factory.getbasetemp().rglob("*.json"):
        try:
            # regular files only, and not huge: tests leave FIFOs and links to /dev/zero where a cache file was
            found = path.lstat()
            if not stat.S_ISREG(found.st_mode) or found.st_size > 16 << 20:
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue  # not JSON (a test's deliberately broken file), or gone
        error = jsonschema.exceptions.best_match(validator.iter_errors(data)) if is_report(data) else None
        if error is not None:
            wrong.append(f"{path}: {'.'.join(map(str, error.absolute_path)) or 'the report'}: {error.message}")
    assert not wrong, "reports that break their schema:\n" + "\n".join(wrong[:20])


def child_env() -> dict[str, str]:
    """The environment for mockmcp subprocesses: this one, which has the project importable (see PYTHONPATH above)."""
    return dict(os.environ)


class Served:
    """A running `mockmcp replay --http 0`: its process, the URL it printed, where its report goes."""

    def __init__(self, proc: subprocess.Popen[str], url: str, report: Path) -> None:
        self.proc, self.url, self.report = proc, url, report
        self.port = int(url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0
        return json.loads(self.report.read_text())


@contextmanager
def served(
    cassette: Path, tmp_path: Path, *extra: str, preexec_fn: Callable[[], Any] | None = None
) -> Iterator[Served]:
    """Serve a cassette over HTTP on a port the system picks; the URL is read from the first stderr line.

    `preexec_fn` runs in the child before it starts (a resource limit, say)."""
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [*MOCKMCP, "replay", str(cassette), "--http", "0", "--report", str(report), *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=ROOT,
        preexec_fn=preexec_fn,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://\S+/mcp", line)
        if not found:
            proc.kill()
            line += proc.stderr.read()
        assert found, f"the server says where it listens; it said: {line!r}"
        yield Served(proc, found.group(0), report)
    finally:
        proc.kill()
        proc.wait(10)


# --- real SDK servers over Streamable HTTP, and the recording proxy in front of one ----------------


# --- a Streamable HTTP client by hand, which sees the stream each server message comes on -------

HANDSHAKE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "by-hand", "version": "1"},
    },
}


def sse_messages(text: str) -> list[Any]:
    """The JSON messages in the data of an SSE body's events (events without data are left out)."""
    events = (event.splitlines() for event in text.replace("\r\n", "\n").split("\n\n"))
    datas = ("\n".join(line[5:].removeprefix(" ") for line in lines if line.startswith("data:")) for lines in events)
    return [json.loads(data) for data in datas if data]


def streams_seen(url: str, call: dict[str, Any], answer: dict[str, Any], get: bool = True) -> dict[str, Any]:
    """Run `call` in a session of its own (after initialize), with the session's GET stream open first
    when `get`, answering each server request with `answer`, until the call's reply. Returns what came
    on each stream ("get", and "post": the call's), in order: each message's method, or "reply"; and
    the content type of the call's answer ("type": JSON or SSE)."""
    import http.client
    import queue
    import socket
    import threading
    from urllib.parse import urlsplit

    where = urlsplit(url)
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    connections: list[http.client.HTTPConnection] = []

    def send(method: str, body: Any = None) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=20)
        connections.append(connection)
        connection.request(method, where.path, body=None if body is None else json.dumps(body), headers=headers)
        return connection.getresponse()

    def messages(response: http.client.HTTPResponse) -> Iterator[Any]:
        """Each message of a JSON body, or of an SSE stream's events as they come."""
        if not (response.getheader("content-type") or "").startswith("text/event-stream"):
            yield json.loads(response.read())
            return
        event: list[str] = []
        for line in iter(response.readline, b""):
            text = line.decode().rstrip("\r\n")
            if text:
                event.append(text)
                continue
            yield from sse_messages("\n".join(event))
            event = []

    arrivals: queue.Queue[tuple[str, Any]] = queue.Queue()
    readers: list[threading.Thread] = []
    types: dict[str, str | None] = {}

    def read(name: str, opened: Callable[[], http.client.HTTPResponse]) -> None:
        try:
            response = opened()  # a server answering with JSON sends nothing before its reply
            types[name] = response.getheader("content-type")
            if response.status != 200:
                arrivals.put((name, {"status": response.status, "body": response.read().decode()}))
            for message in messages(response):
                arrivals.put((name, message))
        except (OSError, ValueError):  # the stream is closed under it when the call is over
            pass

    try:
        opened = send("POST", HANDSHAKE)
        assert opened.status == 200
        headers["mcp-session-id"] = opened.getheader("mcp-session-id") or ""
        [result] = [m for m in messages(opened) if m.get("id") == 1]
        headers["mcp-protocol-version"] = result["result"]["protocolVersion"]
        assert send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
        streams: list[tuple[str, Callable[[], http.client.HTTPResponse]]] = [("post", lambda: send("POST", call))]
        if get:
            stream = send("GET")  # open before the call is made
            streams.insert(0, ("get", lambda: stream))
        for name, opened in streams:
            readers.append(threading.Thread(target=read, args=(name, opened), daemon=True))
            readers[-1].start()
        seen: dict[str, Any] = {"get": [], "post": []}
        while True:
            name, message = arrivals.get(timeout=20)
            if "method" not in message:  # two streams: no order between them, only within each
                assert message.get("id") == call["id"], message
                seen[name].append("reply")
                return {**seen, "type": types["post"]}
            seen[name].append(message["method"])
            if "id" in message:
                assert send("POST", {"jsonrpc": "2.0", "id": message["id"], **answer}).status == 202
    finally:
        for connection in connections:  # a shutdown wakes a reader blocked on its stream (a close would not)
            if connection.sock is not None:
                try:
                    connection.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for reader in readers:
            reader.join(10)
        for connection in connections:
            connection.close()


def serve_each_connection(listener: socket.socket, serve: Callable[[socket.socket], None]) -> None:
    """A test's stand-in target: every connection `listener` accepts, until it is closed, is served by
    `serve` on a thread of its own."""

    def accept() -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(sock,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def said(process: subprocess.Popen[str], pattern: str, who: str) -> re.Match[str]:
    """The first line of the process's stderr that matches pattern (within 30 s); the rest of its stderr is
    read on, so the pipe never fills."""
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    seen: list[str] = []
    while True:
        line = lines.get(timeout=30)
        assert line is not None, f"{who} exited before saying where it listens:\n" + "".join(seen)
        seen.append(line)
        if found := re.search(pattern, line):
            return found


# --- recording over HTTP ----------------------------------------------------------------------------


@contextmanager
def notes_over_http(script: Path = ROOT / "examples" / "notes_server.py", *options: str) -> Iterator[str]:
    """The example SDK server (or another, with these options) over Streamable HTTP, on a port the
    system picks (never one probed and let go)."""
    server = subprocess.Popen(
        [*SDK_PYTHON, str(script), "--http", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        found = said(server, r"Uvicorn running on (http://\S+)", "the SDK server")  # uvicorn logs where it listens
        yield found.group(1) + "/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture(scope="session")
def http_server() -> Iterator[Callable[..., str]]:
    """`http_server(script, *options)`: the URL of that SDK server over Streamable HTTP (`notes_over_http`,
    by default the example server), started on first use and kept for the worker's later tests: a server
    costs a second or two to start. Only for a server that keeps nothing from one session to the next
    (not tests/servers/attribution.py, whose tools wait on events set once)."""
    urls: dict[tuple[str, ...], str] = {}
    with ExitStack() as running:

        def url(script: Path = ROOT / "examples" / "notes_server.py", *options: str) -> str:
            key = (str(script), *options)
            if key not in urls:
                urls[key] = running.enter_context(notes_over_http(script, *options))
            return urls[key]

        yield url


@contextmanager
def recording_proxy(target: str, out: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`mockmcp record --http-target TARGET` (with these options) into out, and its URL; killed on leaving
    if it is still running (stopping it is the caller's)."""
    proxy = subprocess.Popen(
        [*MOCKMCP, "record", "--record-mode", "rewrite", "-o", str(out), "--http-target", target, *extra],
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=ROOT,
    )
    try:
        assert proxy.stderr is not None
        found = re.search(r"recording (\S+)", proxy.stderr.readline())
        assert found
        yield proxy, found.group(1)
    finally:
        proxy.kill()
        proxy.wait(10)


@contextmanager
def recording(target: str, out: Path, *extra: str) -> Iterator[str]:
    """`recording_proxy`, whose URL it yields; on leaving, SIGTERM stops the proxy, which saves the cassette."""
    with recording_proxy(target, out, *extra) as (proxy, url):
        yield url
        proxy.send_signal(signal.SIGTERM)
        _out, err = proxy.communicate(timeout=30)
        assert proxy.returncode == 0, err


# Each release's tests go to one pytest-xdist worker (--dist loadgroup): the one that builds its environment.
@pytest.fixture(
    scope="session", params=[pytest.param(v, marks=pytest.mark.xdist_group(f"sdk1-{v}")) for v in sdk1.VERSIONS]
)
def sdk1_env(request: pytest.FixtureRequest) -> sdk1.Environment:
    """A virtual environment with the MCP SDK's 1.x line at one of `sdk1.VERSIONS` and this checkout installed
    (`.venvs/mcp-<version>`): built on first use, kept for later runs (tests/sdk1.py)."""
    return sdk1.environment(request.param)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """How long each 1.x environment this run built took (tests/sdk1.py), apart from the tests' own times."""
    lines = sdk1.built_in_run(config.stash[_STARTED])
    if lines:
        terminalreporter.write_sep("-", "environments built")
        for line in lines:
            terminalreporter.write_line(line)


_STARTED = pytest.StashKey[float]()


def _start_forkserver() -> None:
    """Start tests/forkserver.py (it is not waited for: a launcher it does not answer yet runs on its own) and have
    every process of the run find it; stopped, by its pid, when this process ends."""
    folder = tempfile.mkdtemp(prefix="mockmcp-forkserver-")
    path = os.path.join(folder, "socket")
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "forkserver.py"), "serve", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.environ[forkserver.SOCKET] = path

    def stop() -> None:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a run whose process has another copy's package (a copy of the checkout run with the `pytest` its
    environment's editable install wrote): every test would test that one. Note when the run started. Start the
    fork server of the SDK's servers for this run and the runs inside it (not for the in-memory tests alone)."""
    config.stash[_STARTED] = time.time()
    if forkserver.SOCKET not in os.environ and config.option.markexpr != "fast" and hasattr(socket, "AF_UNIX"):
        _start_forkserver()
    if not (ROOT / "mockmcp").samefile(Path(mockmcp.__file__).parent):
        raise pytest.UsageError(
            f"this run imports mockmcp from {Path(mockmcp.__file__).parent}, not from {ROOT / 'mockmcp'}: "
            f"run `python -m pytest` in {ROOT}, or `pip install -e .` there"
        )


@pytest.hookimpl(wrapper=True, optionalhook=True)  # optional: a run without pytest-xdist never calls it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """`-n auto` starts one worker more than pytest-xdist would (one per core): a test here spends
    about a quarter of its time waiting (on a server starting, a recorded delay, a grace period),
    time in which another worker can use the core. PYTEST_XDIST_AUTO_NUM_WORKERS, when set, is
    taken as it is."""
    workers = yield
    return workers if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else workers + 1


# The developer's fast loop (`python -m pytest -m fast`): the modules whose tests run in memory (tables of the
# pure rules, the engine, the endpoint, the shells' parts), no subprocess, no server, no browser.
FAST = frozenset(
    {
        "test_answers", "test_attribution", "test_batch", "test_branching", "test_contract", "test_emulation",
        "test_endpoint", "test_eras", "test_eras_translation", "test_exchange", "test_http_endpoint", "test_http_loop",
        "test_http_sockets", "test_http_upstream",
        "test_jsonrpc", "test_live", "test_matching", "test_merge", "test_namedtuple", "test_ordering",
        "test_protocol", "test_public_api", "test_recorder", "test_replay_engine", "test_report_schema",
        "test_rules", "test_schedule", "test_scripted", "test_selection", "test_send_facts", "test_sse_endpoint",
        "test_stream_state", "test_structure", "test_substitute", "test_words",
        "test_wrap",
    }
)  # fmt: skip


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`-m fast` reads only the fast loop's modules: importing the others (the SDK, fastmcp) costs seconds."""
    name = collection_path.name
    if config.option.markexpr == "fast" and name.startswith("test_") and name.endswith(".py"):
        return collection_path.stem not in FAST or None
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first: pytest-xdist hands tests out in collection order, so a slow one collected
    last would keep one worker busy alone at the end of the run. The fast loop's modules are marked."""
    for item in items:
        if item.module is not None and item.module.__name__ in FAST:
            item.add_marker(pytest.mark.fast)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    _keep_xdist_groups(config, items)


def _keep_xdist_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` (pyproject.toml) gives all the tests of an `xdist_group` to one worker: the
    scheduler reads the group from a suffix `@group` that pytest-xdist's workers add to the node ids they
    collect. From pytest 9.2 on, a node id is read from a structured id that xdist 3.8 does not change
    (pytest-dev/pytest-xdist#1386), so the groups were ignored without a word, and both workers recorded
    a module's shared sessions. Where the suffix is missing, it is added here as xdist means to; on a
    pytest or an xdist where xdist's own suffix takes, this does nothing."""
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers only
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")) for mark in marks})
        suffix = "@" + "_".join(names)
        structured = getattr(item, "_id", None)
        if names and not item.nodeid.endswith(suffix) and hasattr(structured, "parse"):
            item._id = type(structured).parse(item.nodeid + suffix)


@pytest.fixture(scope="session")
def browser() -> Iterator[Chromium]:
    """The system's Chromium, headless, one for the run: the tests that use it share the xdist group `chromium`."""
    from chromium import Chromium, find  # here: it needs fcntl, which the portable run's interpreter lacks

    executable = find()
    if executable is None:
        pytest.skip("no Chromium on this machine: `apt-get install chromium` (.ci/run installs it when it can)")
    chromium = Chromium(executable)
    try:
        yield chromium
    finally:
        chromium.close()  # the browser and its helpers, by the process group it was started in


@pytest.fixture
def tab(browser: Chromium) -> Iterator[Page]:
    """A new tab of 1280x800, closed after the test."""
    page = browser.page(1280, 800)
    yield page
    page.close()
