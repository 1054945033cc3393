"""Interception of MCP's Streamable HTTP: the HTTP client every host's MCP SDK sends through, patched in its class.

mcp 2.x sends through `httpx2`, mcp 1.x through `httpx`, on an `AsyncClient` the framework builds itself. The patch
is the class's `_transport_for_url`, by which every request of every client finds its transport: it wraps the
client's own (`_Routed`), so redirects, hooks, cookies and timing stay the client's. A request that is not MCP's
(`mcp_request`) passes untouched; an MCP request goes, by its server's identity (the URL without query or
credentials) and the record mode, to the real transport (live), to it journaled (`_Recording`, as the recording
proxy journals), or to replay's endpoint in process (`_Replaying`, no socket). Headers are never journaled, so
credentials reach neither journal nor cassette; a redirect within a server (`/mcp/` to `/mcp`) reaches the same
recording (which journals no redirect) or replay. The legacy HTTP+SSE transport too (`sse_request`): a GET of a URL
whose path ends in `/sse`, then the POSTs to the URL its stream announced, which reach the same server.

Beside vcrpy, which patches the same clients' transports (`handle_async_request`) to freeze a model's API: what
mockmcp serves (`serve`: the plugin's HTTP mock servers) and every MCP request an interception routes live or
records goes to the transport's own method beneath vcrpy's stub (`_unrecorded`), so no MCP byte reaches a VCR
cassette, in any record mode of either, and vcrpy never buffers an MCP stream; any other request meets vcrpy.
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping
from types import ModuleType
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

import anyio

from mockmcp._wire import jsonrpc, protocol
from mockmcp._wire.credentials import bare_url
from mockmcp._wire.identity import identify
from mockmcp.errors import UsageError
from mockmcp.inprocess._intercept import _ACTIVE, Interception
from mockmcp.inprocess._replay import replay_redactor
from mockmcp.inprocess._servers import NotRecorded, Server
from mockmcp.options import BOUNDS
from mockmcp.record import CLIENT
from mockmcp.stdio.toolkit import Timers

__all__ = ["CLIENTS", "install", "mcp_request", "serve", "sse_request", "uninstall"]

CLIENTS = ("httpx2", "httpx")
"""The HTTP clients patched, when importable: mcp 2.x's, mcp 1.x's."""

_READ_ON = 2.0  # seconds a request's stream is read on, after its reply and its host left, for the server's end
_ORIGINAL: dict[type, Any] = {}  # an AsyncClient class -> its own _transport_for_url
_SERVED: dict[tuple[str, str, int | None], int] = {}  # the origins of mockmcp's own HTTP servers -> how many serve
_ANNOUNCED: set[str] = set()  # the message URLs (bare) legacy SSE streams announced: their POSTs are MCP's
_VCR_STUBS = "vcr.stubs.httpx_stubs"  # the module of vcrpy's patch of httpx's and httpx2's transports
# An interception's HTTP servers, by URL as shown and by identity.
_PER: weakref.WeakKeyDictionary[Interception, dict[str, _Replaying | _Recording | _Missing | None]] = (
    weakref.WeakKeyDictionary()
)


def mcp_request(method: str, headers: Mapping[str, str]) -> bool:
    """Whether a request is MCP's Streamable HTTP: a POST that accepts both JSON and SSE (the handshake era's
    initialize carries nothing else), or any request naming a session or a protocol revision (the GET stream,
    the DELETE, every 2026-07-28 request). `headers` by lower-case name."""
    if protocol.SESSION_HEADER in headers or "mcp-protocol-version" in headers:
        return True
    accept = headers.get("accept", "")
    return method == "POST" and "application/json" in accept and "text/event-stream" in accept


def sse_request(method: str, url: str, headers: Mapping[str, str]) -> bool:
    """Whether a request is MCP's legacy HTTP+SSE transport: a GET of an event stream at a path ending in `/sse`
    (the transport's name for it, as hosts' configs tell it), or a POST to a URL such a stream announced."""
    if method == "POST":
        return bare_url(url) in _ANNOUNCED
    sse = urlsplit(url).path.rstrip("/").endswith("/sse")
    return method == "GET" and sse and "text/event-stream" in headers.get("accept", "")


def install() -> None:
    """Patch the `AsyncClient` of each HTTP client importable (once)."""
    for name in CLIENTS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        cls = module.AsyncClient
        if cls in _ORIGINAL:
            continue
        _ORIGINAL[cls] = own = getattr(cls, "_transport_for_url")  # noqa: B009 (a private name, read as one)

        def transport_for_url(client: Any, url: Any, _own: Any = own, _module: ModuleType = module) -> Any:
            return _Routed(_own(client, url), _module, id(client))

        setattr(cls, "_transport_for_url", transport_for_url)  # noqa: B010


def uninstall() -> None:
    """Undo `install`, unless a server mockmcp serves is still up (`serve`)."""
    if _SERVED:
        return
    for cls, own in _ORIGINAL.items():
        setattr(cls, "_transport_for_url", own)  # noqa: B010
    _ORIGINAL.clear()
    _ANNOUNCED.clear()


def _origin(url: Any) -> tuple[str, str, int | None]:
    parts = urlsplit(str(url))
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def serve(url: str, up: bool = True) -> None:
    """`url` is served by mockmcp in this process's test (`up`), or no longer: while it is, the requests to its
    origin go beneath vcrpy's patch (see the module's docstring)."""
    origin = _origin(url)
    if up:
        install()
        _SERVED[origin] = _SERVED.get(origin, 0) + 1
        return
    _SERVED[origin] = _SERVED.get(origin, 1) - 1
    if _SERVED[origin] <= 0:
        del _SERVED[origin]
    if not _SERVED and not _ACTIVE:
        uninstall()


def _unrecorded(real: Any) -> Any:
    """`real.handle_async_request`, the transport's own beneath vcrpy's stub when vcrpy patches its class (the
    stub keeps the method it wraps as `__wrapped__`); any other wrapper stays."""
    handler = type(real).handle_async_request
    stubs = sys.modules.get(_VCR_STUBS)
    while stubs is not None and getattr(handler, "__globals__", None) is vars(stubs):
        handler = handler.__wrapped__
    return functools.partial(handler, real)


class _Routed:
    """A client's own transport, as its requests find it while the patch is on: an MCP request goes where the
    active interception says; any other request to the transport, untouched."""

    def __init__(self, real: Any, module: ModuleType, client: int) -> None:
        self.real, self.module, self.client = real, module, client

    async def handle_async_request(self, request: Any) -> Any:
        if _SERVED and _origin(request.url) in _SERVED:  # mockmcp's own server
            return await _unrecorded(self.real)(request)
        mcp = mcp_request(request.method, request.headers) or sse_request(
            request.method, str(request.url), request.headers
        )
        if not _ACTIVE or not mcp:
            return await self.real.handle_async_request(request)
        try:
            route = _route(_ACTIVE[-1], request.url)
            if route is None:
                return await _unrecorded(self.real)(request)
            return await route.exchange(self, request)
        except NotRecorded as exc:  # to the host, a server that cannot be reached
            raise self.module.ConnectError(exc.render(), request=request) from exc

    def __getattr__(self, name: str) -> Any:  # what else a caller asks of the transport is the real one's
        return getattr(self.real, name)


def _route(interception: Interception, url: Any) -> _Replaying | _Recording | _Missing | None:
    """Where an MCP request to `url` goes: None (live), or its server's recording or replay. A server is its
    identity: URLs that differ where an identity does not look (`/mcp` and `/mcp/`, the query) reach the same one."""
    shown = bare_url(str(url))
    servers = _PER.setdefault(interception, {})
    if shown in servers:
        return servers[shown]
    identity = identify(None, url=shown, names=interception.names)
    if any(fragment and fragment in shown for fragment in interception.allow) or identity.name in interception.allow:
        servers[shown] = None  # live
        return None
    if identity.name not in servers:  # (a name has no "://": it is never a URL's key)
        try:
            server = interception._server(identity, "")
            server.sessions += 1
            if interception.records(server):
                servers[identity.name] = _Recording(interception, server)
            else:
                servers[identity.name] = _Replaying(interception, server, urlsplit(shown))
        except NotRecorded as exc:  # said once in the verdict; this request and each after it are refused alike
            interception.problems.append(exc.render())
            interception.told()
            servers[identity.name] = _Missing(exc)
    servers[shown] = servers[identity.name]
    return servers[shown]


def announced(interception: Interception, url: str, route: _Replaying | _Recording) -> None:
    """A legacy SSE stream of `route`'s server announced `url` (absolute): the POSTs to it are MCP's, and its."""
    shown = bare_url(url)
    _ANNOUNCED.add(shown)
    _PER.setdefault(interception, {})[shown] = route


def finish(interception: Interception) -> None:
    """The interception closes: each recording's journal becomes its cassette, each replay's sessions end."""
    for route in list(_PER.get(interception, {}).values()):
        if route is not None:
            route.finish()


def _wing() -> ModuleType:
    """The http wing, imported when an MCP request is first taken: it needs h11, the http extra."""
    try:
        import mockmcp.http as wing
    except ImportError as exc:
        raise UsageError("intercepting HTTP needs the http extra (h11)", "pip install 'mockmcp[http]'") from exc
    return wing


@functools.cache
def _stream(kind: type, module: ModuleType) -> Any:
    """`kind` as the client's own body stream class (its client checks a body is one)."""
    return type(kind.__name__, (kind, module.AsyncByteStream), {"__slots__": ()})


class _Missing(NamedTuple):
    """A server under replay that no cassette holds: every request to it is refused as the first was."""

    refused: NotRecorded

    async def exchange(self, routed: _Routed, request: Any) -> Any:
        raise self.refused

    def finish(self) -> None:
        pass


class _Recording:
    """A server recorded while interception is on: each request through the real transport, journaled by the
    recording proxy's `Exchange` and `Attribution` (a client stands for a connection)."""

    def __init__(self, interception: Interception, server: Server) -> None:
        redactor = interception.recording_redactor()
        self.interception, self.server = interception, server
        journal = server.open_journal(interception.mode, redactor, interception.mark(server))
        self.journaling = _wing().Journaling(journal, redactor, BOUNDS)
        self.direct: set[str] = set()  # the URL paths that answered (not redirected): journaled as they go

    async def exchange(self, routed: _Routed, request: Any) -> Any:
        body = await request.aread()
        # Journaled as it goes (as the proxy does) once its path is known to answer; until then, once its answer's
        # head came, so that a redirect (`/mcp/` to `/mcp`) is not journaled at all.
        path, step = request.url.path, None
        if path in self.direct:
            step = self._begin(routed, request, body)
        try:
            response = await _unrecorded(routed.real)(request)
        except Exception as exc:
            (step or self._begin(routed, request, body)).failed(exc, heard=False)
            raise
        if step is None:
            if 300 <= response.status_code < 400:
                return response
            self.direct.add(path)
            step = self._begin(routed, request, body)
        message = step.machine.request.message
        self.journaling.attribution.answered(step.session, message, response.headers.get(protocol.SESSION_HEADER))
        fields = {name.lower(): value for name, value in response.headers.items()}
        step.do(step.machine.head(response.status_code, fields, time.monotonic()))
        response.stream = _stream(_Tap, routed.module)(response.stream, step, routed.module)
        return response

    def _begin(self, routed: _Routed, request: Any, body: bytes) -> _Step:
        """The request's exchange begins: its session, its machine, and its message journaled."""
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            message = jsonrpc.parse(body) if body.strip() else None
        except ValueError:
            message = None
        journaling, wing, target = self.journaling, _wing(), request.url.raw_path.decode("ascii")
        session = journaling.attribution.posted(target) if request.method == "POST" else None  # a legacy SSE message
        if session is None:
            session = journaling.attribution.request(routed.client, request.method, headers, message)
        asked = wing.asked(request.method.encode(), headers, message)
        if request.method == "POST":
            journaling.record(CLIENT, session, body)
        return _Step(journaling, session, wing.Exchange(asked, BOUNDS), (self, str(request.url)))

    def finish(self) -> None:
        """The interception closes: the journal becomes the cassette (or the staged recording), once."""
        self.interception.save(self.server)


class _Step:
    """One request's exchange, as the recording proxy's `_Exchange`: only the journal's actions are done here, the
    real transport passes the bytes on."""

    def __init__(self, proxy: Any, session: int, machine: Any, asked: tuple[_Recording, str] | None = None) -> None:
        self.proxy, self.session, self.machine = proxy, session, machine
        self.asked = asked  # its recording, and the URL it asked

    def announced(self, url: str) -> None:
        """Its legacy SSE stream announced where its host POSTs: a session of its own, those POSTs routed here."""
        assert self.asked is not None
        recording, base = self.asked
        self.session = self.proxy.announce(url, base)
        announced(recording.interception, urljoin(base, url), recording)

    def do(self, actions: list[Any]) -> None:
        journaled = _wing().journaled
        for action in actions:
            journaled(self, action)

    def failed(self, exc: Exception, heard: bool) -> None:
        self.do(self.machine.failed(time.monotonic(), str(exc), str(exc), heard, heard, False))


class _Tap:
    """The real answer's body, passed on as it comes, each piece told to the exchange (its messages journaled)."""

    def __init__(self, real: Any, step: _Step, module: ModuleType) -> None:
        self.real, self.step, self.module, self.done = real, step, module, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        step, machine = self.step, self.step.machine
        try:
            async for chunk in self.real:
                step.do(machine.on("data", bytes(chunk), time.monotonic()))
                step.do(machine.flush())
                yield chunk
        except self.module.TransportError as exc:
            self.done = True
            step.failed(exc, heard=True)
            raise
        self.done = True
        step.do(machine.on("end", time.monotonic()))
        step.do(machine.flush())

    async def aclose(self) -> None:
        step, machine = self.step, self.step.machine
        if not self.done and machine.replied and not machine.request.get:
            # The SDK closes a request's stream once its reply came; read on to the server's end (as the proxy
            # does for a client that left), so that the journal has the server's framing.
            with anyio.move_on_after(_READ_ON):
                async for _chunk in self:
                    pass
        if not self.done:  # the host left before the end: as the proxy's client leaving, then the stream dropped
            self.done = True
            step.do(machine.on("left", time.monotonic()))
            step.do(machine.on("dropped"))
        await self.real.aclose()


class _Replaying:
    """A server replayed while interception is on: replay's endpoint in process, each request on a `_Connection` of
    its own; its timers are fired by whoever waits on a body (as `_process.Replayed` does)."""

    def __init__(self, interception: Interception, server: Server, parts: Any) -> None:
        wing = _wing()
        recordings, options = server.load(interception.replay, interception.how_to_record), interception.replay
        redactor = replay_redactor(recordings.cassette, options)
        serving = wing.SessionParts(recordings.cassette, recordings.matcher, redactor, options.timing)
        hooks = wing.Hooks(unread=lambda conn: conn.unread, clock=time.time)
        host = frozenset({(parts.hostname or "").lower()})  # the Host and Origin the endpoint admits
        self.endpoint = wing.Endpoint(serving, host, BOUNDS, parts.path, hooks)
        self.legacy = wing.LegacyEndpoint(self.endpoint)  # the legacy SSE transport's, beside it
        self.interception, self.server = interception, server
        self.timers = Timers()
        self.waiting: list[anyio.Event] = []  # one a task waiting for a change (each on its own event loop)
        self.finished = False

    async def exchange(self, routed: _Routed, request: Any) -> Any:
        body = await request.aread()
        headers = {name.lower(): value for name, value in request.headers.items()}
        conn = _Connection()
        # Routed here by its identity already, so at the endpoint's path (`/mcp/` is `/mcp`'s server too); a legacy
        # SSE stream at the legacy endpoint's, its POSTs at the URL it announced.
        query = request.url.query.decode("ascii")
        endpoint, path = self.endpoint, self.endpoint.path
        if sse_request(request.method, str(request.url), headers):
            endpoint, path = self.legacy, _wing().SSE_PATH if request.method == "GET" else _wing().MESSAGE_PATH
            if request.method == "GET":  # where its stream sends the host's POSTs: this replay
                announced(self.interception, urljoin(str(request.url), _wing().MESSAGE_PATH), self)
        target = path + (f"?{query}" if query else "")
        self.carry(endpoint.request(conn, request.method.encode(), target, headers, body))
        while conn.head is None:
            if conn.broken:
                raise routed.module.RemoteProtocolError("Server disconnected without sending a response.")
            await self.step()
        status, fields = conn.head
        stream = _stream(_Played, routed.module)(self, conn, routed.module)
        return routed.module.Response(status, headers=fields, stream=stream, extensions={"http_version": b"HTTP/1.1"})

    def carry(self, actions: list[Any]) -> None:
        _wing().carry_out(actions, self.timers.add, self.interception.say)
        self.judged()
        waiting, self.waiting = self.waiting, []
        for event in waiting:
            event.set()

    def judged(self) -> None:
        """Each live session's report is the server's from its start: a session the host leaves open is judged."""
        for session in [*self.endpoint.sessions.values(), self.endpoint.stateless, *self.legacy.sessions.values()]:
            if session is not None and session.engine.report not in self.server.reports:
                self.server.reports.append(session.engine.report)

    async def step(self) -> None:
        """Wait for something to change (an answer, a stream's event, its end), or fire the timers that are due."""
        changed = anyio.Event()
        self.waiting.append(changed)
        with anyio.move_on_after(self.timers.wait()):
            await changed.wait()
        for token in self.timers.due():
            self.carry((self.legacy if self.legacy.owns(token) else self.endpoint).wake(token))

    def finish(self) -> None:
        """The interception closes: every live session ends (as a DELETE would), each summary said."""
        if self.finished:
            return
        self.finished, self.waiting = True, []  # no task waits now: its event loop may be gone
        _wing().carry_out(self.endpoint.shutdown() + self.legacy.shutdown(), self.timers.add, self.interception.say)
        for report in self.server.reports:
            self.interception.say(report.summary())


class _Connection:
    """What the endpoint writes on one request's connection, as the response it makes: the head, the body's
    pieces not yet read, the end, or the cut (h11's events, as `carry_out` sends them)."""

    def __init__(self) -> None:
        self.head: tuple[int, list[tuple[bytes, bytes]]] | None = None
        self.pieces: deque[bytes] = deque()
        self.unread = 0  # bytes written and not yet read by the host (the endpoint's `Hooks.unread`)
        self.ended = self.broken = False

    def send(self, *events: Any) -> None:
        import h11

        for event in events:
            if isinstance(event, h11.Response):
                self.head = (event.status_code, list(event.headers))
            elif isinstance(event, h11.Data):
                self.pieces.append(bytes(event.data))
                self.unread += len(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self.ended = True

    def respond(
        self, status: int, body: bytes = b"", content_type: str = "application/json", headers: Any = ()
    ) -> None:
        import h11

        fields = [("content-type", content_type), ("content-length", str(len(body))), *headers]
        self.send(h11.Response(status_code=status, headers=fields), h11.Data(data=body), h11.EndOfMessage())

    def close(self) -> None:
        self.broken = True

    def close_when_sent(self) -> None:
        """Nothing to close: in process, a connection is one request's response, ended already."""


class _Played:
    """A replayed answer's body as the host reads it: what the endpoint wrote on its connection, as it comes."""

    def __init__(self, replaying: _Replaying, conn: _Connection, module: ModuleType) -> None:
        self.replaying, self.conn, self.module, self.closed = replaying, conn, module, False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self.conn
        while True:
            while conn.pieces:
                piece = conn.pieces.popleft()
                conn.unread -= len(piece)
                if piece:
                    yield piece
            if conn.ended:
                return
            if conn.broken:
                raise self.module.RemoteProtocolError("peer closed connection without sending complete message body")
            await self.replaying.step()

    async def aclose(self) -> None:
        if not self.closed:  # the host closed the response: its connection, to the endpoint
            self.closed = True
            self.replaying.carry(self.replaying.endpoint.closed(self.conn) + self.replaying.legacy.closed(self.conn))
