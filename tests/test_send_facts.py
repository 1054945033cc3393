"""What a `Send` says besides its bytes, so that no shell reads back what the engine wrote.

Engine tests with literal JSON-RPC, a table per fact: the request a message belongs to (the shell's
key for it when it gave one, else its id) and whether it ends it; a server message's method (a raw
line's when it is a JSON-RPC message); a reply's error code (a raw reply's too); the ids a batch's
array answers. And with a key, the messages still carry the client's own id: the reply's, a listen
event's subscription id, a raw reply's `{{id}}`; a cancellation names the request by its key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp._wire import jsonrpc
from mockmcp.cassette.store import loads
from mockmcp.engine.matching import Matcher
from mockmcp.engine.replay import Note, Replay, Send

SUB = "io.modelcontextprotocol/subscriptionId"
CASSETTE = """
version: 1
interactions:
- request: {id: 1, method: tools/call, params: {name: log}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: working}}
  - raw: '{"jsonrpc":"2.0","method":"notifications/raw"}'
  - raw: 'not json'
  response: {result: {content: []}}
- request: {id: 2, method: tools/call, params: {name: bad}}
  response: {error: {code: -32602, message: bad}}
- request: {id: 3, method: tools/call, params: {name: raw}}
  raw_response: '{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32603,"message":"raw"}}'
- request: {id: 4, method: tools/call, params: {name: ask}}
  server:
  - request: {id: 0, method: roots/list}
    response: {result: {roots: []}}
  response: {result: {content: []}}
- request: {id: 5, method: subscriptions/listen, params: {}}
  server:
  - notification: {method: notifications/tools/list_changed, params: {_meta: {%s: 5}}}
- request: {id: 6, method: tools/call, params: {name: slow}}
  delay: 1.0
  response: {result: {content: []}}
""".replace("%s", SUB)


def call(id: Any, name: str, method: str = "tools/call") -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {"name": name}}).encode()


def facts(actions: list[Any]) -> list[tuple[Any, ...]]:
    """Each Send's facts besides its bytes: (request, final, method, code, batch)."""
    return [(a.request, a.final, a.method, a.code, a.batch) for a in actions if isinstance(a, Send)]


@pytest.mark.parametrize(
    ("line", "sent"),
    [
        (
            call(7, "log"),
            [
                (7, False, "notifications/message", None, ()),
                (7, False, "notifications/raw", None, ()),  # a raw line that is a JSON-RPC message
                (7, False, None, None, ()),  # one that is not
                (7, True, None, None, ()),
            ],
        ),
        (call(7, "bad"), [(7, True, None, -32602, ())]),
        (call("r", "raw"), [("r", True, None, -32603, ())]),  # a raw reply's code
        (call(7, "ask"), [(7, False, "roots/list", None, ())]),
        (call(7, "nope"), [(7, True, None, jsonrpc.NO_MATCH, ())]),  # a miss
        (call(7, "x", "prompts/list"), [(7, True, None, -32601, ())]),  # a method never recorded
        (b'{"jsonrpc":"2.0","id":8,"method":"ping"}', [(8, True, None, None, ())]),
        (b"{not json", [(None, False, None, -32700, ())]),
        (
            b'[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bad"}},{"jsonrpc":"2.0","id":2},'
            b'5,{"jsonrpc":"2.0","method":"notifications/initialized"}]',
            [(None, False, None, None, (1, 2, None))],  # the array answers 1, and the invalid 2 and 5 (id null)
        ),
        (b"[]", [(None, False, None, -32600, ())]),
    ],
    ids=[
        "server-messages",
        "an-error-reply",
        "a-raw-error-reply",
        "a-server-request",
        "a-miss",
        "never-recorded",
        "a-ping",
        "not-json",
        "a-batch",
        "an-empty-batch",
    ],
)
def test_a_send_carries_what_the_shell_needs(line: bytes, sent: list[tuple[Any, ...]]) -> None:
    assert facts(Replay(loads(CASSETTE), Matcher.build()).receive(line)) == sent


def messages(actions: list[Any]) -> list[Any]:
    return [json.loads(a.data) for a in actions if isinstance(a, Send)]


@pytest.mark.parametrize(
    ("line", "seen"),
    [
        (call(7, "bad"), [{"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad"}}]),
        (
            call(7, "x", "subscriptions/listen"),  # params differ from the recorded {}: see the next row
            [{"jsonrpc": "2.0", "id": 7, "error": ...}],
        ),
        (
            b'{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{}}',
            [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {SUB: 7}}}],
        ),
        (call("c", "raw"), [{"jsonrpc": "2.0", "id": "c", "error": {"code": -32603, "message": "raw"}}]),
    ],
    ids=["a-reply", "a-miss", "a-listen-event", "a-raw-reply"],
)
def test_with_a_key_the_send_names_it_and_the_messages_carry_the_client_s_id(line: bytes, seen: list[Any]) -> None:
    actions = Replay(loads(CASSETTE), Matcher.build()).receive(line, json.loads(line), key=("k", 1))
    assert [a.request for a in actions if isinstance(a, Send)] == [("k", 1)] * len(seen)
    got = messages(actions)
    for message, want in zip(got, seen, strict=True):
        assert {k: ... if want[k] is ... else v for k, v in message.items()} == want


@pytest.mark.parametrize("keys", [("one", "two"), (("k", 1), ("k", 2))], ids=["strings", "any-hashable"])
def test_a_cancellation_with_a_key_cancels_that_request_and_no_other_with_the_same_id(keys: tuple[Any, Any]) -> None:
    replay = Replay(loads(CASSETTE), Matcher.build())
    [one] = replay.receive(call(7, "slow"), key=keys[0])  # a Wake: it waits for its delay
    [two] = replay.receive(call(7, "slow"), key=keys[1])
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    notes = replay.receive(json.dumps(cancel).encode(), cancel, key=keys[0])
    assert notes == [Note("mockmcp: the host cancelled request 7 (interactions[5]); it will not be answered")]
    assert replay.wake(one.job) == []  # "one" is gone
    [reply] = replay.wake(two.job)
    assert isinstance(reply, Send) and reply.request == keys[1] and json.loads(reply.data)["id"] == 7
