"""What the recorder keeps so replay can order both sides by time: the host's answer to a server
request keeps its time (`took` on the server item), and the loader, the schema and lint agree on it;
and an SSE event's id, journaled, so events a resumed stream sends again are recorded once."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from mockmcp.cassette import schema, store, yamlfile
from mockmcp.cassette.files import journal_path
from mockmcp.errors import CassetteError
from mockmcp.http._sse import SseEvents
from mockmcp.record._journal import Journal, read
from mockmcp.record._recorder import CLIENT, SERVER
from mockmcp.tools import _lint as lint

ASKED = """\
version: 1
interactions:
- at: 0.5
  request: {id: 1, method: tools/call, params: {name: confirm}}
  server:
  - at: 0.6
    request: {id: 0, method: elicitation/create, params: {message: Sure?, requestedSchema: {type: object}}}
    response: {result: {action: decline}}
    took: 1.25
  response: {result: {content: []}}
  took: 2.0
"""


def test_the_time_of_the_hosts_answer_loads_and_editors_and_lint_accept_it() -> None:
    item = store.loads(ASKED).interactions[0].server[0]
    assert (item.at, item.took) == (0.6, 1.25)
    assert list(jsonschema.Draft7Validator(schema.schema()).iter_errors(yamlfile.load(ASKED))) == []
    assert lint.lint_text(ASKED, "asked.yaml") == []


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ("    took: -1\n", "`took` must be a number of seconds, at least 0"),
        ("    took: soon\n", "`took` must be a number of seconds, at least 0"),
    ],
)
def test_a_bad_took_is_refused_with_its_place(edit: str, problem: str) -> None:
    text = ASKED.replace("    took: 1.25\n", edit)
    with pytest.raises(CassetteError) as refused:
        store.loads(text)
    assert problem in refused.value.render()
    assert "interactions[0].server[0].took" in refused.value.render()
    assert list(jsonschema.Draft7Validator(schema.schema()).iter_errors(yamlfile.load(text)))


def test_took_without_the_hosts_answer_is_refused() -> None:
    text = ASKED.replace("    response: {result: {action: decline}}\n", "")
    with pytest.raises(CassetteError) as refused:
        store.loads(text)
    assert "this item has no `response`" in refused.value.render()
    assert list(jsonschema.Draft7Validator(schema.schema()).iter_errors(yamlfile.load(text)))


def test_an_sse_events_id_comes_with_its_data_however_the_chunks_fall() -> None:
    stream = b"id: e1\ndata: \n\nevent: message\nid: e2\ndata: {}\n\ndata: no id\n\nid:e3\ndata: a\ndata: b\n\n"
    expected = [("e2", b"{}"), (None, b"no id"), ("e3", b"a\nb")]  # the priming event (no data) left out
    assert SseEvents().events(stream) == expected
    for cut in range(len(stream) + 1):
        events = SseEvents()
        assert events.events(stream[:cut]) + events.events(stream[cut:]) == expected


def test_the_journal_keeps_event_ids_so_a_resumed_streams_events_are_recorded_once(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    journal = Journal(journal_path(str(path)), {})
    subscribe = b'{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"notes://today"}}'
    updated = b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"notes://today"}}'
    journal.append(CLIENT, 0.1, [subscribe])
    journal.append(SERVER, 0.2, [b'{"jsonrpc":"2.0","id":1,"result":{}}'], stream=1, event="e1")
    journal.append(SERVER, 0.3, [updated], get=True, event="e2")
    journal.append(CLIENT, 0.4, [b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"poke"}}'])
    journal.append(SERVER, 0.5, [updated], get=True, event="e2")  # the GET stream resumed after e1
    journal.append(SERVER, 0.6, [updated], get=True, event="e4")  # a new one: same words, another event
    journal.append(SERVER, 0.7, [b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'], stream=2, event="e5")
    journal.close()
    made = read(journal_path(str(path))).cassette
    assert [(i.method, [(s.message["method"], s.at) for s in i.server]) for i in made.interactions] == [
        ("resources/subscribe", []),
        (None, [("notifications/resources/updated", 0.3)]),
        ("tools/call", [("notifications/resources/updated", 0.6)]),
    ]
