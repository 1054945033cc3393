#!/usr/bin/env python3
"""Memory of `mockmcp replay` under a host that keeps missing: it must stay flat.

A replay keeps the first misses whole in its report (params and explanation) and only counts the
rest, so a host retrying a request the cassette cannot answer does not grow the process. This
script pipes N requests that miss (10000 by default, each with different params) into one replay
of cassettes/notes.yaml, reading every answer, and samples the process's resident memory (VmRSS,
Linux) after the first 1000 misses and after the last. It prints both, and the growth per miss
between them. Goal: under 0.1 KB per miss (each miss once kept about 4.4 KB).

Standard library only. Run from anywhere:

    python benchmarks/bench_misses.py [--misses N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _harness import CHILD_ENV, PY, ROOT

WARM = 1000
GOAL_KB_PER_MISS = 0.1


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS: this benchmark needs Linux's /proc")


def miss(proc: subprocess.Popen[bytes], n: int) -> None:
    message = {"jsonrpc": "2.0", "id": n, "method": "tools/call"}
    message["params"] = {"name": "read_file", "arguments": {"path": f"missing-{n}.txt", "pad": "x" * 200}}
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    if answer.get("id") != n or answer.get("error", {}).get("code") != -32099:
        raise SystemExit(f"ERROR: request {n} got {answer!r}, not a -32099 miss")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", type=int, default=10000)
    args = parser.parse_args()
    proc = subprocess.Popen(
        [PY, "-m", "mockmcp", "replay", os.path.join(ROOT, "cassettes", "notes.yaml")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=CHILD_ENV,
        cwd=ROOT,
    )
    try:
        for n in range(WARM):
            miss(proc, n)
        warm = rss_kb(proc.pid)
        for n in range(WARM, args.misses):
            miss(proc, n)
        last = rss_kb(proc.pid)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=60)
    per_miss = (last - warm) / max(1, args.misses - WARM)
    print(f"RSS after {WARM} misses: {warm} KB; after {args.misses}: {last} KB")
    print(f"growth: {per_miss:.3f} KB per miss (goal < {GOAL_KB_PER_MISS})")
    return 0 if per_miss < GOAL_KB_PER_MISS else 1


if __name__ == "__main__":
    sys.exit(main())
