#!/usr/bin/env python3
"""Benchmark: the memory of `mockmcp record --http-target` relaying one huge answer, and its time.

A target (a child process of this script, standard library) answers one `tools/call` with N MB of
text: as a JSON body with its length, and as one SSE event of N MB on a chunked stream. A client
reads the whole answer, first from the target direct, then through the recording proxy (a fresh
`mockmcp record --http-target` each time), and checks its length and its last bytes. For each, the
proxy's peak resident memory (VmHWM in /proc/PID/status) once the answer is all read, and again just
before it exits after saving the cassette (the cassette must hold the call, answered by the -32098
error that stands in for an answer over the proxy's limit); the time from the request to the last
byte, through the proxy and direct, taking turns in the same run (medians of the rounds; the highest
peaks).

Goal: the proxy relaying a 300 MB answer peaks under 100 MB (the version that gathered bodies whole
peaked at 1.8 GB). Linux only (/proc). Run with an interpreter that has mockmcp installed:

    python benchmarks/bench_proxy_memory.py [--size 300] [--framing json,sse]

Exit status 2 when an answer or a cassette is wrong, or the proxy fails.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from _harness import CHILD_ENV, PY, ROOT

GOAL_MB = 100
KEPT_LIMIT = 16 << 20  # the proxy's default, mockmcp.options.Bounds().kept_bytes
HEAD = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"'
TAIL = b'"}]}}'
REQUEST = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}'


def serve_target(framing: str, size: int) -> None:
    """The target (run as `--target FRAMING SIZE` in a child): prints its port, then answers every POST with
    the big answer in that framing, a MB at a time (it never holds the answer whole either)."""
    piece = b"x" * (1 << 20)
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        sock, _ = listener.accept()
        with sock, sock.makefile("rb") as reading:
            while reading.readline():  # a request's line, then its head and body
                length = 0
                while (line := reading.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.partition(b":")
                    length = int(value) if name.strip().lower() == b"content-length" else length
                reading.read(length)
                if framing == "json":
                    head = b"content-type: application/json\r\ncontent-length: %d" % (len(HEAD) + size + len(TAIL))
                    frame, prefix, suffix = (lambda data: data), HEAD, TAIL
                else:
                    head = b"content-type: text/event-stream\r\ntransfer-encoding: chunked"
                    frame = lambda data: b"%x\r\n%s\r\n" % (len(data), data)  # noqa: E731
                    prefix, suffix = b"event: message\ndata: " + HEAD, TAIL + b"\n\n"
                sock.sendall(b"HTTP/1.1 200 OK\r\n" + head + b"\r\n\r\n" + frame(prefix))
                for sent in range(0, size, len(piece)):
                    sock.sendall(frame(piece[: min(len(piece), size - sent)]))
                sock.sendall(frame(suffix) + (b"0\r\n\r\n" if framing == "sse" else b""))


class BenchError(Exception):
    """Something measured was wrong: the run exits with status 2."""


def peak_mb(pid: int) -> float:
    """The process's peak resident memory so far, in MB (VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        found = re.search(r"VmHWM:\s+(\d+) kB", status.read())
    if found is None:
        raise BenchError("no VmHWM in /proc/PID/status")
    return int(found.group(1)) / 1024


def read_answer(url: str, framing: str, size: int) -> float:
    """Seconds from sending the request to the last byte of its answer; checks the answer's length and end."""
    host, port = url.split("/")[2].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=300)
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    try:
        start = time.perf_counter()
        connection.request("POST", "/mcp", REQUEST, headers)
        response = connection.getresponse()
        got, last = 0, b""
        while count := response.readinto(view):
            got += count
            last = (last + bytes(view[max(0, count - 64) : count]))[-64:]
        took = time.perf_counter() - start
    finally:
        connection.close()
    expected = len(HEAD) + size + len(TAIL) + (len(b"event: message\ndata: \n\n") if framing == "sse" else 0)
    if response.status != 200 or got != expected or not last.rstrip(b"\n").endswith(TAIL):
        raise BenchError(f"{framing}: {got} bytes came back with status {response.status}, not the {expected} sent")
    return took


def proxied(target: str, framing: str, size: int, folder: str) -> tuple[float, float, float, float]:
    """Through a fresh proxy: seconds, its peak MB when the answer is read, and just before its exit; its MB at
    the start."""
    out = os.path.join(folder, f"{framing}.yaml")
    command = [PY, "-m", "mockmcp", "record", "--record-mode", "rewrite", "-o", out, "--http-target", target]
    proxy = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=CHILD_ENV, cwd=ROOT)
    assert proxy.stderr is not None
    try:
        found = re.search(r"recording (\S+)", proxy.stderr.readline())
        if found is None:
            raise BenchError("the proxy did not say where it listens")
        at_start = peak_mb(proxy.pid)
        took = read_answer(found.group(1), framing, size)
        relaying = peak_mb(proxy.pid)
        proxy.send_signal(signal.SIGTERM)
        saving = relaying
        while proxy.poll() is None:
            try:
                saving = peak_mb(proxy.pid)
            except (OSError, BenchError):  # it has just exited
                break
            time.sleep(0.005)
        said = proxy.stderr.read()
        proxy.wait(timeout=120)
    finally:
        proxy.kill()
        proxy.wait()
    if proxy.returncode != 0:
        raise BenchError(f"{framing}: the proxy exited {proxy.returncode}: {said}")
    with open(out) as cassette:
        text = cassette.read()
    # Over the proxy's limit (16 MiB), the call is answered by the error that stands in for its answer.
    over = size > KEPT_LIMIT
    kept = "x" * 1000 in text  # the answer's text
    if "tools/call" not in text or ("-32098" in text) != over or ("over the" in said) != over or kept == over:
        raise BenchError(f"{framing}: the cassette does not hold the call answered as expected:\n{text[:2000]}\n{said}")
    return took, relaying, saving, at_start


def main() -> int:
    if sys.argv[1:2] == ["--target"]:
        serve_target(sys.argv[2], int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=float, default=300, help="the answer's text in MB (default 300)")
    parser.add_argument("--framing", default="json,sse", help="json, sse or both, comma-separated (default both)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, direct and proxy taking turns (default 3)")
    options = parser.parse_args()
    size = int(options.size * 1_000_000)
    print(f"one answer of {size / 1e6:g} MB through `mockmcp record --http-target`; goal: peak under {GOAL_MB} MB")
    print(
        f"{'framing':<8} {'direct s':>9} {'proxy s':>8} {'ratio':>6} {'start MB':>9} {'peak MB':>8} {'saving MB':>10}"
    )
    failed = False
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-") as folder:
        for framing in options.framing.split(","):
            command = [PY, __file__, "--target", framing, str(size)]
            target = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            assert target.stdout is not None
            try:
                url = f"http://127.0.0.1:{int(target.stdout.readline())}/mcp"
                rounds = []
                for _ in range(options.rounds):
                    rounds.append((read_answer(url, framing, size), *proxied(url, framing, size, folder)))
            except (BenchError, OSError, ValueError) as exc:
                print(f"{framing:<8} ERROR: {exc}")
                failed = True
                continue
            finally:
                target.kill()
                target.wait()
            # The median times; the highest peaks of all rounds.
            direct, took = (statistics.median(row[column] for row in rounds) for column in (0, 1))
            relaying, saving, at_start = (max(row[column] for row in rounds) for column in (2, 3, 4))
            verdict = "ok" if max(relaying, saving) < GOAL_MB else "MISS"
            print(
                f"{framing:<8} {direct:>9.2f} {took:>8.2f} {took / direct:>5.1f}x {at_start:>9.1f} {relaying:>8.1f} "
                f"{saving:>10.1f}  {verdict}",
                flush=True,
            )
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
