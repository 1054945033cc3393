"""The MCP Python SDK's two lines, 1.x and 2.x, told apart once, by what the installed `mcp.types` holds.

Three things the lines spell differently: how a server's line becomes a message, which objects are servers, and
the transport that runs one in this process. Everything else mockmcp touches is the same on both. The SDK is
imported on the first call, not with this module.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, NamedTuple

import anyio

__all__ = ["SDK", "sdk"]


class SDK(NamedTuple):
    """The host's SDK line (1 or 2) and what mockmcp needs of it, spelled for that line."""

    line: int
    parse: Callable[[bytes], Any]  # a server's line -> the message the SDK's client reads (ValueError if invalid)
    servers: tuple[type, ...]  # the server objects `in_memory` takes
    session_message: type  # what a transport's streams carry: `SessionMessage(message)`

    def in_memory(self, server: Any) -> AbstractAsyncContextManager[Any]:
        """A transport to `server` (one of `servers`) run in this process, yielding the client's two streams."""
        if self.line == 2:
            from mcp.client._memory import InMemoryTransport  # the SDK's own, as its Client(server) uses

            return InMemoryTransport(server)
        return _served_in_memory(server)


@functools.cache
def sdk() -> SDK:
    """The installed SDK's line, decided on the first call. Raises ImportError without the SDK."""
    from mcp import types
    from mcp.server import Server
    from mcp.shared.message import SessionMessage

    if hasattr(types, "jsonrpc_message_adapter"):  # 2.x: messages are a union, parsed by a TypeAdapter
        from mcp.server.mcpserver import MCPServer

        parse = functools.partial(types.jsonrpc_message_adapter.validate_json, by_name=False)
        return SDK(2, parse, (Server, MCPServer), SessionMessage)
    from mcp.server.fastmcp import FastMCP  # 1.x: a RootModel over the union, and FastMCP's old name

    return SDK(1, types.JSONRPCMessage.model_validate_json, (Server, FastMCP), SessionMessage)


@asynccontextmanager
async def _served_in_memory(server: Any) -> AsyncIterator[Any]:
    """A 1.x server (a low-level `Server`, or the one a `FastMCP` wraps) run on this loop over memory streams."""
    from mcp.shared.memory import create_client_server_memory_streams

    lowlevel = getattr(server, "_mcp_server", server)  # FastMCP keeps its Server there (1.x has no public name)
    options = lowlevel.create_initialization_options()
    async with create_client_server_memory_streams() as (client, served), anyio.create_task_group() as group:
        group.start_soon(functools.partial(lowlevel.run, *served, options))
        try:
            yield client
        finally:
            group.cancel_scope.cancel()  # the host left: the server has no one to answer
