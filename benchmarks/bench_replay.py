#!/usr/bin/env python3
"""Benchmarks for `mockmcp replay`: cold start, pipelined throughput, size independence.

Every figure is a ratio to a floor measured in the same run on the same machine, so the numbers
travel between machines better than absolute times do:

1. cold start   mockmcp's time from spawn to its answer to one tools/call, over a bare Python
                process that imports json, reads one line and writes one answer (median of N).
                Goal: <= 2.5x.
2. throughput   requests per second when M requests are pipelined into one replay process,
                over a bare Python read-parse-answer loop measured the same way. Goal: >= 0.5x.
3. size         the same pipelined rate against a generated 5000-interaction cassette, over a
                10-interaction one, with requests spread across the whole cassette. Goal: >= 0.8x.

Standard library only. Run from anywhere:

    python benchmarks/bench_replay.py [--quick] [--json FILE]

Every answer is checked (right id, the expected recorded result); a wrong or missing answer makes
that figure an ERROR and the exit status 2. A MISS does not change the exit status.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import random
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTES = os.path.join(ROOT, "cassettes", "notes.yaml")
PY = sys.executable

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

# Children run as on an ordinary machine: bytecode caches are written and used (pip compiles an
# installed package's bytecode at install time anyway), whatever this shell's environment says.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# mockmcp's cache of parsed cassettes goes to a folder of this run's, removed at exit.
CHILD_ENV["MOCKMCP_CACHE_DIR"] = tempfile.mkdtemp(prefix="mockmcp-bench-cache-")
atexit.register(shutil.rmtree, CHILD_ENV["MOCKMCP_CACHE_DIR"], True)
# The first start of a cassette parses its YAML; later starts read mockmcp's cache of parsed
# cassettes. Measured both ways: the cache turned off is the first-ever start.
NO_CACHE_ENV = {**CHILD_ENV, "MOCKMCP_CACHE_DIR": ""}

STOP_TIMEOUT = 10.0  # seconds a process gets to exit after its stdin closes
READ_TIMEOUT = 120.0  # seconds without progress before a run is declared stuck


class BenchError(Exception):
    """A process misbehaved (died, hung, answered wrongly): the figure cannot be trusted."""


# --- processes -------------------------------------------------------------------------------------


def _request(rid: int, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, separators=(",", ":")).encode() + b"\n"


class Server:
    """One stdio server process: stdin/stdout pipes, stderr to a temporary file, always stopped."""

    def __init__(self, argv: list[str], label: str, env: dict[str, str] | None = None) -> None:
        self.label = label
        self.argv = argv
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, bufsize=0, cwd=ROOT, env=env or CHILD_ENV)
        self.out_fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.in_fd = self.proc.stdin.fileno()  # type: ignore[union-attr]
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.out_fd, selectors.EVENT_READ)
        self.buffer = b""  # bytes read past the last complete line

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.in_fd, view[: 1 << 16]) :]
        except (BrokenPipeError, OSError):
            pass  # the reader reports the death, with the process's stderr

    def read_lines(self, count: int) -> list[bytes]:
        """Read exactly `count` complete lines (more may be buffered for later)."""
        chunks = [self.buffer]
        seen = self.buffer.count(b"\n")
        while seen < count:
            if not self.selector.select(READ_TIMEOUT):
                raise BenchError(f"{self.label}: no answer for {READ_TIMEOUT:.0f} s ({seen} of {count} lines read){self.stderr_tail()}")
            chunk = os.read(self.out_fd, 1 << 20)
            if not chunk:
                try:
                    status = self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    status = None
                raise BenchError(f"{self.label}: stdout closed after {seen} of {count} lines (exit status {status}){self.stderr_tail()}")
            chunks.append(chunk)
            seen += chunk.count(b"\n")
        data = b"".join(chunks)
        lines = data.split(b"\n")
        self.buffer = lines.pop()
        if len(lines) > count:
            self.buffer = b"\n".join(lines[count:] + [self.buffer])
            lines = lines[:count]
        return lines

    def stderr_tail(self, limit: int = 1500) -> str:
        try:
            self.err.seek(0)
            text = self.err.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return "" if not text else "\n  stderr: " + text[-limit:].replace("\n", "\n  ")

    def stop(self) -> None:
        """Close stdin, wait for the exit, kill if it does not come."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=STOP_TIMEOUT)
        self.selector.close()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.err.close()


def check_answers(label: str, lines: list[bytes], expected: dict[int, Any]) -> None:
    """Every expected id answered exactly once, each with the expected result."""
    if len(lines) != len(expected):
        raise BenchError(f"{label}: {len(lines)} answers for {len(expected)} requests")
    seen: set[int] = set()
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            raise BenchError(f"{label}: an answer is not JSON: {line[:200]!r}") from None
        rid = message.get("id") if isinstance(message, dict) else None
        if rid not in expected or rid in seen:
            raise BenchError(f"{label}: unexpected or repeated id in answer {line[:200]!r}")
        seen.add(rid)
        if message.get("result") != expected[rid]:
            raise BenchError(f"{label}: wrong answer to id {rid}: {line[:300]!r}")


# --- 1. cold start ---------------------------------------------------------------------------------


def cold_start_once(argv: list[str], label: str, env: dict[str, str] | None = None) -> float:
    """Seconds from spawn to one complete answer, the request written at spawn."""
    start = time.perf_counter()
    with Server(argv, label, env) as server:
        server.write_all(_request(1, NOTES_PARAMS))
        lines = server.read_lines(1)
        elapsed = time.perf_counter() - start
        check_answers(label, lines, {1: NOTES_RESULT})
    return elapsed


def bench_cold_start(runs: int, warmup: int) -> list[Result]:
    variants: list[tuple[str, list[str], dict[str, str]]] = [
        ("floor: python -c (json, 1 line)", [PY, "-c", FLOOR_ONE], CHILD_ENV),
        ("python -m mockmcp replay", [PY, "-m", "mockmcp", "replay", NOTES], CHILD_ENV),
    ]
    script = shutil.which("mockmcp", path=os.path.dirname(PY))
    if script:
        variants.append(("mockmcp replay (console script)", [script, "replay", NOTES], CHILD_ENV))
    variants.append(("python -m mockmcp replay, first start", [PY, "-m", "mockmcp", "replay", NOTES], NO_CACHE_ENV))
    times: dict[str, list[float]] = {label: [] for label, _, _ in variants}
    for _ in range(warmup):
        for label, argv, env in variants:
            cold_start_once(argv, label, env)
    for _ in range(runs):  # interleaved, so drift in machine load hits every variant alike
        for label, argv, env in variants:
            times[label].append(cold_start_once(argv, label, env))
    floor_label = variants[0][0]
    floor = statistics.median(times[floor_label])
    results = []
    for label, _argv, _env in variants[1:]:
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
                goal=2.5,
                lower_is_better=True,
            )
        )
    if not script:
        results.append(Result("1. cold start", "mockmcp replay (console script)", {}, "not found next to " + PY, None, 2.5, True))
    return results


# --- 2 and 3. pipelined throughput -----------------------------------------------------------------


@dataclass
class Pipeline:
    """A long-lived server fed rounds of pipelined requests; one request per line, fresh ids."""

    server: Server
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
            parts.append(_request(rid, params))
        self.next_id += count
        payload = b"".join(parts)
        writer = threading.Thread(target=self.server.write_all, args=(payload,), daemon=True)
        start = time.perf_counter()
        writer.start()
        lines = self.server.read_lines(count)
        elapsed = time.perf_counter() - start
        writer.join(STOP_TIMEOUT)
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

    with Server([PY, "-c", FLOOR_LOOP], "floor loop") as floor_server, Server([PY, "-m", "mockmcp", "replay", NOTES], "mockmcp replay") as server:
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
    """A cassette of `size` distinct tools/call interactions (flow-style YAML, i.e. JSON lines)."""
    lines = [
        "# Generated by benchmarks/bench_replay.py; safe to delete.",
        "version: 1",
        f"meta: {{description: 'benchmark cassette, {size} distinct tools/call interactions'}}",
        "interactions:",
    ]
    for i in range(size):
        request = {"id": i + 1, "method": "tools/call", "params": {"name": "lookup", "arguments": {"key": _key(i)}}}
        lines.append(f"- request: {json.dumps(request)}")
        lines.append(f"  response: {json.dumps({'result': _result(i)})}")
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


def bench_size(count: int, rounds: int, small: int, large: int) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-") as folder:
        paths = {}
        for size in (small, large):
            paths[size] = os.path.join(folder, f"tools-{size}.yaml")
            write_cassette(paths[size], size)
        load_start = time.perf_counter()
        with Server([PY, "-m", "mockmcp", "replay", paths[small]], f"mockmcp replay ({small})") as small_server, Server(
            [PY, "-m", "mockmcp", "replay", paths[large]], f"mockmcp replay ({large})"
        ) as large_server:
            pipes = [Pipeline(small_server, spread(small, 1)), Pipeline(large_server, spread(large, 2))]
            pipes[1].warm_up()
            large_ready = time.perf_counter() - load_start
            small_rate, large_rate = interleaved_rates(pipes, count, rounds)
    return [
        Result(
            figure="3. size",
            subject=f"{large} vs {small} interactions",
            values={"small_interactions": small, "large_interactions": large, "small_rps": small_rate, "large_rps": large_rate,
                    "large_ready_s": large_ready, "requests": count, "rounds": rounds},
            shown=f"{large_rate:9,.0f} req/s vs {small_rate:9,.0f} req/s ({large} ready after {large_ready:.2f} s, excluded)",
            ratio=large_rate / small_rate,
            goal=0.8,
            lower_is_better=False,
        )
    ]


# --- reporting -------------------------------------------------------------------------------------


@dataclass
class Result:
    figure: str
    subject: str
    values: dict[str, Any]
    shown: str
    ratio: float | None
    goal: float
    lower_is_better: bool
    error: str | None = None

    @property
    def goal_text(self) -> str:
        return f"{'<=' if self.lower_is_better else '>='} {self.goal}x"

    @property
    def verdict(self) -> str:
        if self.error:
            return "ERROR"
        if self.ratio is None:
            return "SKIP"
        ok = self.ratio <= self.goal if self.lower_is_better else self.ratio >= self.goal
        return "PASS" if ok else "MISS"

    def to_json(self) -> dict[str, Any]:
        return {
            "figure": self.figure,
            "subject": self.subject,
            "values": self.values,
            "ratio": self.ratio,
            "goal": self.goal_text,
            "verdict": self.verdict,
            "error": self.error,
        }


def print_table(results: list[Result]) -> None:
    head = ("figure", "subject", "measured", "ratio", "goal", "verdict")
    rows = [
        (r.figure, r.subject, r.error.splitlines()[0] if r.error else r.shown, "-" if r.ratio is None else f"{r.ratio:.2f}x", r.goal_text, r.verdict)
        for r in results
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(line.format(*head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row))
    for r in results:
        if r.error and "\n" in r.error:
            print(f"\n{r.figure} {r.subject}: {r.error}")


def guarded(figure: str, subject: str, goal: float, lower: bool, run: Callable[[], list[Result]]) -> list[Result]:
    try:
        return run()
    except BenchError as error:
        return [Result(figure, subject, {}, "", None, goal, lower, error=str(error))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run: fewer cold starts, fewer requests")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON to FILE")
    parser.add_argument("--runs", type=int, help="cold starts per variant (default 20, 7 with --quick)")
    parser.add_argument("--requests", type=int, help="pipelined requests per round (default 20000, 3000 with --quick)")
    parser.add_argument("--rounds", type=int, help="timed rounds per server, median taken (default 3, 2 with --quick)")
    parser.add_argument("--only", choices=("cold", "throughput", "size"), action="append", help="run only this figure (repeatable)")
    args = parser.parse_args(argv)
    runs = args.runs or (7 if args.quick else 20)
    count = args.requests or (3000 if args.quick else 20000)
    rounds = args.rounds or (2 if args.quick else 3)
    warmup = 1 if args.quick else 2
    only = set(args.only or ("cold", "throughput", "size"))

    print(f"mockmcp replay benchmark: {PY} (Python {platform.python_version()}), {os.cpu_count()} CPUs, {platform.platform()}")
    print(f"cold starts: {runs} per variant after {warmup} warm-up; pipelined: {rounds} rounds x {count} requests per server\n")
    began = time.perf_counter()
    results: list[Result] = []
    if "cold" in only:
        results += guarded("1. cold start", "mockmcp replay", 2.5, True, lambda: bench_cold_start(runs, warmup))
    if "throughput" in only:
        results += guarded("2. throughput", "mockmcp replay notes.yaml", 0.5, False, lambda: bench_throughput(count, rounds))
    if "size" in only:
        results += guarded("3. size", "5000 vs 10 interactions", 0.8, False, lambda: bench_size(count, rounds, 10, 5000))
    wall = time.perf_counter() - began
    print_table(results)
    print(f"\nwall time {wall:.1f} s")

    if args.json:
        document = {
            "python": PY,
            "python_version": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "config": {"quick": args.quick, "cold_runs": runs, "cold_warmup": warmup, "requests": count, "rounds": rounds},
            "wall_s": wall,
            "results": [r.to_json() for r in results],
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
    return 2 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
