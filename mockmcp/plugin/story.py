"""A replay's miss, told inside pytest: the fixes name the marker, the ini option and the pytest command.

The replay's own story (in its report's `explanation`) speaks to someone at a shell: `--ignore`,
`mockmcp record`. A test's failure is read by someone running pytest, so the plugin tells the same
facts from the report's fields in that person's terms; and the incoming request shows what a host
author recognises first (a tool's name and arguments), leaving out `_meta`, which matching ignores
for the most part and which, in the 2026-07-28 era, is long enough to push the arguments out of view.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

__all__ = ["render_miss"]

_LIMIT = 160
_FIRST = ("name", "uri", "arguments")  # what a host author looks for first in a request's params


def _request_line(params: Any) -> str:
    if not isinstance(params, dict):
        return "" if params is None else json.dumps(params, ensure_ascii=False)
    shown = {key: params[key] for key in _FIRST if key in params}
    shown.update((key, value) for key, value in sorted(params.items()) if key not in shown and key != "_meta")
    text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _LIMIT else text[: _LIMIT - 3] + "..."


def render_miss(miss: dict[str, Any], cassette: str, nodeid: str) -> str:
    """The story of one miss from a replay report, with fixes for a pytest user."""
    lines = [
        f"mockmcp: {miss['reason']}",
        f"  incoming request (id {json.dumps(miss['id'])}): {miss['method']} {_request_line(miss['params'])}",
    ]
    closest = miss.get("closest", [])
    if closest:
        lines.append("  closest recorded requests:")
    for n, candidate in enumerate(closest, 1):
        plays = candidate["plays"]
        played = f"already played {plays} time{'s' * (plays != 1)}" if plays else "not played yet"
        lines.append(f"    {n}. interactions[{candidate['interaction']}] ({played})")
        lines.extend(f"       - {difference}" for difference in candidate["differences"])
    fixes = []
    path = closest[0].get("first_path") if closest else None
    if path:
        fixes.append(
            f"if {path} varies from run to run, leave it out of matching: "
            f"@pytest.mark.mockmcp(ignore=[{path!r}]), or `mockmcp_ignore = {path}` in the ini file"
        )
    fixes.append(f"if the host now asks something new, record it: pytest --mockmcp-record=new {shlex.quote(nodeid)}")
    if closest:
        fixes.append(f"or edit {cassette} by hand: interactions[{closest[0]['interaction']}].request.params")
    else:
        fixes.append(f"or add an interaction for {miss['method']} to {cassette} by hand")
    lines.append("  how to fix:")
    lines.extend(f"    {n}. {fix}" for n, fix in enumerate(fixes, 1))
    return "\n".join(lines)
