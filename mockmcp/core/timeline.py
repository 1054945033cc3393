"""When recorded messages may go, by the recorded times: what waits for what. Pure.

Computed once per cassette (`selection.Recordings` holds the results for every live session) and
read by the replay engine, which holds a message back until what it waits for has played.
"""

from __future__ import annotations

from mockmcp import protocol
from mockmcp.cassette.model import NOTIFICATION, REQUEST, SERVER, Interaction

__all__ = ["listen_holds", "overtakers", "response_time"]


def listen_holds(interactions: tuple[Interaction, ...]) -> dict[tuple[int, int], tuple[int, bool]]:
    """What each listen event must wait for: (interaction, item) -> (interaction, whether to its end).

    A listen event (a notification tagged with a subscription id) belongs to its listen request's
    interaction, but was caused by what the host did last before the server sent it: the last
    client interaction of the same session whose recorded `at` is not after the event's. The event
    waits for it to have played, or only to have begun when it was still unanswered as the event
    came (a call that reports as it goes, another listen). An event that came before anything but
    its listen, or without recorded times, waits for nothing.
    """
    holds: dict[tuple[int, int], tuple[int, bool]] = {}
    for i, interaction in enumerate(interactions):
        for j, item in enumerate(interaction.server):
            if item.kind != NOTIFICATION or item.at is None:
                continue
            if protocol.SUBSCRIPTION_ID_KEY not in protocol.meta(item.message.get("params")):
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


def overtakers(interactions: tuple[Interaction, ...]) -> dict[int, tuple[int, ...]]:
    """Request -> the later requests of its session that came while it was in flight and were answered first.

    By the recorded times (`at`, `took`); interactions without them take no part. Within a session
    the interactions stand in the order their messages came, so the scan stops at the first that
    came after the reply: the cost is the number of overlapping requests, not the square of them.
    """
    sessions: dict[int, list[int]] = {}
    for i, interaction in enumerate(interactions):
        if interaction.kind == REQUEST and interaction.at is not None and interaction.took is not None:
            sessions.setdefault(interaction.session, []).append(i)
    found: dict[int, tuple[int, ...]] = {}
    for indexes in sessions.values():
        for n, i in enumerate(indexes):
            first = interactions[i]
            assert first.at is not None and first.took is not None
            answered = first.at + first.took
            faster = []
            for k in indexes[n + 1 :]:
                later = interactions[k]
                assert later.at is not None and later.took is not None
                if later.at >= answered:
                    break
                if later.at + later.took < answered:
                    faster.append(k)
            if faster:
                found[i] = tuple(faster)
    return found


def response_time(interaction: Interaction) -> float | None:
    """When the recorded response was sent, in seconds since the session began."""
    if interaction.at is None or interaction.took is None:
        return None
    return interaction.at + interaction.took
