#!/usr/bin/env python3
"""Benchmarks for `mockmcp replay`: cold start, pipelined throughput, size independence.

Every figure is a ratio to a floor measured in the same run on the same machine, so the numbers
travel between machines better than absolute times do:

1. cold start   mockmcp's time from spawn to its answer to one tools/call, over a bare Python
                process that imports json, reads one line and writes one answer (median of N).
                Goal: <= 1.5x with the cassette's parse cached (every start but the first);
                <= 2.5x for the first start, which parses the YAML.
2. throughput   requests per second when M requests are pipelined into one replay process,
                over a bare Python read-parse-answer loop measured the same way. Goal: >= 0.5x.
3. size         the same pipelined rate against generated cassettes of 100, 1000 and 5000
                interactions recorded one after another, over a 10-interaction one, with requests
                spread across the whole cassette. Goal: >= 0.8x each.

Standard library only. Run from anywhere:

    python benchmarks/bench_replay.py [--quick] [--sizes 100,1000,5000] [--json FILE]

Every answer is checked (right id, the expected recorded result); a wrong or missing answer makes
that figure an ERROR and the exit status 2. A MISS does not change the exit status.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from _harness import (
    CHILD_ENV,
    PY,
    ROOT,
    Process,
    Result,
    check_answers,
    guarded,
    make_parser,
    print_heading,
    report,
    request,
)

NOTES = os.path.join(ROOT, "cassettes", "notes.yaml")

# The request the cold-start and throughput figures send, and the answer notes.yaml recorded for it.
NOTES_PARAMS = {"name": "read_file", "arguments": {"path": "notes.txt"}}
NOTES_RESULT = {"content": [{"type": "text", "text": "remember to buy milk"}], "isError": False}

# The floors: the least a Python stdio JSON-RPC server can do, with the same interpreter.
FLOOR_ONE = (
    "import json, sys\n"
    "m = json.loads(sys.stdin.buffer.readline())\n"
    f"r = {NOTES_RESULT!r}\n"
    "sys.stdout.buffer.write(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}).encode() + b'\\n')\n"
    "sys.stdout.buffer.flush()\n"
    "sys.stdin.buffer.read()\n"  # like a server, stay until the host closes stdin
)
FLOOR_LOOP = (
    "import json, sys\n"
    f"r = {NOTES_RESULT!r}\n"
    "out = sys.stdout.buffer\n"
    "for line in sys.stdin.buffer:\n"
    "    m = json.loads(line)\n"
    "    out.write(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}).encode() + b'\\n')\n"
    "    out.flush()\n"
)

# The first start of a cassette parses its YAML; later starts read mockmcp's cache of parsed
# cassettes (in a folder of this run's, see _harness.CHILD_ENV). Measured both ways: the cache
# turned off is the first-ever start.
NO_CACHE_ENV = {**CHILD_ENV, "MOCKMCP_CACHE_DIR": ""}

COLD_GOAL = 1.5  # a cached start: the launcher reads replay's options without click, and no YAML is parsed
FIRST_START_GOAL = 2.5  # PyYAML's import and parse come on top


# --- 1. cold start ---------------------------------------------------------------------------------


def cold_start_once(argv: list[str], label: str, env: dict[str, str] | None = None) -> float:
    """Seconds from spawn to one complete answer, the request written at spawn."""
    start = time.perf_counter()
    with Process(argv, label, env) as server:
        server.write_all(request(1, NOTES_PARAMS))
        lines = server.read_lines(1)
        elapsed = time.perf_counter() - start
        check_answers(label, lines, {1: NOTES_RESULT})
    return elapsed


def bench_cold_start(runs: int, warmup: int) -> list[Result]:
    variants: list[tuple[str, list[str], dict[str, str], float]] = [
        ("floor: python -c (json, 1 line)", [PY, "-c", FLOOR_ONE], CHILD_ENV, 1.0),
        ("python -m mockmcp replay", [PY, "-m", "mockmcp", "replay", NOTES], CHILD_ENV, COLD_GOAL),
    ]
    script = shutil.which("mockmcp", path=os.path.dirname(PY))
    if script:
        variants.append(("mockmcp replay (console script)", [script, "replay", NOTES], CHILD_ENV, COLD_GOAL))
    first = [PY, "-m", "mockmcp", "replay", NOTES]
    variants.append(("python -m mockmcp replay, first start", first, NO_CACHE_ENV, FIRST_START_GOAL))
    times: dict[str, list[float]] = {label: [] for label, _, _, _ in variants}
    for _ in range(warmup):
        for label, argv, env, _goal in variants:
            cold_start_once(argv, label, env)
    for _ in range(runs):  # interleaved, so drift in machine load hits every variant alike
        for label, argv, env, _goal in variants:
            times[label].append(cold_start_once(argv, label, env))
    floor_label = variants[0][0]
    floor = statistics.median(times[floor_label])
    results = []
    for label, _argv, _env, goal in variants[1:]:
        median = statistics.median(times[label])
        results.append(
            Result(
                figure="1. cold start",
                subject=label,
                values={
                    "floor_median_ms": floor * 1e3,
                    "median_ms": median * 1e3,
                    "min_ms": min(times[label]) * 1e3,
                    "floor_min_ms": min(times[floor_label]) * 1e3,
                    "runs": runs,
                },
                shown=f"{median * 1e3:7.1f} ms vs floor {floor * 1e3:6.1f} ms (median of {runs})",
                ratio=median / floor,
                goal=goal,
                lower_is_better=True,
            )
        )
    if not script:
        results.append(
            Result(
                "1. cold start", "mockmcp replay (console script)", {}, "not found next to " + PY, None, COLD_GOAL, True
            )
        )
    return results


# --- 2 and 3. pipelined throughput -----------------------------------------------------------------


@dataclass
class Pipeline:
    """A long-lived server fed rounds of pipelined requests; one request per line, fresh ids."""

    server: Process
    make_params: Callable[[int], tuple[dict[str, Any], Any]]  # request number -> (params, expected result)
    next_id: int = 1
    rates: list[float] = field(default_factory=list)

    def warm_up(self) -> None:
        """One request answered before any clock starts: start-up and cassette load stay out."""
        self.run_round(1, timed=False)

    def run_round(self, count: int, timed: bool = True) -> None:
        expected: dict[int, Any] = {}
        parts = []
        for n in range(count):
            rid = self.next_id + n
            params, result = self.make_params(rid)
            expected[rid] = result
            parts.append(request(rid, params))
        self.next_id += count
        lines, elapsed = self.server.send_pipelined(b"".join(parts), count)
        check_answers(self.server.label, lines, expected)
        if timed:
            self.rates.append(count / elapsed)


def interleaved_rates(pipelines: list[Pipeline], count: int, rounds: int) -> list[float]:
    """Warm every server up, then alternate timed rounds between them; median rate of each."""
    for pipeline in pipelines:
        pipeline.warm_up()
    for _ in range(rounds):
        for pipeline in pipelines:
            pipeline.run_round(count)
    return [statistics.median(p.rates) for p in pipelines]


def bench_throughput(count: int, rounds: int) -> list[Result]:
    def notes(_rid: int) -> tuple[dict[str, Any], Any]:
        return NOTES_PARAMS, NOTES_RESULT

    with (
        Process([PY, "-c", FLOOR_LOOP], "floor loop") as floor_server,
        Process([PY, "-m", "mockmcp", "replay", NOTES], "mockmcp replay") as server,
    ):
        floor_rate, rate = interleaved_rates([Pipeline(floor_server, notes), Pipeline(server, notes)], count, rounds)
    return [
        Result(
            figure="2. throughput",
            subject="mockmcp replay notes.yaml",
            values={"floor_rps": floor_rate, "rps": rate, "requests": count, "rounds": rounds},
            shown=f"{rate:9,.0f} req/s vs floor {floor_rate:9,.0f} req/s ({rounds} x {count})",
            ratio=rate / floor_rate,
            goal=0.5,
            lower_is_better=False,
        )
    ]


def _key(i: int) -> str:
    return f"item-{i:05d}"


def _result(i: int) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"the value of {_key(i)}"}], "isError": False}


def write_cassette(path: str, size: int) -> None:
    """A cassette of `size` distinct tools/call interactions (flow-style YAML, i.e. JSON lines), with the times a
    recording keeps: one session, a call every 2 ms, each answered in 0.5 ms. Asked in another order, an answer
    waits for the calls recorded before it (at most the 0.5 ms its server took), as replay keeps the recorded
    order."""
    lines = [
        "# Generated by benchmarks/bench_replay.py; safe to delete.",
        "version: 1",
        f"meta: {{description: 'benchmark cassette, {size} distinct tools/call interactions'}}",
        "interactions:",
    ]
    for i in range(size):
        request = {"id": i + 1, "method": "tools/call", "params": {"name": "lookup", "arguments": {"key": _key(i)}}}
        lines.append(f"- at: {i * 0.002:.4f}")
        lines.append(f"  request: {json.dumps(request)}")
        lines.append(f"  response: {json.dumps({'result': _result(i)})}")
        lines.append("  took: 0.0005")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def spread(size: int, seed: int) -> Callable[[int], tuple[dict[str, Any], Any]]:
    """Request n asks for an interaction from a shuffled sweep of the whole cassette."""
    rng = random.Random(seed)
    order: list[int] = []

    def make(rid: int) -> tuple[dict[str, Any], Any]:
        if not order:
            order.extend(range(size))
            rng.shuffle(order)
        i = order.pop()
        return {"name": "lookup", "arguments": {"key": _key(i)}}, _result(i)

    return make


def bench_size(count: int, rounds: int, small: int, larger: tuple[int, ...]) -> list[Result]:
    sizes = (small, *larger)
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-") as folder, contextlib.ExitStack() as stack:
        pipes = []
        ready: dict[int, float] = {}
        for seed, size in enumerate(sizes, start=1):
            path = os.path.join(folder, f"tools-{size}.yaml")
            write_cassette(path, size)
            load_start = time.perf_counter()
            server = stack.enter_context(Process([PY, "-m", "mockmcp", "replay", path], f"mockmcp replay ({size})"))
            pipes.append(Pipeline(server, spread(size, seed)))
            pipes[-1].warm_up()
            ready[size] = time.perf_counter() - load_start
        small_rate, *rates = interleaved_rates(pipes, count, rounds)
    return [
        Result(
            figure="3. size",
            subject=f"{size} vs {small} interactions",
            values={
                "small_interactions": small,
                "large_interactions": size,
                "small_rps": small_rate,
                "large_rps": rate,
                "large_ready_s": ready[size],
                "requests": count,
                "rounds": rounds,
            },
            shown=(
                f"{rate:9,.0f} req/s vs {small_rate:9,.0f} req/s ({size} ready after {ready[size]:.2f} s, excluded)"
            ),
            ratio=rate / small_rate,
            goal=0.8,
            lower_is_better=False,
        )
        for size, rate in zip(larger, rates, strict=True)
    ]


# --- reporting -------------------------------------------------------------------------------------


def print_error_details(results: list[Result]) -> None:
    """Under the table, each error that spans more than its first line, whole."""
    for r in results:
        if r.error and "\n" in r.error:
            print(f"\n{r.figure} {r.subject}: {r.error}")


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: fewer cold starts, fewer requests")
    parser.add_argument("--runs", type=int, help="cold starts per variant (default 20, 7 with --quick)")
    parser.add_argument("--requests", type=int, help="pipelined requests per round (default 20000, 3000 with --quick)")
    parser.add_argument("--rounds", type=int, help="timed rounds per server, median taken (default 3, 2 with --quick)")
    parser.add_argument(
        "--sizes", help="figure 3's cassette sizes, each against 10 interactions (default 100,1000,5000)"
    )
    parser.add_argument(
        "--only", choices=("cold", "throughput", "size"), action="append", help="run only this figure (repeatable)"
    )
    args = parser.parse_args(argv)
    runs = args.runs or (7 if args.quick else 20)
    count = args.requests or (3000 if args.quick else 20000)
    rounds = args.rounds or (2 if args.quick else 3)
    warmup = 1 if args.quick else 2
    only = set(args.only or ("cold", "throughput", "size"))

    print_heading(
        "replay",
        f"cold starts: {runs} per variant after {warmup} warm-up; "
        f"pipelined: {rounds} rounds x {count} requests per server",
    )
    began = time.perf_counter()
    results: list[Result] = []
    if "cold" in only:
        results += guarded(
            "1. cold start", "mockmcp replay", COLD_GOAL, lambda: bench_cold_start(runs, warmup), lower_is_better=True
        )
    if "throughput" in only:
        results += guarded("2. throughput", "mockmcp replay notes.yaml", 0.5, lambda: bench_throughput(count, rounds))
    if "size" in only:
        sizes = tuple(int(size) for size in (args.sizes or "100,1000,5000").split(","))
        results += guarded(
            "3. size",
            f"{', '.join(map(str, sizes))} vs 10 interactions",
            0.8,
            lambda: bench_size(count, rounds, 10, sizes),
        )
    wall = time.perf_counter() - began
    config = {"quick": args.quick, "cold_runs": runs, "cold_warmup": warmup, "requests": count, "rounds": rounds}
    # This benchmark's table has always had a "ratio" column, kept its rows' trailing spaces and
    # written no "result" into the JSON file.
    return report(
        results,
        wall,
        args.json,
        config,
        print_error_details,
        result_heading="ratio",
        strip=False,
        with_result_text=False,
    )


if __name__ == "__main__":
    sys.exit(main())
