#!/usr/bin/env python3
"""Benchmark for replay's order: a session of calls that report progress, real server vs its replay.

A host on stdio pipes runs one session: the handshake and `tools/list`, then N calls (50, or 20 with
--quick) of `steps` on `tests/servers/causal.py` (an SDK server), one after the other, each reporting P
progress notifications (3) before its answer. The session is recorded once through
`mockmcp record` (not timed), then run against the real server and against `mockmcp replay` of
the recording, taking turns, R rounds each (3, or 2 with --quick):

1. session   spawn to the last answer, handshake included: median of the real server's sessions
             and of the replay's, and the replay's over the real server's. Goal: <= 0.5x.
2. calls     the same, from the first call to the last answer (start-up left out). Goal: <= 0.5x.
3. turns     what the host's turns between messages the recording had apart cost: the calls replayed from
             the recording over the same recording with its times taken out (which has none), over stdio
             and in process (`mockmcp.transport`): its streams written and read by a bare loop, as the
             SDK's client sends and reads, and by the SDK's own `ClientSession` (a host: progress
             callbacks, each result checked against the tool's schema). Goal: <= 1.1x each.

The real server waits `--interval` seconds (0 by default) after each progress notification, so
with the default its time is its own overhead, not sleeps; replay answers at once (no --timing).

It needs the test extra (the server is built on the official MCP SDK). Run from anywhere:

    python benchmarks/bench_causal.py [--quick] [--calls N] [--progress P] [--rounds R] [--json FILE]

Every answer is checked: the right id, the recorded text, and exactly P progress notifications
carrying the call's own token before it, in order. A wrong or missing one makes the figure an
ERROR and the exit status 2.
"""

from __future__ import annotations

import io
import json
import os
import re
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
TURNS_GOAL = 1.1


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
    server.write_all(line({"method": "notifications/initialized"}) + line({"id": "tools", "method": "tools/list"}))
    [tools] = server.read_lines(1)  # recorded for the SDK's ClientSession, which lists them to check each result
    if json.loads(tools).get("id") != "tools":
        raise BenchError(f"{server.label}: not the answer to tools/list: {tools[:200]!r}")
    handshake = time.perf_counter() - start
    arguments = {"n": progress, "interval": interval}
    for rid in range(1, calls + 1):
        params = {"name": "steps", "arguments": arguments, "_meta": {"progressToken": rid}}
        server.write_all(line({"id": rid, "method": "tools/call", "params": params}))
        check_call(server.label, rid, [json.loads(each) for each in server.read_lines(progress + 1)], progress)
    return handshake, time.perf_counter() - start - handshake


def check_call(label: str, rid: int, messages: list[dict[str, Any]], progress: int) -> None:
    """P progress notifications with the call's token, in order, then its answer."""
    steps = [m.get("params", {}) for m in messages[:-1] if m.get("method") == "notifications/progress"]
    if [(p.get("progressToken"), p.get("progress")) for p in steps] != [(rid, n) for n in range(1, progress + 1)]:
        raise BenchError(f"{label}: call {rid}: not {progress} progress notifications first: {messages}")
    reply = messages[-1]
    text = (reply.get("result") or {}).get("content", [{}])[0].get("text")
    if reply.get("id") != rid or text != f"did {progress} steps":
        raise BenchError(f"{label}: call {rid}: wrong answer {reply}")


def in_process(cassette: str, calls: int, progress: int) -> float:
    """The session's calls replayed by `mockmcp.transport`, sent and read on its streams: their seconds."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    sys.path.insert(0, ROOT)
    import mockmcp

    def message(value: dict[str, Any]) -> Any:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line(value), by_name=False))

    async def run() -> float:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        async with mockmcp.transport(cassette, log=io.StringIO()) as (reads, writes):
            await writes.send(message({"id": 0, "method": "initialize", "params": init}))
            await reads.receive()
            await writes.send(message({"method": "notifications/initialized"}))
            await writes.send(message({"id": "tools", "method": "tools/list"}))  # as recorded: the calls wait for it
            await reads.receive()
            start = time.perf_counter()
            for rid in range(1, calls + 1):
                params = {
                    "name": "steps",
                    "arguments": {"n": progress, "interval": 0.0},
                    "_meta": {"progressToken": rid},
                }
                await writes.send(message({"id": rid, "method": "tools/call", "params": params}))
                said = [(await reads.receive()).message for _ in range(progress + 1)]
                dumped = [each.model_dump(by_alias=True, mode="json", exclude_unset=True) for each in said]
                check_call("mockmcp.transport", rid, dumped, progress)
            return time.perf_counter() - start

    return anyio.run(run)


def in_process_sdk(cassette: str, calls: int, progress: int) -> float:
    """The session's calls made by the SDK's own `ClientSession` over `mockmcp.transport`: their seconds."""
    import anyio
    from mcp import ClientSession

    sys.path.insert(0, ROOT)
    import mockmcp

    async def run() -> float:
        replay = mockmcp.transport(cassette, log=io.StringIO())
        async with replay as (reads, writes), ClientSession(reads, writes) as host:
            await host.initialize()
            await host.list_tools()  # as it would before its first call's result, to check it
            seen: list[float] = []

            async def report(value: float, _total: float | None, _message: str | None) -> None:
                seen.append(value)

            start = time.perf_counter()
            for rid in range(1, calls + 1):
                seen.clear()
                result = await host.call_tool("steps", {"n": progress, "interval": 0.0}, progress_callback=report)
                text = getattr(result.content[0], "text", None)
                if seen != list(range(1, progress + 1)) or text != f"did {progress} steps":
                    raise BenchError(f"ClientSession: call {rid}: {seen} before {text!r}")
            return time.perf_counter() - start

    return anyio.run(run)


def untimed(cassette: str) -> str:
    """A copy of the cassette without its recorded times (beside it): replay then has nothing to keep apart."""
    with open(cassette, encoding="utf-8") as handle:
        text = handle.read()
    text = re.sub(r"\n\s*took: [0-9.]+", "", re.sub(r"(?<![a-z_])at: [0-9.]+\n\s+", "", text))
    copy = cassette.replace(".yaml", "-untimed.yaml")
    with open(copy, "w", encoding="utf-8") as handle:
        handle.write(text)
    return copy


def bench_turns(cassette: str, calls: int, progress: int, rounds: int) -> list[Result]:
    """Figure 3: the calls replayed from the recording over the same without its times, stdio and in process."""
    plain = untimed(cassette)
    stdio = {name: [PY, "-m", "mockmcp", "replay", path] for name, path in (("timed", cassette), ("untimed", plain))}
    places = ("stdio", "in process", "in process, ClientSession")
    taken: dict[str, list[float]] = {f"{where} {name}": [] for where in places for name in ("timed", "untimed")}
    for n in range(rounds + 1):  # the first round warms up, the variants taking turns
        for name in ("timed", "untimed"):
            path = cassette if name == "timed" else plain
            took = (
                timed(stdio[name], f"mockmcp replay ({name})", calls, progress, 0.0)[1],
                in_process(path, calls, progress),
                in_process_sdk(path, calls, progress),
            )
            for where, seconds in zip(places, took, strict=True):
                if n:
                    taken[f"{where} {name}"].append(seconds)
    rows = []
    for where in places:
        with_turns, without = statistics.median(taken[f"{where} timed"]), statistics.median(taken[f"{where} untimed"])
        rows.append(
            Result(
                figure="3. turns",
                subject=f"{where}: recorded times vs none",
                values={"timed_calls_s": with_turns, "untimed_calls_s": without, "rounds": rounds},
                shown=f"{with_turns * 1e3:8.1f} ms vs {without * 1e3:8.1f} ms (median of {rounds})",
                ratio=with_turns / without,
                goal=TURNS_GOAL,
                lower_is_better=True,
            )
        )
    return rows


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
        turns = bench_turns(cassette, calls, progress, rounds)
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
    return rows + turns


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
