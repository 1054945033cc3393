"""What is held and what releases it: `core.ordering.Ordering`, as tables of calls and what each returns.

Pure, in memory. Each row is a conversation with the object: the engine's calls in order (an
interaction began, played, was answered; a job asks whether its reply or listen event may go), and
what each call returns. Interactions are literal JSON-RPC where the rule reads them (unsolicited
anchors, recorded times); the holds themselves are given as `timeline` computes them. The engine
shows the same rules end to end in tests/test_order.py and tests/test_replay_engine.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp.cassette.model import Interaction, ServerItem
from mockmcp.core.ordering import GO, HELD, STILL_HELD, Ordering

SUB = "io.modelcontextprotocol/subscriptionId"


def client(method: str, id: int | None = 1, at: float | None = None, took: float | None = None) -> Interaction:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is None:
        return Interaction("notification", message, at=at)
    return Interaction("request", {**message, "id": id}, response={"result": {}}, at=at, took=took)


def server(method: str) -> Interaction:
    return Interaction("server", {"jsonrpc": "2.0", "method": method})


@pytest.mark.parametrize(
    ("interactions", "released"),
    [
        ([server("a"), client("tools/list")], {None: [0], 1: []}),
        (
            [client("tools/list"), server("a"), server("b"), client("x", None), server("c")],
            {None: [], 0: [1, 2], 3: [4]},
        ),
        ([client("initialize"), client("tools/list", 2)], {None: [], 0: [], 1: []}),
    ],
    ids=["at-start-up", "after-the-client-interaction-before-them", "none"],
)
def test_unsolicited_messages_go_after_the_interaction_recorded_before_them(
    interactions: list[Interaction], released: dict[int | None, list[int]]
) -> None:
    ordering = Ordering.of(tuple(interactions))
    for anchor, indexes in released.items():
        assert ordering.unsolicited(anchor) == indexes
        assert ordering.unsolicited(anchor) == []  # each goes once


# A listen event's hold: (interaction, server item) -> (the interaction it waits for, whether to its end).
LISTEN_HOLDS = {(0, 0): (1, True), (0, 1): (2, False), (0, 2): (1, False)}


@pytest.mark.parametrize(
    ("calls", "results"),
    [
        # waits for interactions[1] to have played: parked, and let go when it has
        ([("parks", "L", 0, 0), ("begin", 1), ("played", 1), ("unpark", 1)], [True, [], None, ["L"]]),
        # played before the event came: it goes at once
        ([("begin", 1), ("played", 1), ("parks", "L", 0, 0)], [[], None, False]),
        # waits for interactions[2] only to have begun
        ([("parks", "L", 0, 1), ("begin", 2), ("begin", 2)], [True, ["L"], []]),
        ([("begin", 2), ("parks", "L", 0, 1)], [[], False]),
        # begun by following another recording: counts as begun, lets nothing go until played
        ([("parks", "L", 0, 1), ("begun", 2), ("parks", "M", 0, 1), ("unpark", 2)], [True, None, False, ["L"]]),
        # an item without a hold never waits
        ([("parks", "L", 0, 3), ("parks", "L", 3, 0)], [False, False]),
        # two jobs parked for the same interaction go together, in the order they parked
        ([("parks", "L", 0, 0), ("parks", "M", 0, 0), ("played", 1), ("unpark", 1)], [True, True, None, ["L", "M"]]),
        # one waits for interactions[1] to have played, the other for it to have begun: each goes at its time
        (
            [("parks", "L", 0, 0), ("parks", "M", 0, 2), ("begin", 1), ("played", 1), ("unpark", 1)],
            [True, True, ["M"], None, ["L"]],
        ),
    ],
    ids=["to-its-end", "played-already", "begun", "begun-already", "followed", "no-hold", "two-jobs", "each-its-time"],
)
def test_a_listen_event_waits_for_what_caused_it(calls: list[tuple[Any, ...]], results: list[Any]) -> None:
    ordering = Ordering((), LISTEN_HOLDS, {})
    assert [getattr(ordering, name)(*args) for name, *args in calls] == results


# interactions[0]'s reply was recorded after those to interactions[1] and [2]
OVERTAKEN = {0: (1, 2)}


@pytest.mark.parametrize(
    ("calls", "results"),
    [
        # held until both overtakers are answered; each answer lets it try again
        (
            [("hold", "a", 0), ("hold", "a", 0), ("answered", 1), ("hold", "a", 0), ("answered", 2), ("hold", "a", 0)],
            [HELD, STILL_HELD, ["a"], STILL_HELD, ["a"], GO],
        ),
        # both answered before the reply was due: it goes at once, held by nothing
        ([("answered", 2), ("answered", 1), ("hold", "a", 0), ("held", "a")], [[], [], GO, False]),
        # time is up: released, it goes with what it waited for named
        (
            [("hold", "a", 0), ("held", "a"), ("answered", 1), ("waited", 0), ("release", "a"), ("hold", "a", 0)],
            [HELD, True, ["a"], [2], None, GO],
        ),
        # a released reply is not let go again by a later answer
        ([("hold", "a", 0), ("release", "a"), ("hold", "a", 0), ("answered", 1)], [HELD, None, GO, []]),
        # a reply nothing overtook goes
        ([("hold", "b", 1), ("waited", 1)], [GO, []]),
        # two replies held for the same overtaker
        ([("hold", "a", 0), ("hold", "b", 0), ("answered", 1)], [HELD, HELD, ["a", "b"]]),
    ],
    ids=["both-answered", "answered-first", "time-up", "released", "not-overtaken", "two-held"],
)
def test_an_overtaken_reply_waits_for_what_the_recording_answered_first(
    calls: list[tuple[Any, ...]], results: list[Any]
) -> None:
    ordering = Ordering((), {}, OVERTAKEN)
    assert [getattr(ordering, name)(*args) for name, *args in calls] == results


# Recorded times: the slow call (at 0, took 1) was overtaken by the fast one (at 0.1, took 0.05).
TIMED = (client("tools/call", 1, at=0.0, took=1.0), client("tools/call", 2, at=0.1, took=0.05))


@pytest.mark.parametrize(("timed", "held"), [(False, HELD), (True, GO)], ids=["as-fast-as-possible", "timed"])
def test_the_recorded_times_keep_the_order_by_themselves_when_they_are_replayed(timed: bool, held: str) -> None:
    assert Ordering.of(TIMED, timed=timed).hold("a", 0) == held


def test_a_listen_event_is_held_by_the_recorded_times() -> None:
    """The event came after the call recorded before it was answered: it waits for that call to have played."""
    listen = Interaction(
        "request",
        {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen"},
        server=(ServerItem("notification", {"method": "notifications/x", "params": {"_meta": {SUB: 1}}}, at=2.0),),
        at=0.0,
    )
    ordering = Ordering.of((listen, client("tools/call", 2, at=1.0, took=0.5)))
    assert ordering.parks("L", 0, 0) is True
    assert ordering.begin(1) == []
    ordering.played(1)
    assert ordering.unpark(1) == ["L"]
