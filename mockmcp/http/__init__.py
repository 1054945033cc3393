"""Streamable HTTP and legacy HTTP+SSE (the http extra, h11): replay's server and the recording proxy, on one loop.

Attaches at the command line (`replay --http`, `record --http-target`), `wrap`'s `serve` and the plugin.

  _streamable    admission (Host/Origin, path, method, headers, body) and the recorded framing, no socket
  _endpoint      replay's endpoint, sans-IO: request/closed/wake in, Respond/Open/Event/End/Drop/Later out
  _legacy        replay over the legacy HTTP+SSE transport, sans-IO: GET /sse, the endpoint event, POSTs answered 202
  _session       one live session: which stream each message goes on, the backlog, batches, cuts, resumption
  _stream        a stream carrying out its table; what one call writes; events kept for Last-Event-ID
  _stream_state  a stream's life as a table (gathering, whole, unbegun, open, quiet, lost, gone, done, broken)
  _replay        the endpoint served on the loop; `carry_out`, its outputs done on connections (sockets, or in process)
  _exchange      the recording proxy's exchange as a state machine: what happened (with its time) -> actions
  _sse           an SSE byte stream cut into events, whatever the chunks, bounded
  _attribution   which recorded session a message through the proxy belongs to
  _record        the recording proxy: client and target connections carrying out the exchange; `Journaling`,
                 how a recording journals (the proxy's, and interception's in the host's process)
  _loop          the one selectors event loop: non-blocking sockets, timers, the signal descriptor; HTTP/1.1 by
                 h11 on every side: limits, the listener, a request and a response as read
  _many          serving until a signal: one server on this thread, or several (proxies, replays), a loop each
"""

from __future__ import annotations

from mockmcp.http._endpoint import Endpoint, Hooks, SessionParts
from mockmcp.http._exchange import Exchange, asked
from mockmcp.http._legacy import MESSAGE_PATH, SSE_PATH, LegacyEndpoint
from mockmcp.http._loop import LoopServer
from mockmcp.http._many import serve_together, serve_until_signalled
from mockmcp.http._record import Journaling, ProxyOptions, RecordingProxy, journaled
from mockmcp.http._replay import HttpReplay, carry_out

__all__ = [
    "Endpoint",
    "Exchange",
    "Hooks",
    "HttpReplay",
    "Journaling",
    "LegacyEndpoint",
    "LoopServer",
    "MESSAGE_PATH",
    "ProxyOptions",
    "RecordingProxy",
    "SSE_PATH",
    "SessionParts",
    "asked",
    "carry_out",
    "journaled",
    "serve_together",
    "serve_until_signalled",
]
