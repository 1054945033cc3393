#!/usr/bin/env python3
"""Benchmark for replay in the host's process: one host session, the real server in memory vs its replay.

The host is the MCP SDK's `Client` (mode legacy) on examples/notes_server.py: connect, `list_tools`,
one `call_tool` (`read_file`). The session is recorded once through `mockmcp record` (not timed),
then timed against, taking turns, R rounds each after a warm-up:

  (a) the real server in memory: `Client(server)`, the SDK's documented way to test;
  (b) `mockmcp.transport(cassette)`: the replay in the same process;
  (c) `mockmcp replay` over stdio: a process per session.

1. session   (b) over (a), median per session. Goal: <= 1.0x.
2. calls     1000 sequential `read_file` calls in one session, (b) over (a). Goal: <= 1.0x.
3. stdio     (c) over (a), for information.

It needs the test extra (the SDK). Run from anywhere:

    python benchmarks/bench_inprocess.py [--quick] [--rounds R] [--calls N] [--json FILE]

Every answer is checked (the recorded text); a wrong one makes the figure an ERROR, exit status 2.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Any

from _harness import CHILD_ENV, PY, ROOT, BenchError, Result, guarded, make_parser, print_heading, report

sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, ROOT)

import anyio
from mcp import Client, StdioServerParameters

import mockmcp

TEXT = "buy milk"  # what examples/notes_server.py's notes.txt holds


def notes_server() -> Any:
    from notes_server import server  # type: ignore[import-not-found]

    return server


async def one_session(target: Any, calls: int) -> tuple[float, float]:
    """(seconds for the whole session, seconds for its calls)."""
    start = time.perf_counter()
    async with Client(target, mode="legacy") as client:
        await client.list_tools()
        began = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool("read_file", {"path": "notes.txt"})
            text = result.content[0].text  # type: ignore[union-attr]
            if TEXT not in text:
                raise BenchError(f"read_file answered {text!r}")
        ended = time.perf_counter()
    return ended - start, ended - began


def record(cassette: str, calls: int) -> None:
    recorder = StdioServerParameters(
        command=PY,
        args=["-m", "mockmcp", "record", "--mode", "all", "-o", cassette, "--", PY, "examples/notes_server.py"],
        env=CHILD_ENV,
        cwd=ROOT,
    )
    anyio.run(one_session, recorder, calls)
    deadline = time.monotonic() + 20
    while (not os.path.exists(cassette) or os.path.exists(cassette + ".journal")) and time.monotonic() < deadline:
        time.sleep(0.02)


def bench(rounds: int, calls: int) -> list[Result]:
    folder = tempfile.mkdtemp(prefix="mockmcp-bench-inprocess-")
    one, many = os.path.join(folder, "one.yaml"), os.path.join(folder, "many.yaml")
    record(one, 1)
    record(many, calls)
    stdio = StdioServerParameters(command=PY, args=["-m", "mockmcp", "replay", one], env=CHILD_ENV, cwd=ROOT)
    server = notes_server()
    targets = {
        "memory": lambda n: server,
        "transport": lambda n: mockmcp.transport(one if n == 1 else many),
        "stdio": lambda n: stdio,
    }
    times: dict[tuple[str, int], list[float]] = {}
    for n, names in ((1, ("memory", "transport", "stdio")), (calls, ("memory", "transport"))):
        for name in names:  # a warm-up each
            anyio.run(one_session, targets[name](n), n)
        for _ in range(rounds):
            for name in names:
                whole, part = anyio.run(one_session, targets[name](n), n)
                times.setdefault((name, n), []).append(whole if n == 1 else part)
    median = {key: statistics.median(values) for key, values in times.items()}
    values = {f"{name}_{n}": value for (name, n), value in median.items()}

    def row(figure: str, subject: str, a: tuple[str, int], b: tuple[str, int], goal: float | None) -> Result:
        return Result(
            figure=figure,
            subject=subject,
            values=values,
            shown=f"{median[a] * 1e3:8.2f} ms vs {median[b] * 1e3:8.2f} ms (median of {rounds})",
            ratio=median[a] / median[b],
            goal=goal,
            lower_is_better=True,
        )

    return [
        row("1. session", "mockmcp.transport vs Client(server)", ("transport", 1), ("memory", 1), 1.0),
        row("2. calls", f"{calls} calls: transport vs Client(server)", ("transport", calls), ("memory", calls), 1.0),
        row("3. stdio", "mockmcp replay over stdio vs Client(server)", ("stdio", 1), ("memory", 1), None),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: 200 calls, 3 rounds")
    parser.add_argument("--rounds", type=int, help="timed sessions per target (median; 10, 3 with --quick)")
    parser.add_argument("--calls", type=int, help="calls in figure 2's session (1000, 200 with --quick)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 10)
    calls = args.calls or (200 if args.quick else 1000)
    print_heading("in-process", f"{rounds} rounds per target after a warm-up; figure 2: {calls} calls in one session")
    began = time.perf_counter()
    results = guarded("1. session", "transport vs Client(server)", 1.0, lambda: bench(rounds, calls), True)
    wall = time.perf_counter() - began
    return report(results, wall, args.json, {"quick": args.quick, "rounds": rounds, "calls": calls}, lambda _r: None)


if __name__ == "__main__":
    sys.exit(main())
