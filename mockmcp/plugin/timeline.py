"""A test's sessions as an HTML timeline (`mockmcp.tools.html_page`): one page per test, a lane per server.

Written for a failed test (and for every test with `--mockmcp-html=all`) into the test's own temporary
folder, beside its replay reports; the failure names the file, and pytest-html's report links it.
"""

from __future__ import annotations

from pathlib import Path

from mockmcp.errors import MockmcpError
from mockmcp.plugin.harness import Harness
from mockmcp.plugin.naming import cassette_name

__all__ = ["WHEN", "write_timeline"]

WHEN = ("failed", "all", "none")  # --mockmcp-html: the tests that get a page


def write_timeline(mocks: list[Harness], names: list[str], nodeid: str, test_name: str) -> Path | None:
    """The page of the test's replayed sessions (None when it replayed nothing: recording, live, no cassette)."""
    from mockmcp.tools.html_page import lane_for, write_page  # deferred: only a page to write needs them

    lanes = []
    for name, mock in zip(names, mocks, strict=True):
        if mock.recording or mock.live or not mock.cassette.exists():
            continue
        try:
            lanes.append(lane_for(str(mock.cassette), mock.told_reports(nodeid), name))
        except MockmcpError:  # a cassette that cannot load: the test fails with its own located error
            continue
    if not lanes:
        return None
    page = mocks[0].workdir / cassette_name([test_name]).removesuffix(".yaml")
    page = page.with_name(page.name + ".html")
    write_page(str(page), lanes, f"mockmcp: {nodeid}", runner="pytest")
    return page
