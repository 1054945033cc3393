"""In the host's process: replay and recording as transports the MCP SDK's client takes.

`mockmcp.transport` and `mockmcp.recording` are these; the plugin's `mockmcp.transport()` too.

  _replay   replay on the host's event loop (anyio): each message to the engine in the host's own task
  _record   a transport in front of the real one, journaled as `mockmcp record` journals
  _fastmcp  any of these as the transport fastmcp's Client takes (fastmcp imported only there)
  _intercept  interception: the SDK's stdio spawn and kill patched, each server the host starts routed
            live, recorded or replayed (`intercepting`, the plugin's `mockmcp_intercept`, `mockmcp run`)
  _http     interception of Streamable HTTP and legacy HTTP+SSE: the HTTP clients' AsyncClient patched, each MCP
            request routed alike; mockmcp's own HTTP servers and the MCP requests it routes kept beneath vcrpy's
            patch (`serve`)
  _run      `mockmcp run`: interception in every Python process of a program (`_boot/sitecustomize.py`)
  _servers  one intercepted server: its cassette, its sessions in order, replayed or recorded (one journal)
  _process  the process the SDK gets: `Replayed` (the engine, no process at all) or `Tapped` (the real one)
  _sdk      the host's SDK line (1.x or 2.x), decided once: how it parses a line, its servers, in memory
  _calls    what the host did (`mockmcp.calls`): its requests, from a report live in process or from a file
"""

from __future__ import annotations

from mockmcp._wire.identity import Identity, identify, portable
from mockmcp.inprocess._calls import Call, Calls
from mockmcp.inprocess._calls import calls_of as calls
from mockmcp.inprocess._http import serve as serve_beside_vcr
from mockmcp.inprocess._intercept import Interception, intercepting, sdk_version
from mockmcp.inprocess._record import RecordingTransport, reach, recording
from mockmcp.inprocess._replay import ReplayTransport, transport
from mockmcp.inprocess._run import environment as child_environment
from mockmcp.inprocess._run import read_verdicts
from mockmcp.inprocess._run import run as run_program
from mockmcp.inprocess._run import settings as run_settings
from mockmcp.inprocess._servers import NotRecorded

__all__ = ["Call", "Calls", "Identity", "Interception", "NotRecorded", "RecordingTransport", "ReplayTransport"]
__all__ += ["calls", "child_environment", "identify", "intercepting", "portable", "reach", "read_verdicts", "recording"]
__all__ += ["run_program", "run_settings", "sdk_version", "serve_beside_vcr", "transport"]
