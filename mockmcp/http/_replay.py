"""The HTTP shell of replay: the loop around the sans-IO endpoints (Streamable HTTP's, and the legacy SSE
paths'). Each whole request, closed connection and fired `Later` goes in; what one call gave a connection goes out
in one write. The shell tells the endpoint how many GET streams its descriptors leave room for (`stream_limit`),
and what a client has not read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import h11

from mockmcp.engine.actions import Note
from mockmcp.engine.report import Report
from mockmcp.http._endpoint import Endpoint, Hooks, SessionParts
from mockmcp.http._legacy import SSE_PATH, LegacyEndpoint
from mockmcp.http._loop import Connection, LoopServer, Request
from mockmcp.http._stream import Drop, End, Event, Later, Open, Out, Respond
from mockmcp.options import BOUNDS, Bounds

__all__ = ["HttpReplay", "carry_out", "stream_limit"]

# Descriptors the server holds whatever its clients do: stdio, the listener, the selector, the signals', the
# reserve, a few for files.
_OWN_DESCRIPTORS = 16


def stream_limit() -> int:
    """How many GET streams may be open at once: three quarters of the descriptors beyond the server's own, a quarter
    left for requests."""
    try:
        import resource  # POSIX: elsewhere, the usual limit is assumed
    except ImportError:
        soft = 1024
    else:
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft > 1 << 20:
            soft = 1 << 20
    return max(1, (soft - _OWN_DESCRIPTORS) * 3 // 4)


class HttpReplay(LoopServer):
    """A cassette served at one Streamable HTTP endpoint, and over the legacy HTTP+SSE transport (`GET /sse`);
    `serve_forever` until `shutdown`."""

    def __init__(
        self,
        serving: SessionParts,
        listen: tuple[str, int],
        path: str = "/mcp",
        allow_hosts: tuple[str, ...] = (),
        bounds: Bounds = BOUNDS,
    ) -> None:
        super().__init__(listen, allow_hosts)
        self.path = path
        if bounds.streams is None:
            bounds = bounds._replace(streams=stream_limit())
        self.endpoint = Endpoint(
            serving, frozenset(self.allowed), bounds, path, Hooks(unread=lambda conn: len(conn.out), clock=time.time)
        )
        self.legacy = LegacyEndpoint(self.endpoint)

    @property
    def sse_url(self) -> str:
        """Where a legacy SSE client connects."""
        return self.origin + SSE_PATH

    def handle(self, writer: Connection, request: Request, body: bytes) -> None:
        target = request.target.decode("latin-1")
        endpoint = self.legacy if self.legacy.serves(target) else self.endpoint
        self._carry_out(endpoint.request(writer, request.method, target, request.fields, body))

    def closed(self, connection: Connection) -> None:
        self._carry_out(self.endpoint.closed(connection))
        self._carry_out(self.legacy.closed(connection))

    def shutdown(self) -> list[Report]:
        """Stop serving, end every live session; returns the report of each, in the order they ended."""
        self.stop_accepting()
        self._carry_out(self.endpoint.shutdown())
        self._carry_out(self.legacy.shutdown())
        self.notes.flush()  # the notes, then the summaries
        return self.endpoint.finished

    def _wake(self, token: Any) -> None:
        self._carry_out((self.legacy if self.legacy.owns(token) else self.endpoint).wake(token))

    def _carry_out(self, actions: list[Out]) -> None:
        carry_out(actions, lambda after, token: self.call_later(after, self._wake, token), self.notes.say)


def carry_out(actions: list[Out], later: Callable[[float, Any], None], say: Callable[[str], None]) -> None:
    """Write what the endpoint said on the connections it names (with `send`, `respond`, `close`,
    `close_when_sent`), a connection's stream events in one write; `later(after, token)` each timer, `say` each
    note. Over sockets or in process."""
    gathered: dict[Any, list[Any]] = {}
    closing = []  # connections whose GET stream ended: closed once its end is out
    for action in actions:
        if isinstance(action, End) and action.close:
            closing.append(action.conn)
        if isinstance(action, (Open, Event, End)):
            gathered.setdefault(action.conn, []).append(
                h11.Response(status_code=200, headers=list(action.headers), reason=b"OK")
                if isinstance(action, Open)
                else h11.Data(data=action.data)
                if isinstance(action, Event)
                else h11.EndOfMessage()
            )
        elif isinstance(action, (Respond, Drop)):
            events = gathered.pop(action.conn, None)  # what it sent before, then the answer or the cut
            if events:
                action.conn.send(*events)
            if isinstance(action, Respond):
                action.conn.respond(*action.answer)
            else:
                action.conn.close()
        elif isinstance(action, Later):
            later(action.after, action.token)
        elif isinstance(action, Note):
            say(action.text)
    for conn, events in gathered.items():
        conn.send(*events)
    for conn in closing:
        conn.close_when_sent()
