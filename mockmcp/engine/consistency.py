"""Whether a recorded session is consistent with what a live session did: the rule `selection` follows
in a cassette of several recorded sessions. Pure.

A recorded answer is true only in the state its server was in. A recorded session S is consistent while
the live session's requests that change state (a method not in `protocol.READ_METHODS`, a tool not marked
`readOnlyHint`) are S's first ones, in S's order, and its host answered each server request as S's did.
Reads never make S inconsistent: the n-th read of a key since the last change takes S's n-th there.
Sessions `Alike` (the same messages, ids and times aside) are held against once, as one class.
"""

from __future__ import annotations

from mockmcp._wire import protocol
from mockmcp.cassette.model import RAW, REQUEST, SERVER, Interaction
from mockmcp.engine.matching import Matcher, answer_body, canonical

__all__ = ["Alike", "Steps", "Track", "changes_state", "label", "named", "server_said"]


def changes_state(interaction: Interaction, read_only: frozenset[str]) -> bool:
    """Whether a recorded request may change the server's state: not a read by its method, nor a read-only tool."""
    method, params = interaction.method, interaction.params
    if method in protocol.READ_METHODS:
        return False
    return not (method == "tools/call" and isinstance(params, dict) and params.get("name") in read_only)


def named(interaction: Interaction) -> str:
    """`tools/call add`: a recorded message's method, and the tool or prompt it names."""
    name = interaction.params.get("name") if isinstance(interaction.params, dict) else None
    return f"{interaction.method} {name}" if isinstance(name, str) else f"{interaction.method}"


def label(interaction: Interaction, asked: int) -> str:
    """A live exchange as differences name it, from a recording of its request and how often it was asked:
    `tools/call add (its 2nd)`."""
    n = asked + 1
    nth = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    return f"{named(interaction)} (its {nth})"


class Track:
    """How one recorded session stands against one live session."""

    __slots__ = ("differs", "matched", "reads", "writes")

    def __init__(self) -> None:
        self.writes = 0  # its requests that change state the live session has played, in order
        self.reads: dict[str, int] = {}  # key -> reads asked since the last change of state
        self.matched: set[int] = set()  # its interactions that live exchanges had as their counterparts
        self.differs: str | None = None  # the first live exchange it does not match (None: consistent)


class Steps:
    """Each recorded session's requests as the rule reads them, indexed once per cassette."""

    def __init__(self, interactions: tuple[Interaction, ...], keys: dict[int, str]) -> None:
        """`keys`: the match key of each client message, by index."""
        self.keys = keys
        self.order = sorted({interaction.session for interaction in interactions})
        self.client: dict[int, set[int]] = {s: set() for s in self.order}  # each session's client messages
        self.has: dict[int, set[str]] = {s: set() for s in self.order}  # the keys of each session's requests
        self.writes: dict[int, list[int]] = {s: [] for s in self.order}  # its requests that change state, by times
        # (session, key, changes of state before them) -> the recordings of that read there, by times
        self.reads: dict[tuple[int, str, int], list[int]] = {}
        self.last: dict[tuple[int, str], int] = {}  # (session, key) -> its last recording
        self.changes: dict[str, bool] = {}  # key -> whether its request changes state
        read_only = protocol.read_only_tools((it.message, it.response) for it in interactions if it.kind == REQUEST)
        for i, interaction in enumerate(interactions):
            session = interaction.session
            if interaction.kind != SERVER:
                self.client[session].add(i)
            key = keys.get(i)
            if interaction.kind != REQUEST or key is None:
                continue
            self.last[(session, key)] = i
            self.has[session].add(key)
            if self.changes.setdefault(key, changes_state(interaction, read_only)):
                self.writes[session].extend([i] * interaction.counted)
            else:
                stretch = len(self.writes[session])
                self.reads.setdefault((session, key, stretch), []).extend([i] * interaction.counted)

    def counterpart(self, session: int, track: Track, key: str) -> tuple[int, bool] | str | None:
        """The live request's recording in `session`, and whether it repeats; the track moves on. None: a read
        not recorded in this state (still consistent). A string: why the session is no longer consistent."""
        if self.changes[key]:
            if key not in self.has[session]:
                return "it never recorded that request"
            writes, done = self.writes[session], track.writes
            if done < len(writes) and self.keys[writes[done]] == key:
                track.writes += 1
                track.reads.clear()
                track.matched.add(writes[done])
                return writes[done], False
            if done and writes[done - 1] == self.last[(session, key)]:  # its last recording, asked again
                return writes[done - 1], True
            return f"it recorded that request elsewhere than after {done} request{'s' * (done != 1)} that change state"
        here = self.reads.get((session, key, track.writes))
        if not here:
            return None
        n = track.reads[key] = track.reads.get(key, 0) + 1
        track.matched.add(here[min(n, len(here)) - 1])
        return here[min(n, len(here)) - 1], n > len(here)


def server_said(interaction: Interaction, matcher: Matcher, answers: bool = False) -> list[str]:
    """The server's messages on the way to the reply as replay sends them (kind, stream, match key), with
    `answers` the host's answer to each server request too."""
    said = []
    for item in interaction.server:
        if item.kind == RAW or not isinstance(item.message, dict):
            said.append(f"raw\0{item.stream}\0{item.message}")
            continue
        method = item.message.get("method") or ""
        params = protocol.without_progress_token(method, item.message.get("params"))
        answer = "" if item.response is None or not answers else "\0" + canonical(answer_body(item.response))
        said.append(f"{item.kind}\0{item.stream}\0{matcher.key(method, params)}{answer}")
    return said


class Alike:
    """The recorded sessions in classes of sessions alike (each interaction in turn the same key, answer, server
    messages and knobs); `members` keeps each class by its first session, in recorded order."""

    def __init__(self, interactions: tuple[Interaction, ...], keys: dict[int, str], matcher: Matcher) -> None:
        self.items: dict[int, list[int]] = {}  # session -> its interactions, in order
        self.position: dict[int, int] = {}  # interaction -> its place in its session
        for i, interaction in enumerate(interactions):
            items = self.items.setdefault(interaction.session, [])
            self.position[i] = len(items)
            items.append(i)
        firsts: dict[str, int] = {}
        self.members: dict[int, list[int]] = {}  # the first session of a class -> its sessions, in order
        self.first: dict[int, int] = {}  # session -> the first session of its class
        for session, items in self.items.items():
            shape = canonical([_shape(interactions[i], keys.get(i), matcher) for i in items])
            first = firsts.setdefault(shape, session)
            self.members.setdefault(first, []).append(session)
            self.first[session] = first

    def mapped(self, index: int, session: int) -> int:
        """The interaction of `session` at the place interactions[index] has in its own (alike) session."""
        return self.items[session][self.position[index]]


def _shape(interaction: Interaction, key: str | None, matcher: Matcher) -> list[object]:
    """What of a recorded interaction decides how replay plays it, ids and times aside."""
    answer = None if interaction.response is None else canonical(answer_body(interaction.response))
    knobs = [interaction.counted, interaction.times, interaction.after, interaction.drop, interaction.exit]
    shape = [interaction.kind, key, answer, interaction.raw_response, interaction.delay]
    return shape + [interaction.match and canonical(interaction.match), *knobs, server_said(interaction, matcher, True)]
