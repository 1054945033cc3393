"""The recorder's HTTP shell: a reverse proxy in front of a real Streamable HTTP server.

Theory of operation. Every request to the proxy's endpoint is sent on to the target as it came
(less hop-by-hop headers, and `Accept-Encoding`, so bodies stay readable), on a connection kept
from an earlier request when the target left one open (a new one costs a round trip), after the
same Host/Origin check as replay's (`core.streamable.foreign`); and the answer comes back as it
goes: a body up to `WHOLE` whole (its head with it, in one write), a longer one and an SSE stream
chunk by chunk as the server writes it. On the way, every JSON-RPC message in a POST body, a JSON
answer or an SSE event is journaled like the stdio recorder's lines, redacted first, tagged with the
session it belongs to; one over `KEPT_LIMIT` only as its size, so that the proxy's memory stays
bounded however long an answer is (`_Exchange` says what the cassette holds for it). Headers are
never recorded, so neither is an `Authorization`. The cassette is built from the journal when the
proxy stops.

One event loop (`http_loop.py`) carries both sides: the clients' connections, and non-blocking
connections to the target (h11's client side on each: a request written in one piece, its answer
read as it comes; TLS without blocking for an https target) in the same selector.
No thread per connection, no lock. The upstream timeout is a timer on the loop (504 when the
answer's head is not there in time, or a body stalls before any of it went to the client; a cut
connection once some has). A client that reads slowly pauses the reading of its
own answer from the target, no one else's; a client that left a request's stream does not stop the
proxy reading and journaling it to its end (a GET stream it left is closed instead). A target whose
connection ends after an answer's head and before its end broke that answer off: the client sees
the same (what came of a stream, then its connection cut; of a body, which goes whole, nothing), and
the cut is journaled after what came before it (`Journal.cut`), so that replay breaks it off there
too (`drop: cut`); an answer the target could not be read for (no head, or one that is not HTTP)
is a 502 Bad Gateway saying why. On SIGINT or
SIGTERM the proxy stops accepting, and `finish_answers` lets answers under way end. (Resolving
the target's name, when it is not an address, blocks the loop briefly each time a new connection
to it opens; kept connections make that rare.)

Which session each message belongs to is decided by `core.attribution` (its five rules and their
limits are written there): the proxy tells it of every request, of the session id the target
issued in answer to an initialize, and of every client connection that closes.
"""

from __future__ import annotations

import errno
import os
import re
import selectors
import socket
import ssl
import time
import weakref
from typing import Any
from urllib.parse import urlsplit

import h11

from mockmcp import jsonrpc, protocol
from mockmcp.core.attribution import Attribution
from mockmcp.core.recorder import CLIENT, SERVER
from mockmcp.core.redact import Redactor
from mockmcp.core.streamable import error_status_seen, foreign, framing_seen, session_error_seen, wrong_target
from mockmcp.errors import UsageError
from mockmcp.shells.http11 import MAX_BODY, no_delay
from mockmcp.shells.http_loop import PAUSE_READING, Connection, LoopServer, Request, rewatch
from mockmcp.shells.http_request import MAX_HEAD, Response, response_of
from mockmcp.shells.journal import Journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mockmcp.shells.toolkit import Signals

__all__ = ["RecordingProxy", "SseEvents"]

# Not forwarded either way: they describe one hop, not the message.
# What of a stream whose client left is still read and journaled (the rest of an answer it gave up on, as
# the SDK client gives up on an event over 1 MiB), for --upstream-timeout seconds at most: an endless
# stream would otherwise grow the journal without end.
AFTER_GONE_BYTES = 64 << 20
# The most of one message (a body, an SSE event) the proxy keeps for the cassette; what is longer still
# goes to the client whole, as it comes, but is not journaled as its bytes (see `_Exchange`). Smaller than
# the 64 MiB line mockmcp reads anywhere (`jsonrpc.MAX_LINE`) because what is kept is held several times
# over on its way to the cassette (the journal's line, its parse, the YAML: a 16 MB answer takes the proxy
# near 180 MB while it saves, benchmarks/bench_proxy_memory.py), and a cassette is read by every replay:
# it is the largest request body mockmcp's HTTP side takes, and far more than an MCP message needs (the
# SDK client refuses an SSE event over 1 MiB).
KEPT_LIMIT = MAX_BODY
# What one read from the target takes at most: a long answer passes in pieces this size, each one write to its
# client (a smaller piece costs more turns of the loop per MB: 64 KiB relayed a body at half the speed).
_READ = 1 << 18
# A body up to this size goes to the client whole, at its end, its head with it in one write (see
# benchmarks/README.md); a longer one goes on as it comes, its head first.
WHOLE = 1 << 20

_HOP = {
    b"connection",
    b"keep-alive",
    b"transfer-encoding",
    b"te",
    b"upgrade",
    b"proxy-authorization",
    b"proxy-connection",
    b"host",
    b"content-length",
    b"accept-encoding",
    b"content-encoding",
    b"trailer",
}

# How a JSON text of one line starts (a UTF-16 or BOM-led one does not: it is parsed and re-encoded).
_OPENING = (b"{", b"[")


def _passed(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The headers that pass the proxy, in order and as often as they came (less `_HOP`), as bytes:
    h11 writes a str as ASCII, and a value may hold obs-text."""
    return [(name, value) for name, value in headers if name not in _HOP]


class SseEvents:
    """Cuts an SSE byte stream into the data of its events, however the chunks fall.

    Lines may end in CRLF, LF or CR, and a chunk may end between the CR and the LF of one line end.
    Each chunk is scanned once: the cost is linear in the stream, however big an event is. On the
    way it notes whether events carried ids, and whether the first was a priming event (an id alone).

    An event longer than `limit` bytes (its lines, with LF line ends) is not kept: from the moment the
    event being read grows past it, its bytes are counted and dropped (the stream's bytes still go to
    the client: this only reads what passes), and the event comes out as its size, an int, in place of
    its data, with the id of an `id:` line among its first `limit` bytes. So what this holds at any time
    is at most `limit` bytes and one chunk, and what it gives does not depend on how the chunks fall.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = KEPT_LIMIT if limit is None else limit
        self._pending = bytearray()
        self._after_cr = False  # the last chunk ended in CR: an LF starting this one ends no further line
        self._skipped: int | None = None  # bytes dropped of the event being read, once past the limit
        self._skipped_id: str | None = None  # the id of that event, when it came before the limit was passed
        self.ids = False
        self.primed: bool | None = None  # None until the first event is whole
        self.count = 0  # events with data

    def feed(self, chunk: bytes) -> list[bytes | int]:
        """The data of every event this chunk completes (events without data are left out; one over the
        limit is its size)."""
        return [data for _id, data in self.events(chunk)]

    def events(self, chunk: bytes) -> list[tuple[str | None, bytes | int]]:
        """The id (None: the event had none) and data of every event this chunk completes (events
        without data are left out; for an event over the limit, its size in bytes instead of its data)."""
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        start = max(0, len(self._pending) - 1)  # a blank line may begin in what came before
        if b"\r" in chunk:  # (each test a scan at memory speed: a long line passes the quicker)
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self._pending += chunk
        out: list[tuple[str | None, bytes | int]] = []
        # An event ends only where a line of this chunk ends: what came before holds no blank line any more.
        while b"\n" in chunk and (end := self._pending.find(b"\n\n", start)) >= 0:
            if self._skipped is not None:
                out.append(self._seen(self._skipped_id, True, self._skipped + end))
                self._skipped = None
            else:
                out.extend(self._event(bytes(self._pending[:end])))
            del self._pending[: end + 2]
            start = 0
        if self._skipped is None and len(self._pending) - self._pending.endswith(b"\n") > self.limit:
            self._skip()
        if self._skipped is not None:  # only the last byte is kept: a blank line may begin with it
            self._skipped += len(self._pending) - 1
            del self._pending[:-1]
        return out

    def between(self) -> bool:
        """Whether no event is being read: the next chunk begins one."""
        return self._skipped is None and not self._pending

    def skipping(self) -> int | None:
        """The bytes so far of an event over the limit being read, if one is."""
        return None if self._skipped is None else self._skipped + len(self._pending)

    def _event(self, event: bytes) -> list[tuple[str | None, bytes | int]]:
        if len(event) > self.limit:
            return [self._seen(_early_id(event, self.limit), True, len(event))]
        lines = event.split(b"\n")
        data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
        ids = [line[3:].removeprefix(b" ") for line in lines if line.startswith(b"id:")]
        event_id = ids[-1].decode("utf-8", "replace") if ids else None
        if not any(data):
            self._seen(event_id, False, 0)
            return []
        return [self._seen(event_id, True, b"\n".join(data))]

    def _skip(self) -> None:
        """The event being read has grown past the limit: its id, if it came early, is kept, the rest dropped."""
        self._skipped_id = _early_id(self._pending, self.limit)
        self._skipped = 0

    def _seen(self, event_id: str | None, data: bool, kept: bytes | int) -> tuple[str | None, bytes | int]:
        """Note an event's id and whether it had data; what `events` gives of it."""
        self.ids = self.ids or event_id is not None
        if self.primed is None:
            self.primed = event_id is not None and not data
        self.count += data
        return event_id, kept


_ID_LINE = re.compile(rb"^id: ?([^\n]*)\n", re.MULTILINE)


def _early_id(event: bytes | bytearray, limit: int) -> str | None:
    """The id of an SSE event over the limit: the last `id:` line that ends within its first `limit` bytes."""
    with memoryview(event) as view, view[:limit] as early:  # read where it is, not copied
        ids = _ID_LINE.findall(early)
    return ids[-1].decode("utf-8", "replace") if ids else None


class _Upstream:
    """A non-blocking connection to the target, on the proxy's loop (TLS for https); kept in the pool
    for the next request while the target keeps it open."""

    def __init__(self, proxy: RecordingProxy) -> None:
        target = proxy.target
        self.proxy, self.tls = proxy, target.scheme == "https"
        self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)  # this connection's exchanges
        self.exchange: _Exchange | None = None
        self.out = bytearray()
        self.connected = self.handshaking = self.paused = self.closed = False
        self.reused = False  # whether it served a request before the one it is sending
        self.heard = False  # whether the target said anything about the current request
        self.eof = False  # the target closed its side of the connection
        self.interest = 0
        port = target.port or (443 if self.tls else 80)
        family, kind, proto, _name, address = socket.getaddrinfo(target.hostname, port, type=socket.SOCK_STREAM)[0]
        self.sock: socket.socket = socket.socket(family, kind, proto)
        self.sock.setblocking(False)
        no_delay(self.sock)
        code = self.sock.connect_ex(address)
        if code not in (0, errno.EINPROGRESS):
            self.sock.close()
            raise OSError(code, f"cannot connect to {target.netloc}: {os.strerror(code)}")
        self._watch(selectors.EVENT_WRITE)  # writable once connected (or refused)

    # --- the loop ---------------------------------------------------------------------------------

    def _watch(self, interest: int) -> None:
        if not self.closed:
            self.interest = rewatch(self.proxy.selector, self.sock, self.interest, interest, self._ready)

    def _refresh(self) -> None:
        """Watch for what the connection waits for: writability while bytes wait, else what the target says."""
        if not self.handshaking:
            reading = not self.paused
            self._watch((selectors.EVENT_WRITE if self.out else 0) | (selectors.EVENT_READ if reading else 0))

    def _ready(self, _mask: int) -> None:
        try:
            if not self.connected:
                code = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise OSError(code, f"cannot connect to {self.proxy.target.netloc}: {os.strerror(code)}")
                self.connected = True
                if self.proxy.tls is not None:
                    self.sock = self.proxy.tls.wrap_socket(
                        self.sock, server_hostname=self.proxy.target.hostname, do_handshake_on_connect=False
                    )
                    self.handshaking = True
            if self.handshaking:
                try:
                    self.sock.do_handshake()  # type: ignore[attr-defined]
                except ssl.SSLWantReadError:
                    self._watch(selectors.EVENT_READ)
                    return
                except ssl.SSLWantWriteError:
                    self._watch(selectors.EVENT_WRITE)
                    return
                self.handshaking = False
            self._flush()
            self._read()
        except OSError as exc:  # ssl.SSLError is one too
            self.fail(exc, broke=True)
            return
        self._refresh()

    def _flush(self) -> None:
        while self.out:
            try:
                sent = self.sock.send(self.out)
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                return
            del self.out[:sent]

    def _read(self) -> None:
        while not self.closed and not self.paused:
            try:
                # A head is read MAX_HEAD at a time: h11 holds it to that limit only while it is incomplete.
                data = self.sock.recv(MAX_HEAD if self.exchange is None or self.exchange.response is None else _READ)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            if self.exchange is None:  # idle in the pool: the target closed it, or says something unasked
                self.close()
                return
            self.heard = self.heard or bool(data)  # an end alone: a kept connection closed meanwhile
            self.eof = not data
            self.conn.receive_data(data)
            self._events()
            # TLS may hold decrypted bytes the descriptor no longer signals.
            if not data or not (self.tls and self.sock.pending()):  # type: ignore[attr-defined]
                return

    def _events(self) -> None:
        exchange, conn = self.exchange, self.conn
        try:
            while self.exchange is not None and not self.paused and not self.closed:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    break
                if isinstance(event, h11.Data):
                    self.exchange.data(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):  # its trailers, if any, dropped
                    exchange, self.exchange = self.exchange, None
                    exchange.end(self)
                elif isinstance(event, h11.Response):
                    self.exchange.head(response_of(event))
                # else a 1xx (100 Continue, 103 Early Hints): the answer follows (h11 refuses a 101 unasked)
        except h11.RemoteProtocolError as exc:  # at the end of the connection: the target broke its answer off
            self.fail(OSError(f"the target broke off the HTTP exchange: {exc}"), broke=self.eof)
        if exchange is not None:
            exchange.flush()  # what one read brought goes to the client in one write

    # --- what an exchange does with it ------------------------------------------------------------

    def send(self, exchange: _Exchange, request: list[h11.Request | h11.Data | h11.EndOfMessage]) -> None:
        """Send the request's h11 events (its head, body and end) in one write, and read its answer."""
        self.exchange, self.heard = exchange, False
        conn = self.conn
        if conn.our_state is h11.DONE:  # a kept connection (`reusable`): its next exchange
            conn.start_next_cycle()
        self.out += b"".join([conn.send(event) or b"" for event in request])
        if self.connected and not self.handshaking:
            try:
                self._flush()
            except OSError as exc:
                self.fail(exc, broke=True)
                return
        self._refresh()

    def pause(self) -> None:
        """Read no more from the target until `resume` (its client reads slowly)."""
        self.paused = True
        self._refresh()

    def resume(self) -> None:
        if self.paused and not self.closed:
            self.paused = False
            self._events()  # what h11 holds already
            if not self.closed and not self.paused:
                try:
                    self._read()
                except OSError as exc:
                    self.fail(exc, broke=True)
                    return
            self._refresh()

    def reusable(self) -> bool:
        """Whether the answer ended with the connection kept open (nothing after it) and the request all sent."""
        conn = self.conn
        # h11 says whether the connection outlives this exchange (HTTP/1.1, no Connection: close, the
        # body's end known without a close); nothing may follow the answer, not even the close.
        done = conn.our_state is h11.DONE and conn.their_state is h11.DONE
        return done and conn.trailing_data == (b"", False) and not self.out

    def fail(self, exc: OSError, broke: bool = False) -> None:
        """The exchange under way cannot go on; `broke`: its connection ended (closed or reset), rather than
        the target saying something that is not HTTP."""
        exchange, self.exchange = self.exchange, None
        self.close()
        if exchange is not None:
            exchange.failed(self, exc, broke)

    def close(self) -> None:
        if self.closed:
            return
        self._watch(0)
        self.closed = True
        self.sock.close()
        if self in self.proxy.idle:
            self.proxy.idle.remove(self)


class _Exchange:
    """One request forwarded to the target and its answer passed back: a body up to `WHOLE` whole, a longer
    one and an SSE stream as they come, every message journaled on the way.

    What it holds is bounded, however long the answer: the body read so far while it is at most
    `KEPT_LIMIT` (for the journal, and for one write while it is at most `WHOLE`), the SSE event being
    read likewise (`SseEvents`), and what the client has not yet taken (a slow client pauses the reading
    of this answer from the target beyond `PAUSE_READING`). A message longer than `KEPT_LIMIT` reaches the
    client whole and is journaled as its size (`RecordingProxy.unkept`): when it is the reply to the
    request, the cassette holds an error in its place, which says so (`Recorder.unkept`), so the call is
    never lost and replay answers it at once. A body is known to be the reply to the request POSTed; an
    SSE event on the request's stream is taken for it when the stream ends without another reply (a
    server ends a request's stream with its reply), anything else over the limit is only said.
    """

    def __init__(
        self,
        proxy: RecordingProxy,
        client: Connection,
        method: bytes,
        asked: dict[str, str],
        message: Any,
        session: int,
    ) -> None:
        self.proxy, self.client, self.method, self.asked = proxy, client, method, asked
        self.message, self.session = message, session
        self.standalone = method == b"GET"
        # What a stop waits for (`finish_answers`): not a GET stream, nor a 2026-07-28 listen, whose stream
        # ends only when the client leaves it.
        self.awaited = not self.standalone and not (
            isinstance(message, dict) and message.get("method") == protocol.LISTEN
        )
        # A request's stream carries what that request causes; the GET stream, and a batch's, name no one.
        self.owner = message.get("id") if isinstance(message, dict) and "method" in message else None
        self.response: Response | None = None
        self.kept: list[tuple[bytes, bytes]] = []
        self.events: SseEvents | None = None  # while relaying an SSE stream
        self.body = bytearray()  # what came of a body, while it is at most KEPT_LIMIT
        self.size = 0  # the length of the body so far
        self.streaming = False  # the body goes to the client as it comes (longer than WHOLE), its head gone first
        self.unsure: tuple[int, float] | None = None  # an event over the limit on its stream: its size, when
        # When the message being read began (the answer's head; an SSE event's first chunk): a message not kept
        # is filed at its start, as its host could read it from then on (and may give up on it early), so that
        # replay answers its stand-in at once, not after what the recording's host sent meanwhile.
        self.began = 0.0
        self.upstream: _Upstream | None = None
        self.json = False  # a body (not a stream) that is JSON
        self.outgoing: list[Any] = []  # events for the client, written together (`flush`)
        self.unjournaled: list[tuple[str | None, bytes | int]] = []  # their SSE events (id, data), journaled after
        self.started = False  # whether the client has been sent the answer's head
        self.done = False
        self.replied = False  # whether its stream carried the reply to its request
        self.last_byte = 0.0  # when the last byte of its body (not a stream) came
        self.gone_at: float | None = None  # when its client left it before its end
        self.after_gone = 0  # bytes of its stream read since

    def begin(self, request: list[h11.Request | h11.Data | h11.EndOfMessage]) -> None:
        self.request = request
        if self.standalone:
            self.proxy.streams[self.client] = self
        else:
            self.proxy.answering += self.awaited
            self.proxy.posts.setdefault(self.client, []).append(self)
        self.proxy.call_later(self.proxy.timeout, _late, weakref.ref(self))  # holds no answer for long
        self._send()

    def _send(self) -> None:
        try:
            self.upstream = self.proxy.upstream()
        except OSError as exc:
            self.failed(None, exc)
            return
        self.upstream.send(self, self.request)

    def late(self) -> None:
        if self.response is None and not self.done:
            if self.upstream is not None:
                self.upstream.exchange = None
                self.upstream.close()
            text = f"Gateway Timeout: the target did not answer within {self.proxy.timeout:g} s (--upstream-timeout)"
            target, timeout = self.proxy.url_of_target, self.proxy.timeout
            self.proxy.trouble = f"{target} did not answer within {timeout:g} s (the host got 504 Gateway Timeout)"
            self._gateway_error(504, text)

    def stalled(self) -> None:
        """The timer of a body: a target that sent its head and then nothing for the upstream timeout gets cut,
        not waited for for ever. The client gets a 504 while nothing of the answer has gone to it; once some
        has (a body longer than WHOLE), its connection is cut instead, as the target's was."""
        if self.done or self.events is not None:
            return
        if self.upstream is not None and self.upstream.paused:  # waiting for the client, not the target
            self.last_byte = time.monotonic()
        quiet = time.monotonic() - self.last_byte
        if quiet < self.proxy.timeout:
            self.proxy.call_later(self.proxy.timeout - quiet, _stalled, weakref.ref(self))
            return
        if self.upstream is not None:
            self.upstream.exchange = None
            self.upstream.close()
        target, timeout = self.proxy.url_of_target, self.proxy.timeout
        if self.streaming:
            self.proxy.trouble = f"{target} stopped sending an answer for {timeout:g} s (the host's connection was cut)"
            self._cut_unreplied()
            self._finish()  # before the cut: a client that leaves an answer over is no cancel of its request
            self.client.abort()
            return
        self.proxy.trouble = f"{target} stopped sending an answer for {timeout:g} s (the host got 504 Gateway Timeout)"
        text = f"Gateway Timeout: the target stopped sending its answer for {timeout:g} s (--upstream-timeout)"
        self._gateway_error(504, text)

    def failed(self, upstream: _Upstream | None, exc: OSError, broke: bool = False) -> None:
        """The answer cannot come whole. When its head had come and then its connection ended (`broke`), the
        target broke it off: the client sees the same (what came of it, then its connection cut: of a body
        up to 1 MiB, which goes whole at its end, nothing), and the cut is journaled after what came before
        it. Before the head, the client gets 502 Bad Gateway saying why."""
        if self.done:
            return
        if upstream is not None and upstream.reused and not upstream.heard:
            # A kept connection the target closed meanwhile: the request never reached it, try anew.
            self._send()
            return
        target, why = self.proxy.url_of_target, exc.strerror or exc
        if upstream is not None and upstream.heard:
            self.proxy.trouble = f"the connection to {target} broke: {why}"
        else:
            self.proxy.trouble = f"could not reach {target}: {why} (the host got 502 Bad Gateway)"
        if broke and self.response is not None:
            self._broken_off()
            return
        if not self.started:
            self.outgoing.clear()
            self._gateway_error(502, f"Bad Gateway: {exc}")
            return
        self.client.abort()  # the answer cannot be whole: the client sees it break, as the target's did
        self._finish()

    def _gateway_error(self, status: int, text: str) -> None:
        """The proxy answers the client itself (502, 504): the target gave no answer. Each request it carried is
        kept answered by an error that says so (`Recorder.unreached`), as a stand-in for the answer no one
        recorded, where a request kept unanswered would hold a replaying host waiting for ever."""
        self.client.respond(status, text.encode(), "text/plain")
        if self.method == b"POST":
            at = self.proxy.elapsed()
            for request_id in _asked(self.message):
                self.proxy.journal.unreached(request_id, at, status, text, self.session)
        self._finish()

    def _broken_off(self) -> None:
        """The target broke its answer off: the client's connection is cut as the target's was, and the cut
        journaled, after what came before it, for each request it was the answer of; what its events showed
        of the target's framing (their ids, a priming event) is learnt, as from a stream that ended."""
        outgoing, self.outgoing = self.outgoing, []
        if outgoing:  # an SSE head still waiting for its first event goes now: the client sees the stream begin
            self.client.send(*outgoing)
        self.flush()  # journals the events that came
        if self.unsure is not None:  # an event over the limit before the cut: not the reply, which never came
            self._unsure(reply=False)
        proxy, response, events = self.proxy, self.response, self.events
        if events is not None and response is not None:  # what its events showed (ids, priming) holds all the same
            seen = (events.ids, bool(events.primed), False)
            proxy.learn(framing_seen(self.method, response.status, self.message, seen, proxy.http.get("framing")))
        self._cut_unreplied()
        self._finish()  # before the cut: the client's close is no cancellation of its own (`left`)
        self.client.abort()

    def _cut_unreplied(self, when: float | None = None) -> None:
        """Journal a cut, now or at the monotonic time `when`, for each request this answer was the answer of
        and did not reply to (a request answered after all, on a resumed stream, keeps its answer: `Recorder.cut`)."""
        if not self.replied:
            at = self.proxy.elapsed(when)
            for request_id in _asked(self.message):
                self.proxy.journal.cut(request_id, at, self.session)

    def _finish(self) -> None:
        self.done = True
        if self.standalone:
            self.proxy.streams.pop(self.client, None)
        else:
            self.proxy.answering -= self.awaited
            posts = self.proxy.posts.get(self.client)
            if posts is not None and self in posts:
                posts.remove(self)
                if not posts:
                    del self.proxy.posts[self.client]

    def left(self) -> None:
        """The client closed the connection of this POST before its answer ended. A 2026-07-28 client cancels
        a request so (that revision sends no cancel notification over HTTP): journaled as the cancel replay
        turns such a close into again, so that what the server sent after it waits for it on replay. The
        target's answer is still read to its end and journaled."""
        message = self.message
        if self.gone_at is None:
            self.gone_at = time.monotonic()
        if self.done or self.replied or self.owner is None or not isinstance(message, dict):
            return
        if protocol.params_era(message.get("params")) != protocol.STATELESS:
            return  # in the handshake era a disconnect is not a cancellation
        self.flush()  # what came before the close is journaled before it
        cancel = {"jsonrpc": "2.0", "method": protocol.CANCELLED, "params": {"requestId": self.owner}}
        self.proxy.record(CLIENT, self.session, jsonrpc.encode(cancel))

    def abandon(self) -> None:
        """The client dropped its GET stream: close the server's too. (A client that dropped a
        request's stream, as the SDK drops an SSE event over 1 MiB, does not end the exchange: what
        the server sends on it is read to its end and journaled.)"""
        if self.done:
            return
        if self.upstream is not None:
            self.upstream.exchange = None
            self.upstream.close()
        if self.unsure is not None:  # an event over the limit, and no end of its stream to say it was the reply
            self._unsure(reply=False)
        self._finish()

    def head(self, response: Response) -> None:
        self.response, self.began = response, time.monotonic()
        headers = response.fields
        self.proxy.attribution.answered(self.session, self.message, headers.get(protocol.SESSION_HEADER))
        self.kept = [self.proxy.through(name, value) for name, value in _passed(response.headers)]
        if headers.get("content-type", "").startswith("text/event-stream"):
            self.events = SseEvents()
            self.outgoing.append(h11.Response(status_code=response.status, headers=self.kept, reason=response.reason))
            if self.standalone:  # the GET stream is the client's to hold open at once; a POST's head
                self.flush()  # waits for its first event, to go in the same write
        else:
            self.json = headers.get("content-type", "").startswith("application/json")
            # A body (not a stream, where a pause is a server's right) must keep coming: see `stalled`.
            self.last_byte = time.monotonic()
            self.proxy.call_later(self.proxy.timeout, _stalled, weakref.ref(self))
        if self.standalone:  # whether the target offers a GET stream, known now: a client may leave it before its end
            stream = (False, False, False) if self.events is not None else None
            self.proxy.learn(framing_seen(self.method, response.status, None, stream, self.proxy.http.get("framing")))

    def data(self, chunk: bytes) -> None:
        if self.events is None:
            self._body(chunk)
            return
        if self.gone_at is not None:  # the client left: the rest is read for the cassette, not without end
            self.after_gone += len(chunk)
            if self.after_gone > AFTER_GONE_BYTES or time.monotonic() - self.gone_at > self.proxy.timeout:
                self.flush()
                self.proxy.trouble = (
                    f"an answer its client had left was still coming from {self.proxy.url_of_target} "
                    f"after {self.proxy.timeout:g} s or {AFTER_GONE_BYTES >> 20} MiB: cut there"
                )
                skipped = self.events.skipping()
                if skipped is not None:  # an event over the limit was being read: said, as any other
                    self.proxy.unkept(
                        self.session, skipped, self.owner, get=self.standalone, at=self.began, read_whole=False
                    )
                if self.awaited:  # its client gave up on it: replay breaks it off, not holds it open, and where
                    # the client left, as the host went on from there (filed now, replay would hold the reply
                    # until what the host sent meanwhile, which a host still waiting for the reply never sends)
                    self._cut_unreplied(self.gone_at)
                self.abandon()
                return
        self.outgoing.append(h11.Data(data=chunk))
        if self.events.between():
            self.began = time.monotonic()
        self.unjournaled += self.events.events(chunk)

    def _body(self, chunk: bytes) -> None:
        """A piece of a body: kept while the body is at most KEPT_LIMIT, and gathered for one write while it is
        at most WHOLE; beyond, it goes on as it came (the head first, with the target's length when it gave one)."""
        self.last_byte = time.monotonic()
        self.size += len(chunk)
        if self.streaming:
            self.outgoing.append(h11.Data(data=chunk))
        if self.size <= KEPT_LIMIT or not self.streaming:
            self.body += chunk
        if not self.streaming and self.size > min(WHOLE, KEPT_LIMIT):
            response = self.response
            assert response is not None
            fields, framing = response.fields, []  # no length: chunked (or to the close, for HTTP/1.0)
            if "content-length" in fields and "transfer-encoding" not in fields:
                framing = [(b"content-length", fields["content-length"].encode("latin-1"))]
            head = h11.Response(status_code=response.status, headers=[*self.kept, *framing], reason=response.reason)
            self.outgoing += [head, h11.Data(data=bytes(self.body))]
            self.streaming = True
        if self.size > KEPT_LIMIT and self.body:
            self.body = bytearray()  # too long for the cassette: not kept

    def flush(self) -> None:
        """Write what waits for the client in one write (dropped, h11 kept in step, if it has gone), then
        journal its messages: the client is not kept waiting for the disk."""
        client = self.client
        # A POST stream's head alone waits for its first event, to go in the same write.
        if self.outgoing and (self.started or self.standalone or len(self.outgoing) > 1):
            events, self.outgoing = self.outgoing, []
            client.send(*events)
            self.started = True
            if len(client.out) > PAUSE_READING and self.upstream is not None and not self.done:  # a slow client
                self.upstream.pause()
                client.waiting = self._resume
        for event_id, data in self.unjournaled:
            if self.unsure is not None:  # an event after it: the one over the limit was not the reply
                self._unsure(reply=False)
            if isinstance(data, int):  # an event over the limit: its size
                if self.owner is not None and self.awaited and not self.replied:  # (a listen's: notifications)
                    self.unsure = (data, self.began)  # the reply, if the stream ends with it
                else:
                    self.proxy.unkept(self.session, data, self.owner, get=self.standalone, at=self.began)
                continue
            if not self.replied and self.owner is not None and b'"id"' in data:
                self.replied = _replies_to(data, self.owner)
            self.proxy.record(SERVER, self.session, data, self.owner, get=self.standalone, event=event_id)
        self.unjournaled.clear()
        if self.done and self.unsure is not None:  # the stream ended with it: it was the reply
            self._unsure(reply=True)
        if client.broken and self.standalone and not self.done:
            self.abandon()

    def _unsure(self, reply: bool) -> None:
        assert self.unsure is not None
        (size, at), self.unsure = self.unsure, None
        self.proxy.unkept(self.session, size, self.owner, reply=reply, at=at)

    def _resume(self) -> None:
        if self.upstream is not None and self.upstream.exchange is self:
            self.last_byte = time.monotonic()
            self.upstream.resume()

    def end(self, upstream: _Upstream) -> None:
        """The target's answer is all read: the connection goes back to the pool before the client
        sees this answer end, so that the client's next request finds it."""
        proxy, response = self.proxy, self.response
        assert response is not None
        proxy.release(upstream)
        self._finish()
        framing = proxy.http.get("framing")
        if self.events is not None:
            events = self.events
            seen = (events.ids, bool(events.primed), events.count == 1)
            self.outgoing.append(h11.EndOfMessage())
            self.flush()
            if self.awaited and self.gone_at is None:
                # A request's stream that ended without its reply: the host gives up on the call as on a stream
                # broken off (the SDK's: "SSE stream ended without a response"), where replay of a `drop: true`
                # would hold the stream open for ever. So it is kept as a cut too.
                self._cut_unreplied()
            proxy.learn(framing_seen(self.method, response.status, self.message, seen, framing))
            return
        body = bytes(self.body)  # empty when longer than KEPT_LIMIT
        if self.streaming:
            self.outgoing.append(h11.EndOfMessage())
            self.flush()
        else:
            headers = [*self.kept, (b"content-length", b"%d" % len(body))]  # the client first, the journal then
            self.client.send_whole(response.status, headers, body, response.reason)
        # A JSON body answers the JSON-RPC message POSTed; a GET's or DELETE's (a 405, a session error)
        # is the HTTP layer's, no message of the session, and would be filed under a request in flight.
        answers = self.method == b"POST" and self.message is not None
        errors = session_error_seen(self.asked, response.status, body, self.message if answers else None)
        if errors and answers and isinstance(self.message, dict) and "id" in self.message:
            # Turned away before the session saw it: no interaction, but the shape replay answers with.
            proxy.journal.refused(self.message["id"], self.session)
        elif answers and self.json and self.size > KEPT_LIMIT:
            for request_id in _asked(self.message):  # the reply to each (a batch's: the replies to all)
                proxy.unkept(self.session, self.size, request_id, reply=True, at=self.began)
        elif answers and body.strip() and self.json:
            proxy.record(SERVER, self.session, body)
        proxy.learn(framing_seen(self.method, response.status, self.message, None, framing))
        if errors:
            proxy.learn({"session_errors": {**proxy.http.get("session_errors", {}), **errors}})
        elif answers and response.status >= 400:
            proxy.learn(error_status_seen(response.status, body, self.message, proxy.http.get("error_status")))


class RecordingProxy(LoopServer):
    """Forwards an MCP endpoint to a target server and journals every session that passes."""

    def __init__(
        self,
        target: str,
        listen: tuple[str, int],
        journal: Journal,
        redactor: Redactor,
        allow_hosts: tuple[str, ...] = (),
        timeout: float = 60.0,
    ) -> None:
        self.target = urlsplit(target)
        if self.target.scheme not in ("http", "https") or not self.target.hostname:
            raise UsageError(
                f"--http-target {target!r} is not an http(s) URL",
                "write e.g. `--http-target http://127.0.0.1:8000/mcp`",
            )
        super().__init__(listen, allow_hosts)
        self.journal, self.redactor, self.timeout = journal, redactor, timeout
        self.path = self.target.path or "/"
        path = (self.target.path or "/") + (f"?{self.target.query}" if self.target.query else "")
        try:  # refused as h11 refuses it, once, rather than on every request
            self.target_path = path.encode("ascii")
            self.target_host = (b"host", self.target.netloc.encode("ascii"))
            self.target_origin = f"{self.target.scheme}://{self.target.netloc}".encode("ascii")
            h11.Request(method="GET", target=self.target_path, headers=[self.target_host])
        except (h11.LocalProtocolError, UnicodeEncodeError) as exc:
            raise UsageError(f"--http-target {target!r} cannot be sent: {exc}", "write a plain http(s) URL") from exc
        self.tls = ssl.create_default_context() if self.target.scheme == "https" else None
        self.start = time.monotonic()
        self.attribution = Attribution()  # which session each message belongs to
        self.idle: list[_Upstream] = []  # connections to the target that can take the next request
        self.answering = 0  # POSTs (and DELETEs) whose answer is still being read from the target
        self.streams: dict[Connection, _Exchange] = {}  # the GET streams being relayed, by client connection
        self.posts: dict[Connection, list[_Exchange]] = {}  # the POSTs whose answers are being relayed
        self.http: dict[str, Any] = {}  # how the target frames its answers: the cassette's meta.http
        self.url_of_target = target
        self.trouble: str | None = None  # the last time the target could not be reached, or did not answer

    def through(self, name: bytes, value: bytes) -> tuple[bytes, bytes]:
        """A header of the target's answer as the client gets it: a `Location` on the target's origin (a
        redirect) names the proxy's instead, so that a client that follows it still talks through the proxy."""
        origin = self.target_origin
        if name == b"location" and (value == origin or value.startswith(origin + b"/")):
            return name, self.origin.encode("ascii") + value[len(origin) :]
        return name, value

    @property
    def url(self) -> str:
        return self.origin + self.path

    def learn(self, facts: dict[str, Any]) -> None:
        """Note how the target frames its answers; journaled whenever that changes (a later note wins)."""
        changed = {key: value for key, value in facts.items() if self.http.get(key) != value}
        if changed:
            self.http.update(changed)
            self.journal.meta({"http": dict(self.http)})

    def finish_answers(self, timeout: float, signals: Signals | None = None) -> int:
        """After the loop stopped accepting: go on serving the answers still being read, for up to
        timeout seconds (a stop must not lose them to a client that stopped reading one), or until
        another signal comes; returns how many are left unfinished."""
        self.stopping = False  # the listener is closed; the loop runs on for what is under way
        deadline = time.monotonic() + timeout
        seen = signals.count if signals is not None else 0
        if signals is not None:
            self.selector.register(signals.fileno(), selectors.EVENT_READ, lambda _mask: signals.drain())
        try:
            while self.answering and (left := deadline - time.monotonic()) > 0:
                if signals is not None and signals.count > seen:
                    break  # asked again to stop: what is under way is left out, the recording still saved
                self.turn(left)
        finally:
            if signals is not None:
                self.selector.unregister(signals.fileno())
        self.stopping = True
        for upstream in list(self.idle):
            upstream.close()
        return self.answering

    def upstream(self) -> _Upstream:
        """A connection to the target for the next request: a kept one when there is one."""
        return self.idle.pop() if self.idle else _Upstream(self)

    def release(self, upstream: _Upstream) -> None:
        """Keep a connection whose exchange is over for the next request, or close it."""
        if upstream.reusable() and len(self.idle) < 64:
            upstream.reused = True
            self.idle.append(upstream)
            upstream._refresh()  # watched while idle: a target that closes it is noticed
        else:
            upstream.close()

    def record(
        self, direction: str, session: int, data: bytes, stream: Any = None, get: bool = False, event: str | None = None
    ) -> None:
        """Journal one message (a body or an event's data): one on a single line as it came (the
        journal's reader parses every line, as the stdio recorder's wire lines), one spread over lines
        as one compact line when it is JSON, and anything else whole, its lines and all (one event is
        one message: replay sends it as one event again); stream: the id of the request whose POST
        stream carried it (what comes there belongs to that request); get: it came on the session's
        GET stream; event: the id of the SSE event it came as (a resumed stream sends events again)."""
        line = data.strip()
        if line[:1] in _OPENING and b"\n" not in line and b"\r" not in line:
            lines = [line]
        else:
            try:
                lines = [jsonrpc.encode(jsonrpc.parse(data))[:-1]]
            except ValueError:
                lines = [line.replace(b"\r\n", b"\n")] if line else []
        if lines:
            if self.redactor:
                lines = [self.redactor.line(line) for line in lines]
            self.journal.append(direction, self.elapsed(), lines, session, stream, get, event)

    def elapsed(self, moment: float | None = None) -> float:
        """Seconds from the proxy's start to now, or to the monotonic time `moment`: a time in the journal."""
        return (time.monotonic() if moment is None else moment) - self.start

    def unkept(
        self,
        session: int,
        size: int,
        stream: Any,
        at: float,
        get: bool = False,
        reply: bool = False,
        read_whole: bool = True,
    ) -> None:
        """Journal that a server message of `size` bytes, over KEPT_LIMIT, began at the monotonic time `at` and is
        not kept: on the stream of request `stream` (its reply, with `reply`), or on the session's GET stream;
        not `read_whole`: the proxy stopped reading it after `size` bytes."""
        self.journal.unkept(self.elapsed(at), size, KEPT_LIMIT, session, stream, get, reply, read_whole)

    def closed(self, connection: Connection) -> None:
        stream = self.streams.pop(connection, None)
        if stream is not None:
            stream.abandon()
        for exchange in self.posts.pop(connection, ()):
            exchange.left()
        self.attribution.closed(connection)

    def handle(self, client: Connection, request: Request, body: bytes) -> None:
        headers = request.fields
        refused = foreign(headers, self.allowed)  # a page rebinding a name to the proxy reaches no server
        if refused is not None:
            client.respond(*refused)
            return
        wrong = wrong_target(request.target.decode("latin-1"), self.path)
        if wrong is not None:
            client.respond(*wrong)
            return
        try:
            message = jsonrpc.parse(body) if body.strip() else None
        except ValueError:
            message = None
        session = self.attribution.request(client, request.method.decode("latin-1"), headers, message)
        # The fields were read as valid, the target's host and path checked once (__init__): h11 refuses none.
        fields = [self.target_host, *_passed(request.headers)]  # a repeated header passes as often as it came
        length = (b"content-length", b"%d" % len(body))
        head = h11.Request(method=request.method, target=self.target_path, headers=[*fields, length])
        upstream: list[h11.Request | h11.Data | h11.EndOfMessage] = [head, h11.Data(data=body), h11.EndOfMessage()]
        _Exchange(self, client, request.method, headers, message, session).begin(upstream)
        if request.method == b"POST":  # journaled while the target works on it (its answer comes on a later turn)
            self.record(CLIENT, session, body)


def _asked(message: Any) -> list[Any]:
    """The ids of the requests a POST carried: its request's, or a batch's requests' (none for a GET's)."""
    messages = message if isinstance(message, list) else [message]
    return [m["id"] for m in messages if jsonrpc.classify(m).kind == jsonrpc.REQUEST]


def _replies_to(data: bytes, request_id: Any) -> bool:
    """Whether an SSE event's data is the reply to that request."""
    try:
        message = jsonrpc.parse(data)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and message.get("id") == request_id


def _stalled(exchange: weakref.ref[_Exchange]) -> None:
    """The timer of an answer's body, for an exchange that may be over and gone."""
    found = exchange()
    if found is not None:
        found.stalled()


def _late(exchange: weakref.ref[_Exchange]) -> None:
    """The upstream timeout's timer, for an exchange that may be over and gone."""
    found = exchange()
    if found is not None:
        found.late()
