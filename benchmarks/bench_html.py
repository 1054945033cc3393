#!/usr/bin/env python3
"""The HTML timeline of a 5,000-interaction session: how long the page takes to draw in a real browser.

Builds a cassette of N interactions (5000 by default: tool calls, a quarter of them with progress
and a log message, some tool errors and protocol errors, a server request with the host's answer
every fiftieth), a report of a live replay of it (most played, some unplayed, 20 misses), writes the
page as `mockmcp show --html --with-report` does, opens it from disk in the system's Chromium (headless,
driven over its DevTools pipe by tests/chromium.py) and reads:

- drawn: from the start of navigation to the last row on the page (the page draws its rows in
  slices between frames, so it answers input all along); goal: under 2 s;
- the longest task the page ran meanwhile (a frozen page is one long task);
- a filter (kind: miss) and unfolding every message of the visible rows, each timed in the page;
- the time to build and write the page in Python, and its size.

Run from anywhere (needs `chromium`):

    python benchmarks/bench_html.py [--interactions N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the browser driver the tests use

from chromium import Chromium, find  # noqa: E402

from mockmcp.cassette import store  # noqa: E402
from mockmcp.cassette.model import Cassette  # noqa: E402
from mockmcp.html._page import lane_for, read_report, write_page  # noqa: E402

GOAL_S = 2.0


def interaction(n: int) -> dict[str, Any]:
    call = {
        "id": n + 1,
        "method": "tools/call",
        "params": {"name": f"tool_{n % 40}", "arguments": {"n": n, "q": "x" * 20}},
    }
    item: dict[str, Any] = {"at": round(n * 0.01, 4), "request": call, "took": 0.004}
    if n % 4 == 0:
        item["server"] = [
            {"at": round(n * 0.01 + 0.001, 4), "notification": {"method": "notifications/progress",
             "params": {"progressToken": n + 1, "progress": 1, "total": 2, "message": "half"}}},
            {"at": round(n * 0.01 + 0.002, 4), "notification": {"method": "notifications/message",
             "params": {"level": "info", "data": f"step {n}"}}},
        ]  # fmt: skip
    if n % 50 == 0:
        asked = {"id": n, "method": "roots/list"}
        item.setdefault("server", []).append({"request": asked, "response": {"result": {"roots": []}}})
    if n % 97 == 0:
        item["response"] = {"error": {"code": -32602, "message": f"bad argument {n}"}}
    else:
        text = f"answer {n}: " + "lorem ipsum " * 8
        item["response"] = {"result": {"content": [{"type": "text", "text": text}], "isError": n % 31 == 0}}
    return item


def build(folder: Path, size: int) -> tuple[str, str]:
    """The cassette and the report of a replay of it; returns their paths."""
    cassette_path = folder / "big.yaml"
    data = {"version": 1, "meta": {"era": "handshake"}, "interactions": [interaction(n) for n in range(size)]}
    cassette: Cassette = store.loads(json.dumps(data), str(cassette_path))  # JSON is YAML
    store.save(cassette, str(cassette_path))
    plays = [0 if n % 23 == 0 else 1 for n in range(size)]
    misses = [
        {
            "id": 9000 + k,
            "method": "tools/call",
            "params": {"name": f"tool_{k}", "arguments": {"n": -k}},
            "code": -32099,
            "reason": "no recorded interaction matches this tools/call request",
            "closest": [
                {"interaction": k * 40, "plays": 1, "differences": [f"arguments.n: recorded {k * 40}, incoming {-k}"]}
            ],
            "fixes": ["if arguments.n varies from run to run, leave it out of matching: --ignore 'arguments.n'"],
        }
        for k in range(20)
    ]
    report = {
        "cassette": str(cassette_path),
        "interactions": size,
        "played": sum(1 for p in plays if p),
        "plays": plays,
        "misses": misses,
        "missed": len(misses),
        "unplayed": [{"interaction": n, "method": "tools/call"} for n in range(size) if not plays[n]],
        "repeats": [],
        "mismatches": [],
        "withheld": [],
    }
    report_path = folder / "report.json"
    report_path.write_text(json.dumps(report))
    return str(cassette_path), str(report_path)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--interactions", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    executable = find()
    if executable is None:
        print("ERROR: no chromium on this machine (apt-get install chromium)")
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-html-") as tmp:
        folder = Path(tmp)
        cassette, report = build(folder, args.interactions)
        page = folder / "big.html"
        store.load(cassette)  # as the replay that wrote the report did: the page's own cost is timed below
        start = time.perf_counter()
        lane = lane_for(cassette, [read_report(report, args.interactions)])
        write_page(str(page), [lane], "bench", "cli")
        built = time.perf_counter() - start
        drawn, longest, filtered, unfolded = [], [], [], []
        with Chromium(executable, timeout=60) as browser:
            for _round in range(args.rounds):
                tab = browser.page(1280, 800)
                tab.send("Page.addScriptToEvaluateOnNewDocument", {"source": LONG_TASKS})
                tab.open(page.as_uri())
                drawn.append(tab.evaluate("window.timelineDrawnMs") / 1000)
                longest.append(tab.evaluate("Math.max(0, ...window.__longTasks)") / 1000)
                filtered.append(tab.evaluate(TIMED.format(action=FILTER)) / 1000)
                unfolded.append(tab.evaluate(TIMED.format(action=UNFOLD)) / 1000)
                rows = tab.evaluate("document.querySelectorAll('.row').length")
                assert not tab.problems(), tab.problems()
                tab.close()
        size_mb = os.path.getsize(page) / 1e6
    print(
        f"{args.interactions} interactions ({rows} rows with the misses), page {size_mb:.1f} MB, {args.rounds} rounds"
    )
    print(f"  build and write the page (Python): {built:.2f} s")
    print(f"  drawn, navigation start to the last row: median {statistics.median(drawn):.2f} s "
          f"(min {min(drawn):.2f}, max {max(drawn):.2f}); goal < {GOAL_S:.0f} s")  # fmt: skip
    print(f"  longest task while drawing: median {statistics.median(longest) * 1000:.0f} ms")
    print(f"  filter to the misses: median {statistics.median(filtered) * 1000:.0f} ms")
    print(f"  unfold every message of those rows: median {statistics.median(unfolded) * 1000:.0f} ms")
    return 0 if statistics.median(drawn) < GOAL_S else 1


LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({type: "longtask", buffered: true});
"""
TIMED = (
    "(() => {{ const t = performance.now(); {action}; document.body.offsetHeight; return performance.now() - t; }})()"
)
FILTER = "const k = document.getElementById('kind'); k.value = 'miss'; k.dispatchEvent(new Event('input'))"
UNFOLD = "document.getElementById('unfold').click()"

if __name__ == "__main__":
    sys.exit(main())
