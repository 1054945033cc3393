"""The replay engine's jobs, their states and which plays next: `core.schedule`, as tables and conversations.

Pure, in memory. A job's recorded times are literal (`MOMENTS`: each interaction's messages, its
response last); a small player stands in for the engine's (`play.Player.step`): it plays one message
and moves the job on. Each conversation is the engine's calls (add, run, sleep, woken, let_go, move)
and what the schedule answers; the engine shows the same rules end to end in tests/test_order.py and
tests/test_replay_engine.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mockmcp.cassette.model import Interaction
from mockmcp.engine.actions import Action, Note, Wake
from mockmcp.engine.schedule import TRANSITIONS, Job, Schedule

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
# interactions[0]: a progress notification at 0.0, one at 1.0, its response at 2.0; [1]: its response at 0.5;
# [2]: its response at 0.5 too (a message the recorder read with [1]'s)
MOMENTS = [(0.0, 1.0, 2.0), (0.5,), (0.5,)]
RECORDED = [Interaction("request", CALL, response={"result": {}}, at=at) for at in (0.0, 0.4, 0.4)]

# Every move a job can make, and none other: (state, event, the state it moves to).
MOVES = [
    ("queued", "go", "queued"),
    ("queued", "play", "playing"),
    ("playing", "go", "queued"),
    ("playing", "sleep", "sleeping"),
    ("playing", "hold", "held"),
    ("playing", "block", "blocked"),
    ("playing", "ask", "asking"),
    ("playing", "finish", "done"),
    ("sleeping", "go", "queued"),
    ("sleeping", "cancel", "cancelled"),
    ("held", "go", "queued"),
    ("held", "block", "blocked"),
    ("held", "cancel", "cancelled"),
    ("held", "abandon", "abandoned"),
    ("blocked", "go", "queued"),
    ("blocked", "cancel", "cancelled"),
    ("blocked", "abandon", "abandoned"),
    ("asking", "go", "queued"),
    ("asking", "cancel", "cancelled"),
    ("asking", "abandon", "abandoned"),
]
EVENTS = ["go", "play", "sleep", "hold", "block", "ask", "finish", "cancel", "abandon"]


def test_the_table_holds_these_moves_and_no_other() -> None:
    table = [(state, event, to) for state, row in TRANSITIONS.items() for event, to in row.items()]
    assert sorted(table) == sorted(MOVES)
    assert set(TRANSITIONS) == {
        "queued",
        "playing",
        "sleeping",
        "held",
        "blocked",
        "asking",
        "done",
        "cancelled",
        "abandoned",
    }


@pytest.mark.parametrize(
    ("state", "event"),
    [(state, event) for state in TRANSITIONS for event in EVENTS],
    ids=[f"{state}-{event}" for state in TRANSITIONS for event in EVENTS],
)
def test_a_job_moves_as_the_table_says_or_not_at_all(state: str, event: str) -> None:
    schedule = Schedule(MOMENTS)
    job = schedule.add(Job(1, RECORDED[1], None, None, None, None))
    job.state = state
    expected = {(s, e): to for s, e, to in MOVES}.get((state, event))
    if expected is None:
        with pytest.raises(ValueError, match=f"a {state} job of interactions\\[1\\] cannot {event}"):
            schedule.move(job, event)
        assert job.state == state
    else:
        schedule.move(job, event)
        assert job.state == expected


def player(schedule: Schedule, played: list[str], asks: int | None = None) -> Callable[[Job], list[Action]]:
    """The engine's part, played small: a job begins, then sends its messages one by one and finishes; with
    `asks`, the message at that step is a server request (the job then waits for the host's answer)."""

    def step(job: Job) -> list[Action]:
        if job.step == 0:
            job.step = 1
            schedule.move(job, "go")
            return []
        played.append(f"{job.index}.{job.step}")
        if job.step == len(MOMENTS[job.index]):
            schedule.move(job, "finish")
        else:
            job.step += 1
            schedule.move(job, "ask" if job.step - 1 == asks else "go")
        return [Note(played[-1])]

    return step


def test_the_earliest_recorded_message_goes_first_across_jobs() -> None:
    schedule, played = Schedule(MOMENTS), list[str]()
    first = schedule.add(Job(0, RECORDED[0], 1, None, None, 1))
    second = schedule.add(Job(1, RECORDED[1], 2, None, None, 2))
    actions = schedule.run(player(schedule, played))
    assert played == ["0.1", "1.1", "0.2", "0.3"]  # 0.0, 0.5, 1.0, 2.0: the recorded server's order
    assert actions == [Note(text) for text in played]
    assert first.state == second.state == "done" and first.entry == second.entry == 0


def test_messages_recorded_alike_go_in_the_order_of_their_jobs() -> None:
    schedule, played = Schedule(MOMENTS), list[str]()
    schedule.add(Job(2, RECORDED[2], 1, None, None, 1))
    schedule.add(Job(1, RECORDED[1], 2, None, None, 2))
    schedule.run(player(schedule, played))
    assert played == ["2.1", "1.1"]


def test_a_sleeping_job_holds_up_no_other_and_goes_on_at_its_wake() -> None:
    schedule, played = Schedule(MOMENTS), list[str]()
    slow = schedule.add(Job(0, RECORDED[0], 1, None, None, 1))
    slow.step, slow.state = 1, "playing"  # as the engine does with a `delay` before its first message
    wake = schedule.sleep(slow, 5.0)
    assert wake == Wake(5.0, wake.job) and slow.state == "sleeping" and schedule.holds(wake.job)
    schedule.add(Job(1, RECORDED[1], 2, None, None, 2))
    schedule.run(player(schedule, played))
    assert played == ["1.1"] and slow.state == "sleeping"
    assert schedule.woken(wake.job) is slow
    assert not schedule.holds(wake.job) and schedule.woken(wake.job) is None  # one wake per Wake
    schedule.move(slow, "go")
    schedule.run(player(schedule, played))
    assert played == ["1.1", "0.1", "0.2", "0.3"]


def test_a_wait_is_moot_once_its_job_went_on_without_it() -> None:
    """A held job that `ordering` lets go before its Wake: the Wake does nothing, and its entry is not played twice."""
    schedule, played = Schedule(MOMENTS), list[str]()
    held = schedule.add(Job(1, RECORDED[1], 1, None, None, 1))
    held.step, held.state = 1, "playing"
    wake = schedule.sleep(held, 0.5, "hold")
    schedule.let_go([held, held])  # handed back twice: queued once
    assert held.state == "queued" and not schedule.holds(wake.job) and schedule.woken(wake.job) is None
    schedule.run(player(schedule, played))
    assert played == ["1.1"] and held.state == "done"


def test_a_cancelled_job_never_plays_again() -> None:
    schedule, played = Schedule(MOMENTS), list[str]()
    asking = schedule.add(Job(0, RECORDED[0], 1, None, None, 1))
    schedule.run(player(schedule, played, asks=1))
    assert played == ["0.1"] and asking.state == "asking"
    schedule.move(asking, "cancel")
    schedule.let_go([asking])  # what `ordering` hands back may name a job that has ended: skipped
    assert schedule.run(player(schedule, played)) == [] and asking.state == "cancelled"


def test_a_job_queued_while_the_schedule_runs_is_played_by_the_run_under_way() -> None:
    schedule, played = Schedule(MOMENTS), list[str]()
    inner: list[list[Action]] = []
    step = player(schedule, played)

    def starting_another(job: Job) -> list[Action]:
        if job.index == 1 and job.step == 1:  # as an unsolicited message begins when an interaction ends
            schedule.add(Job(2, RECORDED[2], None, None, None, None))
            inner.append(schedule.run(step))
        return step(job)

    schedule.add(Job(1, RECORDED[1], 1, None, None, 1))
    assert schedule.run(starting_another) == [Note("1.1"), Note("2.1")]
    assert inner == [[]]


@pytest.mark.parametrize(
    ("timing", "waits"),
    [(0.0, [0.0, 0.0, 0.0]), (1.0, [0.0, 1.0, 1.0]), (2.0, [0.0, 2.0, 2.0])],
    ids=["at-once", "as-recorded", "twice-as-slow"],
)
def test_with_timing_each_message_waits_as_long_as_the_recording_took(timing: float, waits: list[float]) -> None:
    schedule = Schedule(MOMENTS, timing)
    job = schedule.add(Job(0, RECORDED[0], 1, None, None, 1))  # recorded at 0.0; its messages at 0.0, 1.0, 2.0
    for step, wait in enumerate(waits, 1):
        job.step = step
        assert schedule.wait(job) == wait
        assert schedule.wait(job) == 0.0  # the wait of a step is slept once


@pytest.mark.parametrize(
    ("before", "clock"),
    [
        (Interaction("request", CALL, response={"result": {}}, at=0.0, took=0.25), 0.25),
        (Interaction("request", CALL, response={"result": {}}, at=0.0, took=0.25, session=1), 0.4),
        (Interaction("notification", {"jsonrpc": "2.0", "method": "n"}, at=0.1), 0.1),
    ],
    ids=["after-a-response", "another-session", "after-a-notification"],
)
def test_with_timing_an_unsolicited_message_keeps_its_distance_from_what_it_follows(
    before: Interaction, clock: float
) -> None:
    schedule = Schedule(MOMENTS, 1.0)
    job = schedule.add(Job(1, RECORDED[1], None, None, None, None))  # recorded at 0.4, its message at 0.5
    schedule.after(job, before)
    assert job.clock == clock
