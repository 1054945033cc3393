"""fastmcp's `Client` over an SDK transport: `fastmcp.Client(mockmcp.transport("x.yaml").for_fastmcp())`.

Theory of operation. The MCP SDK's `Client` takes a transport, an async context manager that yields
the pair of streams (what the host reads, what it writes). fastmcp's `Client` takes a
`ClientTransport` instead, whose one abstract method, `connect_session`, is an async context manager
that yields a `ClientSession` not yet initialized (fastmcp negotiates the era itself). `SDKTransport`
is that method over any SDK transport: it enters the transport, builds the session on its streams
with the class and callbacks fastmcp passes, and leaves both in reverse order. The base class's
other methods stay as they are: nothing outlives a session to `close()`, there is no session id,
and auth is refused.

fastmcp's `Client` calls `connect_session` from a background task of its own (asyncio's: its `Client`
does not run on trio) and enters it once per connection: nested `async with client` blocks share
one session, and a client entered again after its last block ended calls `connect_session` again.
The wrapped transport is entered again with it, so `mockmcp.transport` starts a new session, with an
engine of its own, as a host that launched `mockmcp replay` again would (fastmcp's own stdio
transport keeps its process and session between connections unless `keep_alive=False`).

fastmcp is imported with this module, which `for_fastmcp()` imports on first use: a host that never
asks for it never pays for it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

try:
    from fastmcp.client.transports.base import ClientTransport, TransportOptions
except ImportError as exc:
    raise ImportError("for_fastmcp() adapts a transport to fastmcp's Client: install it (pip install fastmcp)") from exc

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from contextlib import AbstractAsyncContextManager

    from mcp import ClientSession

__all__ = ["SDKTransport", "for_fastmcp"]


def for_fastmcp(transport: AbstractAsyncContextManager[tuple[Any, Any]]) -> SDKTransport:
    """`transport` (an SDK transport: an async context manager yielding (read, write)) as the transport
    fastmcp's `Client` takes."""
    return SDKTransport(transport)


class SDKTransport(ClientTransport):
    """See the module's docstring. A session per `connect_session`, each entering `transport` anew."""

    def __init__(self, transport: AbstractAsyncContextManager[tuple[Any, Any]]) -> None:
        self.transport = transport

    @contextlib.asynccontextmanager
    async def connect_session(
        self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
    ) -> AsyncIterator[ClientSession]:
        session_class = (transport_options or TransportOptions()).session_class
        async with self.transport as (read, write), session_class(read, write, **session_kwargs) as session:
            yield session

    def __repr__(self) -> str:
        return f"<SDKTransport({self.transport!r})>"
