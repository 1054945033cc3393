"""mockmcp's HTTP servers served until SIGINT or SIGTERM: one on this thread, its loop watching the signal
descriptor; several (`mockmcp serve`) each on a thread of its own while this one holds the signal handlers.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Callable, Sequence

from mockmcp.http._loop import LoopServer
from mockmcp.stdio.toolkit import Signals

__all__ = ["serve_together", "serve_until_signalled"]


def serve_together(
    servers: Sequence[LoopServer], ready: Callable[[], None], after: Callable[[Signals], None] | None = None
) -> int:
    """Serve every server until SIGINT or SIGTERM; returns the signal's number (0: a loop ended by itself). `ready`
    runs once the signals are caught; `after` finishes the servers with them still caught."""
    with Signals() as signals:
        ready()
        alone = servers[0] if len(servers) == 1 else None
        threads = [] if alone else [threading.Thread(target=server.serve_forever, daemon=True) for server in servers]
        for thread in threads:
            thread.start()
        try:
            if alone is not None:
                alone.serve_forever(signals)
            else:
                while signals.received is None and all(thread.is_alive() for thread in threads):
                    select.select([signals.fileno()], [], [], 0.5)
                    signals.drain()
        finally:
            for server in servers:
                server.stop_accepting()
            for thread in threads:
                thread.join(10.0)
        if after is not None:
            after(signals)
    return signals.received or 0


def serve_until_signalled(
    server: LoopServer, ready: Callable[[], None], after: Callable[[Signals], None] | None = None
) -> int:
    """One server, on this thread (see `serve_together`)."""
    return serve_together([server], ready, after)
