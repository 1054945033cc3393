#!/usr/bin/env python3
"""Benchmarks for mockmcp over Streamable HTTP: replay and the recording proxy against a real SDK server.

Three servers run side by side:

- real    the example SDK server, `examples/notes_server.py --http 0` (uvicorn)
- replay  `mockmcp replay --http 0` of a cassette recorded from that server through the proxy
- proxy   `mockmcp record --http-target REAL` in front of the real server

and a fourth for scale, `canned` (`_canned_http.py`): the cassette's results answered from memory,
nothing checked, about the least a server can do; its time per call is the client's own.

Two clients call them: the official MCP SDK's HTTP client (`mcp.Client(url)`), what a host sees,
and `RawClient`, the same requests sent with the standard library, what the server itself costs
(the SDK client costs about 1 ms per call, so much that even the canned server takes about half the
real server's time with it).

Figures, each a ratio measured in the same run:

1. per call      median time of one `tools/call` (the minimal client calling N times in a row),
                 replay over real. Goal: <= 0.5x. Shown below it: the same with `mcp.Client`, and
                 the client floor there (canned over real; a call can take no less).
2. proxy cost    the proxy's median per call minus the real server's, in ms (minimal client; the
                 SDK client's figure beside it). Goal: <= 1 ms.
3. 16 clients    total calls per second with 16 `mcp.Client`s at once, each calling K times in a
                 row, replay over real. Goal: >= 1.0x. The clients run in 2 processes (8 each) for
                 both servers alike: in one process the client was the bottleneck (a whole core
                 busy in the client while replay used a tenth of one), so the figure measured the
                 client. The busiest client process's CPU use is shown; near 100% the client still limits.

Needs the test extra (the SDK). Run from anywhere:

    python benchmarks/bench_http.py [--quick] [--json FILE]

Every answer is checked (the recorded text); a wrong answer makes the run an ERROR (exit status 2).
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import anyio
import yaml
from _harness import PY, ROOT, BenchError, Result, guarded, listening, make_parser, print_heading, report
from mcp import Client

NOTES_SERVER = os.path.join(ROOT, "examples", "notes_server.py")
EXPECTED = "remember to buy milk"
ARGS = {"path": "notes.txt"}


@contextmanager
def child(command: list[str], pattern: str) -> Iterator[str]:
    """A child server; yields the URL its stderr names (`pattern`'s first group)."""
    with listening(command, pattern) as (_proc, url):
        yield url


def real_server() -> Any:
    return child([PY, NOTES_SERVER, "--http", "0"], r"Uvicorn running on (http://\S+)")


def proxy(target: str, out: str) -> Any:
    command = [PY, "-m", "mockmcp", "record", "--record-mode", "rewrite", "-o", out, "--http-target", target + "/mcp"]
    return child(command, r"recording (http://\S+)")


def replay(cassette: str) -> Any:
    return child([PY, "-m", "mockmcp", "replay", cassette, "--http", "0"], r"(http://\S+)/mcp")


def canned(cassette: str, folder: str) -> Any:
    """A server answering each method with the cassette's result, checking nothing: the SDK client's own cost."""
    with open(cassette) as file:
        recorded = yaml.safe_load(file)["interactions"]
    results = {i["request"]["method"]: i["response"]["result"] for i in recorded if "result" in i.get("response", {})}
    path = os.path.join(folder, "canned.json")
    with open(path, "w") as file:
        json.dump(results, file)
    return child([PY, os.path.join(ROOT, "benchmarks", "_canned_http.py"), path], r"canned (http://\S+)")


def check(result: Any) -> None:
    text = result.content[0].text
    if text != EXPECTED:
        raise BenchError(f"wrong answer: {text!r}")


class RawClient:
    """The SDK client's HTTP requests, sent with the standard library: a server's own time per call.

    The session is the cassette's (its first request and the tools/call it recorded, params as
    recorded), and every request carries the headers the SDK client sends (captured from
    `mcp.Client`: Accept, Content-Type, MCP-Protocol-Version, Mcp-Method, Mcp-Name and, in the
    handshake era, Mcp-Session-Id), on one keep-alive connection with TCP_NODELAY. It parses no
    more than it must, so what it measures is the server, not the client.
    """

    def __init__(self, url: str, cassette: str) -> None:
        with open(cassette) as file:
            recorded = yaml.safe_load(file)
        self.version = recorded["meta"]["protocol_version"]
        asked = [i["request"] for i in recorded["interactions"] if "request" in i]  # a notification has none
        self.first = asked[0]
        self.call = next(request["params"] for request in asked if request["method"] == "tools/call")
        parts = urllib.parse.urlsplit(url)
        self.path = parts.path
        self.connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        self.session: str | None = None
        self.next_id = 0

    def post(self, method: str, params: Any, notification: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notification:
            self.next_id += 1
            message["id"] = self.next_id
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": self.version,
            "Mcp-Method": method,
        }
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        body = json.dumps(message, separators=(",", ":")).encode()
        self.connection.request("POST", self.path, body, headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise BenchError(f"raw client: {method} answered {response.status}: {data[:300]!r}")
        self.session = response.getheader("Mcp-Session-Id") or self.session
        if notification:
            return None
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            for line in data.split(b"\n"):
                if line.startswith(b"data:") and (answer := json.loads(line[5:])).get("id") == message["id"]:
                    return answer["result"]
            raise BenchError(f"raw client: no answer to {method} on its SSE stream: {data[:300]!r}")
        return json.loads(data)["result"]

    def __enter__(self) -> RawClient:
        first = self.first
        result = self.post(first["method"], first.get("params"))
        if first["method"] == "initialize":
            self.version = result["protocolVersion"]
            self.post("notifications/initialized", None, notification=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    def timed_calls(self, calls: int) -> list[float]:
        """The recorded tools/call `calls` times in a row (after one warm-up call); each call's seconds."""
        times = []
        self.post("tools/call", self.call)
        for _ in range(calls):
            start = time.perf_counter()
            result = self.post("tools/call", self.call)
            times.append(time.perf_counter() - start)
            if result["content"][0]["text"] != EXPECTED:
                raise BenchError(f"raw client: wrong answer: {result!r}")
        return times


async def sequential(url: str, calls: int) -> list[float]:
    """One client calling the tool `calls` times in a row (after one warm-up call); each call's seconds."""
    times = []
    async with Client(url) as client:
        check(await client.call_tool("read_file", ARGS))
        for _ in range(calls):
            start = time.perf_counter()
            result = await client.call_tool("read_file", ARGS)
            times.append(time.perf_counter() - start)
            check(result)
    return times


async def concurrent(url: str, clients: int, calls: int, barrier: Any) -> tuple[float, float, int, float]:
    """`clients` clients of this process, each calling `calls` times in a row once every client of every
    process is connected (`barrier`); the start, the end, the calls made, and this process's CPU seconds."""
    ready = anyio.Event()
    count = 0
    connected = 0

    async def one() -> None:
        nonlocal count, connected
        async with Client(url) as client:
            check(await client.call_tool("read_file", ARGS))
            connected += 1
            if connected == clients:
                await anyio.to_thread.run_sync(barrier.wait)
                ready.set()
            await ready.wait()
            for _ in range(calls):
                check(await client.call_tool("read_file", ARGS))
                count += 1

    with anyio.fail_after(300):
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(one)
            await ready.wait()
            start, cpu = time.perf_counter(), time.process_time()
    return start, time.perf_counter(), count, time.process_time() - cpu


def _client_process(url: str, clients: int, calls: int, barrier: Any, results: Any) -> None:
    try:
        results.put(anyio.run(concurrent, url, clients, calls, barrier))
    except BaseException as exc:  # the parent reports it
        barrier.abort()
        results.put(f"{type(exc).__name__}: {exc}")
        raise


def concurrent_rate(url: str, clients: int, calls: int, processes: int) -> tuple[float, float]:
    """`clients` clients at once, spread over `processes` client processes; the total calls per second,
    and the busiest client process's CPU use (1.0: a whole core, the client is the bottleneck)."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    shares = [clients // processes + (i < clients % processes) for i in range(processes)]
    workers = [context.Process(target=_client_process, args=(url, n, calls, barrier, results)) for n in shares]
    for worker in workers:
        worker.start()
    try:
        found = [results.get(timeout=300) for _ in workers]
    finally:
        for worker in workers:
            worker.join(30)
            if worker.is_alive():
                worker.kill()
    if errors := [item for item in found if isinstance(item, str)]:
        raise BenchError(f"a client process failed: {errors[0]}")
    start, end = min(item[0] for item in found), max(item[1] for item in found)
    busiest = max(cpu / (stop - began) for began, stop, _count, cpu in found)
    return sum(item[2] for item in found) / (end - start), busiest


def record_cassette(real: str, folder: str) -> str:
    """A cassette of one session calling the tool, recorded through the proxy."""
    path = os.path.join(folder, "bench-http.yaml")
    with proxy(real, path) as url:
        anyio.run(sequential, url, 1)
    if not os.path.exists(path):
        raise BenchError("the proxy wrote no cassette")
    return path


def run(calls: int, rounds: int, clients: int, per_client: int, processes: int) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-http-") as folder, ExitStack() as stack:
        real = stack.enter_context(real_server())
        cassette = record_cassette(real, folder)
        urls = {
            "real": real + "/mcp",
            "replay": stack.enter_context(replay(cassette)),
            "proxy": stack.enter_context(proxy(real, os.path.join(folder, "measured.yaml"))),
        }
        urls["replay"] += "/mcp"
        urls["canned"] = stack.enter_context(canned(cassette, folder))
        host: dict[str, list[float]] = {name: [] for name in urls}
        own: dict[str, list[float]] = {name: [] for name in urls}
        for _ in range(rounds):  # the servers take turns, so a change in load affects all alike
            for name, url in urls.items():
                host[name] += anyio.run(sequential, url, calls)
                with RawClient(url, cassette) as raw:
                    own[name] += raw.timed_calls(calls)
        med = {name: statistics.median(times) * 1000 for name, times in own.items()}
        p90 = {name: statistics.quantiles(times, n=10)[-1] * 1000 for name, times in own.items()}
        shown = ", ".join(f"{n} {med[n]:.3f} ms (p90 {p90[n]:.3f})" for n in urls)
        results.append(
            Result(
                "1. per call",
                "replay / real",
                {"median_ms": med, "p90_ms": p90},
                shown + ": the SDK client's requests sent by a minimal client",
                med["replay"] / med["real"],
                0.5,
                lower_is_better=True,
            )
        )
        seen = {name: statistics.median(times) * 1000 for name, times in host.items()}
        seen_p90 = {name: statistics.quantiles(times, n=10)[-1] * 1000 for name, times in host.items()}
        shown = ", ".join(f"{n} {seen[n]:.2f} ms (p90 {seen_p90[n]:.2f})" for n in urls)
        floor = seen["canned"]
        results.append(
            Result(
                "   as a host",
                "replay / real",
                {"median_ms": seen, "p90_ms": seen_p90},
                shown + ": mcp.Client; canned is the client's own cost",
                None,
                None,
                figure_text=f"{seen['replay'] / seen['real']:.2f}x (floor {floor / seen['real']:.2f}x, "
                f"replay {seen['replay'] - floor:+.2f} ms over it)",
            )
        )
        extra = med["proxy"] - med["real"]
        results.append(
            Result(
                "2. proxy cost",
                "proxy - real",
                {"ms": extra, "as_a_host_ms": seen["proxy"] - seen["real"]},
                f"{extra:+.2f} ms per call ({seen['proxy'] - seen['real']:+.2f} ms as a host sees it)",
                None,
                None,
                figure_text=f"{extra:+.2f} ms ({'PASS' if extra <= 1.0 else 'MISS'}: goal <= 1 ms)",
            )
        )
        rates: dict[str, list[float]] = {"real": [], "replay": []}
        busy: dict[str, list[float]] = {"real": [], "replay": []}
        for _ in range(rounds):
            for name in rates:
                rate, busiest = concurrent_rate(urls[name], clients, per_client, processes)
                rates[name].append(rate)
                busy[name].append(busiest)
        rate = {name: statistics.median(values) for name, values in rates.items()}
        cpu = {name: max(values) for name, values in busy.items()}
        shown = (
            ", ".join(f"{n} {rate[n]:.0f}/s" for n in rate)
            + " (busiest client process: "
            + ", ".join(f"{n} {cpu[n]:.0%} of a core" for n in cpu)
            + f"; {processes} client processes)"
        )
        results.append(
            Result(
                f"3. {clients} clients",
                "replay / real",
                {"per_s": rate, "client_cpu": cpu, "client_processes": processes},
                shown,
                rate["replay"] / rate["real"],
                1.0,
            )
        )
    return results


def main() -> int:
    parser = make_parser(__doc__ or "", "fewer calls and rounds (about 20 s)")
    parser.add_argument("--calls", type=int, help="calls in a row per client and round, figures 1-2 (200; 60 quick)")
    parser.add_argument("--rounds", type=int, help="rounds per server, the servers taking turns (3; 2 quick)")
    parser.add_argument("--clients", type=int, default=16, help="clients at once, figure 3 (16)")
    parser.add_argument("--per-client", type=int, help="calls per client, figure 3 (30; 10 quick)")
    parser.add_argument(
        "--client-processes", type=int, default=2, help="processes the clients of figure 3 are spread over (2)"
    )
    args = parser.parse_args()
    calls = args.calls or (60 if args.quick else 200)
    rounds = args.rounds or (2 if args.quick else 3)
    per_client = args.per_client or (10 if args.quick else 30)
    processes = max(1, min(args.client_processes, args.clients))
    print_heading(
        "HTTP",
        f"{calls} calls x {rounds} rounds per server; {args.clients} clients x {per_client} calls "
        f"in {processes} client processes",
    )
    start = time.perf_counter()
    results = guarded(
        "all", "real, replay, proxy", None, lambda: run(calls, rounds, args.clients, per_client, processes)
    )

    def details(rows: list[Result]) -> None:
        for row in rows:
            if row.error:
                print(f"\n{row.figure}: {row.error}")

    config = {
        "calls": calls,
        "rounds": rounds,
        "clients": args.clients,
        "per_client": per_client,
        "client_processes": processes,
    }
    return report(results, time.perf_counter() - start, args.json, config, details)


if __name__ == "__main__":
    sys.exit(main())
