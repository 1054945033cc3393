"""examples/notes_server.py, changed the way real servers drift, for `mockmcp verify` tests.

python tests/servers/notes_variant.py changed-output|removed-tool|new-field
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import notes_server as notes

VARIANT = sys.argv[1]
if VARIANT == "changed-output":
    notes.FILES["notes.txt"] = "remember to buy bread"
elif VARIANT == "removed-tool":
    notes.server.remove_tool("summarize")
elif VARIANT == "new-field":
    notes.server.remove_tool("read_file")
    notes.server.tool(title="Read a note")(notes.read_file)
else:
    sys.exit(f"unknown variant {VARIANT!r}")

notes.server.run("stdio")
