"""`mockmcp record` over real pipes: transparency, lifecycle, never losing a session, modes, secrets."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ANOTHER_HOST, MOCKMCP, ROOT, child_env

from mockmcp.cassette import store as cassette

SCRIPTED = [sys.executable, str(ROOT / "tests" / "servers" / "scripted.py")]


def req(rid: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


INIT = req(
    0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
)
CALL = req(1, "tools/call", {"name": "echo", "arguments": {"x": 1}})


def record(
    out: Path,
    *server_args: str,
    mode: str = "rewrite",
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    new_session: bool = False,
    again: bool = False,
) -> subprocess.Popen[bytes]:
    """Start a recorder of the scripted server; `new_session` puts both in a process group of their own; `again`
    starts it from a host of its own (the next run: a recording this run began is not added to)."""
    return subprocess.Popen(
        [
            *(ANOTHER_HOST if again else ()),
            *MOCKMCP,
            "record",
            "-o",
            str(out),
            "--record-mode",
            mode,
            "--grace",
            "0.5",
            *extra,
            "--",
            *SCRIPTED,
            *server_args,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or child_env(),
        cwd=ROOT,
        start_new_session=new_session,
    )


def send_and_read(proc: subprocess.Popen[bytes], lines: list[bytes]) -> list[bytes]:
    """Write lines to a running recorder and read one answer per request among them."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(lines))
    proc.stdin.flush()
    return [proc.stdout.readline() for line in lines if b'"id"' in line]


def run_record(out: Path, lines: list[bytes], *server_args: str, **kw: Any) -> tuple[int, bytes, str]:
    proc = record(out, *server_args, **kw)
    try:
        stdout, stderr = proc.communicate(b"".join(lines), timeout=30)
    finally:
        proc.kill()
    return proc.returncode, stdout, stderr.decode()


def direct(lines: list[bytes], *server_args: str) -> bytes:
    return subprocess.run([*SCRIPTED, *server_args], input=b"".join(lines), capture_output=True, timeout=30).stdout


def parsed(stdout: bytes) -> list[Any]:
    """Each line as JSON, or as its bytes when it is not JSON."""
    out = []
    for line in stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append(line)
    return out


def replay_lines(path: Path, lines: list[bytes]) -> bytes:
    return subprocess.run(
        [*MOCKMCP, "replay", str(path)],
        input=b"".join(lines),
        capture_output=True,
        timeout=30,
        env=child_env(),
        cwd=ROOT,
    ).stdout


def test_bytes_pass_unchanged_both_ways_and_replay_reproduces_them(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    # Odd spacing and key order from the host must reach the server as they are.
    odd = b'{ "method" : "tools/call", "id":2, "jsonrpc":"2.0", "params":{"name":"echo","arguments":{"y":[1, 2]}} }\n'
    lines = [INIT, CALL, odd]
    status, stdout, stderr = run_record(out, lines, "--raw")
    assert status == 0, stderr
    assert stdout == direct(lines, "--raw")
    assert b"a line that is not JSON" in stdout
    recorded = cassette.load(str(out))
    assert recorded.meta["era"] == "handshake" and recorded.meta["protocol_version"] == "2025-06-18"
    assert [i.method for i in recorded.interactions] == ["initialize", "tools/call", "tools/call"]
    assert recorded.interactions[1].server[0].kind == "raw"
    # The replay shows the same messages again (compactly encoded), and the raw line byte for byte.
    assert parsed(replay_lines(out, lines)) == parsed(stdout)
    assert not (tmp_path / "c.yaml.journal").exists()


def test_a_server_that_crashes_mid_call_leaves_a_cassette_that_ends_there_too(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    crash = req(2, "tools/crash", {"_meta": {"progressToken": "t"}})
    proc = record(out, "--crash-on", "tools/crash")
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(INIT + CALL + crash)
        proc.stdin.flush()  # and the host keeps stdin open: the server is the one that ends the session
        proc.wait(timeout=30)
        stderr = proc.communicate(timeout=30)[1].decode()
    finally:
        proc.kill()
    assert proc.returncode == 3, stderr
    assert "the server exited with status 3 (it failed or crashed)" in stderr
    assert "1 request(s) the server never answered, as it exited first, are kept with `exit`" in stderr
    recorded = cassette.load(str(out))
    assert [i.method for i in recorded.interactions] == ["initialize", "tools/call", "tools/crash"]
    crashed = recorded.interactions[2]
    assert crashed.response is None and crashed.server[0].message["method"] == "notifications/progress"
    assert crashed.exit == (3, "before")
    # The replay shows the host the same: answers, then the progress (with the live token), then the
    # end of the session where the request the crash cut off was (not a wait for ever).
    live = req(7, "tools/crash", {"_meta": {"progressToken": "live"}})
    replayed = [json.loads(line) for line in replay_lines(out, [INIT, CALL, live]).splitlines()]
    assert [m.get("id") for m in replayed] == [0, 1, None]
    assert replayed[2]["params"]["progressToken"] == "live"


def test_a_server_that_dies_at_start_leaves_no_cassette_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    typo = [sys.executable, "-m", "notes_servr"]  # a module name mistyped: Python says so and exits 1
    proc = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--grace", "0.5", "--", *typo],
        input=INIT,
        capture_output=True,
        timeout=30,
        env=child_env(),
        cwd=ROOT,
    )
    stderr = proc.stderr.decode()
    assert proc.returncode == 2, stderr
    assert "the server answered none of the 1 request the host sent, so no cassette was written" in stderr
    assert "the server exited with status 1" in stderr
    assert "its stderr ended with:\n  | " in stderr and "No module named notes_servr" in stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no cassette, no journal


def test_sigterm_to_the_recorder_is_passed_on_and_the_session_saved(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    proc = record(out)
    try:
        assert [json.loads(line)["id"] for line in send_and_read(proc, [INIT, CALL])] == [0, 1]
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert [i.method for i in cassette.load(str(out)).interactions] == ["initialize", "tools/call"]
    assert [json.loads(line)["id"] for line in replay_lines(out, [INIT, CALL]).splitlines()] == [0, 1]


@pytest.mark.parametrize(
    "stubborn",
    [["--ignore-eof"], ["--ignore-eof", "--ignore-term"], ["--ignore-eof", "--chatty"]],
    ids=["ignores-eof", "ignores-sigterm-too", "keeps-talking"],
)
def test_a_server_that_ignores_eof_cannot_hang_the_recorder(tmp_path: Path, stubborn: list[str]) -> None:
    out = tmp_path / "c.yaml"
    start = time.monotonic()
    status, stdout, stderr = run_record(out, [INIT, CALL], *stubborn)
    assert time.monotonic() - start < 20
    assert status == 0, stderr
    assert "did not exit within 0.5s" in stderr
    recorded = cassette.load(str(out))
    late = recorded.interactions[2]
    # What the server sent after the host's EOF is recorded too, as an unsolicited message (a talkative
    # server sends more of them: talking does not put off its end).
    assert late.kind == "server" and late.server[0].message["params"]["data"] == "late"
    assert b'"late"' in stdout
    if "--chatty" not in stubborn:
        assert len(recorded.interactions) == 3
    # Replayed, the late message follows the interaction recorded before it.
    replayed = [json.loads(line) for line in replay_lines(out, [INIT, CALL]).splitlines()]
    assert [m.get("id") for m in replayed][:3] == [0, 1, None] and replayed[2]["params"]["data"] == "late"


def test_kill_9_loses_nothing_completed_and_recover_rebuilds_the_cassette(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    # In a run of its own: a later start by the same host would take what the journal holds into the cassette first.
    proc = record(out, new_session=True, again=True)
    try:
        assert [json.loads(line)["id"] for line in send_and_read(proc, [INIT, CALL])] == [0, 1]
        proc.kill()
        proc.wait(timeout=10)
    finally:
        proc.kill()
        # The recorder (and the server, which outlives a recorder killed with -9) are in its host's process group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert not out.exists() and (tmp_path / "c.yaml.journal").exists()
    again = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--record-mode", "rewrite", "--", *SCRIPTED],
        capture_output=True,
        timeout=30,
        env=child_env(),
        input=b"",
    )
    assert again.returncode == 2 and b"mockmcp recover" in again.stderr
    recovered = subprocess.run([*MOCKMCP, "recover", str(out)], capture_output=True, timeout=30, env=child_env())
    assert recovered.returncode == 0, recovered.stderr
    assert [i.method for i in cassette.load(str(out)).interactions] == ["initialize", "tools/call"]
    assert not (tmp_path / "c.yaml.journal").exists()


def test_modes(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    bad = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--record-mode", "sometimes", "--", "true"],
        capture_output=True,
        timeout=30,
        env=child_env(),
    )
    assert bad.returncode == 2 and b"unknown record mode 'sometimes'" in bad.stderr
    # once, no cassette yet: records (in a run of its own: this one's starts replay it, as the next run's would).
    assert run_record(out, [INIT, CALL], mode="once", again=True)[0] == 0
    # once, cassette exists: replays it, never starting the server (here one that cannot start).
    proc = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--", str(tmp_path / "no-such-server")],
        input=CALL,
        capture_output=True,
        timeout=30,
        env=child_env(),
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["result"]["echo"]["arguments"] == {"x": 1}
    assert b"replaying it" in proc.stderr
    # new: end to end, a request the cassette has, answered otherwise this time: both kept, and stderr says
    # so. (Which sessions `--record-mode new_episodes` adds, and its notes, have their rows in test_merge.py.)
    env = {**child_env(), "WHO": "me"}
    code, _stdout, stderr = run_record(out, [INIT, CALL], "--echo-env", "WHO", mode="new_episodes", env=env)
    assert code == 0
    assert (
        "mockmcp: tools/call echo was answered otherwise than in interactions[1] of the cassette; both are kept, "
        'this time\'s as interactions[3]:\n  - result.env: only in this answer ("me")'
    ) in stderr
    assert [i.session for i in cassette.load(str(out)).interactions] == [0, 0, 1, 1]
    other = req(5, "tools/call", {"name": "echo", "arguments": {"x": 2}})
    # all: replaces it (in the next run: within this one, a later start adds its session, see test_record_runs).
    assert run_record(out, [INIT, other], mode="rewrite", again=True)[0] == 0
    assert [i.method for i in cassette.load(str(out)).interactions] == ["initialize", "tools/call"]
    assert cassette.load(str(out)).interactions[1].params["arguments"] == {"x": 2}


def test_mode_new_keeps_the_cassette_as_written_and_adds_the_session_after_it(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    assert run_record(out, [INIT, CALL], mode="rewrite")[0] == 0
    text = out.read_text()
    hand = (
        "# Recorded once, then edited by hand.\n"
        + text.replace("  response:", "  delay: 0.5   # slow on purpose\n  response:", 1)
        + "# end of the first session\n"
    )
    out.write_text(hand)
    other = req(5, "tools/call", {"name": "echo", "arguments": {"x": 2}})
    assert run_record(out, [INIT, other], mode="new_episodes")[0] == 0
    after = out.read_text()
    changes = [line for line in difflib.ndiff(hand.splitlines(), after.splitlines()) if line[:1] in "+-?"]
    # Nothing removed or rewritten: when it was updated, then the new session, before the closing comment.
    assert [line for line in changes if line[:1] != "+"] == [], changes
    assert changes[0].startswith("+   updated_at: ") and "+   session: 1" in changes
    assert after.endswith("  took: " + after.rsplit("  took: ", 1)[1]) and after.endswith(
        "# end of the first session\n"
    )
    assert [i.session for i in cassette.load(str(out)).interactions] == [0, 0, 1, 1]
    assert cassette.load(str(out)).interactions[0].delay == 0.5


def test_a_redact_env_variable_that_is_not_set_is_refused_before_anything_is_recorded(tmp_path: Path) -> None:
    """The secret cannot be kept out when its value is unknown (the SDK passes a server few variables): exit 2."""
    out = tmp_path / "c.yaml"
    env = {key: value for key, value in child_env().items() if key != "API_KEY"}
    proc = record(out, extra=("--redact-env", "API_KEY"), env=env)
    _stdout, stderr = proc.communicate(INIT, timeout=30)
    assert proc.returncode == 2
    text = stderr.decode()
    assert "--redact-env API_KEY: not set in the recorder's environment" in text
    assert "StdioServerParameters(env=...)" in text
    assert not out.exists() and not (tmp_path / "c.yaml.journal").exists()


def test_secrets_never_reach_the_disk_and_replay_still_matches(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    secret = "sk-live-5f2b9c8e1a7d4e3f"
    env = {**child_env(), "API_KEY": secret}
    with_secret = req(1, "tools/call", {"name": "login", "arguments": {"key": secret, "token": "Bearer abc.def.ghi"}})
    proc = record(
        out, "--echo-env", "API_KEY", extra=("--redact-env", "API_KEY", "--redact", r"Bearer [A-Za-z0-9.]+"), env=env
    )
    try:
        first = b"".join(send_and_read(proc, [INIT, with_secret]))
        # Mid-session, the journal on disk is redacted too.
        journal = (tmp_path / "c.yaml.journal").read_bytes()
        assert b"[REDACTED:API_KEY]" in journal and secret.encode() not in journal and b"abc.def.ghi" not in journal
        rest, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    status, stdout, stderr = proc.returncode, first + rest, err.decode()
    assert status == 0, stderr
    assert secret.encode() in stdout  # the host still sees the real value
    text = out.read_bytes()
    assert secret.encode() not in text and b"abc.def.ghi" not in text
    assert b"[REDACTED:API_KEY]" in text and b"[REDACTED]" in text
    assert cassette.load(str(out)).meta["redact"] == {"env": ["API_KEY"], "patterns": [r"Bearer [A-Za-z0-9.]+"]}
    # Replay redacts the incoming request the same way before matching, so it still matches.
    replayed = subprocess.run(
        [*MOCKMCP, "replay", str(out)], input=INIT + with_secret, capture_output=True, timeout=30, env=env
    )
    answers = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert [a.get("error") for a in answers] == [None, None], replayed.stderr


def test_every_pipelined_request_gets_its_own_answer_in_the_cassette(tmp_path: Path) -> None:
    """Answers must never be journaled ahead of their requests, however fast they come."""
    out = tmp_path / "c.yaml"
    lines = [req(i, "tools/call", {"name": "echo", "arguments": {"n": i}}) for i in range(1, 601)]
    status, stdout, stderr = run_record(out, [INIT, *lines])
    assert status == 0, stderr
    assert len(stdout.splitlines()) == 601
    recorded = cassette.load(str(out))
    assert [i.kind for i in recorded.interactions] == ["request"] * 601
    for interaction in recorded.interactions[1:]:
        assert interaction.response == {"result": {"echo": interaction.params, "content": []}}
        assert interaction.server == ()


def test_a_chunk_is_journaled_before_it_is_forwarded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ordering that keeps answers behind their requests, checked at the moment of forwarding."""
    from mockmcp.engine.redact import Redactor
    from mockmcp.record._journal import Journal
    from mockmcp.stdio import record as proxy

    journal = Journal(str(tmp_path / "c.yaml.journal"), {"mode": "all", "meta": {}})
    seen_at_forward: list[bytes] = []

    def forward(sink: int, chunk: bytes) -> None:
        seen_at_forward.append((tmp_path / "c.yaml.journal").read_bytes())

    monkeypatch.setattr(proxy, "write_all", forward)
    relay = proxy._Proxy(["cat"], journal, Redactor(), grace=0.5)
    try:
        source, feeder = os.pipe()
        os.write(feeder, INIT + CALL)
        os.close(feeder)
        relay.pump(source, 1, "client")
    finally:
        relay.process.kill()
        relay.process.wait(10)
        journal.close()
    assert len(seen_at_forward) == 1
    assert b"initialize" in seen_at_forward[0] and b"tools/call" in seen_at_forward[0]


def test_recover_keeps_every_whole_line_and_reports_a_torn_last_one(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    journal = tmp_path / "c.yaml.journal"
    lines = [
        {"mockmcp_journal": 1, "mode": "all", "meta": {"server": ["x"]}},
        {"d": "c", "t": 0.0, "l": INIT.decode().strip()},
        {
            "d": "s",
            "t": 0.1,
            "l": '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}',  # noqa: E501 (a literal message, as on the wire)
        },
        {"d": "c", "t": 0.2, "l": CALL.decode().strip()},
    ]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"d": "s", "t": 0.3, "l": "{\\"jsonrpc\\"')
    proc = subprocess.run([*MOCKMCP, "recover", str(out)], capture_output=True, text=True, timeout=30, env=child_env())
    assert proc.returncode == 0, proc.stderr
    assert "the last line was cut off and left out" in proc.stderr
    recovered = cassette.load(str(out))
    assert [(i.method, i.response is not None) for i in recovered.interactions] == [
        ("initialize", True),
        ("tools/call", False),
    ]
    assert not journal.exists()
    again = subprocess.run([*MOCKMCP, "recover", str(out)], capture_output=True, text=True, timeout=30, env=child_env())
    assert again.returncode == 2 and "no journal to recover" in again.stderr


def test_host_lines_that_cannot_be_replayed_are_reported_not_dropped_silently(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    status, _stdout, stderr = run_record(out, [INIT, b'{"hello": "is anybody there?"}\n', CALL])
    assert status == 0, stderr
    assert (
        "1 line(s) the host sent were no JSON-RPC message a cassette can hold" in stderr
        and "is anybody there?" in stderr
    )
    assert [i.method for i in cassette.load(str(out)).interactions] == ["initialize", "tools/call"]


def wakeups(pid: int) -> int:
    """How many times the process's threads have gone to sleep and woken so far (voluntary context switches)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_the_recorder_waits_without_polling_both_idle_and_in_the_grace_period(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    proc = record(out, "--ignore-eof", extra=("--grace", "3"))
    try:
        assert [json.loads(line)["id"] for line in send_and_read(proc, [INIT, CALL])] == [0, 1]
        time.sleep(0.2)
        before = wakeups(proc.pid)
        time.sleep(1)
        idle = wakeups(proc.pid) - before
        assert proc.stdin is not None
        proc.stdin.close()  # the server ignores the EOF: the recorder waits out the grace period
        time.sleep(0.3)
        before = wakeups(proc.pid)
        time.sleep(1)
        grace = wakeups(proc.pid) - before
        proc.wait(timeout=30)
        assert proc.stderr is not None
        err = proc.stderr.read()  # a few lines: they fitted in the pipe while the recorder ran
    finally:
        if proc.poll() is None:  # failed midway: SIGTERM, so the recorder stops its stubborn server too
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(15)
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 0, err
    assert b"did not exit within 3s" in err
    # A loop polling every 20 ms would wake about 50 times a second.
    assert idle < 10 and grace < 10, (idle, grace)


def test_a_reply_no_cassette_can_hold_is_recorded_as_the_line_it_was_and_replayed_under_the_callers_id(
    tmp_path: Path,
) -> None:
    # An `error` whose code is not an integer is no JSON-RPC response a cassette can hold; the session
    # must still be saved, and replay must give a host exactly what the server gave it.
    out = tmp_path / "c.yaml"
    odd = req(7, "tools/odd", {"x": 1})
    status, stdout, stderr = run_record(out, [INIT, odd], "--odd-error")
    assert status == 0, stderr
    assert not (tmp_path / "c.yaml.journal").exists()
    recorded = cassette.load(str(out)).interactions[1]
    assert recorded.response is None and recorded.raw_response is not None
    again = req("other", "tools/odd", {"x": 1})
    (_, answer) = [json.loads(line) for line in replay_lines(out, [INIT, again]).splitlines()]
    assert answer == {**json.loads(stdout.splitlines()[1]), "id": "other"}


def _limited(limit: int) -> Any:
    """A preexec_fn that gives the child (and its children) a file-size limit of `limit` bytes, as `ulimit -f` does."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_journal_that_cannot_be_written_leaves_the_session_going_and_ends_in_failure(tmp_path: Path) -> None:
    """A file-size limit (EFBIG; SIGXFSZ is ignored): every answer still reaches the host, the failure is said
    once, the recorder exits when the host closes stdin, with status 2, and keeps what it had."""
    out = tmp_path / "c.yaml"
    calls = [req(n, "tools/call", {"name": "echo", "arguments": {"x": "a" * 2000}}) for n in range(1, 301)]
    proc = subprocess.Popen(
        [*MOCKMCP, "record", "-o", str(out), "--record-mode", "rewrite", "--grace", "0.5", "--", *SCRIPTED],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        preexec_fn=_limited(64 * 1024),
    )
    try:
        answers = [json.loads(line)["id"] for call in [INIT, *calls] for line in send_and_read(proc, [call])]
        _stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert answers == list(range(301))
    text = stderr.decode()
    assert proc.returncode == 2, text
    assert text.count("cannot write the journal") == 1 and "File too large" in text
    assert "the recording is incomplete" in text
    kept = cassette.load(str(out)).interactions  # what fitted under the limit, each whole
    assert 0 < len(kept) < 301 and [i.message["id"] for i in kept if i.message] == list(range(len(kept)))
    assert all(i.response is not None for i in kept[:-1])  # the last request may have lost its answer
    assert not (tmp_path / "c.yaml.journal").exists()


def test_a_full_disk_is_said_once_and_nothing_after_it_is_journaled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from mockmcp.record import _journal as journals

    path = str(tmp_path / "c.yaml.journal")
    journal = journals.Journal(path, {"mode": "all", "meta": {}})
    journal.append("client", 0.0, [INIT.strip()])
    real = journals.write_all

    def full(fd: int, data: bytes) -> None:
        real(fd, data[: len(data) // 2])  # part of the line fits, as on a real full disk
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(journals, "write_all", full)
    journal.append("server", 0.1, [b'{"jsonrpc":"2.0","id":0,"result":{}}'])
    monkeypatch.setattr(journals, "write_all", real)
    journal.append("client", 0.2, [CALL.strip()])  # the disk has room again: still nothing more is written
    journal.close()
    assert journal.failure is not None and journal.failure.errno == errno.ENOSPC
    assert capsys.readouterr().err.count("No space left on device") == 1
    recovered = journals.read(path)
    assert recovered.torn and [i.method for i in recovered.cassette.interactions] == ["initialize"]
    assert b"tools/call" not in Path(path).read_bytes()


@pytest.mark.slow
def test_after_a_half_close_the_servers_whole_answer_is_forwarded_and_recorded(tmp_path: Path) -> None:
    """The host sends a large request, closes stdin at once, and reads the answer only well after the grace
    period: the server, waiting on that slow reader, is not stopped, and the host reads every byte."""
    out = tmp_path / "c.yaml"
    big = req(1, "tools/call", {"name": "echo", "arguments": {"x": "b" * 4_000_000}})
    proc = record(out)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(INIT + big)
        proc.stdin.close()
        time.sleep(2.0)  # four grace periods of 0.5 s
        stdout = proc.stdout.read()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    answers = parsed(stdout)
    assert [a["id"] for a in answers] == [0, 1]
    assert answers[1]["result"]["echo"]["arguments"]["x"] == "b" * 4_000_000
    assert proc.returncode == 0
    recorded = cassette.load(str(out)).interactions
    assert recorded[1].response == {
        "result": {"echo": {"name": "echo", "arguments": {"x": "b" * 4_000_000}}, "content": []}
    }


@pytest.mark.slow
def test_a_call_answered_after_the_hosts_half_close_and_after_the_grace_period_is_forwarded_and_recorded(
    tmp_path: Path,
) -> None:
    """A host that half-closes stdin may still read the answers to what it asked: the server is not stopped
    while a request is in flight (here a 3 s call, with the default grace of 2 s), only once it has answered."""
    out = tmp_path / "c.yaml"
    slow = req(1, "tools/slow", {"name": "slow"})
    proc = record(out, "--slow", "3", extra=("--grace", "2"))  # the default grace (the last given counts)
    try:
        stdout, stderr = proc.communicate(INIT + slow, timeout=60)  # writes, closes stdin, reads to the end
    finally:
        proc.kill()
    assert [answer["id"] for answer in parsed(stdout)] == [0, 1], stderr
    assert proc.returncode == 0 and b"the host closed stdin; the server exited with status 0" in stderr
    recorded = cassette.load(str(out)).interactions
    assert [(i.method, i.response is not None, i.drop) for i in recorded] == [
        ("initialize", True, False),
        ("tools/slow", True, False),
    ]
    assert recorded[1].took is not None and recorded[1].took >= 3


def test_a_call_the_host_cancelled_before_its_half_close_is_not_waited_for(tmp_path: Path) -> None:
    """What the recorder waits for after the EOF is what its own core reads as in flight: a cancelled call is
    not (its server, busy with it, gets the grace period from the EOF, then SIGTERM)."""
    out = tmp_path / "c.yaml"
    slow = req(1, "tools/slow", {"name": "slow"})
    cancel = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).encode()
    proc = record(out, "--slow", "30")
    try:
        started = time.monotonic()
        _stdout, stderr = proc.communicate(INIT + slow + cancel + b"\n", timeout=60)
    finally:
        proc.kill()
    assert time.monotonic() - started < 15, stderr  # not the 30 s call
    assert b"did not exit within 0.5s of the host closing stdin" in stderr


def test_a_live_recording_is_refused_by_record_and_recover_which_name_its_process(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    journal = tmp_path / "c.yaml.journal"
    assert run_record(out, [INIT], again=True)[0] == 0  # an earlier run's: rewritten below, not added to
    first = record(out)
    try:
        assert [json.loads(line)["id"] for line in send_and_read(first, [INIT])] == [0]
        assert journal.stat().st_mode & 0o777 == 0o600  # it holds the session before any review
        replayed = subprocess.run(
            [*MOCKMCP, "replay", str(out)], capture_output=True, timeout=30, env=child_env(), input=INIT
        )
        assert f"is running (process {first.pid}); replaying the cassette as it was" in replayed.stderr.decode()
        for command in (["record", "-o", str(out), "--record-mode", "rewrite", "--", *SCRIPTED], ["recover", str(out)]):
            refused = subprocess.run([*MOCKMCP, *command], capture_output=True, timeout=30, env=child_env(), input=b"")
            assert refused.returncode == 2
            assert f"(process {first.pid})" in refused.stderr.decode(), refused.stderr
        assert [json.loads(line)["id"] for line in send_and_read(first, [CALL])] == [1]
        _stdout, stderr = first.communicate(timeout=30)
    finally:
        first.kill()
    assert first.returncode == 0, stderr
    assert [i.method for i in cassette.load(str(out)).interactions] == ["initialize", "tools/call"]


def test_re_recording_keeps_the_cassettes_mode_and_writes_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "store" / "c.yaml"
    target.parent.mkdir()
    assert run_record(target, [INIT], again=True)[0] == 0  # an earlier run's: rewritten below, not added to
    target.chmod(0o600)
    link = tmp_path / "c.yaml"
    link.symlink_to(target)
    status, _stdout, stderr = run_record(link, [INIT, CALL])
    assert status == 0, stderr
    assert link.is_symlink() and target.stat().st_mode & 0o777 == 0o600
    assert [i.method for i in cassette.load(str(target)).interactions] == ["initialize", "tools/call"]


def test_the_journal_is_synced_as_lines_come_at_most_once_a_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mockmcp.record import _journal as journals

    synced: list[int] = []
    monkeypatch.setattr(os, "fdatasync", synced.append)
    journal = journals.Journal(str(tmp_path / "c.yaml.journal"), {"mode": "all", "meta": {}})
    for _ in range(100):
        journal.append("client", 0.0, [CALL.strip()])
    assert synced == []  # many lines, well within a period
    monkeypatch.setattr(journals, "_SYNC_EVERY", 0.0)
    journal.append("client", 0.0, [CALL.strip()])
    assert len(synced) == 1
    journal.close()
    assert len(synced) == 2  # and once more at the end


def test_a_session_that_records_nothing_writes_no_cassette_and_once_then_records(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    # The server exits at once (here: `true`), before any traffic.
    proc = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--", "true"], input=b"", capture_output=True, timeout=30, env=child_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert f"nothing was recorded; no cassette was written to {out}".encode() in proc.stderr
    assert not out.exists() and not Path(str(out) + ".journal").exists()
    # So the next `record` (mode once) records, rather than replaying an empty cassette.
    code, stdout, stderr = run_record(out, [INIT, CALL], mode="once")
    assert code == 0 and "replaying it" not in stderr, stderr
    assert len(parsed(stdout)) == 2 and len(cassette.load(str(out)).interactions) == 2
    # And a session that records nothing leaves an existing cassette as it was.
    before = out.read_bytes()
    proc = subprocess.run(
        [*MOCKMCP, "record", "-o", str(out), "--record-mode", "rewrite", "--", "true"],
        input=b"",
        capture_output=True,
        timeout=30,
        env=child_env(),
    )
    assert f"nothing was recorded; {out} was left as it was".encode() in proc.stderr
    assert out.read_bytes() == before


def test_replay_of_a_cassette_that_only_has_a_journal_points_to_recover(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    # What a first recording killed before it saved leaves: only the journal (here, of no traffic).
    Path(str(out) + ".journal").write_text('{"mockmcp_journal":1,"mode":"once","meta":{}}\n')
    replay = subprocess.run(
        [*MOCKMCP, "replay", str(out)], input=CALL, capture_output=True, timeout=30, env=child_env()
    )
    assert replay.returncode != 0
    assert b"no such cassette, but the journal of an interrupted recording of it exists" in replay.stderr
    assert f"run `mockmcp recover {out}`".encode() in replay.stderr
    recovered = subprocess.run([*MOCKMCP, "recover", str(out)], capture_output=True, timeout=30, env=child_env())
    assert recovered.returncode == 0
    assert f"the journal held no interaction, so no cassette was written to {out}".encode() in recovered.stderr
    assert not out.exists() and not Path(str(out) + ".journal").exists()


def test_the_journal_keeps_which_stream_a_server_line_came_on(tmp_path: Path) -> None:
    """`"r"` names a request's POST stream, `"g"` the session's GET stream; the cassette built from the
    journal (at the end, or by `recover`) files and marks them as the recorder does."""
    from mockmcp.record import _journal as journals

    path = str(tmp_path / "c.yaml.journal")
    journal = journals.Journal(path, {"mode": "all", "meta": {}})
    journal.append("client", 0.0, [CALL.strip()])
    journal.append("server", 0.1, [b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":1}}'], stream=1)
    journal.append("server", 0.2, [b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":2}}'], get=True)
    journal.append("server", 0.3, [b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'], stream=1)
    journal.close()
    assert [json.loads(line).get("g") for line in Path(path).read_text().splitlines()[1:]] == [None, None, 1, None]
    [call] = journals.read(path).cassette.interactions
    assert [(item.message["params"]["data"], item.stream) for item in call.server] == [(1, None), (2, "get")]


def test_the_journal_keeps_where_the_server_broke_an_answer_off_and_recover_rebuilds_it(tmp_path: Path) -> None:
    """`"b"` says that the server broke off its answer to a request (over HTTP: its stream ended before the
    HTTP message did), after what the journal holds before it; the cassette built from the journal (at the
    end, or by `recover`, the same code) keeps that request with `drop: cut`, `took` saying when."""
    from mockmcp.record import _journal as journals

    out = tmp_path / "c.yaml"
    journal = journals.Journal(str(out) + ".journal", {"mode": "all", "meta": {}})
    for session in (0, 2):  # one session of several too (the journal's session 1 left nothing: no number)
        journal.append("client", 1.0, [CALL.strip()], session)
        halfway = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"halfway"}}'
        journal.append("server", 1.25, [halfway], session, stream=1)
        journal.cut(1, 1.5, session)
        journal.append("client", 2.0, [req(2, "tools/call", {"name": "echo"}).strip()], session)
        journal.append("server", 2.5, [b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'], session, stream=2)
    journal.close()
    said = journals.saved(str(out), "the proxy stopped")
    assert "2 request(s) whose answer the server broke off are kept with `drop: cut`" in said
    made = cassette.load(str(out))
    kept = [(i.session, i.drop, i.took, [s.message["params"]["data"] for s in i.server]) for i in made.interactions]
    assert kept == [
        (0, "cut", 0.5, ["halfway"]),
        (0, False, 0.5, []),
        (1, "cut", 0.5, ["halfway"]),
        (1, False, 0.5, []),
    ]
    assert "drop: cut" in out.read_text()


def test_a_session_that_left_no_interaction_takes_no_number(tmp_path: Path) -> None:
    """Over HTTP a probe the server turns away (the SDK host's `server/discover` in auto mode) is a session of the
    proxy's that leaves no interaction: the cassette numbers the sessions it holds from 0, so that one recorded
    session reads as one."""
    from mockmcp.record import _journal as journals

    out = tmp_path / "c.yaml"
    journal = journals.Journal(str(out) + ".journal", {"mode": "all", "meta": {}})
    journal.append("client", 0.5, [req(1, "server/discover", {}).strip()], 0)
    journal.refused(1, 0)
    journal.append("client", 1.0, [req(2, "tools/call", {"name": "echo"}).strip()], 1)
    journal.append("server", 1.5, [b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'], 1, stream=2)
    journal.close()
    journals.saved(str(out), "the proxy stopped")
    made = cassette.load(str(out))
    assert [(i.session, i.method) for i in made.interactions] == [(0, "tools/call")]
    assert "session:" not in out.read_text()


def test_the_cassette_saved_when_the_host_left_is_saved_again_at_the_end_with_the_session_added_once(
    tmp_path: Path,
) -> None:
    """The recorder saves as soon as the host closes stdin (`snapshot`), before its shutdown can kill it, and
    again at the end with what came later; both, and a recover after a kill in between, merge `new_episodes`
    from what the cassette held before the recording, so the session is in it once."""
    from mockmcp._wire.words import RecordMode
    from mockmcp.engine.redact import Redactor
    from mockmcp.record import Journal, finish, snapshot

    out = tmp_path / "c.yaml"
    answer = '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},'
    answer += '"serverInfo":{"name":"%s"}}}'
    late = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"late"}}'

    def held() -> list[tuple[int, str | None]]:  # an unprompted message has no method of its own
        return [(i.session, i.method) for i in cassette.load(str(out)).interactions]

    def session(mode: RecordMode, kill: bool, before: list[tuple[int, str | None]]) -> None:
        journal = Journal.fresh(str(out), mode, Redactor(), ["server"])
        journal.append("client", 0.0, [INIT.strip()])
        journal.append("server", 0.01, [(answer % mode.value).encode()])  # each session answered otherwise
        snapshot(journal)  # the host closed stdin
        assert held() == [*before, (len(before) // 2, "initialize")]  # durable before the end
        journal.append("server", 0.5, [late])  # the server's last word, after the host left
        journal.close()
        if not kill:  # else the recorder was killed here: `mockmcp recover` finishes it
            assert Path(f"{out}.journal").exists()
        finish(str(out))

    session(RecordMode.ALL, kill=False, before=[])
    assert held() == [(0, "initialize"), (0, None)]
    session(RecordMode.NEW, kill=True, before=held())
    assert held() == [(0, "initialize"), (0, None), (1, "initialize"), (1, None)]
    assert not Path(f"{out}.journal").exists()


def test_a_later_start_by_the_same_host_records_into_the_cassette_its_run_began_and_the_next_run_replays(
    tmp_path: Path,
) -> None:
    """A host that starts a server twice in a run (a probe, then the session; a process per call) under `once`
    gets the real server both times, each session added in order; the next run (another host) replays them."""
    out = tmp_path / "c.yaml"
    other = req(1, "tools/call", {"name": "echo", "arguments": {"x": 2}})
    assert run_record(out, [INIT, CALL], mode="once")[0] == 0
    code, stdout, stderr = run_record(out, [INIT, other], mode="once")  # this test's process is the host of both
    assert code == 0 and "replaying" not in stderr, stderr
    assert f"{out} was recorded earlier in this run (by process {os.getpid()}, this recorder's parent)" in stderr
    assert parsed(stdout)[1]["result"]["echo"]["arguments"] == {"x": 2}
    assert [(i.session, i.method) for i in cassette.load(str(out)).interactions] == [
        (0, "initialize"),
        (0, "tools/call"),
        (1, "initialize"),
        (1, "tools/call"),
    ]
    code, stdout, stderr = run_record(out, [INIT, CALL], mode="once", again=True)
    assert code == 0 and "replaying it" in stderr and parsed(stdout)[1]["result"]["echo"]["arguments"] == {"x": 1}


def test_a_later_start_by_the_host_of_a_recorder_killed_with_9_takes_its_journal_into_the_cassette_first(
    tmp_path: Path,
) -> None:
    """A host that killed its recorder (a hard shutdown) and starts the server again in the same run loses nothing:
    the journal left behind becomes the cassette's first session, as `mockmcp recover` would make it."""
    out = tmp_path / "c.yaml"
    proc = record(out, new_session=True)
    try:
        assert [json.loads(line)["id"] for line in send_and_read(proc, [INIT, CALL])] == [0, 1]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the recorder and its server
        proc.wait(timeout=10)
    assert not out.exists() and (tmp_path / "c.yaml.journal").exists()
    code, _stdout, stderr = run_record(out, [INIT, CALL])
    assert code == 0, stderr
    assert "an earlier start by this host was stopped before it ended" in stderr
    assert [i.session for i in cassette.load(str(out)).interactions] == [0, 0, 1, 1]
    assert not (tmp_path / "c.yaml.journal").exists()


def test_a_run_is_noted_per_cassette_with_what_it_saved_and_the_notes_of_cassettes_gone_are_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mockmcp.cassette.files import begun_by_this_run, digest, mark_run, this_run

    monkeypatch.setenv("MOCKMCP_CACHE_DIR", str(tmp_path / "cache"))
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("interactions: []\n")
    assert not begun_by_this_run(str(first))  # never noted
    mark_run(str(first), this_run())
    assert begun_by_this_run(str(first))
    mark_run(str(first), "1@1/another boot")
    assert not begun_by_this_run(str(first))  # another run saved it last
    mark_run(str(first), this_run())
    first.write_text("interactions: []\n# edited since\n")
    assert not begun_by_this_run(str(first))  # not what the run saved
    first.unlink()
    second.write_text("interactions: []\n")
    mark_run(str(second), this_run())
    assert [p.name for p in (tmp_path / "cache" / "runs").iterdir()] == [f"{digest(str(second).encode())}.json"]
    monkeypatch.setenv("MOCKMCP_CACHE_DIR", "")  # the cache turned off: every start is a run of its own
    assert not begun_by_this_run(str(second))


@pytest.mark.parametrize(
    ("name", "shell"),
    [("bash", True), ("-zsh", True), ("/bin/sh", True), ("fish", True), ("python3", False), ("node", False),
     ("pytest", False), ("bashful", False)],
)  # fmt: skip
def test_a_shell_is_no_host(name: str, shell: bool) -> None:
    from mockmcp.cassette.files import is_shell

    assert is_shell(name) is shell


def test_two_commands_of_one_shell_are_two_runs_and_two_starts_by_one_host_one() -> None:
    said = "from mockmcp.cassette.files import this_run; print(this_run(), this_run() == this_run())"
    one = [sys.executable, "-c", said]
    shell = subprocess.run(
        ["sh", "-c", f"{shlex.join(one)}; {shlex.join(one)}"], capture_output=True, text=True, timeout=30
    )
    host = subprocess.run(
        [sys.executable, "-c", f"import subprocess; [subprocess.run({one!r}) for _ in 'ab']"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    by_shell, by_host = shell.stdout.splitlines(), host.stdout.splitlines()
    assert len(by_shell) == len(by_host) == 2 and all(line.endswith(" True") for line in by_shell + by_host)
    assert by_shell[0] != by_shell[1] and by_host[0] == by_host[1]


def test_a_journal_left_after_its_host_left_adds_nothing_a_replay_needs_and_replay_says_nothing_of_it(
    tmp_path: Path,
) -> None:
    """A host's shutdown may kill the recorder after the host left (the cassette was saved then): only what the
    server said after is in the journal, and replay keeps quiet about it; a host's line after the save, or a
    cassette changed since, is an interrupted recording again."""
    from mockmcp.cassette.files import file_digest
    from mockmcp.record import settled

    cassette = tmp_path / "c.yaml"
    shutil.copyfile(ROOT / "cassettes" / "notes.yaml", cassette)
    ask = {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}
    lines = [{"mockmcp_journal": 1, "mode": "new", "meta": {}}, {"d": "c", "t": 0, "l": "{}"}]
    after = [{"k": file_digest(str(cassette)), "base": 0}, {"d": "s", "t": 1, "l": json.dumps(ask)}]

    def journal(*events: dict[str, Any], torn: bool = False) -> None:
        text = "".join(json.dumps(event) + "\n" for event in events) + ('{"d": "s", "t"' if torn else "")
        (tmp_path / "c.yaml.journal").write_text(text)

    journal(*lines, *after, torn=True)
    assert settled(str(cassette))
    replayed = subprocess.run([*MOCKMCP, "replay", str(cassette)], input="", capture_output=True, text=True, timeout=30)
    assert replayed.returncode == 0 and "recover" not in replayed.stderr and "interrupted" not in replayed.stderr
    journal(*lines, *after, {"d": "c", "t": 2, "l": "{}"})  # the host spoke after the save
    assert not settled(str(cassette))
    journal(*lines)  # no save from it at all
    assert not settled(str(cassette))
    journal(*lines, *after)
    cassette.write_text(cassette.read_text() + "# edited since\n")
    assert not settled(str(cassette))
    replayed = subprocess.run([*MOCKMCP, "replay", str(cassette)], input="", capture_output=True, text=True, timeout=30)
    assert "an interrupted recording of" in replayed.stderr
