"""How long saving over an existing cassette takes (an in-place edit) against writing it afresh.

    python benchmarks/bench_rewrite.py                  # 1000 interactions
    python benchmarks/bench_rewrite.py --interactions 5000

Three saves over a cassette of N recorded tool calls, each the median of 5: the same data (nothing
to change), one interaction added at the end (`record --record-mode new_episodes`), every interaction's timings
changed (`record --record-mode rewrite` over the file); and the floor, `store.dump` of the same cassette
written to a new file. The edit parses the old text and the result once each, which a fresh dump
does not, so it costs a few times the floor; the figure to watch is that it stays linear.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from mockmcp.cassette import store, validation


def cassette(count: int, shift: float = 0.0) -> Any:
    items = [
        {
            "at": round(i * 0.1 + shift, 4),
            "request": {"id": i, "method": "tools/call", "params": {"name": "read", "arguments": {"i": i}}},
            "response": {"result": {"content": [{"type": "text", "text": f"note {i}\nline two"}]}},
            "took": round(0.01 + shift, 4),
        }
        for i in range(count)
    ]
    return {"version": 1, "meta": {"server": ["python", "server.py"]}, "interactions": items}


def median(setup: Callable[[], None], run: Callable[[], None]) -> float:
    times = []
    for _ in range(5):
        setup()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interactions", type=int, default=1000)
    count = parser.parse_args().interactions
    base = validation.from_data(cassette(count))
    added = copy.deepcopy(cassette(count))
    added["interactions"].append({"request": {"id": count, "method": "ping"}, "response": {"result": {}}})
    variants = {
        "same data": base,
        "one added": validation.from_data(added),
        "all timings changed": validation.from_data(cassette(count, shift=0.5)),
    }
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "c.yaml")

        def remove() -> None:
            if os.path.exists(path):
                os.unlink(path)

        def write_base() -> None:
            remove()
            store.save(base, path)

        floor = median(remove, lambda: store.save(base, path))
        print(f"{count} interactions; floor (fresh dump): {floor * 1000:.0f} ms")
        for name, new in variants.items():
            took = median(write_base, lambda new=new: store.save(new, path))
            print(f"  {name:<22} {took * 1000:7.0f} ms  {took / floor:4.1f}x floor")


if __name__ == "__main__":
    main()
