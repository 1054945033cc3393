"""`mockmcp replay` over a real pipe: bad input of every kind, stdout purity, EOF, --strict, --report, signals."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MOCKMCP, ROOT, SHIPPED, child_env

NOTES = str(SHIPPED / "notes.yaml")
GOOD = b'{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.txt"}}}'  # noqa: E501 (a literal message, as on the wire)


def run(lines: list[bytes], *args: str, timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    data = b"".join(line + b"\n" for line in lines)
    return subprocess.run(
        [*MOCKMCP, "replay", *args], input=data, capture_output=True, timeout=timeout, env=child_env(), cwd=ROOT
    )


def answers(proc: subprocess.CompletedProcess[bytes]) -> list[Any]:
    """Every stdout line must be one JSON value: nothing but protocol ever reaches stdout."""
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


BAD_INPUT = [
    # (what the host sends, what mockmcp must answer: None for nothing)
    (b"this is not json", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"', {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}),
    (b"\xff\xfe not utf-8", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}),
    (b"42", {"jsonrpc": "2.0", "id": None, "error": {"code": -32600}}),
    (b'{"id":7,"method":"tools/list"}', {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600}}),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', {"jsonrpc": "2.0", "id": None, "error": {"code": -32600}}),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', {"jsonrpc": "2.0", "id": None, "error": {"code": -32600}}),
    (b'{"jsonrpc":"2.0","id":8,"method":3}', {"jsonrpc": "2.0", "id": 8, "error": {"code": -32600}}),
    (b'{"jsonrpc":"2.0","id":9}', {"jsonrpc": "2.0", "id": 9, "error": {"code": -32600}}),
    (b"[]", {"jsonrpc": "2.0", "id": None, "error": {"code": -32600}}),
    (b'{"jsonrpc":"2.0","method":"notifications/unknown"}', None),
    (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None),
    (b'{"jsonrpc":"2.0","id":99,"result":{}}', None),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/nope"}', {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601}}),
    (b'{"jsonrpc":"2.0","id":"x","method":"tools/cal"}', {"jsonrpc": "2.0", "id": "x", "error": {"code": -32099}}),
]


@pytest.mark.parametrize(("line", "expected"), BAD_INPUT)
def test_each_bad_input_is_answered_per_json_rpc_and_the_server_goes_on(line: bytes, expected: Any) -> None:
    proc = run([line, GOOD], NOTES)
    got = answers(proc)
    assert proc.returncode == 0, proc.stderr
    if expected is None:
        assert len(got) == 1, got
    else:
        assert len(got) == 2, got
        assert got[0]["id"] == expected["id"] and got[0]["error"]["code"] == expected["error"]["code"], got
        assert isinstance(got[0]["error"]["message"], str)
        assert proc.stderr, "every answered bad input is also explained on stderr"
    last = got[-1]
    assert last["id"] == "after" and last["result"]["content"][0]["text"] == "remember to buy milk"


def test_a_batch_is_answered_as_a_batch() -> None:
    batch = (
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"},'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes.txt"}}},'
        b'{"bad":true}]'
    )
    got = answers(run([batch, GOOD], NOTES))
    assert isinstance(got[0], list)
    assert [(r["id"], "result" in r) for r in got[0]] == [(1, True), (2, True), (None, False)]
    assert got[0][2]["error"]["code"] == -32600
    assert got[1]["id"] == "after"


def test_eof_prints_a_summary_on_stderr_and_writes_the_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = run(
        [
            GOOD,
            GOOD,
            b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"x"}}}',
        ],
        NOTES,
        "--report",
        str(report),
    )
    assert proc.returncode == 0
    stderr = proc.stderr.decode()
    assert "played 1 of 6 interactions; 1 missed, 1 repeated, 5 unplayed" in stderr
    assert "closest recorded requests" in stderr and "how to fix" in stderr
    data = json.loads(report.read_text())
    assert data["played"] == 1 and data["interactions"] == 6
    assert data["misses"][0]["code"] == -32099 and data["misses"][0]["closest"][0]["interaction"] in (3, 4)
    assert data["repeats"] == [{"interaction": 3, "method": "tools/call", "extra": 1}]
    assert not list(tmp_path.glob(".mockmcp-*")), "no temporary file is left behind"


def test_strict_fails_on_misses_or_unplayed_interactions(tmp_path: Path) -> None:
    assert run([GOOD], NOTES, "--strict").returncode == 1
    session = [
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        GOOD,
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"missing.txt"}}}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/cal","params":{"name":"read_file","arguments":{"path":"notes.txt"}}}',
    ]
    proc = run(session, NOTES, "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "protocol version '2025-06-18'" in proc.stderr.decode()  # a different version is noted
    assert [a["id"] for a in answers(proc)] == [0, 1, "after", 2, 3]


def test_a_bad_cassette_is_reported_with_file_line_place_and_fix(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\ninteractions:\n- request: {method: tools/list}\n  respnse: {result: {}}\n")
    proc = run([], str(broken))
    assert proc.returncode == 2 and proc.stdout == b""
    stderr = proc.stderr.decode()
    assert f"{broken}:4: interactions[0].respnse: unknown key 'respnse'" in stderr
    assert "how to fix: did you mean `response`? use one of:" in stderr


def test_a_signal_ends_the_session_with_a_summary(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [*MOCKMCP, "replay", NOTES, "--report", str(report)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=ROOT,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(GOOD + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == "after"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM  # the Unix status of a signal, as record has it
    assert b"stopped by a signal" in err and b"played 1 of 6" in err
    assert json.loads(report.read_text())["played"] == 1


def test_a_bad_option_value_says_how_to_fix_it() -> None:
    proc = run([], NOTES, "--timing", "fast")
    assert proc.returncode == 2 and b"'--timing': 'fast' is neither none, recorded nor a factor" in proc.stderr
    proc = run([], NOTES, "--ignore", "a[")
    assert proc.returncode == 2 and b"cannot read the params path" in proc.stderr


BIG = 5_000_000
BIG_CALL = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big"}}\n'


def big_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "big.yaml"
    path.write_text(
        "version: 1\ninteractions:\n- request: {method: tools/call, params: {name: big}}\n"
        f"  response: {{result: {{content: [{{type: text, text: {'x' * BIG}}}]}}}}\n"
    )
    return path


def start_replay(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*MOCKMCP, "replay", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=ROOT,
        bufsize=0,
    )


def test_sigterm_during_a_large_answer_finishes_that_line_then_exits_143(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = start_replay(str(big_cassette(tmp_path)), "--report", str(report))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(BIG_CALL)
        got = proc.stdout.read(1 << 16)  # the answer has begun; most of it cannot fit in the pipe yet
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert proc.poll() is None, "replay stops only once the line it is writing is written"
        while chunk := proc.stdout.read(1 << 16):  # a host that reads slowly
            got += chunk
            time.sleep(0.001)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert got.endswith(b"\n") and got.count(b"\n") == 1, "whole JSON lines only"
    answer = json.loads(got)
    assert answer["id"] == 7 and len(answer["result"]["content"][0]["text"]) == BIG
    assert b"stopped by a signal" in err and b"played 1 of 1" in err
    assert json.loads(report.read_text())["played"] == 1


def test_sigint_ends_the_session_with_130_and_the_summary(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = start_replay(NOTES, "--report", str(report))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(GOOD + b"\n")
        assert json.loads(proc.stdout.readline())["id"] == "after"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert out == b"" and b"Traceback" not in err and b"played 1 of 6" in err
    assert json.loads(report.read_text())["played"] == 1


def test_a_replay_whose_host_stopped_reading_ends_after_a_signal_and_still_writes_its_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = start_replay(str(big_cassette(tmp_path)), "--report", str(report))
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(BIG_CALL)
        assert proc.stdout.read(1) == b"{"  # the answer has begun; from now on nobody reads it
        time.sleep(0.3)
        for _ in range(3):
            proc.send_signal(signal.SIGTERM)  # more signals change nothing
            time.sleep(0.1)
        assert proc.poll() is None, "the signal waits for the line being written"
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM  # the host took nothing for PATIENCE seconds
        err = proc.stderr.read()
    finally:
        proc.kill()
        proc.wait(10)
    assert b"the host took nothing for 2s after the signal" in err
    assert json.loads(report.read_text())["played"] == 1


def test_a_signal_storm_never_tears_a_line_and_the_report_is_always_written(tmp_path: Path) -> None:
    """Pipelined large answers, a host that reads slowly, and SIGTERM after SIGTERM while it reads."""
    report = tmp_path / "report.json"
    proc = start_replay(str(big_cassette(tmp_path)), "--report", str(report))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(BIG_CALL * 3)
        got = proc.stdout.read(1 << 16)
        for _ in range(30):
            proc.send_signal(signal.SIGTERM)
            got += proc.stdout.read(1 << 16)
        while chunk := proc.stdout.read(1 << 16):
            got += chunk
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 128 + signal.SIGTERM, err
    lines = got.split(b"\n")
    assert lines[-1] == b"" and len(lines) >= 2, "whole JSON lines only"
    assert all(json.loads(line)["id"] == 7 for line in lines[:-1])
    assert json.loads(report.read_text())["played"] >= 1


def test_closing_stdin_then_sigterm_as_a_host_ends_a_server_leaves_the_report(tmp_path: Path) -> None:
    """The SDK's way to end a server: close stdin, wait, SIGTERM. Replay is still to send a delayed reply."""
    report = tmp_path / "report.json"
    slow = tmp_path / "slow.yaml"
    slow.write_text(
        "version: 1\ninteractions:\n- request: {method: tools/call, params: {name: big}}\n"
        "  response: {result: {content: []}}\n  delay: 30\n"
    )
    proc = start_replay(str(slow), "--report", str(report))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        assert json.loads(proc.stdout.readline())["id"] == 1  # replay is serving: its signals are caught
        proc.stdin.write(BIG_CALL + b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        # The ping is answered at once, the call after its delay: a ping's answer says the call was read.
        assert json.loads(proc.stdout.readline())["id"] == 2
        proc.stdin.close()  # replay now waits to send the delayed reply, then would end
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait(10)
    assert json.loads(report.read_text())["played"] == 1
