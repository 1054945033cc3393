"""A replay's miss, told inside pytest: the fixes name the marker, the ini option and the pytest command.

The replay's own story (in its report's `explanation`) speaks to someone at a shell: `--ignore`,
`mockmcp record`. A test's failure is read by someone running pytest, so the plugin tells the same
miss (rendered by the same `Miss`) with that person's fixes; and the incoming request leaves out
`_meta`, which in the 2026-07-28 era is long enough to push the tool's name and arguments out of view.
"""

from __future__ import annotations

import shlex
from typing import Any

from mockmcp.core.explain import Candidate, Miss, record_fix

__all__ = ["pytest_fixes", "render_miss"]


def _closest(miss: dict[str, Any]) -> tuple[Candidate, ...]:
    return tuple(
        Candidate(c["interaction"], tuple(c["differences"]), c.get("first_path", ""), c["plays"], c.get("ruled", False))
        for c in miss.get("closest", [])
    )


def pytest_fixes(miss: dict[str, Any], nodeid: str, hand_made: bool = False) -> tuple[str, ...]:
    """The fixes of one miss from a replay report (`Miss.to_json`), for a pytest user: the marker, the ini
    option, the pytest command that records (none when `hand_made`), and the hand edit."""
    closest = _closest(miss)
    fixes = []
    path = closest[0].first_path if closest else ""
    if path:
        fixes.append(
            f"if {path} varies from run to run, leave it out of matching: "
            f"@pytest.mark.mockmcp(ignore=[{path!r}]), or `mockmcp_ignore = {path}` in the ini file, or in the "
            f"cassette `meta.match: {{ignore: [{path!r}]}}` (for one request: a rule in "
            f"interactions[{closest[0].index}].match)"
        )
    if not hand_made:
        fixes.append(
            record_fix(miss.get("record", "new"), f"pytest --mockmcp-record-mode={{mode}} {shlex.quote(nodeid)}")
        )
    fixes.append(miss["fixes"][-1])  # editing the cassette by hand: the same at a shell and in pytest
    return tuple(fixes)


def render_miss(miss: dict[str, Any], nodeid: str, hand_made: bool = False) -> str:
    """The story of one miss from a replay report (`Miss.to_json`), with fixes for a pytest user.

    `hand_made`: the test's marker says `record="none"`, so no record mode applies to it.
    """
    params = miss["params"]
    if isinstance(params, dict):
        params = {key: value for key, value in params.items() if key != "_meta"}
    fixes = pytest_fixes(miss, nodeid, hand_made)
    mode = miss.get("record", "new")
    told = Miss(miss["id"], miss["method"], params, miss["code"], miss["reason"], _closest(miss), fixes, mode)
    return told.render()
