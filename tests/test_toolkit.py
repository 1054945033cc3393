"""The shell toolkit against real pipes, processes and signals: lines, writes, signals, stopping a child."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT

from mockmcp.cassette import store
from mockmcp.record._live import drive
from mockmcp.stdio import processes, toolkit
from mockmcp.stdio.processes import stop_child
from mockmcp.stdio.spool import Spool
from mockmcp.stdio.toolkit import LineSplitter, write_all

SCRIPTED = [sys.executable, str(ROOT / "tests" / "servers" / "scripted.py")]

# --- LineSplitter -------------------------------------------------------------------------------

SPLITS = [
    # (chunks as they arrive, the lines fed back chunk by chunk, what rest() gives at EOF)
    ([b"a\nb\n"], [[b"a", b"b"]], b""),
    ([b"ab", b"c\n"], [[], [b"abc"]], b""),
    ([b"a", b"b", b"c", b"\nd"], [[], [], [], [b"abc"]], b"d"),
    ([b"\n\n", b"x\n"], [[b"", b""], [b"x"]], b""),
    ([b"a\n", b"", b"\n"], [[b"a"], [], [b""]], b""),
    ([b"no newline at all"], [[]], b"no newline at all"),
    ([b"one\ntwo", b"\nthree"], [[b"one"], [b"two"]], b"three"),
    ([b"x" * 5, b"\n", b"y\n"], [[], [b"xxxxx"], [b"y"]], b""),
    ([], [], b""),
]


@pytest.mark.parametrize(("chunks", "fed", "rest"), SPLITS)
def test_line_splitter_on_chunk_boundaries(chunks: list[bytes], fed: list[list[bytes]], rest: bytes) -> None:
    splitter = LineSplitter()
    assert [splitter.feed(chunk) for chunk in chunks] == fed
    assert splitter.rest() == rest
    assert splitter.rest() == b"", "rest() empties the splitter"


def test_a_20_mb_line_in_64_kib_chunks_is_kept_as_its_pieces_and_joined_once() -> None:
    """Linear, by structure: no chunk is copied until the newline comes, and then each is copied once."""
    chunk_size, total = 1 << 16, 20 << 20
    chunks = [bytes([65 + n % 26]) * chunk_size for n in range(total // chunk_size)]
    splitter = LineSplitter()
    for chunk in chunks:
        assert splitter.feed(chunk) == []
    # Every piece is held as the very object that came in: nothing was concatenated on the way.
    held = splitter._parts
    assert len(held) == len(chunks) and all(a is b for a, b in zip(held, chunks, strict=True))
    (line,) = splitter.feed(b"\nnext")
    assert len(line) == total and line == b"".join(chunks)
    assert splitter.rest() == b"next"


@pytest.mark.parametrize("chunk_size", [1, 3, 7, 100])
def test_with_a_limit_a_long_line_keeps_only_its_first_bytes(chunk_size: int) -> None:
    stream = b"short\n" + b"x" * 50 + b"\nok\n" + b"y" * 30
    splitter = LineSplitter(limit=10)
    lines = [line for at in range(0, len(stream), chunk_size) for line in splitter.feed(stream[at : at + chunk_size])]
    assert lines == [b"short", b"x" * 11, b"ok"]
    assert splitter.rest() == b"y" * 11
    assert splitter._size == 0


# --- write_all --------------------------------------------------------------------------------

SLOW_READER = textwrap.dedent(
    """
    import hashlib, os, sys, time
    digest, size = hashlib.sha256(), 0
    while True:
        data = os.read(0, 4096)
        if not data:
            break
        digest.update(data)
        size += len(data)
        time.sleep(0.0005)
    print(size, digest.hexdigest())
    """
)


def test_write_all_gets_everything_through_a_pipe_to_a_slow_reader() -> None:
    data = os.urandom(3 << 20)  # far more than a pipe holds, so the writes are partial
    reader = subprocess.Popen([sys.executable, "-c", SLOW_READER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    watchdog = threading.Timer(60, reader.kill)  # the timeout: a stuck write ends with the reader killed
    watchdog.start()
    try:
        assert reader.stdin is not None
        write_all(reader.stdin.fileno(), data)
        reader.stdin.close()
        assert reader.stdout is not None
        out = reader.stdout.read()
        reader.wait(60)
    finally:
        watchdog.cancel()
        reader.kill()
        reader.wait(10)
    assert out.split() == [str(len(data)).encode(), hashlib.sha256(data).hexdigest().encode()]


def test_write_all_raises_when_the_reader_is_gone() -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        with pytest.raises(BrokenPipeError):
            write_all(write, b"x" * 100_000)
    finally:
        os.close(write)


# --- stop_child and wait_exit -----------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import signal, sys, time
    if "term" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("ready", flush=True)
    sys.stdin.read()
    if "eof" in sys.argv or "term" in sys.argv:
        time.sleep(60)
    """
)


def start_child(*stubborn: str) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, *stubborn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
    )
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"  # its handlers are in place
    return child


@pytest.fixture(params=["pidfd", "waiting-thread"])
def exit_fd(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """stop_child and wait_exit as on Linux (a pidfd) and as elsewhere (a thread that waits for the child)."""
    if request.param == "pidfd":
        if not hasattr(os, "pidfd_open"):
            pytest.skip("no pidfd on this platform")
    else:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    return str(request.param)


@pytest.mark.parametrize(
    ("stubborn", "ended"),
    [((), "exited"), (("eof",), "terminated"), (("term",), "killed")],
    ids=["exits-at-eof", "ignores-eof", "ignores-sigterm-too"],
)
def test_stop_child_escalates_a_grace_period_apart(exit_fd: str, stubborn: tuple[str, ...], ended: str) -> None:
    child = start_child(*stubborn)
    try:
        start = time.monotonic()
        assert stop_child(child, grace=0.4) == ended
        took = time.monotonic() - start
    finally:
        child.kill()
        child.wait(10)
    assert child.returncode is not None
    steps = {"exited": 0, "terminated": 1, "killed": 2}[ended]
    # Each step waits no longer than its grace period, and a step that works ends the wait at once.
    assert 0.4 * steps <= took < 0.4 * steps + 3, took


def test_ended_names_what_stop_child_returns() -> None:
    from typing import Literal, get_args

    assert processes.Ended == Literal["exited", "terminated", "killed"]
    assert get_args(processes.Ended) == ("exited", "terminated", "killed")


def test_wait_exit_returns_when_woken_and_when_the_child_exits(exit_fd: str) -> None:
    script = textwrap.dedent(
        f"""
        import sys, threading, time
        sys.path.insert(0, {str(ROOT)!r})
        from mockmcp.stdio.processes import wait_exit
        from mockmcp.stdio.toolkit import Signals
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
        with Signals() as signals:
            threading.Timer(0.2, signals.wake).start()
            start = time.monotonic()
            woken, took = wait_exit(child, 30, signals), time.monotonic() - start
            print("woken", woken, 0.15 < took < 10)
            child.stdin.close()
            print("exited", wait_exit(child, 30, signals), child.returncode)
        """
    )
    if exit_fd != "pidfd":  # the process under test must take the fallback too
        script = "import os\nvars(os).pop('pidfd_open', None)\n" + script
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["woken False True", "exited True 0"]


# --- Signals --------------------------------------------------------------------------------------

SIGNALS = textwrap.dedent(
    """
    import os, signal, sys, threading
    sys.path.insert(0, ROOT)
    from mockmcp.stdio.toolkit import Signals, wait_readable
    relayed = []
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with Signals(relay=relayed.append) as signals:
        # Sent from another thread while the main thread sleeps in poll(): the wakeup descriptor wakes it.
        threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM)).start()
        ready = wait_readable([signals.fileno()], 30)
        print(bool(ready), signals.received, relayed)
        os.kill(os.getpid(), signal.SIGINT)  # a second one is recorded as well (no `insist`)
        print(signals.received, relayed)
    print((signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before, signal.set_wakeup_fd(-1))
    """
)


def test_signals_set_a_flag_wake_the_poller_relay_and_restore() -> None:
    script = f"ROOT = {str(ROOT)!r}\n" + SIGNALS
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True 15 [15]", "2 [15, 2]", "True -1"]


OUTLET = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    sys.path.insert(0, ROOT)
    from mockmcp.stdio.toolkit import Outlet, Signals
    read, write = os.pipe()
    data = b"x" * 1_000_000
    got = bytearray()

    def reader(pause):
        time.sleep(pause)  # the pipe is full meanwhile, and signals come
        while len(got) < READ:
            got.extend(os.read(read, 65536))
            time.sleep(0.001)  # a slow reader, but one that makes progress

    with Signals() as signals:
        thread = threading.Thread(target=reader, args=(0.3,), daemon=True)
        thread.start()
        for _ in range(20):  # a storm, while the write waits for room
            threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGTERM)).start()
        outlet = Outlet(write, signals, PATIENCE, threaded=THREADED)
        whole = outlet.put(data)
        assert outlet.failed is None
        if whole:
            thread.join(20)
        print(whole, signals.received, bytes(got) == data if whole else "-", flush=True)
    """
)


def select_takes_pipes() -> bool:
    read, write = os.pipe()
    try:
        return toolkit.selectable(read)
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize("threaded", [False, True], ids=["select", "writer-thread"])
@pytest.mark.parametrize(
    ("read", "patience", "expected"),
    [(1_000_000, 5.0, "True 15 True"), (100_000, 0.5, "False 15 -")],
    ids=["a-slow-reader-gets-every-byte", "a-reader-that-stops-is-given-up-on"],
)
def test_an_outlet_put_finishes_through_a_signal_storm_and_gives_up_only_on_a_reader_that_stopped(
    read: int, patience: float, expected: str, threaded: bool
) -> None:
    """Both ways of writing: waiting for room with select (POSIX), a writer thread (where select takes only sockets)."""
    if not threaded and not select_takes_pipes():
        pytest.skip("select cannot wait on a pipe here (as on Windows)")
    script = f"ROOT = {str(ROOT)!r}\nREAD = {read}\nPATIENCE = {patience}\nTHREADED = {threaded}\n" + OUTLET
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == expected, proc.stdout


@pytest.mark.parametrize("threaded", [False, True], ids=["select", "reader-thread"])
def test_an_inlet_gives_every_chunk_in_order_then_eof(threaded: bool) -> None:
    if not threaded and not select_takes_pipes():
        pytest.skip("select cannot wait on a pipe here (as on Windows)")
    read, write = os.pipe()
    sent = [bytes([65 + n]) * (n * 1000 + 1) for n in range(20)]

    def send() -> None:
        for data in sent:
            write_all(write, data)
        os.close(write)

    got = b""
    with toolkit.Signals() as signals:
        inlet = toolkit.Inlet(read, signals, threaded=threaded)
        assert inlet.fds == ([] if threaded else [read])
        threading.Thread(target=send, daemon=True).start()
        while not got.endswith(b"<eof>"):
            ready = toolkit.wait_readable([signals.fileno(), *inlet.fds], 10)
            assert ready, "neither the inlet's descriptor nor its thread's wake-up came"
            signals.drain()
            got += b"".join(chunk or b"<eof>" for chunk in inlet.take(ready))
    os.close(read)
    assert got == b"".join(sent) + b"<eof>"


def test_signals_outside_the_main_thread_install_nothing() -> None:
    seen: list[object] = []

    def body() -> None:
        with toolkit.Signals() as signals:
            signals.wake()
            seen.append(toolkit.wait_readable([signals.fileno()], 5) == [signals.fileno()])

    before = signal.getsignal(signal.SIGTERM)
    worker = threading.Thread(target=body)
    worker.start()
    worker.join(10)
    assert seen == [True] and signal.getsignal(signal.SIGTERM) == before


# --- the shells that use it --------------------------------------------------------------------

CASSETTE = """\
version: 1
meta: {era: handshake, protocol_version: '2025-06-18'}
interactions:
- request:
    method: initialize
    params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: t, version: '1'}}
  response:
    result: {protocolVersion: '2025-06-18', capabilities: {}, serverInfo: {name: scripted, version: '1'}}
- request:
    method: tools/call
    params: {name: echo, arguments: {x: 1}}
  response:
    result: {content: [], echo: {name: echo, arguments: {x: 1}}}
"""


def test_verify_ends_against_a_server_that_ignores_eof_and_sigterm(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CASSETTE)
    start = time.monotonic()
    live = drive(store.load(str(path)), [*SCRIPTED, "--ignore-eof", "--ignore-term"], timeout=10, grace=0.3)
    assert time.monotonic() - start < 10
    assert [i.method for i in live.interactions[:2]] == ["initialize", "tools/call"]
    assert live.interactions[1].response == {"result": {"echo": {"name": "echo", "arguments": {"x": 1}}, "content": []}}
    # What it sent after the EOF, before SIGKILL, is kept too.
    assert (
        live.interactions[-1].kind == "server" and live.interactions[-1].server[0].message["params"]["data"] == "late"
    )


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="no file-size limit signal here")
def test_signals_ignore_sigxfsz_so_a_file_size_limit_is_an_error_not_death() -> None:
    before = signal.getsignal(signal.SIGXFSZ)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # as an embedding might have it
    try:
        with toolkit.Signals():
            assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGXFSZ, before)


def test_a_spool_never_blocks_its_caller_on_an_unread_pipe_and_says_how_much_it_dropped() -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    spool = Spool(stream, limit=10_000)
    try:
        started = time.monotonic()
        for n in range(5_000):  # ~140 KB: more than the pipe and the limit hold together
            spool.say(f"mockmcp: note {n:05d} of a session nobody reads")
        assert time.monotonic() - started < 5  # loose: a blocking write would wait for ever
        said = b""
        os.set_blocking(read_end, False)
        deadline = time.monotonic() + 10
        while b"note 04999" not in said and time.monotonic() < deadline:
            spool.say("mockmcp: note 04999 of a session nobody reads")  # once the reader came, it goes
            time.sleep(0.01)
            with contextlib.suppress(BlockingIOError):
                said += os.read(read_end, 1 << 20)
        lines = said.decode().splitlines()
        assert lines[0] == "mockmcp: note 00000 of a session nobody reads"  # in order, from the first
        assert any(re.fullmatch(r"mockmcp: \d+ note\(s\) dropped here: stderr was not being read", x) for x in lines)
    finally:
        os.close(read_end)
        stream.close()
