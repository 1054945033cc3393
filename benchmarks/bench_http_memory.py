#!/usr/bin/env python3
"""Benchmark for what HTTP replay holds in memory: per idle session, and per event its client never reads.

`mockmcp replay --http 0` serves a generated cassette of 20,000 interactions (an `initialize`, then
tools/call requests) in a child process; the figures are its resident memory (VmRSS, from /proc),
read once what was sent has been answered.

1. per session   sessions that only `initialize` and then stay idle (their expiry is 30 min away):
                 RSS after 1, 100 and 1,000 of them; the figure is the KB each session adds
                 between 100 and 1,000. Goal: <= 16 KB (a session's state is what it did, never a
                 copy of anything the size of the cassette; it was 162 KB).
   traced        the same in one process, without the HTTP server around it: the bytes tracemalloc
                 sees each session's `initialize` leave allocated in the endpoint (`core/endpoint`),
                 between 100 and 1,000 sessions (info: RSS moves by whole pages and arenas, this
                 by the byte).
2. per event     one session opens its GET stream and never reads it, while the server sends it
                 events of 4.8 KB: RSS after 1,000, 10,000 and 50,000 events; the figure is the KB
                 each event adds between 10,000 and 50,000. Goal: <= 0.1 KB (flat: past 1 MiB
                 unread the stream is cut, and what waits for the next GET stream is capped; it was
                 4.7 KB, every event kept in the write buffer).

The events are the server's answer to a client notification the cassette recorded (the POST gets
202 at once), not a tool call's: a tool call's log on the GET stream and its reply on the
request's own stream are paced a turn apart (`endpoint.TURN`, 5 ms), which would make the run
minutes long without changing what is held.

Linux only (/proc). Run from anywhere:

    python benchmarks/bench_http_memory.py [--quick] [--json FILE]

`--quick`: 300 sessions and 10,000 events (the figures then between 100 and 300 sessions, and
between 2,000 and 10,000 events). An answer other than the expected status makes the figure an
ERROR, exit status 2.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

from _harness import CHILD_ENV, PY, BenchError, Result, guarded, listening, make_parser, print_heading, report

INTERACTIONS = 20_000
EVENT_TEXT = "x" * 4700  # with its JSON-RPC and SSE framing, an event of about 4.8 KB
OPEN = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
ANSWER = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
POKE = "notifications/roots/list_changed"  # what the host sends; the server answers it on the GET stream
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
SESSION_GOAL_KB = 16
EVENT_GOAL_KB = 0.1
ENV = dict(CHILD_ENV)  # the replay's environment (`--source` puts another mockmcp first on its path)


def write_cassette(path: str) -> None:
    """INTERACTIONS interactions: initialize, the notification answered on the GET stream, tools/call requests."""
    items: list[dict[str, object]] = [
        {"request": {"id": 1, "method": "initialize", "params": OPEN}, "response": {"result": ANSWER}},
        {
            "notification": {"method": POKE},
            "server": [
                {"notification": {"method": "notifications/message", "params": {"level": "info", "data": EVENT_TEXT}}}
            ],
        },
    ]
    for n in range(2, INTERACTIONS):
        items.append(
            {
                "request": {"id": n, "method": "tools/call", "params": {"name": f"tool_{n}", "arguments": {"n": n}}},
                "response": {"result": {"content": [{"type": "text", "text": f"answer {n}"}]}},
            }
        )
    cassette = {"version": 1, "meta": {"http": {"get_stream": True}}, "interactions": items}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(cassette, handle)  # JSON is YAML: written and read fast


@contextmanager
def replay(cassette: str) -> Iterator[tuple[int, int]]:
    """`mockmcp replay --http 0` of the cassette; yields its pid and port."""
    command = [PY, "-m", "mockmcp", "replay", cassette, "--http", "0"]
    # run in the cassette's folder: `-m` puts the current folder first on the path
    with listening(command, r"(http://\S+)/mcp", ENV, os.path.dirname(cassette), wait=120) as (proc, url):
        port = urllib.parse.urlsplit(url).port
        assert port is not None
        yield proc.pid, port


def growth(figure: str, subject: str, unit: str, rss: dict[int, int], goal_kb: float, digits: int) -> Result:
    """The figure of what RSS grows by per `unit` between the last two marks (rss: KB at each mark)."""
    marks = sorted(rss)
    low, high = marks[-2], marks[-1]
    each = (rss[high] - rss[low]) / (high - low)
    shown = ", ".join(f"{rss[m] / 1024:.1f} MB after {m:,}" for m in marks)
    verdict = "PASS" if each <= goal_kb else "MISS"
    return Result(
        figure,
        subject,
        {f"rss_kb_{m}": rss[m] for m in marks} | {f"kb_per_{unit}": each},
        f"{each:.{digits}f} KB per {unit} ({shown})",
        None,
        None,
        figure_text=f"{each:.{digits}f} KB ({verdict}: goal <= {goal_kb} KB)",
    )


def rss_kb(pid: int) -> int:
    """The process's resident memory, in KB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise BenchError(f"/proc/{pid}/status has no VmRSS")


def post(
    connection: http.client.HTTPConnection, message: dict[str, object], session: str | None
) -> http.client.HTTPResponse:
    headers = {**HEADERS, "mcp-session-id": session} if session else HEADERS
    connection.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
    answer = connection.getresponse()
    answer.read()
    return answer


def initialize(connection: http.client.HTTPConnection) -> str:
    answer = post(connection, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": OPEN}, None)
    session = answer.getheader("mcp-session-id")
    if answer.status != 200 or session is None:
        raise BenchError(f"initialize was answered {answer.status}, session {session!r}")
    return session


def per_session(cassette: str, marks: tuple[int, ...]) -> Result:
    """RSS after each mark of idle sessions; the KB each adds between the last two marks."""
    rss: dict[int, int] = {}
    with replay(cassette) as (pid, port):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        opened = 0
        for mark in marks:
            while opened < mark:
                initialize(connection)
                opened += 1
            rss[mark] = rss_kb(pid)
        connection.close()
    subject = f"RSS per idle session ({marks[-1]:,} vs {marks[-2]:,}), a {INTERACTIONS:,}-interaction cassette"
    return growth("1. per session", subject, "session", rss, SESSION_GOAL_KB, 1)


# Run in a child, so that `--source` chooses the mockmcp measured: argv is the cassette and the session marks.
TRACED = """
import gc, itertools, json, sys, tracemalloc
from mockmcp.cassette.store import load
from mockmcp.http._endpoint import Endpoint, Hooks, SessionParts
from mockmcp.engine.matching import Matcher
cassette = load(sys.argv[1])
low, high = int(sys.argv[2]), int(sys.argv[3])
count = itertools.count()
hooks = Hooks(new_id=lambda: str(next(count)))
endpoint = Endpoint(SessionParts(cassette, Matcher.build()), frozenset({"127.0.0.1"}), hooks=hooks)
headers = {"host": "127.0.0.1", "accept": "application/json, text/event-stream", "content-type": "application/json"}
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": json.loads(sys.argv[4])}).encode()
for _ in range(low):
    endpoint.request("c", b"POST", "/mcp", headers, body)
gc.collect()
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for _ in range(high - low):
    endpoint.request("c", b"POST", "/mcp", headers, body)
gc.collect()
print((tracemalloc.get_traced_memory()[0] - before) / (high - low))
"""


def traced_per_session(cassette: str, marks: tuple[int, ...]) -> Result:
    """Bytes each session's initialize leaves allocated in the endpoint, by tracemalloc, between the last marks."""
    low, high = marks[-2], marks[-1]
    command = [PY, "-c", TRACED, cassette, str(low), str(high), json.dumps(OPEN)]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, cwd=os.path.dirname(cassette), timeout=600)
    if done.returncode != 0:
        raise BenchError(f"the traced run failed:\n{done.stderr[-2000:]}")
    each = float(done.stdout.split()[-1]) / 1024
    return Result(
        "   traced",
        f"bytes allocated per session in the endpoint ({high:,} vs {low:,}), by tracemalloc",
        {"kb_per_session_traced": each},
        f"{each:.1f} KB per session",
        None,
        None,
        figure_text=f"{each:.1f} KB",
    )


def per_event(cassette: str, marks: tuple[int, ...]) -> Result:
    """RSS after each mark of events sent to a GET stream never read; the KB each adds between the last two."""
    rss: dict[int, int] = {}
    with replay(cassette) as (pid, port):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        session = initialize(connection)
        stream = socket.socket()
        stream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # what the kernel holds for it: little
        stream.connect(("127.0.0.1", port))
        head = f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n"
        stream.sendall(head.encode() + b"\r\n")  # and never read
        poke = {"jsonrpc": "2.0", "method": POKE}
        sent = 0
        for mark in marks:
            while sent < mark:
                answer = post(connection, poke, session)
                if answer.status != 202:
                    raise BenchError(f"{POKE} was answered {answer.status}")
                sent += 1
            rss[mark] = rss_kb(pid)
        connection.close()
        stream.close()
    subject = f"RSS per event of 4.8 KB to a GET stream never read ({marks[-1]:,} vs {marks[-2]:,})"
    return growth("2. per event", subject, "event", rss, EVENT_GOAL_KB, 3)


def main() -> int:
    parser = make_parser(__doc__ or "", "300 sessions and 10,000 events (about 20 s)")
    parser.add_argument("--source", metavar="DIR", help="run the mockmcp found in DIR (another checkout, to compare)")
    args = parser.parse_args()
    if args.source:
        ENV["PYTHONPATH"] = os.path.abspath(args.source)
    if not os.path.exists("/proc/self/status"):
        print("bench_http_memory: needs /proc (Linux)", file=sys.stderr)
        return 2
    sessions = (1, 100, 300) if args.quick else (1, 100, 1000)
    events = (1000, 2000, 10_000) if args.quick else (1000, 10_000, 50_000)
    print_heading(
        "HTTP memory",
        f"a cassette of {INTERACTIONS:,} interactions; idle sessions {sessions}; "
        f"events to a GET stream never read {events}",
    )
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mockmcp-bench-memory-") as folder:
        cassette = os.path.join(folder, "big.yaml")
        write_cassette(cassette)
        with replay(cassette):  # once, so that each figure's replay starts from the cache of the parsed cassette,
            pass  # as a host's suite does: parsing leaves memory behind that would hide what sessions add
        results = guarded("1. per session", "RSS per idle session", None, lambda: [per_session(cassette, sessions)])
        results += guarded("   traced", "per session, traced", None, lambda: [traced_per_session(cassette, sessions)])
        results += guarded("2. per event", "RSS per unread event", None, lambda: [per_event(cassette, events)])

    def details(rows: list[Result]) -> None:
        for row in rows:
            if row.error:
                print(f"\n{row.figure}: {row.error}")

    config = {"interactions": INTERACTIONS, "sessions": list(sessions), "events": list(events)}
    return report(results, time.perf_counter() - start, args.json, config, details)


if __name__ == "__main__":
    sys.exit(main())
