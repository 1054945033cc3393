"""In the host's process: replay and recording as transports the MCP SDK's client takes, and
fastmcp's adapter.

The wing's facade: what the rest of mockmcp uses of it; its modules are private."""

from __future__ import annotations

from mockmcp.inprocess._record import RecordingTransport, reach, recording
from mockmcp.inprocess._replay import ReplayTransport, transport

__all__ = ["RecordingTransport", "ReplayTransport", "reach", "recording", "transport"]
