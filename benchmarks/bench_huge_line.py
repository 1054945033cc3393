#!/usr/bin/env python3
"""Benchmark: one huge line through `mockmcp record`, against the same server reached directly.

A server answers one request with a single line of N MB (the answer's text is N MB of "x"); the
host writes the request and reads until the whole line has come. The time from the request to the
last byte is taken through the recorder (`mockmcp record -o CASSETTE --record-mode rewrite -- SERVER`) and
direct, for each size, in the same run. Line splitting in the recorder is linear, so its time
should grow in proportion to N, like the direct one; a quadratic splitter took 2.4/9.4/20.5 s
for 20/40/60 MB where a direct pipe took under 0.2 s. For information, not a pass/fail figure:
the answer is checked (its length and its last byte) and a wrong one exits with status 2.

Standard library only. Run from anywhere, with an interpreter that has mockmcp installed:

    python benchmarks/bench_huge_line.py [--sizes 20,50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from _harness import CHILD_ENV, PY, ROOT

SERVER = r"""
import sys
size = int(sys.argv[1])
line = sys.stdin.buffer.readline()
body = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"' + b"x" * size + b'"}]}}\n'
sys.stdout.buffer.write(body)
sys.stdout.buffer.flush()
sys.stdin.buffer.read()
"""
REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}\n'
OVERHEAD = len(b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""}]}}\n')


def timed(command: list[str], size: int) -> float:
    """Seconds from writing the request to reading the last byte of the answer's line."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=CHILD_ENV, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        start = time.perf_counter()
        proc.stdin.write(REQUEST)
        proc.stdin.flush()
        got = proc.stdout.readline()
        took = time.perf_counter() - start
        proc.stdin.close()
        proc.wait(timeout=300)
    finally:
        proc.kill()
    if len(got) != size + OVERHEAD or not got.endswith(b'"}]}}\n'):
        raise SystemExit(f"error: {len(got)} bytes came back, not the {size + OVERHEAD} sent")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="20,50", help="sizes of the line in MB, comma-separated (default 20,50)")
    sizes = [int(float(mb) * 1_000_000) for mb in parser.parse_args().sizes.split(",")]
    server = [PY, "-c", SERVER]
    print(f"{'MB':>6} {'direct s':>9} {'recorder s':>11} {'ratio':>7}")
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-") as folder:
        for size in sizes:
            direct = timed([*server, str(size)], size)
            cassette = os.path.join(folder, f"huge-{size}.yaml")
            recorded = timed(
                [PY, "-m", "mockmcp", "record", "-o", cassette, "--record-mode", "rewrite", "--", *server, str(size)],
                size,
            )
            print(f"{size / 1e6:>6g} {direct:>9.3f} {recorded:>11.3f} {recorded / direct:>6.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
