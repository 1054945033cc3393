"""The cassette model: a recorded MCP session as frozen data. The format's story: docs/cassette-format.md.

The types are immutable NamedTuples: the model is on the launch path (docs/architecture.md,
"Start-up rules").

The model checks nothing itself and imports nothing that does (`validation` imports the model,
never the other way round). Plain data (a file's, a test's) becomes a Cassette through the one
checked constructor, `validation.from_data`, which raises a located CassetteError. Values built in
code (the recorder's, `_replace` on a loaded cassette) are checked when saved: `store.save` passes
the very data it writes through `from_data`, so a cassette that `load` would refuse is never
written. `to_data` gives back the plain data a cassette file holds.
"""

from __future__ import annotations

from mockmcp._wire import protocol
from mockmcp._wire.jsonrpc import NOTIFICATION, REQUEST
from mockmcp._wire.namedtuple import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AFTER",
    "ANY_TIMES",
    "CUT",
    "Cassette",
    "EXIT_WHEN",
    "EXPECTS",
    "FORMAT_VERSION",
    "GET_STREAM",
    "Interaction",
    "KNOBS",
    "MATCHERS",
    "MATCHER_ARGUMENTS",
    "NOTIFICATION",
    "RAW",
    "REQUEST",
    "SERVER",
    "ServerItem",
    "recorded_url",
    "session_eras",
    "written_eras",
]

FORMAT_VERSION = 1
AFTER = ("repeat", "unmatched")  # what an interaction does once its `times` are used up
ANY_TIMES = "any"  # `times: any`: played as often as asked, never used up (no repeat, so `--strict` allows it)
EXIT_WHEN = ("after", "before")  # `exit`: end the session after the reply, or before (instead of) it
# `drop: cut`: the reply never comes, and the request's answer breaks off there (over Streamable HTTP, its
# stream's connection is cut after the server messages before it); `drop: true`: the reply never comes.
CUT = "cut"
# The fault knobs: what a person adds to an interaction by hand, never recorded from a server.
KNOBS = ("delay", "times", "after", "drop", "raw_response", "exit")
# A request's match rules (`match:`, params path -> matcher) compare a value otherwise than equal: a word
# (`any`: any value, or none; `type`: a value of the recorded value's JSON type; `subset`: an object with
# at least the recorded keys and values; `unordered`: the recorded list's items in any order), or a
# mapping of one key with its argument (`{regex: PATTERN}`: a string the pattern matches whole;
# `{type: NAME}`: a value of that JSON type).
MATCHERS = ("any", "type", "subset", "unordered")
# `expect:` what a person says an interaction is meant to be: `fault`, a deliberate fault (lint keeps quiet
# about the warnings it would give it).
EXPECTS = ("fault",)
MATCHER_ARGUMENTS = ("regex", "type")
# What an interaction or a server item is: the client's REQUEST or NOTIFICATION (a server item: the
# server's), SERVER for an interaction that is only what the server sent unprompted, RAW for a server
# item that is a line written by hand, sent as it is. REQUEST and NOTIFICATION are JSON-RPC's words.
SERVER = "server"
RAW = "raw"
# A server item's `stream` over Streamable HTTP: the session's GET stream (absent: the request's own).
GET_STREAM = "get"


class ServerItem(NamedTuple):
    """One thing the server sent: kind is NOTIFICATION, REQUEST (with the client's `response`) or RAW.

    `stream` is GET_STREAM when a Streamable HTTP server sent it on the session's GET stream while
    the request was in flight (None: on the request's own stream, or over stdio). `took`: for a
    server request, the seconds from it to the host's answer (`at + took`: when the answer came).
    """

    kind: str
    message: Any
    response: dict[str, Any] | None = None
    at: float | None = None
    stream: str | None = None
    took: float | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.at is None else {"at": self.at}
        data[self.kind] = self.message
        if self.response is not None:
            data["response"] = self.response
        if self.stream is not None:
            data["stream"] = self.stream
        if self.took is not None:
            data["took"] = self.took
        return data


class Interaction(NamedTuple):
    """A client message (or none, for unsolicited server messages), what the server sent, the response.

    The fault knobs a person adds by hand (see docs/cassette-format.md): `delay` before replaying,
    `times` this interaction is played before the next recording of the same request takes over
    (ANY_TIMES: as often as asked) and `after` (repeat or unmatched) once the last one is used up,
    `drop` the reply (True: the host waits on; CUT: its answer breaks off there), send `raw_response`
    instead of it, `exit` (status, when) to end the session. `match`: the request's match rules as
    written (params path -> matcher, see MATCHERS and MATCHER_ARGUMENTS), None when it has none.
    """

    kind: str  # REQUEST, NOTIFICATION or SERVER (unsolicited)
    message: dict[str, Any] | None = None
    server: tuple[ServerItem, ...] = ()
    response: dict[str, Any] | None = None
    delay: float = 0.0
    at: float | None = None
    took: float | None = None
    times: int | str = 1  # a count, or ANY_TIMES
    after: str = "repeat"
    drop: bool | str = False  # or CUT
    raw_response: str | None = None
    exit: tuple[int, str] | None = None  # (status, "after" or "before")
    session: int = 0  # which recorded session, in a cassette of several
    match: dict[str, Any] | None = None
    expect: str | None = None  # one of EXPECTS, written by hand

    @property
    def method(self) -> str | None:
        return None if self.message is None else self.message["method"]

    @property
    def counted(self) -> int:
        """The plays its `times` counts before the next recording of its request takes over (`times: any`,
        which none takes over from: its first)."""
        return self.times if isinstance(self.times, int) else 1

    @property
    def params(self) -> Any:
        return None if self.message is None else self.message.get("params")

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.at is None else {"at": self.at}
        if self.session:
            data["session"] = self.session
        if self.message is not None:
            data[self.kind] = self.message
        if self.match is not None:
            data["match"] = self.match
        if self.expect is not None:
            data["expect"] = self.expect
        if self.delay:
            data["delay"] = self.delay
        if self.times != 1:
            data["times"] = self.times
        if self.after != "repeat":
            data["after"] = self.after
        if self.server:
            data["server"] = [item.to_data() for item in self.server]
        if self.drop:
            data["drop"] = self.drop
        if self.raw_response is not None:
            data["raw_response"] = self.raw_response
        if self.response is not None:
            data["response"] = self.response
        if self.exit is not None:
            data["exit"] = {"status": self.exit[0], "when": self.exit[1]}
        if self.took is not None:
            data["took"] = self.took
        return data


class Cassette(NamedTuple):
    """A whole recorded session: its interactions in order, free-form metadata, the file it came from."""

    interactions: tuple[Interaction, ...]
    meta: dict[str, Any]
    path: str | None = None

    def to_data(self) -> dict[str, Any]:
        """The plain data of the file. Its messages are the cassette's own dicts, not copies: a loaded cassette
        is shared by every load of its file in the process (`store.load`), so copy what is to be changed."""
        return {
            "version": FORMAT_VERSION,
            "meta": self.meta,
            "interactions": [interaction.to_data() for interaction in self.interactions],
        }


def recorded_url(meta: dict[str, Any]) -> str | None:
    """The endpoint URL a cassette recorded over HTTP (`record --http-target`) names as its `meta.server`, else None.

    The recording proxy writes the target's URL alone where the stdio recorder writes the server's command,
    so a fix that records again, or verify, tells the two apart by it.
    """
    server = meta.get("server")
    if not (isinstance(server, list) and len(server) == 1 and isinstance(server[0], str)):
        return None
    return server[0] if server[0].startswith(("http://", "https://")) else None


def session_eras(cassette: Cassette) -> dict[int, dict[str, str | None]]:
    """Each recorded session's eras, as its messages show them (`protocol.session_eras`)."""
    exchanges: dict[int, list[tuple[Any, Any]]] = {}
    for interaction in cassette.interactions:
        exchanges.setdefault(interaction.session, []).append((interaction.message, interaction.response))
    return {session: protocol.session_eras(pairs) for session, pairs in exchanges.items()}


def written_eras(cassette: Cassette, eras: dict[int, dict[str, str | None]] | None = None) -> list[str]:
    """The era each interaction's client message speaks, as replay matches it (`matching.Matcher.key`).

    Its own when its `_meta` names a protocol version (`protocol.params_era`). A message written
    without one (a hand-written recipe, as the faults cookbook gives them) speaks its session's era
    when that session speaks only the stateless one (its messages say so, or `meta.era` where they
    show no era at all): every host of that era names its version, so such a request would otherwise
    never be matched. Elsewhere, handshake. `eras`: `session_eras(cassette)`, when the caller has it already.
    """
    eras = session_eras(cassette) if eras is None else eras
    stated = cassette.meta.get("era") == protocol.STATELESS
    sole = {session for session, shown in eras.items() if list(shown) == [protocol.STATELESS] or (not shown and stated)}
    return [
        protocol.STATELESS if interaction.session in sole else protocol.params_era(interaction.params)
        for interaction in cassette.interactions
    ]
