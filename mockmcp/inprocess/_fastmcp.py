"""fastmcp's `Client` over an SDK transport: `fastmcp.Client(mockmcp.transport("x.yaml").for_fastmcp())`.

fastmcp's `Client` takes a `ClientTransport`, whose `connect_session` yields a `ClientSession` not yet
initialized; `SDKTransport` is that method over any SDK transport (an async context manager yielding
the two streams), entered anew for each connection, so `mockmcp.transport` starts a new session as a
relaunched `mockmcp replay` would. fastmcp is imported only with this module (`for_fastmcp()`).
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

__all__ = ["SDKTransport"]


class SDKTransport(ClientTransport):
    """A session per `connect_session` (fastmcp calls it once a connection), each entering `transport` anew."""

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
