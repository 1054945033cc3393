"""What a recorded message waits for and what lets it go: `timeline.Causes` and `ordering.Ordering`, as tables.

Pure, in memory. Cassettes are literal YAML with recorded times; each row of a conversation is the
engine's call (a job asks whether its next message may go: `check`; a client message came:
`arrive`; a job waited as long as its server took: `give_up`) and what it returns. The engine shows
the same rules end to end in tests/test_order.py and tests/test_replay_engine.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp.cassette.model import Interaction
from mockmcp.cassette.store import loads
from mockmcp.engine.ordering import BLOCKED, GO, HELD, Ordering
from mockmcp.engine.timeline import Causes


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
    ordering = Ordering(Causes(tuple(interactions)))
    for anchor, indexes in released.items():
        assert ordering.unsolicited(anchor) == indexes
        assert ordering.unsolicited(anchor) == []  # each goes once


# A slow call with progress; a fast call sent while it ran, answered before its second progress; the host
# answered an elicitation of the fast call; then cancelled the slow one, which the server answered late.
OVERLAP = """
version: 1
interactions:
- at: 0.0
  request: {id: 1, method: tools/call, params: {name: slow, _meta: {progressToken: 1}}}
  server:
  - at: 0.1
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 1}}
  - at: 0.6
    notification: {method: notifications/progress, params: {progressToken: 1, progress: 2}}
  response: {error: {code: 0, message: Request cancelled}}
  took: 1.2
- at: 0.2
  request: {id: 2, method: tools/call, params: {name: fast}}
  server:
  - at: 0.3
    request: {id: 0, method: elicitation/create, params: {message: sure?, requestedSchema: {type: object}}}
    response: {result: {action: accept}}
  response: {result: {content: []}}
  took: 0.2
- at: 1.0
  notification: {method: notifications/cancelled, params: {requestId: 1}}
"""


def test_each_message_needs_the_client_events_recorded_before_it() -> None:
    causes = Causes(loads(OVERLAP).interactions)
    # client events in recorded order: the two calls, the host's answer (no later than the fast call's
    # answer, which waited for it), the cancel
    assert causes.events == {0: [0, 1, (1, 0), 2]}
    assert causes.needs == {
        (0, 1): 1,  # the first progress: only its own call
        (0, 2): 3,  # the second: the fast call and the host's answer too
        (0, 3): 4,  # the late answer: the cancel too
        (1, 1): 2,  # the elicitation: both calls
        (1, 2): 2,  # the fast call's answer: the host's answer, at the same moment, is its own job's order
    }
    # from what caused them in their job, on the recorded clock: the request (the progress after another went at
    # once), or the host's answer to the job's server request (the fast call's answer came as it did)
    assert causes.gaps == {(0, 1): 0.1, (0, 2): 0.6, (0, 3): 1.2, (1, 1): 0.1, (1, 2): 0.0}
    assert causes.hard == {(0, 3): (("cancel", 0),)}  # never without the cancel
    assert causes.cancels == {0: 2}


@pytest.mark.parametrize(
    "conversation",
    [
        pytest.param(
            [
                (("arrive", 0), []),
                (("check", "slow", 0, 1), GO),
                (("check", "slow", 0, 2), HELD),  # the fast call has not come
                (("arrive", 1), []),
                (("check", "fast", 1, 1), GO),
                (("arrive", (1, 0)), ["slow"]),  # the host answered: the second progress may go
                (("check", "slow", 0, 2), GO),
                (("check", "slow", 0, 3), HELD),  # the late answer: after the recorded cancel notification
                (("arrive", 2), []),  # it came, but the live host cancelled no request of this job
                (("check", "slow", 0, 3), BLOCKED),  # and the server sent it only after a cancel
                (("arrive", ("cancel", 0)), ["slow"]),
                (("check", "slow", 0, 3), GO),
            ],
            id="as-recorded",
        ),
        pytest.param(
            [
                (("arrive", 0), []),
                (("check", "slow", 0, 2), HELD),
                (("give_up", "slow"), ["slow"]),  # as long as the server took: it goes without them
                (("check", "slow", 0, 2), GO),
                (("check", "other", 0, 2), HELD),  # not so another job: the fast call may still come
                (("arrive", 2), []),  # the cancel came: the fast call and the answer were skipped
                (("check", "slow", 0, 3), HELD),
                # which counts as come for all (the other job may go on); a hard need is never given up
                (("give_up", "slow"), ["other"]),
                (("check", "other", 0, 2), GO),
                (("check", "slow", 0, 3), BLOCKED),
            ],
            id="a-host-that-sends-less",
        ),
        pytest.param(
            [
                (("arrive", 1), []),  # the fast call first: its elicitation waits for the slow call to come
                (("check", "fast", 1, 1), HELD),
                (("arrive", 0), ["fast"]),
            ],
            id="another-order",
        ),
    ],
)
def test_a_message_goes_once_what_came_before_it_has_come(conversation: list[tuple[tuple[Any, ...], Any]]) -> None:
    ordering = Ordering(Causes(loads(OVERLAP).interactions))
    for (call, *args), expected in conversation:
        if call == "check":
            assert ordering.check(*args, session=0) == expected, args
        else:
            assert getattr(ordering, call)(*args) == expected, (call, args)


def test_what_a_held_job_waits_for_is_named() -> None:
    ordering = Ordering(Causes(loads(OVERLAP).interactions))
    ordering.arrive(0)
    assert ordering.check("slow", 0, 2, 0) == HELD
    assert ordering.missing("slow") == [1, (1, 0)]
    assert list(ordering.waiting) == ["slow"]
    assert ordering.gap(0, 2) == 0.6


def test_moving_to_another_recorded_session_counts_what_its_host_sent_before() -> None:
    two = (
        OVERLAP
        + """- at: 0.0
  session: 1
  request: {id: 1, method: tools/list}
  response: {result: {tools: []}}
  took: 0.5
- at: 0.1
  session: 1
  request: {id: 2, method: tools/call, params: {name: fast}}
  response: {result: {content: []}}
  took: 0.1
"""
    )
    ordering = Ordering(Causes(loads(two).interactions))
    assert ordering.check("list", 3, 1, 1) == HELD  # tools/list's answer came after the call
    assert ordering.joined(1, 0.2) == ["list"]


def test_messages_without_recorded_times_wait_for_nothing() -> None:
    untimed = Ordering(Causes((client("tools/call"), client("tools/call", 2))))
    assert untimed.check("a", 0, 1, 0) == GO and untimed.check("b", 1, 1, 0) == GO


def test_a_job_that_waited_its_time_goes_once_its_hard_need_comes_though_the_host_skipped_more() -> None:
    """The late answer waited as long as the server took for what the host never sent (the fast call and
    the host's answer, recorded after everything the host sent): it goes when the host cancels."""
    ordering = Ordering(Causes(loads(OVERLAP).interactions))
    ordering.arrive(0)
    assert ordering.check("slow", 0, 3, 0) == HELD
    assert ordering.give_up("slow") == []  # excused the soft part; the cancel is still to come
    assert ordering.arrive(("cancel", 0)) == ["slow"]
    assert ordering.check("slow", 0, 3, 0) == GO


def test_held_jobs_go_in_the_order_they_began_to_wait_and_once() -> None:
    """Four calls recorded one after another, asked last first: each answer waits for the calls recorded before
    it, and the arrival that lets them go lets them go in the order they began to wait; a job that went after its
    gap is not let go again when what it waited for comes."""
    calls = tuple(client("tools/call", n + 1, at=float(n), took=0.1) for n in range(4))
    ordering = Ordering(Causes(calls))
    assert [ordering.arrive(n) for n in (3, 2, 1)] == [[], [], []]
    assert [ordering.check(job, n, 1, 0) for job, n in (("d", 3), ("b", 1), ("c", 2))] == [HELD] * 3
    assert ordering.check("d", 3, 1, 0) == HELD  # asked again, it keeps its place
    assert ordering.arrive(0) == ["d", "b", "c"]
    late = Ordering(Causes(calls))
    late.arrive(1)
    assert late.check("b", 1, 1, 0) == HELD and late.check("c", 2, 1, 0) == HELD
    assert late.give_up("b") == ["b"] and late.check("b", 1, 1, 0) == GO  # the host skipped call 0
    assert late.arrive(0) == [] and late.arrive(2) == ["c"]
