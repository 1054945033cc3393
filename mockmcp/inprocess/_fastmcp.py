"""fastmcp's `Client` over an SDK transport: `fastmcp.Client(mockmcp.transport("x.yaml").for_fastmcp())`.

fastmcp's `Client` takes a `ClientTransport`, whose `connect_session` yields a `ClientSession` not yet
initialized; `SDKTransport` enters an SDK transport anew for each connection, so each is a new session.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from mcp import ClientSession

try:
    from fastmcp.client.transports.base import ClientTransport
except ImportError as exc:
    raise ImportError("for_fastmcp() adapts a transport to fastmcp's Client: install it (pip install fastmcp)") from exc
try:  # fastmcp 4 (over the SDK's 2.x line): the client says which session class it wants
    from fastmcp.client.transports.base import TransportOptions
except ImportError:  # fastmcp 3 (over 1.x): the SDK's ClientSession, as fastmcp's own transports build
    TransportOptions = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from contextlib import AbstractAsyncContextManager

__all__ = ["SDKTransport"]


class SDKTransport(ClientTransport):
    """A session per `connect_session` (fastmcp calls it once a connection), each entering `transport` anew."""

    def __init__(self, transport: AbstractAsyncContextManager[tuple[Any, Any]]) -> None:
        self.transport = transport

    @contextlib.asynccontextmanager
    async def connect_session(
        self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
    ) -> AsyncIterator[ClientSession]:
        options = transport_options or (None if TransportOptions is None else TransportOptions())
        session_class = ClientSession if options is None else options.session_class
        async with self.transport as (read, write), session_class(read, write, **session_kwargs) as session:
            yield session

    def __repr__(self) -> str:
        return f"<SDKTransport({self.transport!r})>"
