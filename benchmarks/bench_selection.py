#!/usr/bin/env python3
"""Benchmark for choosing among recorded sessions: a request's cost with 1, 100 and 2,000 sessions.

The cassette is what the HTTP recording proxy writes when many alike clients went through it: each
recorded session opens (`initialize`) and calls a tool; the live session opens, then asks that call
again and again (300 times by default). Each request goes through the replay engine in memory
(`Replay.receive`, the same engine every shell drives), so the figure is the choice's own cost.

1. 100     per request with 100 recorded sessions, over 1 session. Goal: <= 2.0x.
2. 2000    per request with 2,000 recorded sessions, over 1 session. Goal: <= 2.0x.

Every answer is checked; a wrong one makes the figure an ERROR, exit status 2. Run from anywhere:

    python benchmarks/bench_selection.py [--quick] [--requests N] [--json FILE]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from _harness import ROOT, BenchError, Result, guarded, make_parser, print_heading, report

sys.path.insert(0, ROOT)

from mockmcp.cassette.validation import from_data
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay, Send

OPEN = {"protocolVersion": "2025-11-25"}
ANSWER = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
CALL = {"name": "read", "arguments": {"path": "notes.txt"}}


def cassette(sessions: int) -> object:
    items = []
    for s in range(sessions):
        items.append({"session": s, "at": s, "request": {"id": 1, "method": "initialize", "params": OPEN}})
        items[-1]["response"] = {"result": ANSWER}
        call = {"session": s, "request": {"id": 2, "method": "tools/call", "params": CALL}}
        items.append({**call, "response": {"result": {"content": [{"type": "text", "text": "milk"}]}}})
    return from_data({"version": 1, "interactions": items})


def per_request(sessions: int, requests: int) -> float:
    """Seconds per request, the live session's requests after its opening."""
    engine = Replay(cassette(sessions), Matcher.build())  # type: ignore[arg-type]
    engine.start()
    engine.receive(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": OPEN}).encode())
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": CALL}).encode()
        for n in range(1, requests + 1)
    ]
    started = time.perf_counter()
    for line in lines:
        [sent] = [action for action in engine.receive(line) if isinstance(action, Send)]
        if b'"milk"' not in sent.data:
            raise BenchError(f"a request was answered {sent.data[:200]!r}")
    return (time.perf_counter() - started) / requests


def bench(requests: int, rounds: int) -> list[Result]:
    sizes = (1, 100, 2000)
    taken: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(rounds):  # taking turns, so that what else the machine does weighs on each alike
        for n in sizes:
            taken[n].append(per_request(n, requests))
    times = {n: statistics.median(taken[n]) for n in sizes}
    values = {f"sessions_{n}_us": times[n] * 1e6 for n in sizes}
    return [
        Result(
            figure=f"{n_figure}. {n}",
            subject=f"per request, {n:,} recorded sessions vs 1",
            values=values,
            shown=f"{times[n] * 1e6:8.1f} us vs {times[1] * 1e6:8.1f} us (median of {rounds})",
            ratio=times[n] / times[1],
            goal=2.0,
            lower_is_better=True,
        )
        for n_figure, n in ((1, 100), (2, 2000))
    ]


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: 100 requests, 3 rounds")
    parser.add_argument("--requests", type=int, help="requests the live session asks (300, 100 with --quick)")
    args = parser.parse_args(argv)
    requests = args.requests or (100 if args.quick else 300)
    rounds = 3 if args.quick else 5
    print_heading("selection", f"{requests} requests per live session, the median of {rounds} rounds")
    began = time.perf_counter()
    results = guarded("1. 100", "per request vs 1 session", 2.0, lambda: bench(requests, rounds), True)
    wall = time.perf_counter() - began
    return report(results, wall, args.json, {"quick": args.quick, "requests": requests}, lambda _r: None)


if __name__ == "__main__":
    sys.exit(main())
