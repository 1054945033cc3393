"""A small stdio JSON-RPC server whose misbehaviour is chosen on the command line, for recorder tests.

It answers every request with `{"echo": params}` (a tools/call's with `content: []` too, initialize with a
handshake-era result), and:
  --crash-on METHOD   on that request: send a progress notification, then exit with status 3
  --raw               send a line that is not JSON before each answer
  --ignore-eof        keep running after stdin closes, and send a late notification then
  --ignore-term       ignore SIGTERM as well (only SIGKILL ends it)
  --chatty            with --ignore-eof: send the late notification again and again, every 50 ms
  --echo-env NAME     put the value of that environment variable into every answer
  --fail-code CODE    answer `tools/fail` with a JSON-RPC error of that code
  --odd-error         answer `tools/odd` with an error whose code is not an integer (no cassette can hold it)
  --slow SECONDS      answer `tools/slow` that many seconds late (after the host's stdin closed, too)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crash-on")
    parser.add_argument("--raw", action="store_true")
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--chatty", action="store_true")
    parser.add_argument("--echo-env")
    parser.add_argument("--fail-code", type=int)
    parser.add_argument("--odd-error", action="store_true")
    parser.add_argument("--slow", type=float, default=0.0)
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        if message["method"] == args.crash_on:
            send(
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}}
            )
            return 3
        if args.raw:
            sys.stdout.write("a line that is not JSON\n")
        if message["method"] == "tools/slow":
            time.sleep(args.slow)
        if message["method"] == "tools/odd" and args.odd_error:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": "E_ODD", "message": "odd"}})
            continue
        if message["method"] == "tools/fail" and args.fail_code is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": args.fail_code, "message": "it failed"}})
            continue
        if message["method"] == "initialize":
            result: dict[str, object] = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "scripted", "version": "1"},
            }
        else:  # a tools/call result holds `content`, as every host reads one
            result = {"echo": message.get("params"), **({"content": []} if message["method"] == "tools/call" else {})}
        if args.echo_env:
            result["env"] = os.environ.get(args.echo_env)
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    if args.ignore_eof:
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "late"}})
        while True:
            time.sleep(0.05 if args.chatty else 1)
            if args.chatty:
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "more"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
