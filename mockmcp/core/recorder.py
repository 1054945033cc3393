"""Turning the observed messages of a session into a cassette. Pure: lines and times in, a Cassette out.

The shells feed it lines (through the journal): the stdio proxy each line either side wrote, the
HTTP proxy each request body, response body and SSE event's data, as one compact line.

Theory of operation. Every line either side sends is fed in order with its direction and time. A
client request or notification opens an interaction. A server response closes the client request
with its id (client and server ids are separate namespaces). Anything else the server sends is
attached to the client interaction it belongs to:

1. a progress notification, by its `progressToken`;
2. a notification carrying `_meta["io.modelcontextprotocol/subscriptionId"]`, by that listen id;
3. otherwise, when it came on the stream of a client request still in flight (Streamable HTTP answers
   each request POST on a stream of its own), that request;
4. otherwise, while client requests are in flight, one of those: the one the server answers next
   among the requests in flight when the message came (a server sends what a request causes
   before the request's response; when the session ends first, the oldest of them still in flight
   gets it). Never a request sent after the message came: that request cannot have caused it. A
   server request the host has not answered yet is not filed under a request answered meanwhile
   either (a handler that asks the host waits for the answer before it returns): over stdio,
   where nothing names the request a question is for, this keeps a call's question with the call
   that waited for it, not with a faster call in flight beside it. A message that is left with no
   such request (they were all answered, cancelled or turned away) was unprompted after all
   (rule 6), at the place it came;
5. otherwise a client notification that is still the last thing the client said (a server often
   answers `notifications/initialized` with `roots/list`);
6. otherwise it was unprompted, and keeps its place as a server-only interaction.

Every item keeps the time it came (`at`), and a server request the time the host took to answer it
(`took`), so replay can order what each side sent by time where the filing alone cannot say.

A server line that a Streamable HTTP server sends again (on a GET stream the client resumed with
`Last-Event-ID`, under the event id it had the first time) is the same message, already recorded
where it first came: it is not recorded again.

A server line that came on the session's GET stream (a server asking the host without naming the
request it asks for) names no request's stream, so rule 3 never files it; when another rule files
it under a request, it is marked `stream: get`, so that replay over HTTP sends it on the GET stream
again rather than on the request's own.

A request the server never answered is kept with `drop: true` when the host left before its answer
(or the recording was cut short), with `drop: cut` when the server broke its answer off (`cut`: over
Streamable HTTP, the request's stream or body ended before the HTTP message did), `took` then saying
when, and with `exit: {status, when: before}` when the server ended the session first (`ended`):
replay then does what the server did, where a request with no response and no word why would leave
the host waiting for ever (loading refuses it). A cut request stays in flight: should its answer
still come (on a stream the client resumed), that answer is its response, and no cut is kept; should
the host cancel it afterwards (the TypeScript SDK's client does when its timeout passes), the cut is
kept all the same, as the server's doing.

A server message the HTTP recording proxy did not keep, as it was over its limit, comes as its size
(`unkept`). When it was the reply to a request, the request is answered with an error that says so
(`jsonrpc.NOT_RECORDED`, its message naming the request and the size): the cassette still holds the
call, and replay answers it at once with what happened rather than leave the host waiting, or play
a reply that never was. Every such message is kept as a fact (`Unkept`) for the note said when the
recording is saved.

The client's answers to server requests are attached to those requests. A server line that is not
a JSON-RPC message is kept as `raw`, so replay reproduces it byte for byte.

A request the host cancels (`notifications/cancelled`, itself kept as the client notification it
is) stops drawing server messages to itself, but a server may still answer it: that late answer
is the cancelled request's `response`, never a line of its own, so replay sends it only under
that request's id, and only after the live host cancelled it too (see `timeline.Causes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockmcp import jsonrpc, protocol
from mockmcp.cassette import model, validation
from mockmcp.cassette.model import CUT, EXIT_WHEN, GET_STREAM, Cassette, Interaction, ServerItem
from mockmcp.namedtuple import NamedTuple

__all__ = [
    "CLIENT",
    "Recorder",
    "SERVER",
    "Unkept",
    "era",
    "over_limit",
    "silent",
    "unreached",
]

CLIENT = "client"
SERVER = "server"


class Unkept(NamedTuple):
    """A server message not kept, as it was over the recorder's limit: how long it was, the limit, when it came,
    the request on whose stream it came (and that request's method), whether it came on the GET stream, and
    whether it was that request's reply (then answered by a NOT_RECORDED error in the cassette); `read_whole`:
    False when the recorder stopped reading it before its end (`size` is then what it had read)."""

    size: int
    limit: int
    at: float
    request: Any
    method: str | None
    get: bool
    reply: bool
    read_whole: bool = True


@dataclass(slots=True, eq=False)  # compared and hashed by identity: two interactions may hold equal messages
class _Open:
    """An interaction under construction."""

    kind: str
    message: dict[str, Any] | None
    at: float | None
    server: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None
    raw_response: str | None = None  # a reply no cassette can hold as a response (see `_reply`)
    took: float | None = None
    exit: int | None = None  # the server ended the session, exiting with this status, before answering it
    cancelled: bool = False  # the host cancelled it (a `notifications/cancelled` of its id follows it)
    cut: float | None = None  # when the server broke its answer off, if it did (seconds since the request)

    def freeze(self, extra: list[dict[str, Any]] | tuple[()] = (), unanswered: bool = False) -> Interaction:
        # In the order the server sent them: items attached at once and items decided later interleave.
        ordered = sorted([*self.server, *extra], key=lambda item: item["seq"])
        # Which stream an item came on matters only to a request, whose own stream is the other choice.
        keep = self.kind == model.REQUEST
        items = tuple(
            ServerItem(
                i["kind"], i["message"], i.get("response"), i["at"], i.get("stream") if keep else None, i.get("took")
            )
            for i in ordered
        )
        broke = unanswered and self.cut is not None
        return Interaction(
            self.kind,
            self.message,
            items,
            self.response,
            raw_response=self.raw_response,
            at=self.at,
            took=self.cut if broke else self.took,
            drop=(CUT if broke else True) if unanswered and self.exit is None else False,
            exit=None if self.exit is None else (self.exit, EXIT_WHEN[1]),  # before: instead of the reply
        )


class Recorder:
    """Accumulates one session; `cassette()` may be called at any time for what is known so far."""

    def __init__(self, meta: dict[str, Any] | None = None) -> None:
        self.meta = dict(meta or {})
        self._items: list[_Open] = []
        self._in_flight: dict[Any, _Open] = {}  # client request id -> interaction
        self._cancelled: dict[Any, _Open] = {}  # client request id -> interaction the host cancelled, unanswered
        self._tokens: dict[Any, _Open] = {}  # progress token -> interaction
        self._server_requests: dict[Any, dict[str, Any]] = {}  # server request id -> item
        # Server items waiting for one of the requests in flight when they came to be answered (rule 4),
        # by arrival: each keeps those requests (`owners`, oldest first) and the interaction last before
        # it (`after`); and, for each such request, the items it may own (each is looked at once a request).
        self._undecided: dict[int, dict[str, Any]] = {}
        self._claims: dict[_Open, list[dict[str, Any]]] = {}
        self._events: dict[str, int] = {}  # SSE event id -> the hash of the server line recorded under it
        self._seq = 0  # arrival order of server items
        self.skipped: list[str] = []
        self.unkept_messages: list[Unkept] = []

    def feed(
        self, direction: str, line: bytes, at: float, stream: Any = None, get: bool = False, event: str | None = None
    ) -> None:
        """Take one complete line (without its newline) that `direction` sent `at` seconds into the session;
        stream: the id of the client request whose stream carried a server line, when known (rule 3);
        get: the server line came on the session's GET stream; event: the SSE event id it came under
        (the same line sent again under the same id is not recorded again)."""
        if not line.strip():
            return
        if event is not None and direction == SERVER:
            # The line counts too: a server that numbers each stream's events on its own reuses ids.
            if self._events.get(event) == hash(line):
                return
            self._events[event] = hash(line)
        try:
            message = jsonrpc.parse(line)
        except ValueError:
            message = None
        # A batch (2025-03-26) is its messages, each taken as if it had come alone.
        for one in message if isinstance(message, list) and message else [message]:
            if direction == CLIENT:
                self._client(one, line, at)
            else:
                self._server(one, line, at, stream, get)

    def unkept(
        self,
        size: int,
        limit: int,
        at: float,
        stream: Any = None,
        get: bool = False,
        reply: bool = False,
        read_whole: bool = True,
    ) -> None:
        """The server sent a message of `size` bytes, over the recorder's `limit`, which was not kept, `at` seconds
        into the session (on the stream of client request `stream`, or the GET stream); with `reply` it was that
        request's reply: the request is answered with a NOT_RECORDED error saying so."""
        item = (self._in_flight.get(stream) or self._cancelled.get(stream)) if jsonrpc.is_valid_id(stream) else None
        method = item.message["method"] if item is not None and item.message is not None else None
        answered = reply and item is not None
        self.unkept_messages.append(Unkept(size, limit, _round(at), stream, method, get, answered, read_whole))
        if answered:
            text = (
                f"mockmcp recorded no answer to this {method} request (id {stream!r} when recorded): the server's "
                f"answer was {size:,} bytes, more than the {limit:,} a recording keeps of one message (passed on to "
                "the host as it came, not kept); record a shorter answer, or write this response into the cassette "
                "by hand"
            )
            self._stand_in(stream, at, text, {"size": size, "limit": limit})

    def unreached(self, request_id: Any, at: float, status: int, why: str) -> None:
        """The HTTP recorder got no answer to the request `request_id` from the server and answered its host
        `status` itself, `at` seconds into the session, saying `why`: the request is answered in the cassette
        by a NOT_RECORDED error that says so (the host got a failure at once; replay gives one at once too,
        where a request kept unanswered would hold the host waiting for ever)."""
        item = self._in_flight.get(request_id)
        if item is None or item.message is None:
            return
        text = (
            f"mockmcp recorded no answer to this {item.message['method']} request (id {request_id!r} when recorded): "
            f"the server gave none (the host got HTTP {status} from the recording proxy: {why}); record again with "
            "the server up, or write this response into the cassette by hand"
        )
        self._stand_in(request_id, at, text, {"status": status})

    def _stand_in(self, request_id: Any, at: float, text: str, data: dict[str, Any]) -> None:
        """Answer the request, `at` seconds in, with the NOT_RECORDED error saying why no answer was kept."""
        self._server(jsonrpc.error_response(request_id, jsonrpc.NOT_RECORDED, text, data), b"", at, request_id, False)

    def refused(self, request_id: Any) -> None:
        """The request `request_id` never reached the session: the HTTP layer turned it away (a
        session error, which the cassette keeps as `meta.http.session_errors`). It is no interaction."""
        item = self._in_flight.pop(request_id, None)
        if item is None:
            return
        self._release(item, answered=False)
        if not item.server:
            index = self._index(item)
            for entry in self._undecided.values():  # what came after it came after the one before it
                if entry["after"] is item:
                    entry["after"] = self._items[index - 1] if index else None
            del self._items[index]

    def cut(self, request_id: Any, at: float) -> None:
        """The server broke off its answer to the request `request_id` `at` seconds into the session, after
        what it had sent for it (fed before this): unanswered in the end, it is kept with `drop: cut`."""
        item = self._in_flight.get(request_id)
        if item is not None and item.cut is None:
            item.cut = _round(max(0.0, at - (item.at or 0.0)))

    def ended(self, status: int) -> None:
        """The server ended the session on its own, exiting with `status`: the requests still in flight were
        never answered because it was gone. Each is kept with `exit` (before its reply), so that replay ends
        the session where the server did."""
        for item in self._in_flight.values():
            if item.message is not None and item.message["method"] != protocol.LISTEN and item.response is None:
                item.exit = status

    def awaited(self) -> set[Any]:
        """The ids of the host's requests the server has yet to answer: in flight, not cancelled, not broken off,
        and not a 2026-07-28 listen (answered only when its stream ends)."""
        return {
            key
            for key, item in self._in_flight.items()
            if item.message and item.message["method"] != protocol.LISTEN and item.cut is None
        }

    def _client(self, message: Any, line: bytes, at: float) -> None:
        found = jsonrpc.classify(message)
        if found.kind == jsonrpc.REQUEST:
            body = _strip(message)
            item = _Open(model.REQUEST, body, _round(at))
            self._items.append(item)
            self._in_flight[message["id"]] = item
            self._cancelled.pop(message["id"], None)  # the id is reused: a late answer now belongs to this one
            token = protocol.progress_token(body)
            if jsonrpc.is_valid_id(token):
                self._tokens[token] = item
        elif found.kind == jsonrpc.NOTIFICATION:
            self._items.append(_Open(model.NOTIFICATION, _strip(message), _round(at)))
            params = message.get("params")
            if (
                message["method"] == protocol.CANCELLED
                and isinstance(params, dict)
                and jsonrpc.is_valid_id(params.get("requestId"))
            ):
                # The host gave up on it: it no longer draws the server's later messages to itself,
                # only its own late answer, should the server send one.
                cancelled = self._in_flight.pop(params["requestId"], None)
                if cancelled is not None:
                    cancelled.cancelled = True
                    self._cancelled[params["requestId"]] = cancelled
                    self._release(cancelled, answered=False)
        elif (
            found.kind == jsonrpc.RESPONSE
            and message["id"] in self._server_requests
            and _holdable(answer := _strip(message, keep_id=False))
        ):
            entry = self._server_requests.pop(message["id"])
            entry["response"] = answer
            entry["took"] = max(0.0, _round(at - entry["at"]))
        else:
            self.skipped.append(line.decode("utf-8", "replace"))

    def _server(self, message: Any, line: bytes, at: float, stream: Any, get: bool) -> None:
        found = jsonrpc.classify(message)
        if found.kind == jsonrpc.RESPONSE and message["id"] in self._in_flight:
            item = self._in_flight.pop(message["id"])
            self._release(item, answered=True)
            _answered(item, message, at)
            return
        if found.kind == jsonrpc.RESPONSE and message["id"] in self._cancelled:
            # Late: what the server sent meanwhile belongs to the requests still in flight, not to this one.
            _answered(self._cancelled.pop(message["id"]), message, at)
            return
        entry: dict[str, Any]
        if found.kind == jsonrpc.NOTIFICATION:
            entry = {"kind": model.NOTIFICATION, "message": _strip(message), "at": _round(at), "seq": self._seq}
        elif found.kind == jsonrpc.REQUEST:
            entry = {"kind": model.REQUEST, "message": _strip(message), "at": _round(at), "seq": self._seq}
            self._server_requests[message["id"]] = entry
        else:
            # YAML holds text only: bytes that are not UTF-8 are kept as U+FFFD.
            entry = {"kind": model.RAW, "message": line.decode("utf-8", "replace"), "at": _round(at), "seq": self._seq}
        self._seq += 1
        if get:
            entry["stream"] = GET_STREAM
        owner = self._named_owner(message) or (self._in_flight.get(stream) if jsonrpc.is_valid_id(stream) else None)
        if owner is not None:
            owner.server.append(entry)
        elif self._in_flight:
            owners = list(self._in_flight.values())
            entry["owners"], entry["after"] = owners, self._items[-1]
            self._undecided[entry["seq"]] = entry
            for request in owners:
                self._claims.setdefault(request, []).append(entry)
        else:
            self._idle_owner(at).server.append(entry)

    def _release(self, item: _Open, answered: bool) -> None:
        """The request `item` draws no more server items: answered, it takes the undecided items it may
        own (rule 4), in order, but a question of the server's still waiting for the host's answer (it
        did not hold the request up); cancelled or turned away, it takes none."""
        orphans = []
        for entry in self._claims.pop(item, ()):
            if entry["seq"] not in self._undecided:
                continue  # another request took it
            if answered and not (entry["kind"] == model.REQUEST and "response" not in entry):
                del self._undecided[entry["seq"]]
                item.server.append(entry)
                continue
            entry["owners"] = [owner for owner in entry["owners"] if owner is not item]
            if not entry["owners"]:
                orphans.append(entry)
        for entry in orphans:
            self._unprompted(entry)

    def _unprompted(self, entry: dict[str, Any]) -> None:
        """An undecided item that no request it came during can own any more was unprompted (rule 4's
        end): it goes into a server-only interaction right after the interaction last before it."""
        del self._undecided[entry["seq"]]
        after = entry.pop("after")
        index = self._index(after) + 1 if after is not None else 0
        following = self._items[index] if index < len(self._items) else None
        if following is None or following.kind != model.SERVER:
            following = _Open(model.SERVER, None, entry["at"])
            self._items.insert(index, following)
        following.server.append(entry)
        following.at = min(following.at, entry["at"]) if following.at is not None else entry["at"]

    def _index(self, item: _Open) -> int:
        return next(index for index, each in enumerate(self._items) if each is item)

    def _named_owner(self, message: Any) -> _Open | None:
        """The client request a server message names, by progress token or subscription id (rules 1, 2)."""
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict):
            token = params.get(protocol.PROGRESS_TOKEN)
            if message.get("method") == protocol.PROGRESS and jsonrpc.is_valid_id(token) and token in self._tokens:
                return self._tokens[token]
            listen = protocol.meta(params).get(protocol.SUBSCRIPTION_ID_KEY)
            if jsonrpc.is_valid_id(listen) and listen in self._in_flight:
                return self._in_flight[listen]
        return None

    def _idle_owner(self, at: float) -> _Open:
        """Where a server message goes when no client request is in flight (rules 5, 6)."""
        last = self._items[-1] if self._items else None
        if last is not None and last.kind in (model.NOTIFICATION, model.SERVER):
            return last
        item = _Open(model.SERVER, None, _round(at))
        self._items.append(item)
        return item

    def cassette(self) -> Cassette:
        """Everything recorded so far as a Cassette, with the protocol era in its meta when known."""
        # The session ended (or is not over yet): an undecided item goes to the oldest of its requests.
        extra: dict[_Open, list[dict[str, Any]]] = {}
        for entry in self._undecided.values():
            extra.setdefault(entry["owners"][0], []).append(entry)
        interactions = tuple(item.freeze(extra.get(item, ()), _unanswered(item)) for item in self._items)
        return Cassette(interactions, {**self.meta, **era(interactions)})


def era(interactions: tuple[Interaction, ...]) -> dict[str, str]:
    """The meta keys naming the era the session spoke (`era`, `protocol_version`); handshake when it shows both."""
    eras = protocol.session_eras((interaction.message, interaction.response) for interaction in interactions)
    for name, version in eras.items():
        return {"era": name} if version is None else {"era": name, "protocol_version": version}
    return {}


def _unanswered(item: _Open) -> bool:
    """Whether the server never answered this request, and nothing else says why: the host left first, the
    recording was cut short, or the host sent its id again before the answer came. Such a request is kept
    with `drop`, which replay plays as what happened: no answer (`ended` has marked those the server left
    unanswered as it exited; a cancelled request is explained by its cancel, unless the server had broken its
    answer off before it, as a host cancels a call that broke off when it gives up waiting; a listen's answer
    comes only when its stream ends)."""
    if item.kind != model.REQUEST or item.message is None or (item.cancelled and item.cut is None):
        return False
    if item.response is not None or item.raw_response is not None or item.exit is not None:
        return False
    return bool(item.message["method"] != protocol.LISTEN)


def silent(interactions: tuple[Interaction, ...]) -> int:
    """How many requests the host sent, when the server answered none of them; else 0.

    Such a recording holds nothing of the server (it died at start, its URL was unreachable): replayed,
    it would answer nothing, every time, however the server is fixed. So `mockmcp record` writes no
    cassette of it, and says why (see `journal.saved`). A session in which the host asked nothing is
    not silent: there was nothing to answer.
    """
    requests = [i for i in interactions if i.kind == model.REQUEST]
    if any(i.raw_response is not None or not (i.response is None or unreached(i.response)) for i in requests):
        return 0
    return len(requests)


def over_limit(size: int, limit: int) -> str:
    """How an answer not kept is told (the journal's note, lint): its size against the recorder's limit."""
    return f"{size:,} bytes, over the {limit:,} a recording keeps of one message"


def unreached(response: dict[str, Any]) -> bool:
    """Whether a response is the stand-in `Recorder.unreached` writes, for an answer the server never gave."""
    error = response.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    return (
        error is not None and error.get("code") == jsonrpc.NOT_RECORDED and isinstance(data, dict) and "status" in data
    )


def _strip(message: dict[str, Any], keep_id: bool = True) -> dict[str, Any]:
    """The message as the cassette keeps it: without the constant jsonrpc field (and the id, for responses).

    A lone surrogate (legal in a JSON escape, a cut emoji) cannot be written as YAML text: it is kept as U+FFFD.
    """
    body = {k: v for k, v in message.items() if k != "jsonrpc" and (keep_id or k != "id")}
    cleaned: dict[str, Any] = jsonrpc.without_lone_surrogates(body)
    return cleaned


def _answered(item: _Open, message: dict[str, Any], at: float) -> None:
    """Close a client request with the server's reply, sent `at` seconds into the session."""
    answer = _strip(message, keep_id=False)
    assert item.message is not None
    if _holdable(answer, item.message["method"]):
        item.response = answer
    else:
        item.raw_response = _reply_template(message)
    item.took = _round(at - item.at) if item.at is not None else None


def _holdable(answer: dict[str, Any], method: str | None = None) -> bool:
    """Whether a cassette can hold this response (as `_strip` keeps it) as one: an `error` without an
    integer `code`, say, it cannot; nor, as the answer to a `method` request, a result no host reads as
    MCP means it (`validation.served_response`: a content block of an unknown type, `isError: "yes"`)."""
    try:
        if method is None:
            validation.response(answer)
        else:
            validation.served_response(method, answer)
    except validation.Problem:
        return False
    return True


def _reply_template(message: dict[str, Any]) -> str:
    """A reply the cassette cannot hold as a response, kept as the line replay sends instead (`raw_response`):
    the message as the server sent it, with `{{id}}` where its id was, so the host gets it under its own id."""
    line = jsonrpc.encode({**message, "id": "{{id}}"})[:-1].decode("utf-8", "replace")
    return line.replace('"id":"{{id}}"', '"id":{{id}}', 1)


def _round(seconds: float) -> float:
    return round(seconds, 4)
