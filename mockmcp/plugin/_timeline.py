"""A test's sessions as an HTML timeline (`mockmcp.html._page`): one page per test, a lane per server.

Written for a failed test (and for every test with `--mockmcp-html=all`) into the test's own temporary
folder, beside its replay reports; the failure names the file, and pytest-html's report links it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mockmcp.errors import MockmcpError
from mockmcp.plugin._harness import Harness
from mockmcp.plugin._naming import cassette_name
from mockmcp.plugin._story import told_reports

__all__ = ["WHEN", "write_timeline"]

WHEN = ("failed", "all", "none")  # --mockmcp-html: the tests that get a page


def write_timeline(mocks: dict[str, Harness], nodeid: str, test_name: str, root: Path) -> Path | None:
    """The page of the test's replayed sessions, a lane per server by name (None when it replayed nothing:
    recording, live, no cassette); cassettes are named from `root`, the run's root folder, as a node id is."""
    from mockmcp.html import lane_for, write_page

    lanes = []
    for name, mock in mocks.items():
        if mock.recording or mock.target.live or not mock.cassette.exists():
            continue
        try:
            shown = os.path.relpath(mock.cassette, root) if mock.cassette.is_relative_to(root) else None
            lanes.append(lane_for(str(mock.cassette), _named_as(told_reports(mock, nodeid), mock, shown), name, shown))
        except MockmcpError:  # a cassette that cannot load: the test fails with its own located error
            continue
    if not lanes:
        return None
    page = next(iter(mocks.values())).workdir / cassette_name([test_name]).removesuffix(".yaml")
    page = page.with_name(page.name + ".html")
    write_page(str(page), lanes, f"mockmcp: {nodeid}", runner="pytest")
    return page


def _named_as(reports: list[dict[str, Any]], mock: Harness, shown: str | None) -> list[dict[str, Any]]:
    """The reports with the cassette named in the misses' fixes as the page names it (from the root folder)."""
    if shown is None:
        return reports
    where = str(mock.cassette)
    return [
        {**report, "misses": [{**m, "fixes": [f.replace(where, shown) for f in m["fixes"]]} for m in report["misses"]]}
        for report in reports
    ]
