"""The example notes server over Streamable HTTP as a stateless SDK server: `stateless_http=True`
and `json_response=True`, so it issues no `Mcp-Session-Id` and answers every request with a JSON body.

    python tests/servers/stateless_notes.py --http PORT    (0: any free port; uvicorn logs the one it took)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from notes_server import server

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=True, json_response=True)
