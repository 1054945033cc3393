"""In the host's process: replay and recording as transports the MCP SDK's client takes.

`mockmcp.transport` and `mockmcp.recording` are these; the plugin's `mockmcp.transport()` too.

  _replay   replay on the host's event loop (anyio): each message to the engine in the host's own task
  _record   a transport in front of the real one, journaled as `mockmcp record` journals
  _fastmcp  any of these as the transport fastmcp's Client takes (fastmcp imported only there)
  _sdk      the host's SDK line (1.x or 2.x), decided once: how it parses a line, its servers, in memory
"""

from __future__ import annotations

from mockmcp.inprocess._record import RecordingTransport, reach, recording
from mockmcp.inprocess._replay import ReplayTransport, transport

__all__ = ["RecordingTransport", "ReplayTransport", "reach", "recording", "transport"]
