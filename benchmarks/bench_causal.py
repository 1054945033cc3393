#!/usr/bin/env python3
"""Benchmark for replay's order: a session of calls that report progress, real server vs its replay.

A host on stdio pipes runs one session: the handshake, then N calls (50, or 20 with --quick) of
`steps` on `tests/servers/causal.py` (an SDK server), one after the other, each reporting P
progress notifications (3) before its answer. The session is recorded once through
`mockmcp record` (not timed), then run against the real server and against `mockmcp replay` of
the recording, taking turns, R rounds each (3, or 2 with --quick):

1. session   spawn to the last answer, handshake included: median of the real server's sessions
             and of the replay's, and the replay's over the real server's. Goal: <= 0.5x.
2. calls     the same, from the first call to the last answer (start-up left out). Goal: <= 0.5x.

The real server waits `--interval` seconds (0 by default) after each progress notification, so
with the default its time is its own overhead, not sleeps; replay answers at once (no --timing).

It needs the test extra (the server is built on the official MCP SDK). Run from anywhere:

    python benchmarks/bench_causal.py [--quick] [--calls N] [--progress P] [--rounds R] [--json FILE]

Every answer is checked: the right id, the recorded text, and exactly P progress notifications
carrying the call's own token before it, in order. A wrong or missing one makes the figure an
ERROR and the exit status 2.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

from _harness import (
    PY,
    ROOT,
    BenchError,
    Process,
    Result,
    guarded,
    make_parser,
    print_heading,
    report,
)

SERVER = [PY, os.path.join(ROOT, "tests", "servers", "causal.py")]
GOAL = 0.5


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")).encode() + b"\n"


def session(server: Process, calls: int, progress: int, interval: float) -> tuple[float, float]:
    """One host session on an already spawned server: (seconds to the handshake's answer, seconds of the calls).

    Each call is checked: P progress notifications with its token, in order, then its answer."""
    start = time.perf_counter()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    server.write_all(line({"id": 0, "method": "initialize", "params": init}))
    [answer] = server.read_lines(1)
    if json.loads(answer).get("id") != 0:
        raise BenchError(f"{server.label}: not the answer to initialize: {answer[:200]!r}")
    server.write_all(line({"method": "notifications/initialized"}))
    handshake = time.perf_counter() - start
    arguments = {"n": progress, "interval": interval}
    for rid in range(1, calls + 1):
        params = {"name": "steps", "arguments": arguments, "_meta": {"progressToken": rid}}
        server.write_all(line({"id": rid, "method": "tools/call", "params": params}))
        messages = [json.loads(each) for each in server.read_lines(progress + 1)]
        steps = [m.get("params", {}) for m in messages[:-1] if m.get("method") == "notifications/progress"]
        if [(p.get("progressToken"), p.get("progress")) for p in steps] != [(rid, n) for n in range(1, progress + 1)]:
            raise BenchError(f"{server.label}: call {rid}: not {progress} progress notifications first: {messages}")
        reply = messages[-1]
        text = (reply.get("result") or {}).get("content", [{}])[0].get("text")
        if reply.get("id") != rid or text != f"did {progress} steps":
            raise BenchError(f"{server.label}: call {rid}: wrong answer {reply}")
    return handshake, time.perf_counter() - start - handshake


def timed(argv: list[str], label: str, calls: int, progress: int, interval: float) -> tuple[float, float]:
    """(spawn to the last answer, first call to the last answer), in seconds."""
    start = time.perf_counter()
    with Process(argv, label) as server:
        _handshake, calls_took = session(server, calls, progress, interval)
        whole = time.perf_counter() - start
    return whole, calls_took


def bench(calls: int, progress: int, rounds: int, interval: float) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-") as folder:
        cassette = os.path.join(folder, "causal.yaml")
        with Process([PY, "-m", "mockmcp", "record", "-o", cassette, "--", *SERVER], "mockmcp record") as recorder:
            session(recorder, calls, progress, interval)
            status, _waited = recorder.stop()
            if status != 0 or not os.path.exists(cassette):
                raise BenchError(f"mockmcp record: exit status {status}, no cassette{recorder.stderr_tail()}")
        variants = [("real server", SERVER), ("mockmcp replay", [PY, "-m", "mockmcp", "replay", cassette])]
        times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in variants}
        for label, argv in variants:  # one warm-up each: bytecode and the cassette cache
            timed(argv, label, calls, progress, interval)
        for _ in range(rounds):
            for label, argv in variants:
                times[label].append(timed(argv, label, calls, progress, interval))
    real = [statistics.median(t[i] for t in times["real server"]) for i in (0, 1)]
    replay = [statistics.median(t[i] for t in times["mockmcp replay"]) for i in (0, 1)]
    values = {
        "calls": calls,
        "progress_per_call": progress,
        "interval_s": interval,
        "rounds": rounds,
        "real_session_s": real[0],
        "replay_session_s": replay[0],
        "real_calls_s": real[1],
        "replay_calls_s": replay[1],
    }
    rows = []
    for i, (figure, what) in enumerate((("1. session", "spawn to last answer"), ("2. calls", "first call to last"))):
        rows.append(
            Result(
                figure=figure,
                subject=f"replay vs real server, {what}",
                values=values,
                shown=f"{replay[i] * 1e3:8.1f} ms vs {real[i] * 1e3:8.1f} ms (median of {rounds})",
                ratio=replay[i] / real[i],
                goal=GOAL,
                lower_is_better=True,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: 20 calls, 2 rounds")
    parser.add_argument("--calls", type=int, help="calls per session (default 50, 20 with --quick)")
    parser.add_argument("--progress", type=int, default=3, help="progress notifications per call (default 3)")
    parser.add_argument("--rounds", type=int, help="timed sessions per server (median; 3, 2 with --quick)")
    parser.add_argument("--interval", type=float, default=0.0, help="the real server's wait after each progress")
    args = parser.parse_args(argv)
    calls = args.calls or (20 if args.quick else 50)
    rounds = args.rounds or (2 if args.quick else 3)
    print_heading(
        "causal",
        f"{calls} calls per session, {args.progress} progress notifications each, "
        f"interval {args.interval:g} s; {rounds} rounds per server after a warm-up",
    )
    began = time.perf_counter()
    results = guarded(
        "1. session",
        "replay vs real server",
        GOAL,
        lambda: bench(calls, args.progress, rounds, args.interval),
        lower_is_better=True,
    )
    wall = time.perf_counter() - began
    config = {"quick": args.quick, "calls": calls, "progress": args.progress, "rounds": rounds}
    return report(results, wall, args.json, config, print_errors)


def print_errors(results: list[Result]) -> None:
    for r in results:
        if r.error and "\n" in r.error:
            print(f"\n{r.figure} {r.subject}: {r.error}")


if __name__ == "__main__":
    sys.exit(main())
