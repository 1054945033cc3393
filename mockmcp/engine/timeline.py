"""When recorded messages may go, by the recorded times: what waits for what. Pure.

Computed once per cassette (`selection.Recordings` holds the results for every live session) and
read by the replay engine (`ordering`), which holds a message back until what it waits for has come.
"""

from __future__ import annotations

from bisect import bisect_left

from mockmcp._wire import protocol
from mockmcp.cassette.model import NOTIFICATION, REQUEST, SERVER, Interaction, ServerItem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable
    from typing import Any

__all__ = ["Causes", "answer_time", "listen_holds", "message_times", "response_time"]


def listen_holds(interactions: tuple[Interaction, ...]) -> dict[tuple[int, int], tuple[int, bool]]:
    """What each listen event waits for, (interaction, item) -> (interaction, whether to its end): its cause, the
    session's last client interaction recorded before it, played (or only begun, if unanswered then)."""
    holds: dict[tuple[int, int], tuple[int, bool]] = {}
    for i, interaction in enumerate(interactions):
        for j, item in enumerate(interaction.server):
            params = item.message.get("params") if item.kind == NOTIFICATION and item.at is not None else None
            if protocol.SUBSCRIPTION_ID_KEY not in protocol.meta(params):
                continue
            anchor = None
            for k in range(i + 1, len(interactions)):
                later = interactions[k]
                if later.session != interaction.session or later.kind == SERVER or later.at is None:
                    continue
                if later.at > item.at:
                    break
                anchor = k
            if anchor is not None:
                answered = response_time(interactions[anchor])
                to_the_end = interactions[anchor].kind == NOTIFICATION or (answered is not None and answered <= item.at)
                holds[(i, j)] = (anchor, to_the_end)
    return holds


def response_time(interaction: Interaction) -> float | None:
    """When the recorded response was sent, rounded to the recorder's 0.1 ms as the times it is compared with."""
    if interaction.at is None or interaction.took is None:
        return None
    return round(interaction.at + interaction.took, 4)


class Causes:
    """What each recorded server message `(interaction, step)` waits for (step k: its k-th item; one more: the
    response), by the recorded times (`ordering` has the words); what has no recorded time takes no part."""

    __slots__ = ("cancels", "events", "gaps", "hard", "moments", "needs", "position", "times", "unsolicited")

    def __init__(self, interactions: tuple[Interaction, ...]) -> None:
        # interaction -> the recorded time of each of its messages (None: not recorded), by step - 1
        self.moments = [tuple(message_times(interaction)) for interaction in interactions]
        # the client interaction recorded last before each unsolicited one (None: none) -> those unsolicited ones
        unsolicited: dict[int | None, list[int]] = {}
        timed: dict[int, list[tuple[float, int, Hashable]]] = {}  # session -> (time, order, event)
        anchor: int | None = None
        for i, interaction in enumerate(interactions):
            if interaction.kind == SERVER:
                unsolicited.setdefault(anchor, []).append(i)
            else:
                anchor = i
            session = timed.setdefault(interaction.session, [])
            if interaction.kind != SERVER and interaction.at is not None:
                session.append((interaction.at, len(session), i))
            for j, item in enumerate(interaction.server):
                if item.kind == REQUEST and item.response is not None:
                    answered = answer_time(item, self.moments[i][j + 1 :])
                    if answered is not None:
                        session.append((answered, len(session), (i, j)))
        self.unsolicited = {anchor: tuple(indexes) for anchor, indexes in unsolicited.items()}
        self.events: dict[int, list[Hashable]] = {}  # session -> its client events, in recorded order
        self.times: dict[int, list[float]] = {}  # session -> their times
        self.position: dict[Hashable, tuple[int, int]] = {}  # event -> (session, place)
        for session, found in timed.items():
            found.sort()
            self.events[session] = [event for _at, _order, event in found]
            self.times[session] = [at for at, _order, _event in found]
            for place, event in enumerate(self.events[session]):
                self.position[event] = (session, place)
        self.needs: dict[tuple[int, int], int] = {}  # message -> how many of its session's events it waits for
        self.gaps: dict[tuple[int, int], float] = {}  # message -> seconds from the message before it in its job
        self.hard: dict[tuple[int, int], tuple[Hashable, ...]] = {}
        self.cancels: dict[int, int] = {}  # cancelled request -> the notification that cancelled it
        for i, interaction in enumerate(interactions):
            times = self.times.get(interaction.session, [])
            before = interaction.at
            for step, at in enumerate(self.moments[i], start=1):
                if at is None:
                    continue
                count = bisect_left(times, at)
                if count:
                    self.needs[(i, step)] = count
                self.gaps[(i, step)] = round(max(0.0, at - before), 4) if before is not None else 0.0
                before = at
        self._cancelled(interactions)
        for (i, j), (anchor, to_the_end) in listen_holds(interactions).items():
            self.hard[(i, j + 1)] = (("played", anchor) if to_the_end else anchor,)

    def _cancelled(self, interactions: tuple[Interaction, ...]) -> None:
        """Requests the server sent messages for after the host cancelled them (`cancels`); a late answer needs
        the cancel."""
        in_flight: dict[tuple[int, Any], int] = {}
        for i, interaction in enumerate(interactions):
            message = interaction.message
            if message is None:
                continue
            if interaction.kind == REQUEST:
                in_flight[(interaction.session, message.get("id"))] = i
                continue
            request = protocol.cancelled_request(message.get("params"))
            if message["method"] != protocol.CANCELLED or request is None or interaction.at is None:
                continue
            cancelled = in_flight.get((interaction.session, request))
            # Nothing came after the cancel: a live cancel ends the request.
            if cancelled is None or not any(at is not None and at >= interaction.at for at in self.moments[cancelled]):
                continue
            self.cancels[cancelled] = i
            answered = response_time(interactions[cancelled])
            if answered is not None and answered >= interaction.at:
                last = len(interactions[cancelled].server) + 1
                self.hard[(cancelled, last)] = (*self.hard.get((cancelled, last), ()), ("cancel", cancelled))


def message_times(interaction: Interaction) -> list[float | None]:
    """The recorded time of each server message of an interaction: its items, then its response (requests)."""
    times = [item.at for item in interaction.server]
    if interaction.kind == REQUEST:
        times.append(response_time(interaction))
    return times


def answer_time(asked: ServerItem, after: tuple[float | None, ...]) -> float | None:
    """When the host answered the server request `asked`: as recorded, else by the next message the server
    sent for the interaction (`after`: the times of those after it), which waited for it."""
    if asked.at is not None and asked.took is not None:
        return round(asked.at + asked.took, 4)
    return next((at for at in after if at is not None), None)
