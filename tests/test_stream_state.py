"""The life of one stream at replay's HTTP endpoint (`http/_stream_state.py`), as conversations with its table.

Each row is a stream's life from its first state: the events it takes, each with the state it is in after
and the effects, in order, that its `Stream` carries out. The endpoint's own tables (tests/test_endpoint.py)
show the same rules as HTTP.
"""

from __future__ import annotations

import pytest

from mockmcp.http._stream_state import step

LIVES = [
    pytest.param(
        "gathering",
        [("reply", "whole", ["gather"]), ("settle-alone", "done", ["json"])],
        id="a lone reply from a JSON server: one JSON body",
    ),
    pytest.param(
        "gathering",
        [
            ("message", "gathering", ["gather"]),
            ("reply", "whole", ["gather"]),
            ("settle", "done", ["head", "end"]),
        ],
        id="server messages, then the reply, all within the call: one whole stream",
    ),
    pytest.param(
        "gathering",
        [
            ("message", "gathering", ["gather"]),
            ("settle", "quiet", ["head", "watch"]),
            ("reply", "done", ["event", "end"]),
        ],
        id="a message within the call, the reply after it: the stream opens when the call returns",
    ),
    pytest.param(
        "gathering",
        [("settle-alone", "unbegun", []), ("reply", "done", ["json"])],
        id="behind a delay, a JSON server's lone reply: JSON once it comes",
    ),
    pytest.param(
        "gathering",
        [
            ("settle-alone", "unbegun", []),
            ("message", "open", ["head", "watch", "event"]),
            ("beat", "quiet", ["watch"]),
            ("beat", "quiet", ["comment", "watch"]),
            ("beat", "quiet", ["comment", "watch"]),
            ("message", "open", ["event"]),
            ("reply", "done", ["event", "end"]),
        ],
        id="behind a delay, a message first: a stream, a comment only after a quiet beat",
    ),
    pytest.param(
        "gathering",
        [("settle-alone", "unbegun", []), ("finish", "done", ["head", "end"]), ("reply", "done", [])],
        id="cancelled before it began: an empty stream, and nothing after its end",
    ),
    pytest.param(
        "gathering",
        [("message", "gathering", ["gather"]), ("cut", "broken", ["shown", "drop"]), ("message", "broken", [])],
        id="broken off within the call: what it gathered shows, then the cut",
    ),
    pytest.param(
        "gathering",
        [("settle-alone", "unbegun", []), ("cut", "broken", ["drop"])],
        id="broken off before a JSON server began: cut with nothing",
    ),
    pytest.param(
        "gathering",
        [("settle-alone", "unbegun", []), ("close", "gone", []), ("reply", "gone", []), ("finish", "gone", [])],
        id="its client left before it began: what comes goes nowhere",
    ),
    pytest.param(
        "gathering",
        [
            ("settle", "quiet", ["head", "watch"]),
            ("message", "open", ["event"]),
            ("close", "lost", []),
            ("beat", "lost", []),
            ("message", "lost", ["keep"]),
            ("resume", "quiet", ["attach", "watch"]),
            ("reply", "done", ["event", "end"]),
        ],
        id="its connection closed: kept to resume from, resumed, then its reply",
    ),
    pytest.param(
        "gathering",
        [("settle", "quiet", ["head", "watch"]), ("resume", "quiet", ["drop", "attach", "watch"])],
        id="resumed while its connection is open: the old one cut",
    ),
    pytest.param(
        "gathering",
        [("settle", "quiet", ["head", "watch"]), ("close", "lost", []), ("cut", "broken", []), ("reply", "broken", [])],
        id="broken off after its client left: resuming it breaks off again",
    ),
    pytest.param(
        "gathering",
        [
            ("settle", "quiet", ["head", "watch"]),
            ("resent", "open", ["frames"]),
            ("beat", "quiet", ["watch"]),
            ("overflow", "done", ["spill"]),
            ("close", "done", []),
        ],
        id="a GET stream: what waited for it, then its client reads nothing",
    ),
    pytest.param(
        "gathering",
        [("settle", "quiet", ["head", "watch"]), ("finish", "done", ["end"]), ("beat", "done", [])],
        id="a GET stream ended at the cap: its timer is let go",
    ),
    pytest.param(
        "gathering",
        [("answered", "done", [])],
        id="a batch of notifications only: the 202 is its answer",
    ),
    pytest.param(
        "gathering",
        [("finish", "whole", []), ("finish", "whole", []), ("settle", "done", ["head", "end"])],
        id="ended within the call: an empty stream once the call returns",
    ),
]


@pytest.mark.parametrize(("first", "events"), LIVES)
def test_a_stream_lives_by_its_table(first: str, events: list[tuple[str, str, list[str]]]) -> None:
    state, seen = first, []
    for event, _state, _effects in events:
        state, effects = step(state, event)
        seen.append((event, state, list(effects)))
    assert seen == events


@pytest.mark.parametrize(
    ("state", "event"),
    [("gathering", "beat"), ("done", "resume"), ("unbegun", "resume"), ("whole", "message"), ("lost", "overflow")],
)
def test_an_event_a_state_cannot_take_is_an_error_not_a_silent_pass(state: str, event: str) -> None:
    with pytest.raises(ValueError, match=f"a stream {state} cannot take '{event}'"):
        step(state, event)
