#!/usr/bin/env python3
"""Benchmark for replay in the host's process: one host session, the real server in memory vs its replay.

The host is the MCP SDK's `Client` on examples/notes_server.py: connect, `list_tools`, one
`call_tool` (`read_file`), in each of the SDK's modes: `auto` (its default; a 2026-07-28 session) and
`legacy` (the handshake era). Each session is recorded once in process (`mockmcp.recording`, not
timed), then timed against, taking turns, R rounds each after a warm-up:

  (a) the real server in memory: `Client(server)`, the SDK's documented way to test;
  (b) `mockmcp.transport(cassette)`: the replay in the same process;
  (c) `mockmcp replay` over stdio: a process per session.

1. session   (b) over (a), median per session, mode auto. Goal: <= 1.0x.
2. legacy    the same in mode legacy. Goal: <= 1.0x.
3. calls     1000 sequential `read_file` calls in one session (legacy), (b) over (a). Goal: <= 1.0x.
4. stdio     (c) over (a), mode auto, for information.

In mode auto, `Client(server)` skips JSON-RPC altogether (the SDK hands a server object its requests
as Python objects), while (b) keeps the framing every real transport has: each message is encoded,
matched and parsed as over stdio.

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


async def one_session(target: Any, calls: int, mode: str) -> tuple[float, float]:
    """(seconds for the whole session, seconds for its calls)."""
    start = time.perf_counter()
    async with Client(target, mode=mode) as client:
        await client.list_tools()
        began = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool("read_file", {"path": "notes.txt"})
            text = result.content[0].text  # type: ignore[union-attr]
            if TEXT not in text:
                raise BenchError(f"read_file answered {text!r}")
        ended = time.perf_counter()
    return ended - start, ended - began


def bench(rounds: int, calls: int) -> list[Result]:
    folder = tempfile.mkdtemp(prefix="mockmcp-bench-inprocess-")
    server = notes_server()
    quiet = open(os.devnull, "w")  # noqa: SIM115 (open for the whole run)
    cassettes = {}
    for mode, n in (("auto", 1), ("legacy", 1), ("legacy", calls)):
        cassettes[mode, n] = os.path.join(folder, f"{mode}-{n}.yaml")
        anyio.run(one_session, mockmcp.recording(server, cassettes[mode, n], mode="all", log=quiet), n, mode)
    stdio = StdioServerParameters(
        command=PY, args=["-m", "mockmcp", "replay", cassettes["auto", 1]], env=CHILD_ENV, cwd=ROOT
    )
    targets = {
        "memory": lambda mode, n: server,
        "transport": lambda mode, n: mockmcp.transport(cassettes[mode, n], log=quiet),
        "stdio": lambda mode, n: stdio,
    }
    plan = [
        ("auto", 1, ("memory", "transport", "stdio")),
        ("legacy", 1, ("memory", "transport")),
        ("legacy", calls, ("memory", "transport")),
    ]
    times: dict[tuple[str, str, int], list[float]] = {}
    for mode, n, names in plan:
        for name in names:  # a warm-up each
            anyio.run(one_session, targets[name](mode, n), n, mode)
        for _ in range(rounds):
            for name in names:
                whole, part = anyio.run(one_session, targets[name](mode, n), n, mode)
                times.setdefault((name, mode, n), []).append(whole if n == 1 else part)
    median = {key: statistics.median(values) for key, values in times.items()}
    values = {f"{name}_{mode}_{n}": value for (name, mode, n), value in median.items()}

    def row(figure: str, subject: str, a: tuple[str, str, int], b: tuple[str, str, int], goal: float | None) -> Result:
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
        row("1. session", "auto: transport vs Client(server)", ("transport", "auto", 1), ("memory", "auto", 1), 1.0),
        row(
            "2. legacy", "legacy: transport vs Client(server)", ("transport", "legacy", 1), ("memory", "legacy", 1), 1.0
        ),
        row(
            "3. calls",
            f"{calls} calls: transport vs Client(server)",
            ("transport", "legacy", calls),
            ("memory", "legacy", calls),
            1.0,
        ),
        row("4. stdio", "replay over stdio vs Client(server)", ("stdio", "auto", 1), ("memory", "auto", 1), None),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: 200 calls, 3 rounds")
    parser.add_argument("--rounds", type=int, help="timed sessions per target (median; 30, 3 with --quick)")
    parser.add_argument("--calls", type=int, help="calls in figure 2's session (1000, 200 with --quick)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 30)
    calls = args.calls or (200 if args.quick else 1000)
    print_heading("in-process", f"{rounds} rounds per target after a warm-up; figure 2: {calls} calls in one session")
    began = time.perf_counter()
    results = guarded("1. session", "transport vs Client(server)", 1.0, lambda: bench(rounds, calls), True)
    wall = time.perf_counter() - began
    return report(results, wall, args.json, {"quick": args.quick, "rounds": rounds, "calls": calls}, lambda _r: None)


if __name__ == "__main__":
    sys.exit(main())
