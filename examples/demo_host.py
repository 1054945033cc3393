"""A tiny scripted MCP host (standard library only) that replays a cassette and prints the exchange.

    python examples/demo_host.py [CASSETTE]

It launches `mockmcp replay CASSETTE` the way a real host launches a server, sends the classic
first session (including a mistyped method and a call the cassette never recorded), prints every
message both ways, then closes stdin and shows mockmcp's summary.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSION = [
    (
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo-host", "version": "1.0"}},
    ),
    ("notifications/initialized", None),
    ("tools/list", None),
    ("tools/call", {"name": "read_file", "arguments": {"path": "notes.txt"}}),
    ("tools/call", {"name": "read_file", "arguments": {"path": "missing.txt"}}),
    ("tools/cal", {"name": "read_file", "arguments": {"path": "notes.txt"}}),
    ("tools/call", {"name": "read_file", "arguments": {"path": "note.txt"}}),
]


def main() -> int:
    cassette = sys.argv[1] if len(sys.argv) > 1 else str(HERE.parent / "cassettes" / "notes.yaml")
    server = subprocess.Popen(
        [sys.executable, "-m", "mockmcp", "replay", cassette],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    next_id = 100  # any ids will do: mockmcp matches on method and params, never on ids
    for method, params in SESSION:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not method.startswith("notifications/"):
            message["id"] = next_id
            next_id += 1
        print(f"host -> {json.dumps(message)}")
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        if "id" in message:
            print(f"host <- {server.stdout.readline().strip()}\n")
    _out, err = server.communicate(timeout=10)
    print("mockmcp's stderr (diagnostics and summary):")
    print(err)
    return server.returncode


if __name__ == "__main__":
    sys.exit(main())
