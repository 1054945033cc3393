"""The example notes server over the legacy HTTP+SSE transport (2024-11-05): `GET /sse` opens a session's event
stream, whose first event names where to POST its messages (`/messages/?session_id=...`).

    python tests/servers/sse_notes.py --http PORT    (0: any free port; uvicorn logs the one it took)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from notes_server import server

if __name__ == "__main__":
    server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
