"""Streamable HTTP (needs the http extra, h11): replay's endpoint and its server, the recording proxy,
and the one event loop both run on.

The wing's facade: what the rest of mockmcp uses of it; its modules are private."""

from __future__ import annotations

from mockmcp.http._endpoint import SessionParts
from mockmcp.http._http11 import serve_until_signalled
from mockmcp.http._loop import LoopServer
from mockmcp.http._many import serve_together
from mockmcp.http._record import ProxyOptions, RecordingProxy
from mockmcp.http._replay import HttpReplay

__all__ = [
    "HttpReplay",
    "LoopServer",
    "ProxyOptions",
    "RecordingProxy",
    "SessionParts",
    "serve_together",
    "serve_until_signalled",
]
