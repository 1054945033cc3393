"""Which recorded interaction answers a live request, and which recorded session a live one follows. Pure.

`Recordings` indexes a cassette once for every live session of a server; each live session has its own
`Selection`. A request asked again gets its recordings in order, each played `times` times, the last then
repeated unless `after: unmatched`. Among several recorded sessions, a live one follows one while it is
consistent (`consistency`), else moves, with a note, to a consistent one that has the request (the first
no other live session claimed, else the first); none left: a mismatch answered from a guess. `taken`:
sessions earlier processes claimed (`replay --state`).
"""

from __future__ import annotations

from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.patterns import WORK
from mockmcp._wire.protocol import INITIALIZE
from mockmcp.cassette.model import ANY_TIMES, REQUEST, SERVER, Cassette, Interaction, written_eras
from mockmcp.engine.branching import answered_otherwise, asked_alike
from mockmcp.engine.consistency import Alike, Steps, Track, label
from mockmcp.engine.matching import Matcher
from mockmcp.engine.timeline import Causes

TYPE_CHECKING = False
if TYPE_CHECKING:
    import collections
    from collections.abc import Iterable
    from typing import Any

    from mockmcp.engine.rules import Group

__all__ = ["Exchange", "Pick", "Recordings", "Selection", "TAKEN"]

TAKEN = "an earlier process"  # the claim on a recorded session an earlier process took (`--state`)


# What `Recordings._index` builds, by (id of the cassette, matcher), the cassette kept alive so its id stays its
# own; the oldest let go first.
_INDEX = ("requests", "notifications", "methods", "groups", "causes", "eras", "first", "sessions", "alike", "tails")
_INDEX += ("prompt",)
_INDEXES: dict[tuple[int, Matcher], tuple[Cassette, dict[str, Any]]] = {}
_MEMO = 16


class Recordings:
    """A cassette's interactions indexed by match key; shared by all live sessions of one server."""

    def __init__(self, cassette: Cassette, matcher: Matcher, taken: Iterable[int] = ()) -> None:
        self.cassette = cassette
        self.matcher = matcher
        # recorded session -> the live session that claimed it (TAKEN: a process before this one)
        self.claims: dict[int, object] = dict.fromkeys(taken, TAKEN)

        # One index per cassette and matcher serves every later server of it (a host's tests start one a test).
        memo = _INDEXES.get((id(cassette), matcher))
        if memo is None or memo[0] is not cassette:
            self._index(cassette, matcher)
            if len(_INDEXES) >= _MEMO:
                del _INDEXES[next(iter(_INDEXES))]
            _INDEXES[(id(cassette), matcher)] = (cassette, {name: vars(self)[name] for name in _INDEX})
        else:
            vars(self).update(memo[1])

    def _index(self, cassette: Cassette, matcher: Matcher) -> None:
        # interaction -> its reply encoded once for every live session without live values (filled as sent)
        self.tails: dict[int, tuple[bytes, int | None]] = {}
        self.requests: dict[str, list[int]] = {}
        self.notifications: dict[str, list[int]] = {}
        self.methods: set[str] = set()
        # method -> the groups of its recordings with match rules, in recorded order (see `rules`)
        self.groups: dict[str, list[Group]] = {}
        self.causes = Causes(cassette.interactions)
        self.prompt: set[int] = set()  # the requests a job answers with their recorded reply alone (`Player.at_once`)
        keys: dict[int, str] = {}
        self.eras = eras = written_eras(cassette)
        for i, interaction in enumerate(cassette.interactions):
            if interaction.kind == SERVER or interaction.method is None:
                continue
            table = self.requests if interaction.kind == REQUEST else self.notifications
            if interaction.match:
                keys[i] = key = self._group(interaction, eras[i])
            else:
                keys[i] = key = matcher.key(interaction.method, interaction.params, eras[i])
            table.setdefault(key, []).append(i)
            if interaction.kind == REQUEST:
                self.methods.add(interaction.method)
                more = interaction.delay or interaction.server or interaction.exit or interaction.drop  # than a reply
                more = more or interaction.answers  # (a scripted one: a reply of its turn)
                if not more and interaction.method != INITIALIZE:  # (whose reply takes the live protocol version)
                    self.prompt.add(i)
        numbers = sorted({interaction.session for interaction in cassette.interactions})
        self.first = numbers[0] if numbers else 0  # the recorded session, when there is one
        self.sessions = Steps(cassette.interactions, keys) if len(numbers) > 1 else None
        # Sessions alike, consistent together or not at all: a live session is held against the first of each.
        self.alike = Alike(cassette.interactions, keys, matcher) if self.sessions is not None else None

    def _group(self, interaction: Interaction, era: str) -> str:
        """The key of a recording with match rules: its group's (see `rules`), the group kept by its method."""
        from mockmcp.engine.rules import Group  # deferred: only cassettes with match rules use it

        group = Group.of(self.matcher, interaction, era)
        groups = self.groups.setdefault(interaction.method or "", [])
        if all(known.key != group.key for known in groups):
            groups.append(group)
        return group.key

    def key(self, method: str, params: Any) -> str:
        """The key a live request is answered by: its own when a recording has it (an exact recording wins),
        else that of the first group with match rules that accepts it, else its own (a miss)."""
        key = self.matcher.key(method, params)
        groups = self.groups.get(method)
        if groups is None or key in self.requests:
            return key
        budget = [WORK]  # the patterns' work for this request, over every group tried (`rules.refusal`)
        return next((group.key for group in groups if group.accepts(method, params, budget)), key)


class Exchange(NamedTuple):
    """A live request among several recorded sessions: how differences name it, and each consistent
    session's recording of it (which the host's answers to its server requests are held against)."""

    label: str
    counterparts: dict[int, int]


class Pick(NamedTuple):
    """The answer to "which recording?": an index (None: used up and `after: unmatched`), whether it repeats,
    a note when the live session moved, and when it is a guess why and how it differs (one line a session)."""

    interaction: int | None
    repeated: bool = False
    note: str = ""
    why: str = ""  # when it is a guess: why (a mismatch, with `differs`)
    differs: tuple[str, ...] = ()
    exchange: Exchange | None = None


class Selection:
    """One live session's choices among the recordings, with its own play counts."""

    def __init__(self, recordings: Recordings) -> None:
        self.recordings = recordings
        self.bound: int | None = None
        self.sessions: set[int] = set()  # recorded sessions this live session has used
        self.left: set[int] = set()  # interactions not expected to play: of sessions it left, or stood for
        self._asked: dict[str, int] = {}
        self._notified: set[str] = set()  # the keys of the notifications it sent
        alike = recordings.alike
        # By the first session of each class of sessions alike (see `consistency.Alike`).
        self._tracks = {} if alike is None else {s: Track() for s in alike.members}
        self._diverged = False

    def request(self, key: str) -> Pick | None:
        """The recording that answers a request with this key; None when the cassette has none."""
        indexes = self.recordings.requests.get(key)
        if indexes is None:
            return None
        asked = self._asked.get(key, 0)
        self._asked[key] = asked + 1
        if self.recordings.sessions is None:  # the common case, on the hot path: one recorded session
            self.sessions.add(self.recordings.first)
            return self._counted(indexes, asked)
        counterparts = {}  # by the first session of a class of sessions alike
        for session, track in self._tracks.items():
            if track.differs is None:
                found = self.recordings.sessions.counterpart(session, track, key)
                if isinstance(found, str):  # the first exchange that differs from this session
                    track.differs = f"{label(self.recordings.cassette.interactions[indexes[0]], asked)}: {found}"
                elif found is not None:
                    counterparts[session] = found
        if not counterparts:
            return self._unknown(key, indexes, asked)
        chosen = self._choose_class(list(counterparts))
        index, repeated = counterparts[self._first(chosen)]
        index = self._mapped(index, chosen)
        note = self._move(chosen, index) if chosen != self.bound else ""
        interaction = self.recordings.cassette.interactions[index]
        repeated = repeated and interaction.times != ANY_TIMES
        if repeated and interaction.after == "unmatched" and self.recordings.sessions.last[(chosen, key)] == index:
            return Pick(None, note=note)
        exchange = Exchange(label(interaction, asked), {s: i for s, (i, _) in counterparts.items()})
        return Pick(index, repeated, note, exchange=exchange)

    def notification(self, key: str, plays: collections.Counter[int]) -> int | None:
        """The recorded notification this one plays: the first not played yet, else the last."""
        indexes = self.recordings.notifications.get(key)
        if indexes is None:
            return None
        if self.recordings.sessions is not None:  # several recorded sessions
            self._notified.add(key)
            sessions = [self.recordings.cassette.interactions[i].session for i in indexes]
            chosen = self._choose(sessions)
            indexes = [i for i, session in zip(indexes, sessions, strict=True) if session == chosen]
        return next((i for i in indexes if plays[i] == 0), indexes[-1])

    def answered(self, exchange: Exchange, playing: int, at: int, live: str) -> int | None:
        """The host answered the server request at step `at` of interactions[playing] `live` (canonical JSON):
        sessions whose host answered otherwise are no longer consistent. The recording to go on from (None: none)."""
        interactions = self.recordings.cassette.interactions
        played, counterparts = interactions[playing].server, exchange.counterparts
        for session, index in counterparts.items():
            track = self._tracks[session]
            items = interactions[index].server
            if track.differs is None and not asked_alike(played, items, at, live):
                asked = played[at].message["method"]
                track.differs = f"{exchange.label}: its host answered {asked} otherwise (interactions[{index}])"
        consistent = [s for s in counterparts if self._tracks[s].differs is None]
        # None left: replay reports this answer as the mismatch; the requests that follow are not reported again.
        self._diverged = self._diverged or all(track.differs for track in self._tracks.values())
        members = [self._choose_class([s]) for s in consistent]  # the session each class would follow
        ordered = [
            self._mapped(counterparts[self._first(m)], m) for m in sorted(members, key=lambda m: not self._free(m))
        ]
        return answered_otherwise(interactions, ordered, playing, at, live)

    def follow(self, index: int) -> str:
        """Go on from interactions[index]: the live session follows its recorded session from now on."""
        return self._move(self.recordings.cassette.interactions[index].session, index)

    def _free(self, session: int) -> bool:
        return self.recordings.claims.get(session, self) is self

    def _choose(self, sessions: list[int]) -> int:
        """The session to follow among these: the one followed, else the first free, else the first."""
        if self.bound in sessions:
            return self.bound
        return next((s for s in sessions if self._free(s)), sessions[0])

    @property
    def _alike(self) -> Alike:
        alike = self.recordings.alike
        assert alike is not None
        return alike

    def _first(self, session: int) -> int:
        """The first session of the class of sessions alike that `session` is in."""
        return self._alike.first[session]

    def _choose_class(self, firsts: list[int]) -> int:
        """The session to follow among classes of sessions alike (by their first sessions): the one followed,
        else the first free session of the first class with one, else the first class's first."""
        if self.bound is not None and self._first(self.bound) in firsts:
            return self.bound
        free = (s for first in firsts for s in self._alike.members[first] if self._free(s))
        return next(free, firsts[0])

    def _named(self, first: int) -> str:
        """A class of sessions alike as differences name it: `3`, or `3 (and 1,999 alike)`."""
        more = len(self._alike.members[first]) - 1
        return f"{first} (and {more:,} alike)" if more else str(first)

    def _mapped(self, index: int, session: int) -> int:
        """The interaction of `session` that stands where interactions[index] stands in its alike session."""
        if self.recordings.cassette.interactions[index].session == session:
            return index
        return self._alike.mapped(index, session)

    def _move(self, session: int, index: int) -> str:
        """Follow `session` from interactions[index] on; returns the note for stderr ("" for the first choice)."""
        before, self.bound = self.bound, session
        self.sessions.add(session)
        self.recordings.claims.setdefault(session, self)
        steps = self.recordings.sessions
        if steps is None or before is None:
            return ""
        # The rest of the session left is not expected to play; the joined one's matched exchanges stand for its own.
        self.left |= steps.client[before]
        self.left -= steps.client[session]
        self.left |= {self._mapped(i, session) for i in self._tracks[self._first(session)].matched} - {index}
        self.left |= {i for i in steps.client[session] if steps.keys.get(i) in self._notified}
        differs = self._tracks[self._first(before)].differs
        why = f": recorded session {before} does not match it ({differs})" if differs else ""
        return f"mockmcp: the live session follows recorded session {session} from interactions[{index}] on{why}"

    def _unknown(self, key: str, indexes: list[int], asked: int) -> Pick:
        """No consistent recorded session answers the request: answered from the one followed, as if it were the
        only one, with why (once, when the live session left every recorded session)."""
        interactions = self.recordings.cassette.interactions
        chosen = self._choose([interactions[i].session for i in indexes])
        pick = self._counted([i for i in indexes if interactions[i].session == chosen], asked)
        method = interactions[indexes[0]].method
        if any(track.differs is None for track in self._tracks.values()):  # a read, in a state none recorded it in
            why = f"no recorded session says what the server answers {method} after what this live session did"
            here = f"{label(interactions[indexes[0]], asked)}: no recorded session like this one recorded it here"
            return pick._replace(why=why, differs=(here,))
        if chosen != self.bound:  # from now on, answered as if it were the only recorded session
            self.bound = chosen
            self.sessions.add(chosen)
        if self._diverged:
            return pick
        self._diverged = True
        why = f"the live session matches no recorded session any more, so {method} is answered from a guess"
        differs = tuple(f"recorded session {self._named(s)}: {track.differs}" for s, track in self._tracks.items())
        return pick._replace(why=why, differs=differs)

    def _counted(self, indexes: list[int], asked: int) -> Pick:
        """The recording whose turn it is when the request was asked `asked` times before."""
        interactions = self.recordings.cassette.interactions
        for index in indexes:
            if interactions[index].times == ANY_TIMES:  # as often as asked: never used up, never a repeat
                return Pick(index)
            asked -= interactions[index].counted
            if asked < 0:
                return Pick(index)
        last = indexes[-1]
        return Pick(None) if interactions[last].after == "unmatched" else Pick(last, repeated=True)
