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

__all__ = ["render_miss"]


def render_miss(miss: dict[str, Any], nodeid: str, hand_made: bool = False) -> str:
    """The story of one miss from a replay report (`Miss.to_json`), with fixes for a pytest user.

    `hand_made`: the test's marker says `record="none"`, so no record mode applies to it.
    """
    closest = tuple(
        Candidate(c["interaction"], tuple(c["differences"]), c.get("first_path", ""), c["plays"], c.get("ruled", False))
        for c in miss.get("closest", [])
    )
    fixes = []
    path = closest[0].first_path if closest else ""
    if path:
        fixes.append(
            f"if {path} varies from run to run, leave it out of matching: "
            f"@pytest.mark.mockmcp(ignore=[{path!r}]), or `mockmcp_ignore = {path}` in the ini file, or in the "
            f"cassette `meta.match: {{ignore: [{path!r}]}}` (for one request: a rule in "
            f"interactions[{closest[0].index}].match)"
        )
    mode = miss.get("record", "new")
    if not hand_made:
        fixes.append(record_fix(mode, f"pytest --mockmcp-record={{mode}} {shlex.quote(nodeid)}"))
    fixes.append(miss["fixes"][-1])  # editing the cassette by hand: the same at a shell and in pytest
    params = miss["params"]
    if isinstance(params, dict):
        params = {key: value for key, value in params.items() if key != "_meta"}
    told = Miss(miss["id"], miss["method"], params, miss["code"], miss["reason"], closest, tuple(fixes), mode)
    return told.render()
