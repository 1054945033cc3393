#!/usr/bin/env python3
"""Make docs/timeline.png: the page the pytest plugin writes for a failed test of the README's example.

The README's demo host reads `notes.txt` from `cassettes/notes.yaml`, then a note the cassette never
recorded, `note.txt`. Here the same two reads are a pytest test with the SDK as the host, in a
project of its own (a temporary folder); the test fails on the miss, and its failure names the page,
which Chromium (tests/chromium.py) photographs whole, 1280 pixels wide.

    python tests/screenshot_timeline.py [OUT.png]
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from chromium import Chromium, find

ROOT = Path(__file__).resolve().parent.parent

TEST = """
import pytest
from mcp import Client


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.mockmcp(cassette="notes.yaml")
async def test_reads_two_notes(mockmcp):
    async with Client(mockmcp.stdio_params, mode="legacy") as client:
        found = await client.call_tool("read_file", {"path": "notes.txt"})
        other = await client.call_tool("read_file", {"path": "note.txt"})  # never recorded: a miss
    assert found.content[0].text == "remember to buy milk" and not other.is_error
"""


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "timeline.png"
    executable = find()
    if executable is None:
        print("no chromium: apt-get install chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="notes-project-") as project:
        folder = Path(project)
        (folder / "tests" / "cassettes" / "test_notes").mkdir(parents=True)
        shutil.copyfile(ROOT / "cassettes" / "notes.yaml", folder / "tests" / "cassettes" / "test_notes" / "notes.yaml")
        (folder / "tests" / "test_notes.py").write_text(TEST)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={folder / 'tmp'}"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        found = re.search(r"mockmcp: the session as a timeline: (\S+\.html)", done.stdout)
        if done.returncode != 1 or found is None:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 1
        with Chromium(executable) as browser:
            tab = browser.page(1280, 800)
            tab.open(Path(found.group(1)).as_uri())
            tab.evaluate("document.querySelector('.row.miss details.msg').open = true")
            tab.wait("document.querySelector('.row.miss details.msg').dataset.filled === 'yes'")
            assert not tab.problems(), tab.problems()
            tab.resize(1280, int(tab.evaluate("document.scrollingElement.scrollHeight")))  # the whole page
            tab.screenshot(out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
