"""Several HTTP servers of mockmcp (recording proxies, replays) in one process, until SIGINT or SIGTERM.

Each `LoopServer` shares nothing with the others, so each runs its loop in a thread of its own; the
main thread holds the signal handlers and waits on their descriptor. At a signal, or when a loop ends
by itself, every server stops accepting, the threads are joined, and the caller finishes each server
in the main thread (answers under way, recordings saved, reports). `mockmcp serve` runs this way.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Callable, Sequence

from mockmcp.http._loop import LoopServer
from mockmcp.stdio.toolkit import Signals

__all__ = ["serve_together"]


def serve_together(
    servers: Sequence[LoopServer],
    ready: Callable[[], None] | None = None,
    after: Callable[[Signals], None] | None = None,
) -> int:
    """Serve every server until SIGINT or SIGTERM; returns the signal's number (0: a loop ended by itself).
    `after` finishes them with the signals still caught (a second one may cut a wait short, never the saves)."""
    with Signals() as signals:
        threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in servers]
        for thread in threads:
            thread.start()
        if ready is not None:
            ready()
        while signals.received is None and all(thread.is_alive() for thread in threads):
            select.select([signals.fileno()], [], [], 0.5)
            signals.drain()
        for server in servers:
            server.stop_accepting()
        for thread in threads:
            thread.join(10.0)
        if after is not None:
            after(signals)
    return signals.received or 0
