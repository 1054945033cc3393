#!/usr/bin/env python3
"""Benchmark for interception: a host's unchanged stdio server, replayed in process, vs the real server.

The host is the MCP SDK's `Client` given `StdioServerParameters` for examples/notes_server.py, as a
framework would write it. One run is 20 sessions, one after another, each connecting and making 10
`read_file` calls; R runs of each target, taking turns after a warm-up, and the median run is compared:

  (a) the real server in memory: `Client(server)`, the SDK's documented way to test (no process);
  (b) the real server over stdio: the same `StdioServerParameters`, a process spawned per session;
  (c) interception: the same `StdioServerParameters` under `mockmcp.intercepting(folder)`, replayed
      from the cassette recorded once through interception (not timed): no process at all.

1. memory   (c) over (a). Goal: <= 1.1x.
2. stdio    (c) over (b). Goal: <= 0.1x.

It needs the test extra (the SDK). Run from anywhere:

    python benchmarks/bench_intercept.py [--quick] [--runs R] [--json FILE]

Every answer is checked (the note's text); a wrong one makes the figure an ERROR, exit status 2.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Any

from _harness import PY, ROOT, BenchError, Result, guarded, make_parser, print_heading, report

sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, ROOT)

import anyio
from mcp import Client, StdioServerParameters

import mockmcp

TEXT = "buy milk"  # what examples/notes_server.py's notes.txt holds
SESSIONS, CALLS = 20, 10
STDIO = StdioServerParameters(command=PY, args=[os.path.join(ROOT, "examples", "notes_server.py")], cwd=ROOT)


async def sessions(target: Any, count: int) -> float:
    """Seconds for `count` sessions of CALLS `read_file` calls each, one after another."""
    start = time.perf_counter()
    for _ in range(count):
        async with Client(target, mode="legacy") as client:
            for _ in range(CALLS):
                result = await client.call_tool("read_file", {"path": "notes.txt"})
                text = result.content[0].text  # type: ignore[union-attr]
                if TEXT not in text:
                    raise BenchError(f"read_file answered {text!r}")
    return time.perf_counter() - start


def intercepted(folder: str, mode: str, log: Any) -> float:
    async def go() -> float:
        with mockmcp.intercepting(folder, mode, log=log) as interception:
            took = await sessions(STDIO, SESSIONS if mode == "none" else 1)
        if interception.verdict():
            raise BenchError(f"the replay missed: {interception.verdict()}")
        return took

    return anyio.run(go)


def bench(runs: int) -> list[Result]:
    from notes_server import server  # type: ignore[import-not-found]

    folder = tempfile.mkdtemp(prefix="mockmcp-bench-intercept-")
    quiet = open(os.devnull, "w")  # noqa: SIM115 (open for the whole run)
    intercepted(folder, "once", quiet)  # the recording, one session: replay plays it again for every session
    targets = {
        "memory": lambda: anyio.run(sessions, server, SESSIONS),
        "stdio": lambda: anyio.run(sessions, STDIO, SESSIONS),
        "intercepted": lambda: intercepted(folder, "none", quiet),
    }
    for run in targets.values():  # a warm-up each
        run()
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(runs):
        for name, run in targets.items():
            times[name].append(run())
    median = {name: statistics.median(values) for name, values in times.items()}
    values = {f"{name}_seconds": value for name, value in median.items()}

    def row(figure: str, subject: str, other: str, goal: float) -> Result:
        return Result(
            figure=figure,
            subject=subject,
            values=values,
            shown=f"{median['intercepted'] * 1e3:8.1f} ms vs {median[other] * 1e3:8.1f} ms (median of {runs} runs)",
            ratio=median["intercepted"] / median[other],
            goal=goal,
            lower_is_better=True,
        )

    return [
        row("1. memory", f"{SESSIONS}x{CALLS} calls: intercepted vs Client(server)", "memory", 1.1),
        row("2. stdio", f"{SESSIONS}x{CALLS} calls: intercepted vs the server over stdio", "stdio", 0.1),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: 2 runs per target")
    parser.add_argument("--runs", type=int, help="timed runs per target (median; 5, 2 with --quick)")
    args = parser.parse_args(argv)
    runs = args.runs or (2 if args.quick else 5)
    print_heading("intercept", f"{runs} runs of {SESSIONS} sessions x {CALLS} calls per target after a warm-up")
    began = time.perf_counter()
    results = guarded("1. memory", "intercepted vs Client(server)", 1.1, lambda: bench(runs), True)
    wall = time.perf_counter() - began
    return report(results, wall, args.json, {"quick": args.quick, "runs": runs}, lambda _r: None)


if __name__ == "__main__":
    sys.exit(main())
