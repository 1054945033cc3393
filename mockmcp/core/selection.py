"""Which recorded interaction answers a live request. Pure.

Theory of operation. `Recordings` indexes a cassette once: interactions by match key, in recorded
order, and which recorded session each belongs to. It is shared by every live session a server
holds (one over stdio, many over HTTP). Each live session has its own `Selection`, so its play
counts start fresh.

Within one recorded session, the same request asked again gets its recordings in order, each
played `times` times; after the last is used up it repeats, unless it says `after: unmatched`.

A cassette may hold several recorded sessions (`session: N` on an interaction; 0 when absent),
from an HTTP proxy that saw many clients, or from `mockmcp record --mode new`. A live request is
answered from a recorded session that has it: the one this live session is bound to, else the
first that no other live session has claimed, else the first. The choice binds the live session
(and claims the recorded one) only when it was a real choice, that is, when several sessions have
the request: so a live session follows the recorded session it started like, while a request only
one session has is answered from that one whatever the binding. A live session that asks a request
more often than its recorded session did moves on to a free recorded session that asked it that
often, and follows that one from then on: `--mode new` adds a stateful server's later session whole,
so the sixth read of a growing state comes from the session that recorded six. Play counts are per
request over all recorded sessions, so a session moved to goes on from the same count.
"""

from __future__ import annotations

from mockmcp.cassette.model import REQUEST, SERVER, Cassette
from mockmcp.core.matching import Matcher
from mockmcp.core.timeline import Causes
from mockmcp.namedtuple import NamedTuple

__all__ = ["Pick", "Recordings", "Selection"]


class Recordings:
    """A cassette's interactions indexed by match key; shared by all live sessions of one server."""

    def __init__(self, cassette: Cassette, matcher: Matcher) -> None:
        self.cassette = cassette
        self.matcher = matcher
        self.requests: dict[str, list[int]] = {}
        self.notifications: dict[str, list[int]] = {}
        self.methods: set[str] = set()
        self.claims: dict[int, object] = {}  # recorded session -> the live session that claimed it
        self.several = any(interaction.session for interaction in cassette.interactions)
        # What each recorded server message waits for, by the recorded times (see `timeline`).
        self.causes = Causes(cassette.interactions)
        for i, interaction in enumerate(cassette.interactions):
            if interaction.kind == SERVER or interaction.method is None:
                continue
            table = self.requests if interaction.kind == REQUEST else self.notifications
            table.setdefault(matcher.key(interaction.method, interaction.params), []).append(i)
            if interaction.kind == REQUEST:
                self.methods.add(interaction.method)


class Pick(NamedTuple):
    """The answer to "which recording?": an index (None: used up and `after: unmatched`), and whether it repeats."""

    interaction: int | None
    repeated: bool = False


class Selection:
    """One live session's choices among the recordings, with its own play counts."""

    def __init__(self, recordings: Recordings) -> None:
        self.recordings = recordings
        self.bound: int | None = None
        self.sessions: set[int] = set()  # recorded sessions this live session has used
        self._asked: dict[int, int] = {}

    def request(self, key: str) -> Pick | None:
        """The recording that answers a request with this key; None when the cassette has none."""
        indexes = self.recordings.requests.get(key)
        if indexes is None:
            return None
        # Counted by the first recording's index: an int is cheaper to look up than the key again.
        first = indexes[0]
        asked = self._asked.get(first, 0)
        self._asked[first] = asked + 1
        indexes = self._in_session(indexes, asked)
        interactions = self.recordings.cassette.interactions
        for index in indexes:
            asked -= interactions[index].times
            if asked < 0:
                return Pick(index)
        last = indexes[-1]
        return Pick(None) if interactions[last].after == "unmatched" else Pick(last, repeated=True)

    def notification(self, key: str, plays: list[int]) -> int | None:
        """The recorded notification this one plays: the first not played yet, else the last."""
        indexes = self.recordings.notifications.get(key)
        if indexes is None:
            return None
        indexes = self._in_session(indexes)
        return next((i for i in indexes if plays[i] == 0), indexes[-1])

    def follow(self, session: int) -> None:
        """From now on, follow this recorded session: the live one behaved like it (the host answered the
        server as that session's host did)."""
        self.bound = session
        self.sessions.add(session)
        self.recordings.claims.setdefault(session, self)

    def _in_session(self, indexes: list[int], asked: int | None = None) -> list[int]:
        """The recordings of one recorded session; `asked`: how often this live session asked before."""
        if not self.recordings.several:  # the common case, on the hot path: one recorded session
            self.sessions.add(0)
            return indexes
        interactions = self.recordings.cassette.interactions
        sessions = list(dict.fromkeys(interactions[i].session for i in indexes))
        chosen = sessions[0]
        if len(sessions) > 1:
            claims = self.recordings.claims
            free = [s for s in sessions if claims.get(s, self) is self]
            chosen = self.bound if self.bound in sessions else (free[0] if free else sessions[0])
            if asked is not None and not self._has_turn(indexes, chosen, asked):
                # Asked more often than the chosen session recorded: a free session that recorded it
                # that often goes on (a stateful server asked the same thing again as its state grew).
                moved = next((s for s in free if self._has_turn(indexes, s, asked)), None)
                if moved is not None:
                    chosen = self.bound = moved
                    claims.setdefault(moved, self)
            if self.bound is None:
                self.bound = chosen
                claims.setdefault(chosen, self)
        self.sessions.add(chosen)
        return [i for i in indexes if interactions[i].session == chosen]

    def _has_turn(self, indexes: list[int], session: int, asked: int) -> bool:
        """Whether that recorded session recorded the request more than `asked` times."""
        interactions = self.recordings.cassette.interactions
        return sum(interactions[i].times for i in indexes if interactions[i].session == session) > asked
