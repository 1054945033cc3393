"""The observed lines of a session -> a cassette. Pure: lines and times in, a Cassette out.

A client request or notification opens an interaction; a server response closes the client request
with its id. Anything else the server sends is filed under the client interaction it belongs to:
1. a progress notification, by its `progressToken`; 2. a notification with a subscription id, by that
listen; 3. what came on a request's own stream (HTTP), that request; 4. while requests are in flight,
the one of them the server answers next (what a request causes comes before its response; never a
request sent later, never one answered while a question of the server's to the host still waits);
5. a client notification still the last thing the client said; 6. else a server-only interaction.
Items keep when they came (`at`, `took`), so replay can order by time where filing cannot say.
A request never answered is kept with `drop: true`, `drop: cut` (the server broke it off) or
`exit` (the server ended first), so replay does what happened instead of leaving the host waiting.
A late answer to a cancelled request is that request's response, never a line of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockmcp._wire import jsonrpc, protocol
from mockmcp._wire.namedtuple import NamedTuple
from mockmcp.cassette import model, validation
from mockmcp.cassette.model import CUT, EXIT_WHEN, GET_STREAM, Cassette, Interaction, ServerItem

__all__ = ["CLIENT", "Recorder", "SERVER", "Unkept", "era", "over_limit", "silent", "unreached"]

CLIENT = "client"
SERVER = "server"


class Unkept(NamedTuple):
    """A server message over the recorder's limit, not kept; `reply`: the request was answered by a
    NOT_RECORDED error instead; `read_whole`: False when reading stopped early (`size` is what was read)."""

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
    kind: str
    message: dict[str, Any] | None
    at: float | None
    server: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None
    raw_response: str | None = None  # a reply no cassette can hold as a response (see `_answered`)
    took: float | None = None
    exit: int | None = None  # the server ended the session, exiting with this status, before answering it
    cancelled: bool = False  # the host cancelled it (a `notifications/cancelled` of its id follows it)
    cut: float | None = None  # when the server broke its answer off, if it did (seconds since the request)

    def freeze(self, extra: list[dict[str, Any]] | tuple[()] = (), unanswered: bool = False) -> Interaction:
        ordered = sorted([*self.server, *extra], key=lambda item: item["seq"])  # as sent: filed later interleave
        keep = self.kind == model.REQUEST  # the stream matters only where a request's own is the other choice
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
        # Rule 4's items by arrival, each with its possible `owners` (oldest first) and the interaction
        # `after` which it came; and for each such request, the items it may own.
        self._undecided: dict[int, dict[str, Any]] = {}
        self._claims: dict[_Open, list[dict[str, Any]]] = {}
        self._events: dict[str, int] = {}  # SSE event id -> the hash of the server line recorded under it
        self._seq = 0  # arrival order of server items
        self.skipped: list[str] = []
        self.unkept_messages: list[Unkept] = []

    def feed(
        self, direction: str, line: bytes, at: float, stream: Any = None, get: bool = False, event: str | None = None
    ) -> None:
        """Take one line (no newline) `direction` sent `at` seconds in; stream: the client request whose stream
        carried it (rule 3); get: it came on the GET stream; event: its SSE event id (a resent one is skipped)."""
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
        """A server message over `limit` was not kept; with `reply` it was the reply to `stream`, which is then
        answered by a NOT_RECORDED error saying so."""
        item = (self._in_flight.get(stream) or self._cancelled.get(stream)) if jsonrpc.is_valid_id(stream) else None
        method = item.message["method"] if item is not None and item.message is not None else None
        answered = reply and item is not None
        self.unkept_messages.append(Unkept(size, limit, _round(at), stream, method, get, answered, read_whole))
        if answered:
            why = (
                f"the server's answer was {size:,} bytes, more than the {limit:,} a recording keeps of one message "
                "(passed on to the host as it came, not kept); record a shorter answer"
            )
            self._stand_in(stream, method, at, why, {"size": size, "limit": limit})

    def unreached(self, request_id: Any, at: float, status: int, why: str) -> None:
        """The server never answered `request_id` and the HTTP recorder answered the host `status` itself: the
        cassette answers it by a NOT_RECORDED error too, so replay fails at once as the host did."""
        item = self._in_flight.get(request_id)
        if item is None or item.message is None:
            return
        gave = f"the server gave none (the host got HTTP {status} from the recording proxy: {why})"
        self._stand_in(
            request_id, item.message["method"], at, f"{gave}; record again with the server up", {"status": status}
        )

    def _stand_in(self, request_id: Any, method: Any, at: float, why: str, data: dict[str, Any]) -> None:
        """Answer the request with the NOT_RECORDED error saying `why` no answer was kept."""
        text = f"mockmcp recorded no answer to this {method} request (id {request_id!r} when recorded): {why}"
        text += ", or write this response into the cassette by hand"
        self._server(jsonrpc.error_response(request_id, jsonrpc.NOT_RECORDED, text, data), b"", at, request_id, False)

    def refused(self, request_id: Any) -> None:
        """The HTTP layer turned `request_id` away (a session error, kept in meta.http): no interaction."""
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
        """The server broke off its answer to `request_id`: unanswered in the end, it is kept with `drop: cut`."""
        item = self._in_flight.get(request_id)
        if item is not None and item.cut is None:
            item.cut = _round(max(0.0, at - (item.at or 0.0)))

    def ended(self, status: int) -> None:
        """The server exited with `status`: requests in flight are kept with `exit`, so replay ends there too."""
        for item in self._in_flight.values():
            if item.message is not None and item.message["method"] != protocol.LISTEN and item.response is None:
                item.exit = status

    def awaited(self) -> set[Any]:
        """The ids of the host's requests the server has yet to answer (not cancelled, cut, or a listen)."""
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
            gone = protocol.cancelled_request(message.get("params"))
            if message["method"] == protocol.CANCELLED and gone is not None:
                # It no longer draws the server's later messages to itself, only its own late answer.
                cancelled = self._in_flight.pop(gone, None)
                if cancelled is not None:
                    cancelled.cancelled = True
                    self._cancelled[gone] = cancelled
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
        if found.kind in (jsonrpc.NOTIFICATION, jsonrpc.REQUEST):
            entry: dict[str, Any] = {"kind": found.kind, "message": _strip(message), "at": _round(at), "seq": self._seq}
            if found.kind == jsonrpc.REQUEST:
                self._server_requests[message["id"]] = entry
        else:  # YAML holds text only: bytes that are not UTF-8 are kept as U+FFFD
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
        """`item` draws no more server items: answered, it takes the undecided ones it may own (rule 4) but a
        server question still waiting for the host (it did not hold the request up); else it takes none."""
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
        """An undecided item no request can own any more: into a server-only interaction where it came."""
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
        # An undecided item goes to the oldest of its requests.
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
    """Whether the server never answered this request and nothing else (an exit, a cancel before any cut,
    a listen's open stream) says why: it is kept with `drop`."""
    if item.kind != model.REQUEST or item.message is None or (item.cancelled and item.cut is None):
        return False
    if item.response is not None or item.raw_response is not None or item.exit is not None:
        return False
    return bool(item.message["method"] != protocol.LISTEN)


def silent(interactions: tuple[Interaction, ...]) -> int:
    """How many requests the host sent, when the server answered none of them (a server dead at start:
    `record` writes no cassette of it); else 0."""
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
    return isinstance(data, dict) and error.get("code") == jsonrpc.NOT_RECORDED and "status" in data


def _strip(message: dict[str, Any], keep_id: bool = True) -> dict[str, Any]:
    """The message as the cassette keeps it: no `jsonrpc` (nor id, for responses), U+FFFD for a lone surrogate."""
    body = {k: v for k, v in message.items() if k != "jsonrpc" and (keep_id or k != "id")}
    cleaned: dict[str, Any] = jsonrpc.without_lone_surrogates(body)
    return cleaned


def _answered(item: _Open, message: dict[str, Any], at: float) -> None:
    answer = _strip(message, keep_id=False)
    assert item.message is not None
    if _holdable(answer, item.message["method"]):
        item.response = answer
    else:  # the line replay sends, `{{id}}` where its id was
        line = jsonrpc.encode({**message, "id": "{{id}}"})[:-1].decode("utf-8", "replace")
        item.raw_response = line.replace('"id":"{{id}}"', '"id":{{id}}', 1)
    item.took = _round(at - item.at) if item.at is not None else None


def _holdable(answer: dict[str, Any], method: str | None = None) -> bool:
    """Whether a cassette can hold this response as one (and as an answer to `method`, one a host can read)."""
    try:
        if method is None:
            validation.response(answer)
        else:
            validation.served_response(method, answer)
    except validation.Problem:
        return False
    return True


def _round(seconds: float) -> float:
    return round(seconds, 4)
