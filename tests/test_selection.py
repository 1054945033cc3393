"""Which recording answers a live request, in cassettes of one and of several recorded sessions."""

from __future__ import annotations

import json

import pytest

from mockmcp.cassette.model import Interaction
from mockmcp.cassette.store import loads
from mockmcp.engine.consistency import changes_state, label
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Replay, Send
from mockmcp.engine.selection import Recordings, Selection

# Two clients recorded by one HTTP proxy: the same opening, then the same call answered differently
# (the server counted), then a call only the second made.
TWO_SESSIONS = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- request: {method: tools/call, params: {name: count}}
  response: {result: {content: [{type: text, text: '1'}]}}
- session: 1
  request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- session: 1
  request: {method: tools/call, params: {name: count}}
  response: {result: {content: [{type: text, text: '2'}]}}
- session: 1
  request: {method: tools/call, params: {name: other}}
  response: {result: {content: [{type: text, text: other}]}}
"""


def answer(engine: Replay, rid: int, method: str, params: dict[str, object]) -> object:
    line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
    sent = [json.loads(action.data) for action in engine.receive(line) if isinstance(action, Send)]
    assert len(sent) == 1 and sent[0]["id"] == rid
    result = sent[0].get("result")
    return result["content"][0]["text"] if isinstance(result, dict) and "content" in result else sent[0]


def test_each_live_session_follows_a_recorded_session_of_its_own() -> None:
    cassette = loads(TWO_SESSIONS)
    recordings = Recordings(cassette, Matcher.build())
    first, second = (Replay(cassette, Matcher.build(), recordings=recordings) for _ in range(2))
    for engine in (first, second):
        answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert answer(first, 2, "tools/call", {"name": "count"}) == "1"
    assert answer(second, 2, "tools/call", {"name": "count"}) == "2"
    # A request only one recorded session has is answered from it, whichever session is bound.
    assert answer(first, 3, "tools/call", {"name": "other"}) == "other"
    # Play counts are per live session: each sees its own session as recorded.
    assert first.report.repeats == {} and second.report.repeats == {}


@pytest.mark.parametrize(("times", "repeats"), [("", {1: 2}), ("  times: any\n", {})], ids=["once", "any"])
def test_times_any_is_no_repeat_among_several_recorded_sessions(times: str, repeats: dict[int, int]) -> None:
    knobbed = TWO_SESSIONS.replace(
        "- request: {method: tools/call, params: {name: count}}\n",
        "- request: {method: tools/call, params: {name: count}}\n" + times,
        1,
    )
    engine = Replay(loads(knobbed), Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert [answer(engine, n, "tools/call", {"name": "count"}) for n in (2, 3, 4)] == ["1", "1", "1"]
    assert engine.report.repeats == repeats


def test_a_live_session_alone_plays_the_first_recorded_session_and_is_judged_on_it() -> None:
    cassette = loads(TWO_SESSIONS)
    engine = Replay(cassette, Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert answer(engine, 2, "tools/call", {"name": "count"}) == "1"
    assert engine.report.unplayed == []  # session 1 was never this live session's to play


def test_a_session_without_its_own_opening_serves_after_the_first_sessions_opening() -> None:
    """A read a recorded session lacks (this one's initialize) leaves it consistent: reads change nothing."""
    added = TWO_SESSIONS.replace(
        "- session: 1\n  request: {method: initialize, params: {protocolVersion: '2025-11-25'}}\n"
        "  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}\n",  # noqa: E501 (a literal message, as on the wire)
        "",
    )
    engine = Replay(loads(added), Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert answer(engine, 2, "tools/call", {"name": "count"}) == "1"  # both recorded it first: session 0's
    assert answer(engine, 3, "tools/call", {"name": "other"}) == "other"  # only session 1 goes on so
    assert engine.selection.bound == 1 and engine.report.mismatches == []
    # A third count: session 1 recorded `other` after its count, so neither says what the server answers.
    assert answer(engine, 4, "tools/call", {"name": "count"}) == "2"
    [mismatch] = engine.report.mismatches
    assert mismatch.differences == (
        "recorded session 0: tools/call other (its 1st): it never recorded that request",
        "recorded session 1: tools/call count (its 2nd): it recorded that request elsewhere than after 2 requests "
        "that change state",
    )


def test_selection_in_one_session_plays_times_then_repeats_or_refuses() -> None:
    cassette = loads(
        "version: 1\ninteractions:\n"
        "- request: {method: m}\n  times: 2\n  response: {result: {n: 1}}\n"
        "- request: {method: m}\n  response: {result: {n: 2}}\n"
        "- request: {method: u}\n  after: unmatched\n  response: {result: {}}\n"
    )
    selection = Selection(Recordings(cassette, Matcher.build()))
    key = Matcher.build().key("m", None)
    assert [tuple(selection.request(key) or ())[:2] for _ in range(4)] == [
        (0, False),
        (0, False),
        (1, False),
        (1, True),
    ]
    once = Matcher.build().key("u", None)
    assert [tuple(selection.request(once) or ())[:2] for _ in range(2)] == [(2, False), (None, False)]
    assert selection.request(Matcher.build().key("never", None)) is None


def test_recorded_timing_waits_as_the_recording_did_scaled() -> None:
    """--timing: before each server message and the reply, the recorded gap, times the factor."""
    cassette = loads(
        "version: 1\ninteractions:\n"
        "- at: 1.0\n  request: {method: tools/call, params: {name: slow}}\n"
        "  server:\n  - at: 1.5\n    notification: {method: notifications/message, params: {level: info, data: half}}\n"
        "  response: {result: {content: []}}\n  took: 2.0\n"
    )
    from mockmcp.engine.replay import Wake

    engine = Replay(cassette, Matcher.build(), timing=0.5)
    first = engine.receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}')
    assert [type(a) for a in first] == [Wake] and first[0].after == 0.25  # (1.5 - 1.0) * 0.5, then the log line
    second = engine.wake(first[0].job)
    assert [type(a).__name__ for a in second] == ["Send", "Wake"] and second[1].after == 0.75  # (3.0 - 1.5) * 0.5
    third = engine.wake(second[1].job)
    assert len(third) == 1 and json.loads(third[0].data)["id"] == 1
    assert (
        Replay(cassette, Matcher.build())
        .receive(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}')[-1]
        .final
    )


# A stateful server recorded twice with `record --record-mode new_episodes`: the first session read the state once,
# the second read it three times as it grew; merge keeps the second whole as session 1.
GROWING = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '0'}]}}
- session: 1
  request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- session: 1
  request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '0'}]}}
- session: 1
  request: {method: tools/call, params: {name: add}}
  response: {result: {content: [{type: text, text: added}]}}
- session: 1
  request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '1'}]}}
- session: 1
  request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '1'}]}}
"""


def test_a_live_session_asking_more_than_its_recorded_session_moves_to_one_that_recorded_more() -> None:
    engine = Replay(loads(GROWING), Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert answer(engine, 2, "tools/call", {"name": "read"}) == "0"  # session 0, the first
    assert answer(engine, 3, "tools/call", {"name": "add"}) == "added"  # only session 1 has it
    assert answer(engine, 4, "tools/call", {"name": "read"}) == "1"  # session 0 is used up: session 1's second
    assert answer(engine, 5, "tools/call", {"name": "read"}) == "1"
    assert engine.report.repeats == {}
    assert engine.selection.bound == 1


def test_a_moved_live_session_never_takes_a_session_another_live_session_holds() -> None:
    cassette = loads(GROWING)
    recordings = Recordings(cassette, Matcher.build())
    first, second = (Replay(cassette, Matcher.build(), recordings=recordings) for _ in range(2))
    for engine in (first, second):
        answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert answer(second, 2, "tools/call", {"name": "read"}) == "0"  # session 1's first
    answer(first, 2, "tools/call", {"name": "read"})
    answer(first, 3, "tools/call", {"name": "read"})  # session 1 is the second's: the first repeats
    assert first.report.repeats == {1: 1}


# A stateful server recorded three times: a session that only read, one that added milk and read it back,
# and one that added milk, then eggs. `read` is read-only by the tool list; `add` changes state.
STATEFUL = """\
version: 1
interactions:
- request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- request: {method: tools/list}
  response:
    result:
      tools: [{name: read, inputSchema: {}, annotations: {readOnlyHint: true}}, {name: add, inputSchema: {}}]
- request: {method: prompts/list}
  response: {result: {prompts: []}}
- request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '[]'}]}}
- session: 1
  request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- session: 1
  request: {method: prompts/list}
  response: {result: {prompts: []}}
- session: 1
  request: {method: tools/call, params: {name: add, arguments: {name: milk}}}
  response: {result: {content: [{type: text, text: added milk}]}}
- session: 1
  request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '[milk]'}]}}
- session: 2
  request: {method: initialize, params: {protocolVersion: '2025-11-25'}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}
- session: 2
  request: {method: tools/call, params: {name: add, arguments: {name: milk}}}
  response: {result: {content: [{type: text, text: added milk}]}}
- session: 2
  request: {method: tools/call, params: {name: add, arguments: {name: eggs}}}
  response: {result: {content: [{type: text, text: added eggs}]}}
- session: 2
  request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '[eggs, milk]'}]}}
"""

LIST_TOOLS, LIST_PROMPTS = ("tools/list", None), ("prompts/list", None)
READ = ("tools/call", {"name": "read"})
MILK, EGGS = (
    ("tools/call", {"name": "add", "arguments": {"name": "milk"}}),
    (
        "tools/call",
        {"name": "add", "arguments": {"name": "eggs"}},
    ),
)


@pytest.mark.parametrize(
    ("asked", "said", "bound", "mismatches"),
    [
        ([LIST_PROMPTS, LIST_TOOLS, READ], ["prompts", "tools", "[]"], 0, []),  # reads in another order
        ([READ, READ], ["[]", "[]"], 0, []),  # a read asked again in the same state repeats
        ([MILK, READ], ["added milk", "[milk]"], 1, []),  # a write only later sessions recorded moves there
        ([READ, MILK, READ], ["[]", "added milk", "[milk]"], 1, []),  # a read before the write, then after it
        ([LIST_PROMPTS, MILK, EGGS, READ], ["prompts", "added milk", "added eggs", "[eggs, milk]"], 2, []),
        ([MILK, MILK, READ], ["added milk", "added milk", "[milk]"], 1, []),  # a write asked again repeats it
        # Writes out of every recorded order: a mismatch naming where each recorded session differs.
        (
            [EGGS, READ],
            ["added eggs", "[eggs, milk]"],
            2,
            [
                "recorded session 0: tools/call add (its 1st): it never recorded that request",
                "recorded session 1: tools/call add (its 1st): it never recorded that request",
                "recorded session 2: tools/call add (its 1st): it recorded that request elsewhere than after 0 "
                "requests that change state",
            ],
        ),
        # A read in a state only a session that cannot say it recorded it in: replay guesses, and says so.
        (
            [MILK, EGGS, LIST_PROMPTS],
            ["added milk", "added eggs", "prompts"],
            2,
            ["prompts/list (its 1st): no recorded session like this one recorded it here"],
        ),
    ],
    ids=[
        "reads-reordered",
        "read-twice",
        "write-moves",
        "read-write-read",
        "two-writes",
        "write-twice",
        "out-of-order",
        "read-in-unknown-state",
    ],
)
def test_a_live_session_is_answered_from_a_recorded_session_consistent_with_what_it_did(
    asked: list[tuple[str, object]], said: list[str], bound: int, mismatches: list[str]
) -> None:
    engine = Replay(loads(STATEFUL), Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    answers = []
    for n, (method, params) in enumerate(asked, start=2):
        found = answer(engine, n, method, params or {})
        answers.append(found if isinstance(found, str) else next(iter(found["result"])))
    assert answers == said
    assert engine.selection.bound == bound
    assert [d for m in engine.report.mismatches for d in m.differences] == mismatches


def test_a_move_is_noted_and_an_earlier_processes_sessions_are_taken_last() -> None:
    cassette = loads(STATEFUL)
    engine = Replay(cassette, Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    line = json.dumps({"jsonrpc": "2.0", "id": 2, "method": MILK[0], "params": MILK[1]}).encode()
    [note] = [a.text for a in engine.receive(line) if not isinstance(a, Send)]
    answer(engine, 3, *READ)
    # Session 1's opening is stood for by session 0's, which it left; only its prompts/list was never asked.
    assert engine.report.unplayed == [5]
    assert note == (
        "mockmcp: the live session follows recorded session 1 from interactions[6] on: recorded session 0 does not "
        "match it (tools/call add (its 1st): it never recorded that request)"
    )
    # `--state`: sessions 0 and 1 taken by earlier processes, so the opening binds session 2.
    later = Replay(cassette, Matcher.build(), recordings=Recordings(cassette, Matcher.build(), taken=[0, 1]))
    answer(later, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert later.selection.bound == 2
    for n, (method, params) in enumerate([MILK, EGGS, READ], start=2):
        line = json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).encode()
        assert not [a for a in later.receive(line) if not isinstance(a, Send)]  # no move, no note
    assert later.selection.bound == 2 and later.report.unplayed == []


def test_a_cassette_of_one_recorded_session_numbered_otherwise_is_answered_as_one() -> None:
    """A hand-made cassette whose only session is `session: 1`: play counts alone, and its report counts it."""
    engine = Replay(loads(GROWING.replace("- request:", "- session: 1\n  request:")), Matcher.build())
    answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
    assert answer(engine, 2, "tools/call", {"name": "add"}) == "added"  # out of the recorded order: as before
    assert [answer(engine, n, "tools/call", {"name": "read"}) for n in (3, 4, 5)] == ["0", "0", "1"]
    assert engine.report.mismatches == [] and engine.selection.sessions == {1}
    assert engine.report.unplayed == [2, 6]  # its second opening, and the read it was not asked


@pytest.mark.parametrize(
    ("method", "params", "changes"),
    [
        ("initialize", {"protocolVersion": "2025-11-25"}, False),
        ("tools/list", None, False),
        ("resources/read", {"uri": "notes://a"}, False),
        ("prompts/get", {"name": "review"}, False),
        ("tools/call", {"name": "read"}, False),  # the tool list marks it readOnlyHint: true
        ("tools/call", {"name": "add"}, True),
        ("tools/call", {"name": "unlisted"}, True),  # no word on it: it may change state
        ("logging/setLevel", {"level": "info"}, True),
        ("resources/subscribe", {"uri": "notes://a"}, True),
    ],
)
def test_what_changes_a_servers_state(method: str, params: object, changes: bool) -> None:
    interaction = Interaction("request", {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert changes_state(interaction, frozenset({"read"})) is changes


@pytest.mark.parametrize(
    ("asked", "said"), [(0, "1st"), (1, "2nd"), (2, "3rd"), (3, "4th"), (10, "11th"), (21, "22nd")]
)
def test_an_exchange_is_named_by_its_request_and_how_often_it_was_asked(asked: int, said: str) -> None:
    interaction = Interaction("request", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}})
    assert label(interaction, asked) == f"tools/call add (its {said})"


# --- sessions alike -------------------------------------------------------------------------------

# Three clients that did the same (at other times, under other ids), and one that went on to another call.
OPENING = (
    "  request: {id: %d, method: initialize, params: {protocolVersion: '2025-11-25'}}\n"
    "  response: {result: {protocolVersion: '2025-11-25', capabilities: {}, serverInfo: {name: s, version: '1'}}}\n"
)
ALIKE = (
    "version: 1\ninteractions:\n"
    + "".join(
        f"- session: {s}\n  at: {s}.5\n"
        + OPENING % (10 * s)
        + f"- session: {s}\n  request: {{id: {10 * s + 1}, method: tools/call, params: {{name: count}}}}\n"
        "  response: {result: {content: [{type: text, text: '1'}]}}\n"
        for s in range(4)
    )
    + "- session: 3\n  request: {method: tools/call, params: {name: other}}\n"
    "  response: {result: {content: [{type: text, text: other}]}}\n"
)


def test_sessions_alike_are_one_class_held_against_once_and_each_live_session_takes_a_member_of_its_own() -> None:
    cassette = loads(ALIKE)
    recordings = Recordings(cassette, Matcher.build())
    assert recordings.alike is not None and recordings.alike.members == {0: [0, 1, 2], 3: [3]}
    engines = [Replay(cassette, Matcher.build(), recordings=recordings) for _ in range(3)]
    for n, engine in enumerate(engines):
        answer(engine, 1, "initialize", {"protocolVersion": "2025-11-25"})
        assert answer(engine, 2, "tools/call", {"name": "count"}) == "1"
        assert engine.selection._tracks.keys() == {0, 3}  # one track per class, not per session
        assert engine.selection.sessions == {n}  # each a session of its own, free when taken
        assert engine.report.plays_by_index()[2 * n : 2 * n + 2] == [1, 1]  # its own interactions played
    # The live session that goes on as session 3 did follows it, leaving the class it was in.
    assert answer(engines[0], 3, "tools/call", {"name": "other"}) == "other"
    assert engines[0].selection.bound == 3
