"""`record --record-mode new_episodes` (`record/_merge.py`), sans-IO: the cassette there was and a new recording in, the
cassette to write and the notes for stderr out.

Each row: the old cassette and the new recording as lists of interactions (literal JSON-RPC
requests, responses and server messages, in the cassette's flow style), then every interaction of
the merged cassette as (session, label, what was answered) and the notes, exactly. Covered:
- a new session is kept whole, every occurrence, as a session numbered after the cassette's last;
- a session replay of the old cassette already answers (every reply, at its turn) is left out;
- what counts as answered otherwise: the reply, a raw reply's line, what the server said on the way
  (less a progress token) and the stream it said it on;
- one note per request the cassette had that was answered otherwise, with at most three differences;
- several new sessions, each judged on its own; a session of the other era;
- the meta: the old one kept, with `updated_at`, both recordings' redaction rules, the new framing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.model import Cassette, Interaction
from mockmcp.cassette.store import loads
from mockmcp.engine.explain import label
from mockmcp.record._merge import merge, merged_meta

UNCHANGED = "this session adds nothing the cassette does not already answer; the cassette is unchanged"


def call(name: str, text: str, session: int = 0, server: str = "") -> str:
    """A tools/call interaction answered with one text block (`server`: its `server:` items, indented)."""
    lines = [f"- request: {{method: tools/call, params: {{name: {name}}}}}"]
    if session:
        lines.append(f"  session: {session}")
    if server:
        lines.append("  server:\n" + server.rstrip("\n"))
    lines.append(f"  response: {{result: {{content: [{{type: text, text: '{text}'}}]}}}}")
    return "\n".join(lines)


def odd(code: str) -> str:
    """A reply no response can hold, so kept as its raw line."""
    line = '{"jsonrpc":"2.0","id":{{id}},"error":{"code":"' + code + '","message":"odd"}}'
    return f"- request: {{method: tools/call, params: {{name: odd}}}}\n  raw_response: '{line}'"


def logged(data: str, token: str = "t1", stream: str = "") -> str:
    """A call whose server logged `data` and reported progress (token `token`) on the way, on `stream`."""
    where = f"\n    stream: {stream}" if stream else ""
    return call(
        "go",
        "done",
        server=(
            f"  - notification: {{method: notifications/message, params: {{level: info, data: {data}}}}}{where}\n"
            f"  - notification: {{method: notifications/progress, params: {{progressToken: {token}, progress: 1}}}}"
        ),
    )


def cassette(*interactions: str, meta: str = "") -> Cassette:
    return loads("version: 1\n" + meta + "interactions:\n" + "\n".join(interactions) + "\n")


def answered(interaction: Interaction) -> str:
    """What was answered: the text, or the raw line, after what the server said on the way (`data@stream`)."""
    said = "".join(
        f"{item.message['params']['data']}@{item.stream or 'own'}; "
        for item in interaction.server
        if item.message["method"] == "notifications/message"
    )
    if interaction.raw_response is not None:
        return said + json.loads(interaction.raw_response.replace("{{id}}", "0"))["error"]["code"]
    return said + interaction.response["result"]["content"][0]["text"]


def otherwise(name: str, old: int, new: int, *differences: str) -> str:
    """The note for a request the cassette had, answered otherwise this time."""
    head = (
        f"tools/call {name} was answered otherwise than in interactions[{old}] of the cassette; "
        f"both are kept, this time's as interactions[{new}]:"
    )
    return "\n".join([head, *(f"  - {text}" for text in differences)])


def text_changed(old: str, new: str) -> str:
    return f'result.content[0].text: recorded "{old}", now "{new}"'


ROWS = [
    pytest.param(
        [call("read", "0")],
        [call("list", "a, b")],
        [(0, "read", "0"), (1, "list", "a, b")],
        [],
        id="a session with a request the cassette lacks is added as the next session, without a note",
    ),
    pytest.param(
        [call("read", "0")],
        [call("read", "0"), call("add", "added"), call("read", "1"), call("read", "2")],
        [(0, "read", "0"), (1, "read", "0"), (1, "add", "added"), (1, "read", "1"), (1, "read", "2")],
        [otherwise("read", 0, 3, text_changed("0", "1"))],
        id="kept whole, every occurrence (a stateful server); one note for a request answered otherwise, however often",
    ),
    pytest.param(
        [call("read", "0"), call("read", "1")],
        [call("read", "0")],
        [(0, "read", "0"), (0, "read", "1")],
        [UNCHANGED],
        id="a session the cassette already answers is left out",
    ),
    pytest.param(
        [call("read", "0"), call("read", "1")],
        [call("read", "1")],
        [(0, "read", "0"), (0, "read", "1"), (1, "read", "1")],
        [otherwise("read", 0, 2, text_changed("0", "1"))],
        id="an answer the cassette has, but at another turn, is answered otherwise",
    ),
    pytest.param(
        [call("read", "0"), call("read", "1", session=1), call("read", "2", session=3)],
        [call("read", "9")],
        [(0, "read", "0"), (1, "read", "1"), (3, "read", "2"), (4, "read", "9")],
        [otherwise("read", 0, 3, text_changed("0", "9"))],
        id="numbered after the cassette's last session",
    ),
    pytest.param(
        [call("read", "0")],
        [call("read", "0", session=1), call("read", "1", session=2), call("read", "0", session=4), call("x", "y", 5)],
        [(0, "read", "0"), (1, "read", "1"), (2, "x", "y")],
        [otherwise("read", 0, 1, text_changed("0", "1"))],
        id="several new sessions, each judged on its own, the added ones numbered one after another",
    ),
    pytest.param(
        [odd("E_ONE")],
        [odd("E_ONE")],
        [(0, "odd", "E_ONE")],
        [UNCHANGED],
        id="a raw reply with the same line is the same answer",
    ),
    pytest.param(
        [odd("E_ONE")],
        [odd("E_TWO")],
        [(0, "odd", "E_ONE"), (1, "odd", "E_TWO")],
        [otherwise("odd", 0, 1)],
        id="raw replies are told apart by their lines",
    ),
    pytest.param(
        [logged("started", token="a")],
        [logged("started", token="b")],
        [(0, "go", "started@own; done")],
        [UNCHANGED],
        id="another progress token is the live request's, not something the server said otherwise",
    ),
    pytest.param(
        [logged("started")],
        [logged("begun")],
        [(0, "go", "started@own; done"), (1, "go", "begun@own; done")],
        [otherwise("go", 0, 1)],
        id="the same reply after another log message is kept",
    ),
    pytest.param(
        [logged("started", stream="get")],
        [logged("started", stream="get")],
        [(0, "go", "started@get; done")],
        [UNCHANGED],
        id="the same log on the GET stream is the same",
    ),
    pytest.param(
        [logged("started")],
        [logged("started", stream="get")],
        [(0, "go", "started@own; done"), (1, "go", "started@get; done")],
        [otherwise("go", 0, 1)],
        id="the same log on another stream is kept (an HTTP host can tell)",
    ),
]


@pytest.mark.parametrize(("old", "new", "merged", "notes"), ROWS)
def test_which_sessions_a_new_recording_adds(
    old: list[str], new: list[str], merged: list[tuple[int, str, str]], notes: list[str]
) -> None:
    result, said, _numbers = merge(cassette(*old), cassette(*new))
    assert [(i.session, i.params["name"], answered(i)) for i in result.interactions] == merged
    assert list(said) == notes


def test_the_old_interactions_are_kept_as_they_were() -> None:
    """Not rebuilt: the old cassette's own interaction objects (the YAML edit keeps what was written)."""
    old = cassette(call("read", "0"), call("read", "1"))
    result, _notes, _numbers = merge(old, cassette(call("list", "a")))
    assert result.interactions[:2] == old.interactions
    assert all(a is b for a, b in zip(result.interactions, old.interactions, strict=False))


def test_a_note_names_at_most_three_differences() -> None:
    many = "- request: {method: x, params: {name: many}}\n  response: {result: {a: 1, b: 1, c: 1, d: 1, e: 1}}"
    other = "- request: {method: x, params: {name: many}}\n  response: {result: {a: 2, b: 2, c: 2, d: 2, e: 2}}"
    _result, [note], _numbers = merge(cassette(many), cassette(other))
    lines = note.split("\n")
    assert lines[0] == (
        "x many was answered otherwise than in interactions[0] of the cassette; "
        "both are kept, this time's as interactions[1]:"
    )
    assert lines[1:] == [
        "  - result.a: recorded 1, now 2",
        "  - result.b: recorded 1, now 2",
        "  - result.c: recorded 1, now 2",
        "  - and 2 more",
    ]


META = [
    pytest.param(
        {"recorded_at": "2026-01-01T00:00:00Z", "server": ["s"]},
        {"recorded_at": "2026-02-02T00:00:00Z", "server": ["t"]},
        {"recorded_at": "2026-01-01T00:00:00Z", "server": ["s"], "updated_at": "2026-02-02T00:00:00Z"},
        id="the old meta, with when it was updated",
    ),
    pytest.param(
        {"redact": {"env": ["B", "A"]}},
        {"redact": {"env": ["A", "C"], "patterns": ["sk-.*"]}},
        {"redact": {"env": ["A", "B", "C"], "patterns": ["sk-.*"]}},
        id="the redaction rules of both recordings, sorted",
    ),
    pytest.param(
        {"http": {"framing": "sse"}},
        {"http": {"framing": "json"}},
        {"http": {"framing": "json"}},
        id="how the server frames its answers now",
    ),
    pytest.param(
        {"http": {"framing": "sse"}, "description": "mine"},
        {},
        {"http": {"framing": "sse"}, "description": "mine"},
        id="a new recording that learnt nothing changes nothing",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), META)
def test_merged_meta(old: dict[str, Any], new: dict[str, Any], expected: dict[str, Any]) -> None:
    assert merged_meta(old, new) == expected
    assert merge(Cassette((), old), Cassette((), new))[0].meta == expected


HANDSHAKE_SESSION = """\
- request: {method: initialize, params: {protocolVersion: '2025-11-25', capabilities: {}}}
  response: {result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: s, version: '1'}}}
- request: {method: tools/call, params: {name: read}}
  response: {result: {content: [{type: text, text: '0'}]}}"""
STATELESS_META = "_meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}"
STATELESS_SESSION = f"""\
- request: {{method: server/discover, params: {{{STATELESS_META}}}}}
  response: {{result: {{supportedVersions: ['2026-07-28'], capabilities: {{tools: {{}}}}}}}}
- request: {{method: tools/call, params: {{name: read, {STATELESS_META}}}}}
  response: {{result: {{content: [{{type: text, text: '0'}}]}}}}"""


def test_a_session_of_the_other_era_is_added_as_its_requests_never_match() -> None:
    """The same call, answered the same, from a 2026-07-28 host: a request of the other era is not
    one the cassette answers (replay would not play it), so the session is added, without a note."""
    result, notes, _numbers = merge(cassette(HANDSHAKE_SESSION), cassette(STATELESS_SESSION))
    assert [(i.session, i.method) for i in result.interactions] == [
        (0, "initialize"),
        (0, "tools/call"),
        (1, "server/discover"),
        (1, "tools/call"),
    ]
    assert notes == ()
    again, notes, _numbers = merge(result, cassette(STATELESS_SESSION))
    assert again.interactions == result.interactions and notes == (UNCHANGED,)


def test_label() -> None:
    [named, uri, plain] = cassette(
        call("read", "0"),
        "- request: {method: resources/read, params: {uri: 'file:///a'}}\n  response: {result: {contents: []}}",
        "- request: {method: tools/list}\n  response: {result: {tools: []}}",
    ).interactions
    assert [label(named), label(uri), label(plain)] == ["tools/call read", "resources/read file:///a", "tools/list"]
