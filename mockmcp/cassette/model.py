"""The cassette model: a recorded MCP session as frozen data (docs/cassette-format.md); on the launch path.

The model checks nothing: plain data becomes a Cassette through `validation.from_data` alone, and
`store.save` checks the very data it writes, so a cassette `load` would refuse is never written.
"""

from __future__ import annotations

from mockmcp._wire import protocol
from mockmcp._wire.jsonrpc import NOTIFICATION, REQUEST
from mockmcp._wire.namedtuple import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ANSWER",
    "ANY_TIMES",
    "CLOSED_WORLD",
    "CUT",
    "Cassette",
    "EXIT_WHEN",
    "FAULT",
    "FORMAT_VERSION",
    "GET_STREAM",
    "Interaction",
    "KNOBS",
    "MATCHERS",
    "NOTIFICATION",
    "OPTIONAL",
    "RAW",
    "REPEAT",
    "REQUEST",
    "SERVER",
    "ServerItem",
    "UNMATCHED",
    "answered_tools",
    "closed",
    "recorded_url",
    "session_eras",
    "written_eras",
]

FORMAT_VERSION = 1
ANY_TIMES = "any"  # `times: any`: played as often as asked, never used up (no repeat, so `--strict` allows it)
EXIT_WHEN = ("after", "before")  # `exit`: end the session after the reply, or before (instead of) it
CUT = "cut"  # `drop: cut`: the reply never comes, and the answer breaks off there (`drop: true`: it never comes)
# The fault knobs: written by hand, never recorded.
KNOBS = ("delay", "times", "after", "drop", "raw_response", "exit", "answers", "optional")
# What one answer is made of: an interaction's keys that a scripted answer (`answers:`) holds, each play its own.
ANSWER = ("server", "response", "delay", "drop", "raw_response", "exit")
MATCHERS = ("any", "type", "subset", "unordered")  # a match rule's words (`validation.MATCHER`: those with an argument)

FAULT, OPTIONAL, UNMATCHED = "fault", "optional", "unmatched"  # an interaction's marks (see `Interaction.marks`)
REPEAT = "repeat"  # `after`'s default: the last recording of a request answers again
SERVER = "server"  # an interaction of server messages alone, unprompted (else REQUEST or NOTIFICATION)
RAW = "raw"  # a server item that is a line written by hand, sent as it is
GET_STREAM = "get"  # a server item's `stream` over Streamable HTTP: the session's GET one (absent: the request's own)


class ServerItem(NamedTuple):
    """One thing the server sent: kind is NOTIFICATION, REQUEST (with the client's `response`) or RAW. Each field
    is the key of the same name, whose row in `validation.CASSETTE` says what it means."""

    kind: str
    message: Any
    response: dict[str, Any] | None = None
    at: float | None = None
    stream: str | None = None
    took: float | None = None

    def to_data(self) -> dict[str, Any]:
        return _written(self, ("at", "message", "response", "stream", "took"))


class Interaction(NamedTuple):
    """A client message (or none, for unsolicited server messages), what the server sent, the response, and
    the fault knobs a person adds by hand. Each field is the key of the same name (`message`: the one under
    `kind`), whose row in `validation.CASSETTE` says what it means."""

    kind: str  # REQUEST, NOTIFICATION or SERVER (unsolicited)
    message: dict[str, Any] | None = None
    server: tuple[ServerItem, ...] = ()
    response: dict[str, Any] | None = None
    delay: float = 0.0
    at: float | None = None
    took: float | None = None
    times: int | str = 1  # a count, or ANY_TIMES
    drop: bool | str = False  # or CUT
    raw_response: str | None = None
    exit: tuple[int, str] | None = None  # (status, "after" or "before")
    session: int = 0  # which recorded session, in a cassette of several
    match: dict[str, Any] | None = None
    answers: tuple[Interaction, ...] = ()  # scripted: one answer a play, in turn, the last repeating (`ANSWER` each)
    # What its writer says of it: FAULT (`expect: fault`), OPTIONAL (`optional: true`), UNMATCHED (`after: unmatched`).
    marks: tuple[str, ...] = ()

    @property
    def after(self) -> str:
        """Once its request's last recording has played its `times`: `repeat` it, or answer `unmatched`."""
        return UNMATCHED if UNMATCHED in self.marks else REPEAT

    @property
    def expect(self) -> str | None:
        """`fault` when its writer marked it a deliberate fault (`expect: fault`), else None."""
        return FAULT if FAULT in self.marks else None

    @property
    def optional(self) -> bool:
        """Whether the host may leave it unplayed, even under --strict (`optional: true`)."""
        return OPTIONAL in self.marks

    @property
    def method(self) -> str | None:
        return None if self.message is None else self.message["method"]

    @property
    def counted(self) -> int:
        """The plays its `times` counts before the next recording of its request takes over (`times: any`,
        which none takes over from: its first); scripted, at least one play an answer."""
        return max(self.times if isinstance(self.times, int) else 1, len(self.answers))

    def played(self, plays: int) -> Interaction:
        """The interaction as its play after `plays` earlier ones answers: scripted, its answer of that turn (the
        last once they are used up) in place of its own keys (`answers` kept: it says the answer is a turn's)."""
        if not self.answers:
            return self
        turn = self.answers[min(plays, len(self.answers) - 1)]
        return self._replace(**{key: getattr(turn, key) for key in ANSWER})

    @property
    def params(self) -> Any:
        return None if self.message is None else self.message.get("params")

    def to_data(self) -> dict[str, Any]:
        order = ("at", "session", "message", "match", "expect", "optional", "delay", "times", "after", "server")
        return _written(self, (*order, "drop", "raw_response", "response", "answers", "exit", "took"))


_ALWAYS = object()  # the default of a field without one: it is always written
_MARKS = {"expect": None, "optional": False, "after": REPEAT}  # the keys `marks` is written as, and their unset values


def _written(value: Any, order: tuple[str, ...]) -> dict[str, Any]:
    """A ServerItem's or an Interaction's fields, in `order`, as a file holds them: a default is left out, the
    message is written under its kind."""
    data: dict[str, Any] = {}
    for key in order:
        field = getattr(value, key)
        if key in _MARKS and field == _MARKS[key]:  # a mark's key is written only where it is set
            continue
        if field != value._field_defaults.get(key, _ALWAYS):
            if key in ("server", "answers"):
                field = [item.to_data() for item in field]
            elif key == "exit":
                field = {"status": field[0], "when": field[1]}
            data[value.kind if key == "message" else key] = field
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


CLOSED_WORLD = "closed_world"  # `meta.closed_world: true`: a call of a tool no recording answers is refused at once


def closed(cassette: Cassette, forced: bool) -> Cassette:
    """The cassette in a closed world when `forced` (an option, a marker), else as its `meta.closed_world` says."""
    if not forced or cassette.meta.get(CLOSED_WORLD) is True:
        return cassette
    return cassette._replace(meta={**cassette.meta, CLOSED_WORLD: True})


def answered_tools(cassette: Cassette) -> list[str] | None:
    """The tools a cassette's tools/call recordings answer, sorted; None when a match rule on `name` answers any."""
    names: set[str] = set()
    for interaction in cassette.interactions:
        params = interaction.params if interaction.method == "tools/call" else None
        if not isinstance(params, dict):
            continue
        if interaction.match and "name" in interaction.match:
            return None
        if isinstance(params.get("name"), str):
            names.add(params["name"])
    return sorted(names)


def recorded_url(meta: dict[str, Any]) -> str | None:
    """The endpoint URL a cassette recorded over HTTP names as its `meta.server` (where the stdio recorder writes
    the server's command), else None."""
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
    """The era each interaction's client message speaks, as replay matches it: its own when its `_meta` names a
    protocol version (`protocol.params_era`); a message without one (a hand-written recipe) its session's when
    that speaks only the stateless one (as its messages or `meta.era` say), since every host of that era names
    its version. Elsewhere, handshake. `eras`: `session_eras(cassette)`, when the caller has it already."""
    eras = session_eras(cassette) if eras is None else eras
    stated = cassette.meta.get("era") == protocol.STATELESS
    sole = {session for session, shown in eras.items() if list(shown) == [protocol.STATELESS] or (not shown and stated)}
    return [
        protocol.STATELESS if interaction.session in sole else protocol.params_era(interaction.params)
        for interaction in cassette.interactions
    ]
