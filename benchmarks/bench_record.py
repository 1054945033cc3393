#!/usr/bin/env python3
"""Benchmarks for `mockmcp record`: pipelined throughput, added latency, flat cost over a session.

`mockmcp record -o CASSETTE --record-mode rewrite -- SERVER...` sits between a host and a real server as a
transparent stdio proxy, journaling every line as it passes. Each figure compares it with the same
server reached directly, measured in the same run on the same machine:

1. throughput   requests per second when M requests are pipelined through the recorder to a fast
                stdlib server, over the same server direct. Goal: >= 0.5x. The time the recorder
                then takes to write the cassette, and its size, are shown for information.
2. latency      sequential request/answer round trips through the recorder and direct: the median
                and p99 of each, and what the recorder adds (microseconds). For information.
3. flat         the pipelined rate over the last quarter of one long recorded session, over its
                first quarter, each taken relative to the same server direct in interleaved
                rounds (the plain ratio is shown too). Goal: >= 0.8x.

Standard library only. Run from anywhere, with an interpreter that has mockmcp installed:

    python benchmarks/bench_record.py [--quick] [--json FILE]

Every answer is checked (right id, the answer to that very request), and so is every cassette (one
interaction per request, in order, with its answer). A wrong or missing answer makes that figure
an ERROR, a wrong cassette its cassette row, and either the exit status 2. A MISS does not change
the exit status.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from _harness import (
    PY,
    BenchError,
    Process,
    Result,
    check_answers,
    guarded,
    make_parser,
    print_heading,
    report,
    request,
)

# The fast server: the least a Python stdio JSON-RPC server can do, with the same interpreter. Its
# answer names the key it was asked for, so an answer paired with the wrong request is caught.
FAST_SERVER = (
    "import json, sys\n"
    "out = sys.stdout.buffer\n"
    "for line in sys.stdin.buffer:\n"
    "    m = json.loads(line)\n"
    "    r = "
    "{'content': [{'type': 'text', 'text': 'the value of ' + m['params']['arguments']['key']}], 'isError': False}\n"
    "    out.write(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}).encode() + b'\\n')\n"
    "    out.flush()\n"
)

# The recorder builds and writes the cassette after its stdin closes, which takes time in proportion
# to the session: it gets this long, plus RECORD_STOP_PER_REQUEST for each request recorded.
RECORD_STOP_TIMEOUT = 30.0
RECORD_STOP_PER_REQUEST = 0.002


# --- requests and answers --------------------------------------------------------------------------


def _key(rid: int) -> str:
    return f"item-{rid}"


def _params(rid: int) -> dict[str, Any]:
    return {"name": "lookup", "arguments": {"key": _key(rid)}}


def _result(rid: int) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"the value of {_key(rid)}"}], "isError": False}


def _request(rid: int) -> bytes:
    return request(rid, _params(rid))


class Expected(Mapping[int, Any]):
    """What check_answers expects for the requests `ids`: `_result(rid)` for each, made on demand.

    Only an int is one of these ids: an answer to id 1.0 is not an answer to request 1.
    """

    def __init__(self, ids: range) -> None:
        self.ids = ids

    def __contains__(self, rid: object) -> bool:
        return isinstance(rid, int) and rid in self.ids

    def __getitem__(self, rid: int) -> Any:
        if rid not in self:
            raise KeyError(rid)
        return _result(rid)

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


# --- processes -------------------------------------------------------------------------------------


class Server(Process):
    """A stdio server sent `lookup` requests with ids counted from 1, every answer checked."""

    next_id = 1  # the id of the next request

    def take_ids(self, count: int) -> range:
        ids = range(self.next_id, self.next_id + count)
        self.next_id += count
        return ids

    def warm_up(self) -> None:
        """One request answered before any clock starts: interpreter start-up stays out."""
        ids = self.take_ids(1)
        self.write_all(_request(ids[0]))
        check_answers(self.label, self.read_lines(1), Expected(ids))

    def pipelined(self, count: int) -> float:
        """Write `count` requests back to back from a thread while reading every answer: seconds to the last."""
        ids = self.take_ids(count)
        lines, elapsed = self.send_pipelined(b"".join(_request(rid) for rid in ids), count)
        check_answers(self.label, lines, Expected(ids))
        return elapsed

    def round_trip(self) -> float:
        """One request written, its answer read: seconds. The answer is checked."""
        ids = self.take_ids(1)
        data = _request(ids[0])
        start = time.perf_counter()
        self.write_all(data)
        lines = self.read_lines(1)
        elapsed = time.perf_counter() - start
        check_answers(self.label, lines, Expected(ids))
        return elapsed


class Direct(Server):
    def __init__(self) -> None:
        super().__init__([PY, "-c", FAST_SERVER], "direct server")


class Recording(Server):
    """`python -m mockmcp record -o FOLDER/NAME.yaml --record-mode rewrite -- python -c FAST_SERVER`."""

    def __init__(self, folder: str, name: str, expected_requests: int, full_check: bool = False) -> None:
        self.cassette = os.path.join(folder, name + ".yaml")
        self.full_check = full_check  # load the cassette with mockmcp's loader even when a scan finds it right
        recorder = [PY, "-m", "mockmcp", "record", "-o", self.cassette, "--record-mode", "rewrite"]
        argv = [*recorder, "--", PY, "-c", FAST_SERVER]
        super().__init__(
            argv, "recorder", stop_timeout=RECORD_STOP_TIMEOUT + RECORD_STOP_PER_REQUEST * expected_requests
        )

    def finish(self) -> Finished:
        """Close stdin and wait for the cassette; then check it and remove it.

        A recorder that is killed, fails or writes no cassette raises BenchError. A cassette that
        does not hold exactly the requests sent, in order, each with its answer, is a `problem`.
        """
        status, waited = self.stop()
        if status is None:
            raise BenchError(
                f"{self.label}: still running {waited:.0f} s after stdin closed; killed{self.stderr_tail()}"
            )
        if status != 0:
            raise BenchError(f"{self.label}: exited with status {status}{self.stderr_tail()}")
        if os.path.exists(self.cassette + ".journal"):
            raise BenchError(f"{self.label}: the journal was left behind{self.stderr_tail()}")
        try:
            size = os.path.getsize(self.cassette)
        except OSError:
            raise BenchError(f"{self.label}: no cassette written{self.stderr_tail()}") from None
        ids = range(1, self.next_id)
        problem = check_cassette(self.cassette, ids, self.full_check)
        os.unlink(self.cassette)
        return Finished(waited, size, len(ids), problem)


@dataclass
class Finished:
    """A recording that ended: how long the cassette took to write after stdin closed, and what it holds."""

    seconds: float
    size: int
    requests: int
    problem: str | None  # None: one interaction per request, in order, each with its answer


def check_cassette(path: str, ids: range, full: bool) -> str | None:
    """The cassette must hold one tools/call interaction per id, in order, each with its answer.

    Loading a large cassette takes longer than recording it (PyYAML parses about 0.6 MB/s), so
    unless `full` is asked for, the YAML text is first scanned for that shape, which takes
    milliseconds; the cassette is loaded and validated with mockmcp's own loader only when the
    scan finds something wrong, to say what. Returns None when all is well, else the problem.
    """
    if not full and _scan_cassette(path, ids):
        return None
    return _load_and_check(path, ids)


def _scan_cassette(path: str, ids: range) -> bool:
    """A quick look at the YAML text: one top-level item per id, each the request with that id and its answer."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return False
    _head, found, body = text.partition("\ninteractions:\n- ")
    blocks = body.split("\n- ") if found else []
    if len(blocks) != len(ids):
        return False
    for rid, block in zip(ids, blocks, strict=True):
        if (
            f"\n  request:\n    id: {rid}\n    method: tools/call\n" not in block
            or "\n  response:\n    result:\n" not in block
            or f"text: the value of {_key(rid)}" not in block
            or "\n  server:" in block
        ):
            return False
    return True


def _load_and_check(path: str, ids: range) -> str | None:
    """Load and validate the cassette with mockmcp's loader, then compare every interaction with what was sent."""
    from mockmcp.cassette import store as cassettes  # the benchmark's interpreter has mockmcp installed
    from mockmcp.errors import MockmcpError

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        # loads(), not load(): no cache of parsed cassettes is written for this check.
        found = cassettes.loads(text, path).interactions
    except (OSError, UnicodeDecodeError, MockmcpError) as error:
        return f"the cassette does not load: {error}"
    requests = {i.message.get("id"): i for i in found if i.kind == "request" and isinstance(i.message, dict)}
    others = [i for i in found if i.kind != "request"]
    unanswered = [rid for rid in ids if rid in requests and requests[rid].response is None]
    wrong = [
        rid
        for rid in ids
        if rid not in requests
        or requests[rid].message != {"id": rid, "method": "tools/call", "params": _params(rid)}
        or requests[rid].response not in (None, {"result": _result(rid)})
        or requests[rid].server
    ]
    in_order = [i.message.get("id") for i in found if i.kind == "request" and isinstance(i.message, dict)] == list(ids)
    if len(found) == len(ids) and not (others or unanswered or wrong) and in_order:
        return None
    parts = [f"{len(found)} interactions for {len(ids)} requests"]
    if unanswered:
        parts.append(f"{len(unanswered)} requests without their answer (ids {_some(unanswered)})")
    if others:
        raw = [o for o in others for item in o.server if item.kind == "raw"]
        parts.append(f"{len(others)} server-only interactions ({len(raw)} holding a raw line)")
    if wrong:
        parts.append(f"{len(wrong)} requests missing or recorded wrongly (ids {_some(wrong)})")
    if not in_order:
        parts.append("requests out of order")
    return "; ".join(parts)


def _some(ids: list[int], limit: int = 5) -> str:
    return ", ".join(map(str, ids[:limit])) + (", ..." if len(ids) > limit else "")


def stop_all(servers: list[Server]) -> None:
    for server in servers:
        server.close()


# --- 1. throughput ---------------------------------------------------------------------------------


def cassette_result(figure: str, finishes: list[Finished]) -> Result:
    """The row for the cassettes a figure recorded: time to write after stdin closed, size, check."""
    seconds = statistics.median(f.seconds for f in finishes)
    last = finishes[-1]
    many = f"median of {len(finishes)}, " if len(finishes) > 1 else ""
    problems = [f"cassette of {f.requests} requests: {f.problem}" for f in finishes if f.problem]
    return Result(
        figure=figure,
        subject="cassette written after stdin closed",
        values={
            "finish_s": seconds,
            "finish_s_all": [f.seconds for f in finishes],
            "cassette_bytes": last.size,
            "interactions_expected": last.requests,
            "problems": problems,
        },
        shown=(
            f"{seconds:6.2f} s ({many}{last.requests} interactions), "
            f"{last.size / 1e6:.1f} MB, {last.size / last.requests:.0f} B each"
        ),
        ratio=None,
        goal=None,
        error="\n".join(problems) or None,
    )


def bench_throughput(folder: str, count: int, rounds: int) -> list[Result]:
    """Each round: a fresh direct server and a fresh recorder, each warmed up, then M pipelined."""
    rates: dict[str, list[float]] = {"direct": [], "recorder": []}
    finishes: list[Finished] = []
    for n in range(rounds):
        order = ["direct", "recorder"] if n % 2 == 0 else ["recorder", "direct"]
        for kind in order:  # interleaved, so drift in machine load hits both alike
            server: Server = Direct() if kind == "direct" else Recording(folder, f"throughput-{n}", count + 1)
            try:
                server.warm_up()
                rates[kind].append(count / server.pipelined(count))
                if isinstance(server, Recording):
                    finishes.append(server.finish())
            finally:
                server.close()
    direct, recorder = statistics.median(rates["direct"]), statistics.median(rates["recorder"])
    return [
        Result(
            figure="1. throughput",
            subject="mockmcp record, pipelined",
            values={
                "direct_rps": direct,
                "recorder_rps": recorder,
                "requests": count,
                "rounds": rounds,
                "direct_rps_all": rates["direct"],
                "recorder_rps_all": rates["recorder"],
            },
            shown=f"{recorder:9,.0f} req/s vs direct {direct:9,.0f} req/s ({rounds} x {count})",
            ratio=recorder / direct,
            goal=0.5,
        ),
        cassette_result("1. throughput", finishes),
    ]


# --- 2. latency ------------------------------------------------------------------------------------


def _percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def bench_latency(folder: str, pairs: int, warmup: int) -> list[Result]:
    """Both servers up together; round trips alternate between them, one request at a time."""
    servers: list[Server] = []
    try:
        direct = Direct()
        servers.append(direct)
        recorder = Recording(folder, "latency", pairs + warmup, full_check=True)
        servers.append(recorder)
        times: dict[Server, list[float]] = {direct: [], recorder: []}
        for n in range(warmup + pairs):
            for server in servers if n % 2 == 0 else servers[::-1]:
                elapsed = server.round_trip()
                if n >= warmup:
                    times[server].append(elapsed)
        finished = recorder.finish()
    finally:
        stop_all(servers)
    d_med, r_med = statistics.median(times[direct]) * 1e6, statistics.median(times[recorder]) * 1e6
    d_p99, r_p99 = _percentile(times[direct], 0.99) * 1e6, _percentile(times[recorder], 0.99) * 1e6
    return [
        Result(
            figure="2. latency",
            subject="added to one round trip",
            values={
                "direct_median_us": d_med,
                "recorder_median_us": r_med,
                "direct_p99_us": d_p99,
                "recorder_p99_us": r_p99,
                "added_median_us": r_med - d_med,
                "added_p99_us": r_p99 - d_p99,
                "pairs": pairs,
                "warmup": warmup,
            },
            shown=(
                f"median {r_med:5.0f} us vs direct {d_med:4.0f} us; "
                f"p99 {r_p99:5.0f} us vs {d_p99:4.0f} us (+{r_p99 - d_p99:.0f})"
            ),
            ratio=None,
            goal=None,
            figure_text=f"{r_med - d_med:+.0f} us",
        ),
        cassette_result("2. latency", [finished]),
    ]


# --- 3. flat cost over a long session --------------------------------------------------------------


def bench_flat(folder: str, session: int, rounds: int) -> list[Result]:
    """One recorder, one long session sent as pipelined rounds; its first quarter's rounds vs its last's.

    Every round has the same shape (the pipes fill, flow, drain), so only the session's age
    differs. After each of the recorder's rounds, a direct server gets the same round, and the
    recorder's rate is taken relative to it: on a busy machine the rate of everything drifts by
    tens of percent within seconds, the pair's ratio much less. The figure is the last quarter's
    median relative rate over the first quarter's; the plain rates are shown too.
    """
    size = session // rounds
    servers: list[Server] = []
    try:
        recorder = Recording(folder, "flat", 1 + size * rounds)
        servers.append(recorder)
        direct = Direct()
        servers.append(direct)
        recorder.warm_up()
        direct.warm_up()
        rates: dict[Server, list[float]] = {recorder: [], direct: []}
        for _ in range(rounds):
            for server in servers:
                rates[server].append(size / server.pipelined(size))
        finished = recorder.finish()
    finally:
        stop_all(servers)
    quarter = rounds // 4
    relative = [r / d for r, d in zip(rates[recorder], rates[direct], strict=True)]
    first, last = statistics.median(relative[:quarter]), statistics.median(relative[-quarter:])
    plain_first, plain_last = (
        statistics.median(rates[recorder][:quarter]),
        statistics.median(rates[recorder][-quarter:]),
    )
    direct_drift = statistics.median(rates[direct][-quarter:]) / statistics.median(rates[direct][:quarter])
    return [
        Result(
            figure="3. flat",
            subject="last vs first quarter of a session",
            values={
                "first_quarter_relative": first,
                "last_quarter_relative": last,
                "first_quarter_rps": plain_first,
                "last_quarter_rps": plain_last,
                "plain_ratio": plain_last / plain_first,
                "direct_drift": direct_drift,
                "session": size * rounds,
                "rounds": rounds,
                "round_requests": size,
                "round_rps": rates[recorder],
                "direct_round_rps": rates[direct],
            },
            shown=(
                f"{last:.2f} vs {first:.2f} of direct ({rounds} x {size}); "
                f"plain {plain_last:,.0f} vs {plain_first:,.0f} req/s "
                f"= {plain_last / plain_first:.2f}x, direct drifted {direct_drift:.2f}x"
            ),
            ratio=last / first,
            goal=0.8,
        ),
        cassette_result("3. flat", [finished]),
    ]


# --- reporting -------------------------------------------------------------------------------------


def print_error_details(results: list[Result]) -> None:
    """Under the table, each error it does not show whole: one that spans lines, or a row's besides its figures."""
    for r in results:
        if r.error and (r.shown or "\n" in r.error):
            print(f"\n{r.verdict} {r.figure}, {r.subject}:\n  " + r.error.replace("\n", "\n  "))


def main(argv: list[str] | None = None) -> int:
    parser = make_parser(__doc__, "a short run: fewer requests")
    parser.add_argument(
        "--requests", type=int, help="pipelined requests per round, figure 1 (default 20000, 3000 with --quick)"
    )
    parser.add_argument(
        "--rounds", type=int, help="timed rounds per side, figure 1, median taken (default 3, 2 with --quick)"
    )
    parser.add_argument(
        "--pairs", type=int, help="timed round trips per side, figure 2 (default 2000, 300 with --quick)"
    )
    parser.add_argument(
        "--session", type=int, help="requests in the long session, figure 3 (default 40000, 6000 with --quick)"
    )
    parser.add_argument(
        "--only", choices=("throughput", "latency", "flat"), action="append", help="run only this figure (repeatable)"
    )
    args = parser.parse_args(argv)
    count = args.requests or (3000 if args.quick else 20000)
    rounds = args.rounds or (2 if args.quick else 3)
    pairs = args.pairs or (300 if args.quick else 2000)
    warmup = 20 if args.quick else 50
    session = args.session or (6000 if args.quick else 40000)
    parts = 8 if args.quick else 20  # figure 3: the session is sent in this many rounds; a quarter is 2 or 5 of them
    only = set(args.only or ("throughput", "latency", "flat"))
    if min(count, rounds, pairs, session // parts) < 1:
        parser.error(f"--requests, --rounds and --pairs must be at least 1, --session at least {parts}")

    print_heading(
        "record",
        f"pipelined: {rounds} rounds x {count} requests per side; "
        f"round trips: {pairs} per side after {warmup} warm-up; "
        f"long session: {session} requests in {parts} rounds",
    )
    began = time.perf_counter()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-record-") as folder:
        if "throughput" in only:
            results += guarded(
                "1. throughput", "mockmcp record, pipelined", 0.5, lambda: bench_throughput(folder, count, rounds)
            )
        if "latency" in only:
            results += guarded(
                "2. latency", "added to one round trip", None, lambda: bench_latency(folder, pairs, warmup)
            )
        if "flat" in only:
            results += guarded(
                "3. flat", "last vs first quarter of a session", 0.8, lambda: bench_flat(folder, session, parts)
            )
    wall = time.perf_counter() - began
    config = {
        "quick": args.quick,
        "requests": count,
        "rounds": rounds,
        "pairs": pairs,
        "warmup": warmup,
        "session": session,
        "session_rounds": parts,
    }
    return report(results, wall, args.json, config, print_error_details)


if __name__ == "__main__":
    sys.exit(main())
