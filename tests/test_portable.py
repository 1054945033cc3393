"""Replay, record and the pytest plugin where Python has no `select.poll`, `fcntl`, `termios` or pidfd, and `select`
takes sockets only (Windows): the stdio tests that matter most, run again in an interpreter without them.

`tests/windows_like/sitecustomize.py` takes them away in every process the inner run starts (the environment
passes it on): its pytest, the replays and recorders, the SDK hosts (the SDK's servers, whose paths are not
mockmcp's, start forked as everywhere in the suite: conftest.SDK_PYTHON). First a probe checks that
mockmcp then takes its portable paths (threads for the pipes, a socket pair for signals), so a pass cannot
come from the POSIX paths by accident.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, child_env

WINDOWS_LIKE = ROOT / "tests" / "windows_like"

# A shipped cassette replayed to the SDK host; recordings through the proxy (bytes, the SDK's session, a journal
# the recorder was killed over, a server that ignores EOF and SIGTERM); signals during a session; EOF; the plugin
# replaying, and recording twice (a failed test's recording dropped, then kept when asked). One case of each path:
# the other cases of a parametrized test vary the server, not the path mockmcp takes.
SELECTED = [
    "tests/test_e2e_sdk.py::test_shipped_classic_session",
    "tests/test_record_sdk.py::test_recorded_session_equals_direct_and_replays_the_same[auto]",
    "tests/test_record.py::test_bytes_pass_unchanged_both_ways_and_replay_reproduces_them",
    "tests/test_record.py::test_sigterm_to_the_recorder_is_passed_on_and_the_session_saved",
    "tests/test_record.py::test_a_server_that_ignores_eof_cannot_hang_the_recorder[ignores-sigterm-too]",
    "tests/test_record.py::test_kill_9_loses_nothing_completed_and_recover_rebuilds_the_cassette",
    "tests/test_record.py::test_after_a_half_close_the_servers_whole_answer_is_forwarded_and_recorded",
    "tests/test_stdio.py::test_eof_prints_a_summary_on_stderr_and_writes_the_report",
    "tests/test_stdio.py::test_a_signal_ends_the_session_with_a_summary",
    "tests/test_stdio.py::test_sigterm_during_a_large_answer_finishes_that_line_then_exits_143",
    "tests/test_stdio.py::test_a_replay_whose_host_stopped_reading_ends_after_a_signal_and_still_writes_its_report",
    "tests/test_stdio.py::test_closing_stdin_then_sigterm_as_a_host_ends_a_server_leaves_the_report",
    "tests/test_replay_eof.py",
    "tests/test_toolkit.py",
    "tests/test_pytest_plugin.py::test_replay_passes_with_a_recorded_cassette",
    "tests/test_pytest_plugin.py::test_a_failed_test_does_not_overwrite_a_good_cassette",
]

PROBE = """
import select
from mockmcp.stdio import processes, toolkit
with toolkit.Signals() as signals:
    print(hasattr(select, "poll"), signals._pipe is None, toolkit.Inlet(0, signals).fds,
          toolkit.Outlet(1, signals, 1.0).threaded, toolkit.unread_counter(1), processes.lock_file(0, wait=False))
"""


def windows_like_env() -> dict[str, str]:
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(WINDOWS_LIKE), env.get("PYTHONPATH"))))
    return env


def test_the_windows_like_interpreter_sends_mockmcp_down_its_portable_paths() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        timeout=30,
        env=windows_like_env(),
        cwd=ROOT,
    )
    assert probe.returncode == 0, probe.stderr
    # No poll; a socket pair; threads for the pipes; no ioctl to count what stdout holds (a pipe here); no flock.
    assert probe.stdout.strip() == "False True [] True None True"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_stdio_tests_pass_without_poll_fcntl_termios_or_pidfd() -> None:
    options = ["-q", "-rs", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider"]
    inner = [sys.executable, "-m", "pytest", *SELECTED, *options]
    run = subprocess.run(inner, capture_output=True, text=True, timeout=850, env=windows_like_env(), cwd=ROOT)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    lines = run.stdout.strip().splitlines()
    assert re.fullmatch(r"\d+ passed(, \d+ skipped)? in .*", lines[-1]), lines[-1]
    # Skipped only where this interpreter has no POSIX path to take (its portable twin runs beside it).
    skipped = [line.split(": ", 1)[1] for line in lines if line.startswith("SKIPPED")]
    assert set(skipped) <= {"no pidfd on this platform", "select cannot wait on a pipe here (as on Windows)"}, skipped
