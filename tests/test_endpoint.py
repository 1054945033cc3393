"""Replay's Streamable HTTP endpoint (`http/_endpoint.py`), sans-IO: literal HTTP requests in, what to write out.

Each row is a conversation with one `Endpoint`: literal POST/GET/DELETE requests (JSON-RPC bodies and
headers as on the wire), connections closed, timers fired (`WAKE` fires the oldest `Later` not yet
fired) and `shutdown()`, each with the outputs it must give, shown as readable tuples (SSE events
decoded from their `data:` lines); every step's outputs are checked.

Covered, a table per group:
- handshake sessions: `initialize` starts one (`Mcp-Session-Id`); a missing id is 400, an unknown
  or ended one 404 (the SDK's answers, or the recorded `session_errors`); DELETE ends a session;
- a notification or the host's answer to a server request is answered 202;
- framing: a lone reply as one JSON body (200, or the recorded `error_status` of its error code, a
  raw reply's or a miss's too), a reply after server messages as an SSE stream; `framing: sse`,
  `event_ids` numbered through the session, `priming`;
- `delay`: nothing written until the timer fires, then JSON for a lone reply, a stream otherwise;
- GET: 406, 405 (two texts), 400/404, 409 for a second one, allowed again once the first closed;
  unsolicited messages held back until it opens; `stream: get` items on it, or on the request's stream;
- 2026-07-28: no session; two clients with the same id each get their own id back (messages and
  notes, a raw reply's `{{id}}`; recorded text is never taken for an id), and closing a request's
  connection cancels it (not so in the handshake era);
- notifications/cancelled ends the request's stream without a reply;
- 2025-03-26 batches: one JSON array (after a delay too), 202 for notifications only, 400 elsewhere;
- resumption with Last-Event-ID; the `exit` knob; an answer that broke off (`drop: cut`: its stream,
  and only it, cut after what it carried); `shutdown()`; a foreign Host or Origin;
- the bytes of an SSE answer;
- bounds: GET streams at the cap (the quietest ends), keep-alive comments on quiet streams, a GET
  stream whose client reads nothing cut (also within one interaction's burst of messages, which the
  shell writes only once the call returns), resumption one budget for the server, and a seeded fuzz
  of whole conversations holding every bound.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any, NamedTuple

import pytest

from mockmcp.cassette.store import loads
from mockmcp.engine.actions import Note
from mockmcp.engine.matching import Matcher
from mockmcp.engine.report import KEPT_MISSES, Report
from mockmcp.http._endpoint import Endpoint, Hooks, SessionParts
from mockmcp.http._session import TURN
from mockmcp.http._stream import Drop, End, Event, Later, Open, Out, Respond
from mockmcp.http._streamable import KEEPALIVE_COMMENT, LOOPBACK, Answer
from mockmcp.options import Bounds

# --- cassettes -----------------------------------------------------------------------------------

# A handshake-era session (indices in comments: notes name them).
BASE = """
- request:                                        # 0
    id: 1
    method: initialize
    params: {protocolVersion: '2025-11-25', capabilities: {elicitation: {}}, clientInfo: {name: host, version: '1'}}
  response:
    result: {protocolVersion: '2025-11-25', capabilities: {tools: {}}, serverInfo: {name: notes, version: '1'}}
- notification: {method: notifications/initialized} # 1
- request: {id: 2, method: tools/list}            # 2
  response: {result: {tools: [{name: read, inputSchema: {type: object}}]}}
- request: {id: 3, method: tools/call, params: {name: count, arguments: {}}}  # 3
  server:
  - notification: {method: notifications/message, params: {level: info, data: counting}}
  response: {result: {content: [{type: text, text: counted}]}}
- request: {id: 4, method: tools/call, params: {name: slow, arguments: {}}}  # 4
  delay: 2.5
  response: {result: {content: [{type: text, text: at last}]}}
- request: {id: 5, method: tools/call, params: {name: slow_log, arguments: {}}}  # 5
  delay: 2.5
  server:
  - notification: {method: notifications/message, params: {level: info, data: still here}}
  response: {result: {content: [{type: text, text: logged}]}}
- request: {id: 6, method: tools/call, params: {name: bad, arguments: {}}}  # 6
  response: {error: {code: -32602, message: 'unknown tool: bad'}}
- request: {id: 7, method: tools/call, params: {name: confirm, arguments: {}}}  # 7
  server:
  - notification: {method: notifications/message, params: {level: info, data: asking}}
  - request: {id: 0, method: elicitation/create, params: {message: Sure?, requestedSchema: {type: object}}}
    response: {result: {action: accept, content: {}}}
  response: {result: {content: [{type: text, text: confirmed}]}}
- request: {id: 8, method: tools/call, params: {name: crash, arguments: {}}}  # 8
  exit: {status: 1, when: before}
- request: {id: 9, method: tools/call, params: {name: last, arguments: {}}}  # 9
  response: {result: {content: [{type: text, text: bye}]}}
  exit: 3
"""

# What makes a recorded server's GET stream worth offering: an unsolicited message (after ping), and
# server items the recorded server sent on its GET stream.
ON_GET = """
- request: {id: 10, method: ping}                  # 10
  response: {result: {}}
- server:                                          # 11
  - notification: {method: notifications/tools/list_changed}
- request: {id: 11, method: tools/call, params: {name: side, arguments: {}}}  # 12
  server:
  - notification: {method: notifications/message, params: {level: info, data: on the side}}
    stream: get
  response: {result: {content: [{type: text, text: sided}]}}
- request: {id: 12, method: tools/call, params: {name: ask, arguments: {}}}  # 13
  server:
  - request: {id: 0, method: elicitation/create, params: {message: Sure?, requestedSchema: {type: object}}}
    response: {result: {action: accept, content: {}}}
    stream: get
  response: {result: {content: [{type: text, text: asked}]}}
"""

# A 2026-07-28 server: no session, the protocol version in every request's _meta.
STATELESS = """
- request:                                        # 0
    id: 1
    method: tools/call
    params: {name: slow, arguments: {}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  delay: 2.5
  response: {result: {content: [{type: text, text: at last}], resultType: complete}}
- request:                                        # 1
    id: 2
    method: subscriptions/listen
    params: {notifications: {toolsListChanged: true}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  server:
  - notification:
      method: notifications/tools/list_changed
      params: {_meta: {io.modelcontextprotocol/subscriptionId: 2}}
- request:                                        # 2
    id: 3
    method: tools/call
    params: {name: side, arguments: {}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: on the side}}
    stream: get
  response: {result: {content: [], resultType: complete}}
"""


def cassette(interactions: str, **http: Any) -> str:
    """Cassette text of these interactions, with `meta.http` when given."""
    meta = f"meta: {json.dumps({'http': http})}\n" if http else ""
    return f"version: 1\n{meta}interactions:\n{interactions}"


SSE = {"framing": "sse"}
RECORDED_ERRORS = {
    "missing": {"status": 401, "error": {"code": -32000, "message": "Bad Request: No valid session ID"}},
    "unknown": {"status": 400, "error": {"code": -32001, "message": "No such session"}},
}
RECORDED_MISSING = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32000, "message": "Bad Request: No valid session ID"},
}
RECORDED_UNKNOWN = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "No such session"}}

# --- requests ------------------------------------------------------------------------------------

POST = {"host": "127.0.0.1:8000", "accept": "application/json, text/event-stream", "content-type": "application/json"}
SESSION = {**POST, "mcp-session-id": "session-1"}
GET = {"host": "127.0.0.1:8000", "accept": "text/event-stream", "mcp-session-id": "session-1"}
MODERN = {**POST, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{"elicitation":{}},"clientInfo":{"name":"host","version":"1"}}}'
)
INITIALIZE_2025_03_26 = INITIALIZE.replace(b"2025-11-25", b"2025-03-26")
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
TOOLS_LIST = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
COUNT = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{}}}'
SLOW = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{}}}'
SLOW_LOG = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow_log","arguments":{}}}'
BAD = b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"bad","arguments":{}}}'
CONFIRM = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"confirm","arguments":{}}}'
CRASH = b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"crash","arguments":{}}}'
LAST = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"last","arguments":{}}}'
PING = b'{"jsonrpc":"2.0","id":10,"method":"ping"}'
SIDE = b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"side","arguments":{}}}'
ASK = b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"ask","arguments":{}}}'
ACCEPT = b'{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{}}}'
CANCEL_SLOW = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}'
MODERN_SLOW = (
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
)
MODERN_SIDE = (
    b'{"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"side","arguments":{},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
)
MODERN_LISTEN = (
    b'{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
)
MODERN_INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'

# --- what comes out ------------------------------------------------------------------------------

SID = {"mcp-session-id": "session-1"}
INIT_REPLY = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "notes", "version": "1"},
    },
}
LIST_REPLY = {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "read", "inputSchema": {"type": "object"}}]}}
COUNTING = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "counting"}}
COUNT_REPLY = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "counted"}]}}
SLOW_REPLY = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "at last"}]}}
STILL_HERE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "still here"}}
SLOW_LOG_REPLY = {"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "logged"}]}}
BAD_REPLY = {"jsonrpc": "2.0", "id": 6, "error": {"code": -32602, "message": "unknown tool: bad"}}
ASKING = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "asking"}}
ELICIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "elicitation/create",
    "params": {"message": "Sure?", "requestedSchema": {"type": "object"}},
}
CONFIRM_REPLY = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "confirmed"}]}}
LAST_REPLY = {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "bye"}]}}
PING_REPLY = {"jsonrpc": "2.0", "id": 10, "result": {}}
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
ON_THE_SIDE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "on the side"}}
SIDE_REPLY = {"jsonrpc": "2.0", "id": 11, "result": {"content": [{"type": "text", "text": "sided"}]}}
ASK_REPLY = {"jsonrpc": "2.0", "id": 12, "result": {"content": [{"type": "text", "text": "asked"}]}}
MISSING = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request: Missing session ID"}}
UNKNOWN = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
MODERN_SLOW_REPLY = {
    "jsonrpc": "2.0",
    "id": 7,
    "result": {"content": [{"type": "text", "text": "at last"}], "resultType": "complete"},
}


def listen_event(listen_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}},
    }


# --- helpers -------------------------------------------------------------------------------------


class Step(NamedTuple):
    """One thing that happens to the endpoint: a request, a connection closing, a timer, the shutdown."""

    kind: str
    conn: str = ""
    headers: dict[str, str] | None = None
    body: bytes = b""


def post(conn: str, body: bytes, headers: dict[str, str] = SESSION) -> Step:
    return Step("POST", conn, headers, body)


def get(conn: str, headers: dict[str, str] = GET) -> Step:
    return Step("GET", conn, headers)


def delete(conn: str, headers: dict[str, str] = GET) -> Step:
    return Step("DELETE", conn, {k: v for k, v in headers.items() if k != "accept"})


def closed(conn: str) -> Step:
    return Step("closed", conn)


WAKE = Step("wake")
SHUTDOWN = Step("shutdown")


def sse_answer(
    conn: str, messages: list[Any], headers: dict[str, str] = SID, end: str = "end"
) -> list[tuple[Any, ...]]:
    """A whole SSE answer carrying the messages in one write (`end`: "end, close" on a GET's connection)."""
    return [("open", conn, headers), ("event", conn, messages), (end, conn)]


def opening(
    headers: dict[str, str] = SID,
    asked: bytes = INITIALIZE,
    said: list[Any] | None = None,
    sse: list[Any] | None = None,
    reply: dict[str, Any] = INIT_REPLY,
) -> list[Any]:
    """The opening of a handshake session (`headers`: its id): initialize (with what the endpoint says first, if
    anything; `sse`: the events of a server that streams every answer; `reply`: its answer, as JSON) and
    notifications/initialized."""
    answer = [("respond", "c0", 200, reply, headers)] if sse is None else sse_answer("c0", sse, headers)
    return [
        (post("c0", asked, POST), [*(said or []), *answer]),
        (post("c0", INITIALIZED, {**SESSION, **headers}), [("respond", "c0", 202, "", headers)]),
    ]


OPENING = opening()
OPENING_SSE = opening(sse=[INIT_REPLY])


def endpoint_for(text: str, session_idle: float | None = None, **bounds: Any) -> Endpoint:
    """An endpoint serving the cassette text, with session ids session-1, session-2, ... and aliases mockmcp-test-N;
    sessions never idle out and streams get no keep-alive unless `session_idle` and `keepalive` say after how long
    (their timers would be in every table); `bounds`: the other bounds (`streams`, `unread`)."""
    count = itertools.count(1)
    unread = bounds.pop("unread", lambda conn: 0)
    hooks = Hooks(unread, new_id=lambda: f"session-{next(count)}", alias_prefix="test")
    limits = Bounds(**{"keepalive": None, "session_idle": session_idle, **bounds})
    return Endpoint(SessionParts(loads(text), Matcher.build()), LOOPBACK, limits, hooks=hooks)


def events(data: bytes) -> list[Any]:
    """The SSE events in data, each its `data:` decoded as JSON (a raw line as text), or (id, message) when
    it has an id; a priming event's message is None."""
    assert data.endswith(b"\n\n"), data
    decoded: list[Any] = []
    for block in data.decode().split("\n\n")[:-1]:
        fields: dict[str, list[str]] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            fields.setdefault(name, []).append(value)
        text = "\n".join(fields["data"])
        message = None if text == "" else json.loads(text) if text.startswith("{") or text.startswith("[") else text
        if message is not None:
            assert fields.get("event") == ["message"], block
        decoded.append((fields["id"][0], message) if "id" in fields else message)
    return decoded


def shown(outs: list[Out]) -> list[tuple[Any, ...]]:
    """The outputs as readable tuples: bodies decoded, SSE events parsed, headers as dicts."""
    readable: list[tuple[Any, ...]] = []
    for out in outs:
        if isinstance(out, Respond):
            answer = out.answer
            json_body = answer.body and answer.content_type == "application/json"
            body = json.loads(answer.body) if json_body else answer.body.decode()
            readable.append(("respond", out.conn, answer.status, body, dict(answer.headers)))
        elif isinstance(out, Open):
            assert out.headers[:2] == (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
            readable.append(("open", out.conn, dict(out.headers[2:])))
        elif isinstance(out, Event) and out.data == KEEPALIVE_COMMENT:
            readable.append(("keep-alive", out.conn))
        elif isinstance(out, Event):
            readable.append(("event", out.conn, events(out.data)))
        elif isinstance(out, End):  # "end, close": a GET's stream, whose connection is closed once it ended
            readable.append(("end, close" if out.close else "end", out.conn))
        elif isinstance(out, Drop):
            readable.append(("drop", out.conn))
        elif isinstance(out, Later):
            readable.append(("later", out.after))
        else:
            assert isinstance(out, Note)
            readable.append(("note", out.text))
    return readable


def perform(endpoint: Endpoint, step: Step, timers: list[Any]) -> list[Out]:
    """Do the step; the timers it sets join the queue that `WAKE` fires from."""
    if step.kind == "wake":
        outs = endpoint.wake(timers.pop(0))
    elif step.kind == "closed":
        outs = endpoint.closed(step.conn)
    elif step.kind == "shutdown":
        outs = endpoint.shutdown()
    else:
        outs = endpoint.request(step.conn, step.kind.encode(), "/mcp", step.headers or {}, step.body)
    timers += [out.token for out in outs if isinstance(out, Later)]
    return outs


def converse(text: str, steps: list[tuple[Step, Any]], **bounds: Any) -> Endpoint:
    """Play the steps on an endpoint for the cassette text (with these bounds: see `endpoint_for`); each step's
    outputs must be the ones it gives."""
    endpoint = endpoint_for(text, **bounds)
    timers: list[Any] = []
    seen = [shown(perform(endpoint, step, timers)) for step, _ in steps]
    assert seen == [expected for _, expected in steps]
    return endpoint


# --- 1. handshake sessions -----------------------------------------------------------------------

SESSIONS = [
    pytest.param(
        cassette(BASE),
        [
            (post("c1", INITIALIZE, POST), [("respond", "c1", 200, INIT_REPLY, SID)]),
            (post("c2", INITIALIZE, POST), [("respond", "c2", 200, INIT_REPLY, {"mcp-session-id": "session-2"})]),
            (
                post("c3", TOOLS_LIST, {**POST, "mcp-session-id": "session-2"}),
                [("respond", "c3", 200, LIST_REPLY, {"mcp-session-id": "session-2"})],
            ),
        ],
        id="each initialize starts a session of its own",
    ),
    pytest.param(
        cassette(BASE),
        [*OPENING, (post("c1", TOOLS_LIST, POST), [("respond", "c1", 400, MISSING, {})])],
        id="a request without the session header",
    ),
    pytest.param(
        cassette(BASE),
        [*OPENING, (post("c1", TOOLS_LIST, {**POST, "mcp-session-id": "nope"}), [("respond", "c1", 404, UNKNOWN, {})])],
        id="an unknown session",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (delete("c1"), [("respond", "c1", 200, "", {})]),
            (post("c2", TOOLS_LIST), [("respond", "c2", 404, UNKNOWN, {})]),
            (delete("c3"), [("respond", "c3", 404, UNKNOWN, {})]),
        ],
        id="a session ended by DELETE",
    ),
    pytest.param(
        cassette(BASE),
        [*OPENING, (delete("c1", {**GET, "mcp-session-id": "nope"}), [("respond", "c1", 404, UNKNOWN, {})])],
        id="DELETE of an unknown session",
    ),
    pytest.param(
        cassette(BASE),
        [*OPENING, (delete("c1", POST), [("respond", "c1", 400, MISSING, {})])],
        id="DELETE without the session header",
    ),
    pytest.param(
        cassette(BASE, session_errors=RECORDED_ERRORS),
        [
            *OPENING,
            (post("c1", TOOLS_LIST, POST), [("respond", "c1", 401, RECORDED_MISSING, {})]),
            (
                post("c2", TOOLS_LIST, {**POST, "mcp-session-id": "nope"}),
                [("respond", "c2", 400, RECORDED_UNKNOWN, {})],
            ),
        ],
        id="the recorded session errors",
    ),
    pytest.param(
        cassette(BASE, session_errors={"missing": RECORDED_ERRORS["missing"]}),
        [(post("c1", MODERN_SLOW, {**MODERN, "mcp-name": "slow"}), [("respond", "c1", 401, RECORDED_MISSING, {})])],
        id="a handshake-era server recorded turning a sessionless request away",
    ),
]


@pytest.mark.parametrize(("text", "steps"), SESSIONS)
def test_a_handshake_session_is_known_by_its_id_until_it_ends(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 2. what is answered 202 ---------------------------------------------------------------------

ACCEPTED = [
    pytest.param(
        cassette(BASE),
        [
            (post("c1", INITIALIZE, POST), [("respond", "c1", 200, INIT_REPLY, SID)]),
            (post("c2", INITIALIZED), [("respond", "c2", 202, "", SID)]),
        ],
        id="a notification",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [ASKING, ELICIT])]),
            (post("c2", ACCEPT), [("event", "c1", [CONFIRM_REPLY]), ("end", "c1"), ("respond", "c2", 202, "", SID)]),
        ],
        id="the host's answer to a server request",
    ),
    pytest.param(
        cassette(STATELESS),
        [(post("c1", MODERN_INITIALIZED, MODERN), [("respond", "c1", 202, "", {})])],
        id="a 2026-07-28 notification, without a session",
    ),
]


@pytest.mark.parametrize(("text", "steps"), ACCEPTED)
def test_a_notification_or_a_response_gets_202(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 3. framing ----------------------------------------------------------------------------------

FRAMING = [
    pytest.param(
        cassette(BASE),
        [*OPENING, (post("c1", TOOLS_LIST), [("respond", "c1", 200, LIST_REPLY, SID)])],
        id="no meta.http: a lone reply as JSON",
    ),
    pytest.param(
        cassette(BASE, framing="json"),
        [*OPENING, (post("c1", BAD), [("respond", "c1", 200, BAD_REPLY, SID)])],
        id="an error reply with 200 when no error_status is recorded",
    ),
    pytest.param(
        cassette(BASE, error_status=[{"code": -32602, "status": 400}]),
        [*OPENING, (post("c1", BAD), [("respond", "c1", 400, BAD_REPLY, SID)])],
        id="an error reply with its recorded error_status",
    ),
    pytest.param(
        cassette(BASE, framing="json"),
        [*OPENING, (post("c1", COUNT), sse_answer("c1", [COUNTING, COUNT_REPLY]))],
        id="a reply after a log as an SSE stream",
    ),
    pytest.param(
        cassette(BASE, **SSE),
        [*OPENING_SSE, (post("c1", TOOLS_LIST), sse_answer("c1", [LIST_REPLY]))],
        id="framing sse: a lone reply as a stream too",
    ),
    pytest.param(
        cassette(BASE, framing="sse", event_ids=True),
        [
            (post("c0", INITIALIZE, POST), sse_answer("c0", [("1", INIT_REPLY)])),
            (post("c0", INITIALIZED), [("respond", "c0", 202, "", SID)]),
            (post("c1", TOOLS_LIST), sse_answer("c1", [("2", LIST_REPLY)])),
            (post("c2", COUNT), sse_answer("c2", [("3", COUNTING), ("4", COUNT_REPLY)])),
        ],
        id="event ids numbered through the session",
    ),
    pytest.param(
        cassette(BASE, framing="sse", event_ids=True, priming=True),
        [
            (post("c0", INITIALIZE, POST), sse_answer("c0", [("1", None), ("2", INIT_REPLY)])),
            (post("c0", INITIALIZED), [("respond", "c0", 202, "", SID)]),
            (post("c1", TOOLS_LIST), sse_answer("c1", [("3", None), ("4", LIST_REPLY)])),
            (post("c2", COUNT), sse_answer("c2", [("5", None), ("6", COUNTING), ("7", COUNT_REPLY)])),
        ],
        id="a priming event first on every stream",
    ),
    pytest.param(
        cassette(BASE, event_ids=True, priming=True),
        [
            *OPENING,
            (post("c1", TOOLS_LIST), [("respond", "c1", 200, LIST_REPLY, SID)]),
            (post("c2", COUNT), sse_answer("c2", [("1", None), ("2", COUNTING), ("3", COUNT_REPLY)])),
        ],
        id="framing json with priming: a lone reply as JSON, a stream primed",
    ),
]


@pytest.mark.parametrize(("text", "steps"), FRAMING)
def test_a_reply_is_framed_as_the_recorded_server_framed_it(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# A reply recorded raw (the fault knob), and a method the cassette never recorded: their error codes
# choose the status as a recorded reply's does.
RAW_ERROR = """
- request: {id: 13, method: tools/call, params: {name: raw, arguments: {}}}
  raw_response: '{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"raw"}}'
- request: {id: 14, method: tools/call, params: {name: raw_ok, arguments: {}}}
  raw_response: '{"jsonrpc":"2.0","id":{{id}},"result":{"error":{"code":-32602}}}'
"""
RAW = b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"raw","arguments":{}}}'
RAW_OK = b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"raw_ok","arguments":{}}}'
UNRECORDED = b'{"jsonrpc":"2.0","id":15,"method":"prompts/list"}'
ERROR_STATUS = [{"code": -32602, "status": 400}, {"code": -32601, "status": 404}]

NEVER_RECORDED = (
    "mockmcp: the cassette never recorded the method 'prompts/list'\n"
    "  incoming request (id 15): prompts/list null\n"
    "  how to fix:\n"
    "    1. if the host now asks something new, record it: "
    "mockmcp record --record-mode new_episodes -o CASSETTE -- SERVER...\n"
    "    2. or add an interaction for prompts/list to CASSETTE by hand"
)
PROMPTS_LIST_NOT_FOUND = {
    "code": -32601,
    "message": "Method not found: prompts/list",
    "data": {"method": "prompts/list"},
}
ERROR_STATUS_ROWS = [
    pytest.param(
        cassette(BASE + RAW_ERROR, error_status=ERROR_STATUS),
        [
            *OPENING,
            (
                post("c1", RAW),
                [
                    (
                        "respond",
                        "c1",
                        400,
                        {"jsonrpc": "2.0", "id": 13, "error": {"code": -32602, "message": "raw"}},
                        SID,
                    )
                ],
            ),
        ],
        id="a raw error reply",
    ),
    pytest.param(
        cassette(BASE + RAW_ERROR, error_status=ERROR_STATUS),
        [
            *OPENING,
            (
                post("c1", RAW_OK),
                [("respond", "c1", 200, {"jsonrpc": "2.0", "id": 14, "result": {"error": {"code": -32602}}}, SID)],
            ),
        ],
        id="a raw result that holds an error key",
    ),
    pytest.param(
        cassette(BASE, error_status=ERROR_STATUS),
        [
            *OPENING,
            (
                post("c1", UNRECORDED),
                [
                    ("note", NEVER_RECORDED),
                    ("respond", "c1", 404, {"jsonrpc": "2.0", "id": 15, "error": PROMPTS_LIST_NOT_FOUND}, SID),
                ],
            ),
        ],
        id="a method never recorded",
    ),
]


@pytest.mark.parametrize(("text", "steps"), ERROR_STATUS_ROWS)
def test_an_error_reply_gets_the_recorded_status_of_its_code(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 4. delays -----------------------------------------------------------------------------------

DELAYS = [
    pytest.param(
        cassette(BASE),
        [*OPENING, (post("c1", SLOW), [("later", 2.5)]), (WAKE, [("respond", "c1", 200, SLOW_REPLY, SID)])],
        id="a lone reply: JSON once it comes",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (post("c1", SLOW_LOG), [("later", 2.5)]),
            (
                WAKE,
                [("open", "c1", SID), ("event", "c1", [STILL_HERE]), ("event", "c1", [SLOW_LOG_REPLY]), ("end", "c1")],
            ),
        ],
        id="a log first: a stream once it comes",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (post("c1", SLOW), [("later", 2.5)]),
            (post("c2", TOOLS_LIST), [("respond", "c2", 200, LIST_REPLY, SID)]),
            (WAKE, [("respond", "c1", 200, SLOW_REPLY, SID)]),
        ],
        id="other requests answered meanwhile",
    ),
    pytest.param(
        cassette(BASE, **SSE),
        [
            *OPENING_SSE,
            (post("c1", SLOW), [("later", 2.5), ("open", "c1", SID)]),
            (WAKE, [("event", "c1", [SLOW_REPLY]), ("end", "c1")]),
        ],
        id="framing sse: the stream opens at once",
    ),
]


@pytest.mark.parametrize(("text", "steps"), DELAYS)
def test_a_delayed_reply_begins_only_once_its_framing_is_known(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 5. the GET stream ---------------------------------------------------------------------------

GETTABLE = BASE + ON_GET
NO_GET_STREAM = "Method Not Allowed: the recorded server offered no GET stream"
NO_UNSOLICITED = "Method Not Allowed: this cassette has no unsolicited server messages"
ALLOW = {"allow": "POST, DELETE"}

GETS = [
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (
                get("c9", {**GET, "accept": "application/json"}),
                [("respond", "c9", 406, "Not Acceptable: accept text/event-stream", {})],
            ),
        ],
        id="406 without text/event-stream in Accept",
    ),
    pytest.param(
        cassette(GETTABLE, get_stream=False),
        [
            *OPENING,
            (
                get("c9"),
                [
                    (
                        "respond",
                        "c9",
                        405,
                        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": NO_GET_STREAM}},
                        ALLOW,
                    )
                ],
            ),
        ],
        id="405 when the recorded server answered GET so",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (
                get("c9"),
                [
                    (
                        "respond",
                        "c9",
                        405,
                        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": NO_UNSOLICITED}},
                        ALLOW,
                    )
                ],
            ),
        ],
        id="405 when there is nothing to send on it",
    ),
    pytest.param(
        cassette(BASE, get_stream=True),
        [*OPENING, (get("c9"), [("open", "c9", SID)])],
        id="a recorded GET stream is offered with nothing to send",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (get("c9", {k: v for k, v in GET.items() if k != "mcp-session-id"}), [("respond", "c9", 400, MISSING, {})]),
        ],
        id="400 without a session",
    ),
    pytest.param(
        cassette(GETTABLE),
        [*OPENING, (get("c9", {**GET, "mcp-session-id": "nope"}), [("respond", "c9", 404, UNKNOWN, {})])],
        id="404 for an unknown session",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (get("c8"), [("open", "c8", SID)]),
            (get("c9"), [("respond", "c9", 409, "Conflict: this session's GET stream is already open", {})]),
        ],
        id="409 for a second one while the first is open",
    ),
    pytest.param(
        cassette(GETTABLE),
        [*OPENING, (get("c8"), [("open", "c8", SID)]), (closed("c8"), []), (get("c9"), [("open", "c9", SID)])],
        id="another once the first one's connection closed",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (post("c1", PING), [("later", TURN), ("respond", "c1", 200, PING_REPLY, SID)]),
            (WAKE, []),  # the host's turn: the message for another stream waits for the stream
            (get("c9"), [("open", "c9", SID), ("event", "c9", [LIST_CHANGED])]),
        ],
        id="an unsolicited message held back until it opens",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", PING), [("later", TURN), ("respond", "c1", 200, PING_REPLY, SID)]),
            (WAKE, [("event", "c9", [LIST_CHANGED])]),  # a message for another stream, after the host's turn
        ],
        id="an unsolicited message on it as it comes",
    ),
]


@pytest.mark.parametrize(("text", "steps"), GETS)
def test_a_get_stream_is_offered_as_the_recorded_server_offered_it(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 6. `stream: get` ----------------------------------------------------------------------------

SIDE_NOTE = (
    "mockmcp: notifications/message was recorded on the GET stream; the host has no GET stream open, "
    "so it went on the stream of its request 11 (and so do the request's next ones)"
)
ASK_NOTE = (
    "mockmcp: elicitation/create was recorded on the GET stream; the host has no GET stream open, "
    "so it went on the stream of its request 12 (and so do the request's next ones)"
)

_SIDE_LOG = (
    "  - notification: {method: notifications/message, params: {level: info, data: on the side}}\n    stream: get\n"
)
ON_THE_SIDE_AGAIN = {**ON_THE_SIDE, "params": {"level": "info", "data": "again"}}

ON_THE_GET_STREAM = [
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", SIDE), [("event", "c9", [ON_THE_SIDE]), ("later", TURN)]),
            (WAKE, [("respond", "c1", 200, SIDE_REPLY, SID)]),  # the reply, on another stream, after a turn
        ],
        id="a log on the open GET stream, the reply alone as JSON",
    ),
    pytest.param(
        cassette(GETTABLE),
        [*OPENING, (post("c1", SIDE), [("note", SIDE_NOTE), *sse_answer("c1", [ON_THE_SIDE, SIDE_REPLY])])],
        id="a log on the request's stream without a GET stream",
    ),
    pytest.param(
        cassette(GETTABLE.replace(_SIDE_LOG, _SIDE_LOG + _SIDE_LOG.replace("on the side", "again"))),
        [
            *OPENING,
            (
                post("c1", SIDE),
                [("note", SIDE_NOTE), *sse_answer("c1", [ON_THE_SIDE, ON_THE_SIDE_AGAIN, SIDE_REPLY])],
            ),
        ],
        id="two logs on the request's stream without a GET stream: one note for both",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", ASK), [("event", "c9", [ELICIT])]),
            (post("c2", ACCEPT), [("respond", "c1", 200, ASK_REPLY, SID), ("respond", "c2", 202, "", SID)]),
        ],
        id="a question on the GET stream, the reply to the request as JSON after its answer",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (post("c1", ASK), [("note", ASK_NOTE), ("open", "c1", SID), ("event", "c1", [ELICIT])]),
            (post("c2", ACCEPT), [("event", "c1", [ASK_REPLY]), ("end", "c1"), ("respond", "c2", 202, "", SID)]),
        ],
        id="a question on the request's stream without a GET stream",
    ),
]


@pytest.mark.parametrize(("text", "steps"), ON_THE_GET_STREAM)
def test_a_message_recorded_on_the_get_stream_goes_there_when_it_is_open(
    text: str, steps: list[tuple[Step, Any]]
) -> None:
    converse(text, steps)


# --- 7. 2026-07-28: one stateless session, the clients' own ids ----------------------------------

SLOW_HEADERS = {**MODERN, "mcp-name": "slow"}
LISTEN_HEADERS = {**MODERN, "mcp-method": "subscriptions/listen"}
CANCELLED_7 = "mockmcp: the host cancelled request 7 (interactions[0]); it will not be answered"
MODERN_SIDE_NOTE = (
    "mockmcp: notifications/message was recorded on the GET stream; the host has no GET stream open, "
    "so it went on the stream of its request 's-1' (and so do the request's next ones)"
)

STATELESS_ROWS = [
    pytest.param(
        cassette(STATELESS),
        [
            (post("c1", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (WAKE, [("respond", "c1", 200, MODERN_SLOW_REPLY, {})]),
        ],
        id="no session needed",
    ),
    pytest.param(
        cassette(STATELESS),
        [
            (post("c1", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (post("c2", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (WAKE, [("respond", "c1", 200, MODERN_SLOW_REPLY, {})]),
            (WAKE, [("respond", "c2", 200, MODERN_SLOW_REPLY, {})]),
        ],
        id="two clients with the same id at once each get it back",
    ),
    pytest.param(
        cassette(STATELESS),
        [
            (post("c1", MODERN_LISTEN, LISTEN_HEADERS), [("open", "c1", {}), ("event", "c1", [listen_event(1)])]),
            (post("c2", MODERN_LISTEN, LISTEN_HEADERS), [("open", "c2", {}), ("event", "c2", [listen_event(1)])]),
            (
                post("c3", MODERN_LISTEN.replace(b'"id":1', b'"id":"l-3"'), LISTEN_HEADERS),
                [("open", "c3", {}), ("event", "c3", [listen_event("l-3")])],
            ),
        ],
        id="every message of a stream carries the client's id",
    ),
    pytest.param(
        cassette(STATELESS),
        [
            (
                post("c1", MODERN_SIDE, {**MODERN, "mcp-name": "side"}),
                [
                    ("note", MODERN_SIDE_NOTE),
                    *sse_answer(
                        "c1",
                        [
                            ON_THE_SIDE,
                            {"jsonrpc": "2.0", "id": "s-1", "result": {"content": [], "resultType": "complete"}},
                        ],
                        {},
                    ),
                ],
            ),
        ],
        id="a note names the client's id",
    ),
    pytest.param(
        cassette(STATELESS),
        [
            (post("c1", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (closed("c1"), [("note", CANCELLED_7)]),
            (WAKE, []),
        ],
        id="closing a request's connection cancels it",
    ),
    pytest.param(
        cassette(STATELESS),
        [
            (post("c1", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (post("c2", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (closed("c1"), [("note", CANCELLED_7)]),
            (WAKE, []),
            (WAKE, [("respond", "c2", 200, MODERN_SLOW_REPLY, {})]),
        ],
        id="closing one of two requests with the same id cancels that one",
    ),
    pytest.param(
        cassette(STATELESS),
        [
            (post("c1", MODERN_SLOW, SLOW_HEADERS), [("later", 2.5)]),
            (WAKE, [("respond", "c1", 200, MODERN_SLOW_REPLY, {})]),
            (closed("c1"), []),
        ],
        id="closing an answered request's connection cancels nothing",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (post("c1", SLOW), [("later", 2.5)]),
            (closed("c1"), []),
            (
                post("c2", CANCEL_SLOW),
                [
                    ("note", "mockmcp: the host cancelled request 4 (interactions[4]); it will not be answered"),
                    ("respond", "c2", 202, "", SID),
                ],
            ),
        ],
        id="handshake era: closing the connection cancels nothing",
    ),
]


@pytest.mark.parametrize(("text", "steps"), STATELESS_ROWS)
def test_a_stateless_client_sees_only_its_own_ids(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# A raw reply says where the id goes; a recorded text that looks like the endpoint's key for the
# request (mockmcp-test-1) is the recording's, and stays.
STATELESS_RAW = """
- request:
    id: 1
    method: tools/call
    params: {name: raw, arguments: {}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  raw_response: '{ "id" : {{id}} ,"result":{"resultType":"complete","said":"mockmcp-test-1"} }'
- request:
    id: 2
    method: tools/call
    params: {name: echo, arguments: {}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  response: {result: {content: [], resultType: complete, said: mockmcp-test-2, "mockmcp-test-2": [mockmcp-test-2]}}
"""
MODERN_RAW = MODERN_SLOW.replace(b'"id":7', '"id":"a\u00e9"'.encode()).replace(b'"slow"', b'"raw"')
MODERN_ECHO = MODERN_SLOW.replace(b'"slow"', b'"echo"')


def test_a_stateless_reply_carries_the_client_s_id_where_the_recording_put_the_id() -> None:
    endpoint = endpoint_for(cassette(STATELESS_RAW))
    raw = endpoint.request("c1", b"POST", "/mcp", {**MODERN, "mcp-name": "raw"}, MODERN_RAW)
    assert [out for out in raw if isinstance(out, Respond)] == [
        Respond(
            "c1",
            Answer(200, '{ "id" : "a\u00e9" ,"result":{"resultType":"complete","said":"mockmcp-test-1"} }\n'.encode()),
        )
    ]
    echo = shown(endpoint.request("c2", b"POST", "/mcp", {**MODERN, "mcp-name": "echo"}, MODERN_ECHO))
    said = {"content": [], "resultType": "complete", "said": "mockmcp-test-2", "mockmcp-test-2": ["mockmcp-test-2"]}
    assert echo == [("respond", "c2", 200, {"jsonrpc": "2.0", "id": 7, "result": said}, {})]


# --- 8. notifications/cancelled ------------------------------------------------------------------

CANCELLED_4 = "mockmcp: the host cancelled request 4 (interactions[4]); it will not be answered"

CANCELS = [
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (post("c1", SLOW), [("later", 2.5)]),
            (
                post("c2", CANCEL_SLOW),
                [("note", CANCELLED_4), ("open", "c1", SID), ("end", "c1"), ("respond", "c2", 202, "", SID)],
            ),
            (WAKE, []),
        ],
        id="an answer not begun: an empty stream",
    ),
    pytest.param(
        cassette(BASE, **SSE),
        [
            *OPENING_SSE,
            (post("c1", SLOW), [("later", 2.5), ("open", "c1", SID)]),
            (post("c2", CANCEL_SLOW), [("note", CANCELLED_4), ("end", "c1"), ("respond", "c2", 202, "", SID)]),
            (WAKE, []),
        ],
        id="an open stream ends",
    ),
    *(
        pytest.param(
            cassette(BASE),
            [
                *OPENING,
                (post("c1", SLOW), [("later", 2.5)]),
                # a requestId no request can have: ignored, as the SDK does, and the call goes on
                (post("c2", CANCEL_SLOW.replace(b":4}", b":" + request + b"}")), [("respond", "c2", 202, "", SID)]),
                (
                    post("c3", CANCEL_SLOW),
                    [("note", CANCELLED_4), ("open", "c1", SID), ("end", "c1"), ("respond", "c3", 202, "", SID)],
                ),
            ],
            id=f"a requestId {request.decode()}: ignored",
        )
        for request in (b'{"id":4}', b"[4]", b"true", b"4.0", b"null")
    ),
]


@pytest.mark.parametrize(("text", "steps"), CANCELS)
def test_a_cancelled_request_s_stream_ends_without_a_reply(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 9. 2025-03-26 batches -----------------------------------------------------------------------

OLDER = (
    "mockmcp: the host asks for protocol version '2025-03-26', older than the '2025-11-25' the recording's host "
    "asked for (interactions[0]): a server that speaks '2025-03-26' answers in it, and may offer less; the answers "
    "are the recorded ones, of the newer version (initialize's says the version the server would answer in)"
)
# As the SDK server does, the answer is in the older version asked for.
INIT_REPLY_2025_03_26 = {**INIT_REPLY, "result": {**INIT_REPLY["result"], "protocolVersion": "2025-03-26"}}
OPENING_2025_03_26 = opening(asked=INITIALIZE_2025_03_26, said=[("note", OLDER)], reply=INIT_REPLY_2025_03_26)
CANCEL_UNKNOWN = (
    b'[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":98}},'
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]'
)

BATCHES = [
    pytest.param(
        cassette(BASE),
        [
            *OPENING_2025_03_26,
            (post("c1", b"[" + TOOLS_LIST + b"," + BAD + b"]"), [("respond", "c1", 200, [LIST_REPLY, BAD_REPLY], SID)]),
        ],
        id="requests: one JSON array",
    ),
    pytest.param(
        cassette(BASE),
        [*OPENING_2025_03_26, (post("c1", CANCEL_UNKNOWN), [("respond", "c1", 202, "", SID)])],
        id="notifications only: 202",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING,
            (
                post("c1", b"[" + TOOLS_LIST + b"," + BAD + b"]"),
                [
                    (
                        "respond",
                        "c1",
                        400,
                        {
                            "jsonrpc": "2.0",
                            "id": None,
                            "error": {
                                "code": -32600,
                                "message": (
                                    "JSON-RPC batches exist only in revision 2025-03-26; this session speaks 2025-11-25"
                                ),
                            },
                        },
                        {},
                    )
                ],
            ),
        ],
        id="another revision: 400",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING_2025_03_26,
            (post("c1", b"[" + SLOW + b"," + TOOLS_LIST + b"]"), [("later", 2.5)]),
            (WAKE, [("respond", "c1", 200, [LIST_REPLY, SLOW_REPLY], SID)]),
        ],
        id="a delayed member: the JSON array once it comes",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING_2025_03_26,
            (post("c1", b"[" + SLOW + b"," + SLOW_LOG + b"]"), [("later", 2.5), ("later", 2.5)]),
            (post("c2", CANCEL_SLOW), [("note", CANCELLED_4), ("respond", "c2", 202, "", SID)]),
            (WAKE, []),
            (
                WAKE,
                [
                    ("open", "c1", SID),
                    ("event", "c1", [STILL_HERE]),
                    ("event", "c1", [[SLOW_LOG_REPLY]]),
                    ("end", "c1"),
                ],
            ),
        ],
        id="a member cancelled: the stream waits for the others' answers",
    ),
    pytest.param(
        cassette(BASE),
        [
            *OPENING_2025_03_26,
            (post("c1", b"[" + SLOW + b"]"), [("later", 2.5)]),
            (
                post("c2", CANCEL_SLOW),
                [("note", CANCELLED_4), ("open", "c1", SID), ("end", "c1"), ("respond", "c2", 202, "", SID)],
            ),
            (WAKE, []),
        ],
        id="every member cancelled: an empty stream",
    ),
]


@pytest.mark.parametrize(("text", "steps"), BATCHES)
def test_a_batch_gets_one_array_of_answers_in_2025_03_26_only(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# After BASE: requests whose recorded answers broke off (`drop: cut`), after a message, before anything, after
# a delay (sections 10 and 11b).
CUT_OFF = """
- request: {id: 20, method: tools/call, params: {name: halfway, arguments: {}}}  # 10
  server:
  - notification: {method: notifications/message, params: {level: info, data: halfway}}
  drop: cut
- request: {id: 21, method: tools/call, params: {name: at_once, arguments: {}}}  # 11
  drop: cut
- request: {id: 22, method: tools/call, params: {name: later, arguments: {}}}  # 12
  delay: 2.5
  drop: cut
"""
HALFWAY = b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"halfway","arguments":{}}}'
AT_ONCE = b'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"at_once","arguments":{}}}'
LATER = b'{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"later","arguments":{}}}'
HALFWAY_LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "halfway"}}
STATELESS_CUT = """
- request:
    id: 1
    method: tools/call
    params: {name: halfway, arguments: {}, _meta: {io.modelcontextprotocol/protocolVersion: '2026-07-28'}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: halfway}}
  drop: cut
"""
MODERN_HALFWAY = (
    b'{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"halfway","arguments":{},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
)

# --- 10. resumption ------------------------------------------------------------------------------


def resume(conn: str, last_event_id: str) -> Step:
    return get(conn, {**GET, "last-event-id": last_event_id})


RESUMPTIONS = [
    pytest.param(
        cassette(BASE, event_ids=True, get_stream=True),
        [
            *OPENING,
            (post("c1", COUNT), sse_answer("c1", [("1", COUNTING), ("2", COUNT_REPLY)])),
            (resume("c2", "1"), sse_answer("c2", [("2", COUNT_REPLY)], end="end, close")),
        ],
        id="an ended stream: its events after the id, then its end",
    ),
    pytest.param(
        cassette(BASE, event_ids=True, get_stream=True),
        [
            *OPENING,
            (post("c1", COUNT), sse_answer("c1", [("1", COUNTING), ("2", COUNT_REPLY)])),
            (resume("c2", "99"), [("open", "c2", SID), ("end, close", "c2")]),
        ],
        id="an unknown id: an empty stream",
    ),
    pytest.param(
        cassette(BASE, event_ids=True, get_stream=True),
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [("1", ASKING), ("2", ELICIT)])]),
            (resume("c2", "1"), [("open", "c2", SID), ("event", "c2", [("2", ELICIT)]), ("drop", "c1")]),
            (
                post("c3", ACCEPT),
                [("event", "c2", [("3", CONFIRM_REPLY)]), ("end, close", "c2"), ("respond", "c3", 202, "", SID)],
            ),
        ],
        id="a live stream: its later events, the old connection cut, the rest as it comes",
    ),
    pytest.param(
        cassette(BASE, event_ids=True, get_stream=True),
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [("1", ASKING), ("2", ELICIT)])]),
            (closed("c1"), []),
            (resume("c2", "1"), [("open", "c2", SID), ("event", "c2", [("2", ELICIT)])]),
        ],
        id="a live stream whose connection closed: nothing to cut",
    ),
    pytest.param(
        cassette(BASE, framing="sse", event_ids=True, priming=True, get_stream=True),
        [
            *opening(sse=[("1", None), ("2", INIT_REPLY)]),
            (post("c1", SLOW_LOG), [("later", 2.5), ("open", "c1", SID), ("event", "c1", [("3", None)])]),
            (resume("c2", "3"), [("open", "c2", SID), ("event", "c2", [("4", None)]), ("drop", "c1")]),
            (
                WAKE,
                [("event", "c2", [("5", STILL_HERE)]), ("event", "c2", [("6", SLOW_LOG_REPLY)]), ("end, close", "c2")],
            ),
        ],
        id="a primed stream behind a delay: primed again, the rest once it comes",
    ),
    pytest.param(
        cassette(BASE, event_ids=True),
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [("1", ASKING), ("2", ELICIT)])]),
            (resume("c2", "1"), [("open", "c2", SID), ("event", "c2", [("2", ELICIT)]), ("drop", "c1")]),
        ],
        id="event ids alone, no GET stream recorded",
    ),
    pytest.param(
        cassette(BASE, event_ids=True, get_stream=False),
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [("1", ASKING), ("2", ELICIT)])]),
            (
                resume("c2", "1"),
                [
                    (
                        "respond",
                        "c2",
                        405,
                        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": NO_GET_STREAM}},
                        ALLOW,
                    )
                ],
            ),
        ],
        id="event ids, but the recorded server refused GET: no resuming either",
    ),
    pytest.param(
        cassette(BASE + CUT_OFF, event_ids=True, get_stream=True),
        [
            *OPENING,
            (post("c1", HALFWAY), [("open", "c1", SID), ("event", "c1", [("1", HALFWAY_LOG)]), ("drop", "c1")]),
            (resume("c2", "1"), [("open", "c2", SID), ("drop", "c2")]),
            (resume("c3", "0"), [("open", "c3", SID), ("end, close", "c3")]),  # an id it never sent: an empty stream
        ],
        id="a stream that broke off (`drop: cut`): resumed, it breaks off again",
    ),
]


@pytest.mark.parametrize(("text", "steps"), RESUMPTIONS)
def test_a_client_resuming_with_last_event_id_gets_the_rest_of_its_stream(
    text: str, steps: list[tuple[Step, Any]]
) -> None:
    converse(text, steps)


# --- 11. the exit knob ---------------------------------------------------------------------------

EXITS = [
    pytest.param(
        cassette(BASE, get_stream=True),
        [
            *OPENING,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", SLOW), [("later", 2.5)]),
            (
                post("c2", CRASH),
                [
                    ("note", "mockmcp: interactions[8] ended the session with status 1 (before replying)"),
                    ("drop", "c1"),
                    ("drop", "c2"),
                    ("drop", "c9"),
                ],
            ),
            (post("c3", TOOLS_LIST), [("respond", "c3", 404, UNKNOWN, {})]),
            (WAKE, []),
        ],
        id="before replying",
    ),
    pytest.param(
        cassette(BASE, get_stream=True),
        [
            *OPENING,
            (get("c9"), [("open", "c9", SID)]),
            (
                post("c2", LAST),
                [
                    ("note", "mockmcp: interactions[9] ended the session with status 3 (after replying)"),
                    ("drop", "c9"),
                    ("respond", "c2", 200, LAST_REPLY, SID),
                ],
            ),
            (get("c3"), [("respond", "c3", 404, UNKNOWN, {})]),
        ],
        id="after replying",
    ),
]


@pytest.mark.parametrize(("text", "steps"), EXITS)
def test_the_exit_knob_cuts_every_open_stream_and_ends_the_session(text: str, steps: list[tuple[Step, Any]]) -> None:
    converse(text, steps)


# --- 11b. answers that break off (`drop: cut`) ----------------------------------------------------

CUTS = [
    pytest.param(
        cassette(BASE + CUT_OFF),
        [
            *OPENING,
            (post("c1", HALFWAY), [("open", "c1", SID), ("event", "c1", [HALFWAY_LOG]), ("drop", "c1")]),
            (post("c2", TOOLS_LIST), [("respond", "c2", 200, LIST_REPLY, SID)]),
        ],
        id="what its stream carried goes out, then its connection is cut; the session goes on",
    ),
    pytest.param(
        cassette(BASE + CUT_OFF),
        [
            *OPENING,
            (post("c1", AT_ONCE), [("drop", "c1")]),
            (closed("c1"), []),
            (post("c2", TOOLS_LIST), [("respond", "c2", 200, LIST_REPLY, SID)]),
        ],
        id="a server that answers a lone reply as JSON: cut with nothing",
    ),
    pytest.param(
        cassette(BASE + CUT_OFF, framing="sse"),
        [*OPENING_SSE, (post("c1", AT_ONCE), [("open", "c1", SID), ("drop", "c1")])],
        id="a server that streams every answer: its stream's head, then the cut",
    ),
    pytest.param(
        cassette(BASE + CUT_OFF, get_stream=True),
        [
            *OPENING,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", LATER), [("later", 2.5)]),
            (post("c2", COUNT), sse_answer("c2", [COUNTING, COUNT_REPLY])),
            (WAKE, [("drop", "c1")]),
            (post("c3", PING), [("respond", "c3", 200, {"jsonrpc": "2.0", "id": 10, "result": {}}, SID)]),
        ],
        id="after a delay: only its own connection, not the GET stream nor the session",
    ),
    pytest.param(
        cassette(STATELESS_CUT + STATELESS),
        [
            (
                post("c1", MODERN_HALFWAY, {**MODERN, "mcp-name": "halfway"}),
                [("open", "c1", {}), ("event", "c1", [HALFWAY_LOG]), ("drop", "c1")],
            ),
            (closed("c1"), []),
            (post("c2", MODERN_SLOW, {**MODERN, "mcp-name": "slow"}), [("later", 2.5)]),
            (WAKE, [("respond", "c2", 200, MODERN_SLOW_REPLY, {})]),
        ],
        id="2026-07-28: the cut is no cancellation, and the next request is answered",
    ),
    pytest.param(
        cassette(BASE + CUT_OFF, get_stream=True),
        [
            *OPENING_2025_03_26,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", b"[" + TOOLS_LIST + b"," + AT_ONCE + b"]"), [("drop", "c1")]),
            (post("c2", TOOLS_LIST), [("respond", "c2", 200, LIST_REPLY, SID)]),
        ],
        id="a batch's member: the batch's one stream, its array never on the GET stream",
    ),
]


@pytest.mark.parametrize(("text", "steps"), CUTS)
def test_an_answer_that_broke_off_is_cut_after_what_its_stream_carried(
    text: str, steps: list[tuple[Step, Any]]
) -> None:
    endpoint = converse(text, steps)
    endpoint.shutdown()
    faults = [fault for report in endpoint.finished for fault in report.faults]
    assert len(faults) == 1 and "broke off before its reply (`drop: cut`" in faults[0]


# --- 12. shutdown --------------------------------------------------------------------------------

SHUTDOWNS = [
    pytest.param(
        cassette(BASE, framing="sse", get_stream=True),
        [
            *OPENING_SSE,
            (get("c9"), [("open", "c9", SID)]),
            (post("c1", SLOW), [("later", 2.5), ("open", "c1", SID)]),
            (post("c2", INITIALIZE, POST), sse_answer("c2", [INIT_REPLY], {"mcp-session-id": "session-2"})),
            (SHUTDOWN, [("end", "c1"), ("end, close", "c9")]),
            (post("c3", TOOLS_LIST), [("respond", "c3", 404, UNKNOWN, {})]),
            (WAKE, []),
        ],
        [[1, 1, 0, 0, 1, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
        id="open streams end",
    ),
    pytest.param(
        cassette(BASE),
        [*OPENING, (post("c1", SLOW), [("later", 2.5)]), (SHUTDOWN, [("open", "c1", SID), ("end", "c1")])],
        [[1, 1, 0, 0, 1, 0, 0, 0, 0, 0]],
        id="an answer not begun: an empty stream",
    ),
]


@pytest.mark.parametrize(("text", "steps", "plays"), SHUTDOWNS)
def test_shutdown_ends_every_stream_and_keeps_every_session_s_report(
    text: str, steps: list[tuple[Step, Any]], plays: list[list[int]]
) -> None:
    endpoint = converse(text, steps)
    assert [report.plays_by_index() for report in endpoint.finished] == plays


# --- 13. Host and Origin -------------------------------------------------------------------------

FOREIGN = [
    pytest.param(
        {**POST, "host": "evil.example:8000"},
        ("respond", "c1", 421, "Invalid Host header: 'evil.example:8000' (allow it with --allow-host)", {}),
        id="a foreign Host: 421",
    ),
    pytest.param(
        {**POST, "origin": "https://evil.example"},
        ("respond", "c1", 403, "Invalid Origin header: 'https://evil.example' (allow its host with --allow-host)", {}),
        id="a foreign Origin: 403",
    ),
]


@pytest.mark.parametrize(("headers", "refusal"), FOREIGN)
def test_a_foreign_host_or_origin_is_refused_before_anything_else(headers: dict[str, str], refusal: Any) -> None:
    converse(cassette(BASE), [(post("c1", INITIALIZE, headers), [refusal])])


# No URL parser takes an unclosed `[`: such a Host, Origin or target is refused, never an exception.
NO_URL = [
    ({**POST, "host": "[::1"}, "/mcp", 421, "Invalid Host header: '[::1'"),
    ({**POST, "host": "127.0.0.1:8000]"}, "/mcp", 421, "Invalid Host header"),
    ({**POST, "origin": "http://[::1"}, "/mcp", 403, "Invalid Origin header: 'http://[::1'"),
    (POST, "//[/mcp", 400, "Bad Request: the request target '//[/mcp' is not a URL path"),
    (POST, "http://[::1/mcp", 400, "is not a URL path"),
    (POST, "/mcp?x=[", None, ""),  # a `[` in the query is no URL error: the request is served
]


@pytest.mark.parametrize(("headers", "target", "status", "words"), NO_URL)
def test_a_host_origin_or_target_no_url_parser_takes_is_refused(
    headers: dict[str, str], target: str, status: int | None, words: str
) -> None:
    [out, *_] = endpoint_for(cassette(BASE)).request("c1", b"POST", target, headers, INITIALIZE)
    if status is None:
        assert not isinstance(out, Respond) or out.answer.status == 200
        return
    assert isinstance(out, Respond) and out.answer.status == status
    assert words in out.answer.body.decode()


def test_a_seeded_fuzz_of_requests_never_raises() -> None:
    """Requests built from hostile pieces in every position (method, target, each header, body): every one
    is answered or refused, and the endpoint goes on serving a good session afterwards."""
    rng = random.Random(20261204)
    hostile = ["[", "]", "[::1", "http://[::1", "//[", "%", "%zz", "\u00e9", "\x00", ":", "::", "@", "#", "?", " ", ""]
    keys = ["host", "origin", "accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"]
    bodies = [INITIALIZE, TOOLS_LIST, INITIALIZED, b"[", b"{", b"[]", b"null", b'{"jsonrpc":"2.0","id":[' * 3, b""]
    endpoint = endpoint_for(cassette(BASE))
    for n in range(2000):
        headers = dict(POST)
        for key in rng.sample(keys, rng.randint(0, 3)):
            headers[key] = rng.choice([headers.get(key, ""), ""]) + "".join(rng.choices(hostile, k=rng.randint(1, 3)))
        target = rng.choice(["/mcp", "//", "/"]) + "".join(rng.choices(hostile, k=rng.randint(0, 3)))
        method = rng.choice([b"POST", b"GET", b"DELETE", b"PUT"])
        outs = endpoint.request(f"f{n}", method, target, headers, rng.choice(bodies))
        for out in outs:
            if isinstance(out, Respond):
                assert 200 <= out.answer.status < 600
        endpoint.closed(f"f{n}")
    [reply, *_] = endpoint.request("good", b"POST", "/mcp", POST, INITIALIZE)
    assert reply.answer.status == 200 if isinstance(reply, Respond) else isinstance(reply, Open)


# --- the bytes, and a note ------------------------------------------------------------------------


def test_an_answer_is_written_as_these_bytes() -> None:
    endpoint = endpoint_for(cassette(BASE, framing="sse", event_ids=True, priming=True))
    init_reply = (
        b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
        b'"serverInfo":{"name":"notes","version":"1"}}}'
    )
    assert endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE) == [
        Open(
            "c0",
            (("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("mcp-session-id", "session-1")),
        ),
        Event("c0", b"id: 1\ndata: \n\nevent: message\nid: 2\ndata: " + init_reply + b"\n\n"),
        End("c0"),
    ]
    json_endpoint = endpoint_for(cassette(BASE))
    assert json_endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE) == [
        Respond("c0", Answer(200, init_reply + b"\n", "application/json", (("mcp-session-id", "session-1"),)))
    ]


MODERN_MISS = (
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
)


def test_a_stateless_miss_note_names_the_client_s_id_never_the_alias_and_shows_the_arguments_not_meta() -> None:
    """The request is shown by its name and arguments: the stateless era's `_meta` would fill the line first."""
    endpoint = endpoint_for(cassette(STATELESS))
    outs = shown(endpoint.request("c1", b"POST", "/mcp", {**MODERN, "mcp-name": "nope"}, MODERN_MISS))
    assert [out[0] for out in outs] == ["note", "respond"]
    assert outs[1][3]["id"] == 7
    assert outs[0][1].splitlines()[:2] == [
        "mockmcp: no recorded interaction matches this tools/call request",
        '  incoming request (id 7): tools/call {"arguments":{},"name":"nope"}',
    ]


def test_the_stateless_session_numbers_its_events_but_keeps_none_to_resume() -> None:
    """It has no GET stream, so nothing could ever resume from what it kept (nor free its connections)."""
    endpoint = endpoint_for(cassette(STATELESS, framing="sse", event_ids=True))
    for conn in ("c1", "c2", "c3"):
        outs = shown(endpoint.request(conn, b"POST", "/mcp", {**MODERN, "mcp-name": "slow"}, MODERN_SLOW))
        assert sorted(out[0] for out in outs) == ["later", "open"]
        endpoint.closed(conn)
    assert endpoint.stateless is not None and endpoint.stateless.ids is not None
    assert not endpoint.shared.resumable.events and endpoint.shared.wire.live == {}


# --- sessions that stay idle, and what waits for a GET stream -------------------------------------


def _later(outs: list[Out]) -> list[Later]:
    return [out for out in outs if isinstance(out, Later)]


def test_a_session_idle_for_the_limit_is_ended_and_its_id_then_answers_404() -> None:
    endpoint = endpoint_for(cassette(BASE), session_idle=30.0)
    [watch] = _later(endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE))
    assert watch.after == 30.0
    assert _later(endpoint.request("c0", b"POST", "/mcp", SESSION, INITIALIZED)) == []  # one watch at a time
    # It did something since the watch began: the watch begins again, and ends it when nothing came since.
    [again] = _later(endpoint.wake(watch.token))
    assert endpoint.sessions.keys() == {"session-1"} and endpoint.finished == []
    outs = endpoint.wake(again.token)
    assert [out.text for out in outs if isinstance(out, Note)] == [
        "mockmcp: session session-1 was idle for 30 s: ended"
    ]
    assert endpoint.sessions == {} and len(endpoint.finished) == 1  # its report is kept, as after a DELETE
    [refused] = endpoint.request("c1", b"POST", "/mcp", SESSION, TOOLS_LIST)
    assert isinstance(refused, Respond) and refused.answer.status == 404


def test_a_session_with_its_get_stream_open_or_a_request_under_way_is_not_idle() -> None:
    endpoint = endpoint_for(cassette(GETTABLE), session_idle=30.0)
    [watch] = _later(endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE))
    endpoint.request("c9", b"GET", "/mcp", GET, b"")  # the GET stream stays open
    [again] = _later(endpoint.wake(watch.token))
    [_] = _later(endpoint.wake(again.token))  # nothing came, but the stream is open: watched on
    assert endpoint.sessions.keys() == {"session-1"}
    # Without a limit, no watch at all.
    assert _later(endpoint_for(cassette(BASE)).request("c0", b"POST", "/mcp", POST, INITIALIZE)) == []


def test_what_waits_for_a_get_stream_is_bounded_the_oldest_dropped_and_counted() -> None:
    endpoint = endpoint_for(cassette(GETTABLE), backlog_events=0)  # so the one unsolicited message overflows it
    endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE)
    [turn] = _later(endpoint.request("c1", b"POST", "/mcp", SESSION, PING))
    endpoint.wake(turn.token)  # the host's turn: the message for the GET stream, which is not open
    session = endpoint.sessions["session-1"]
    assert list(session.backlog.waiting) == [] and session.backlog.dropped == 1
    outs = endpoint.request("c9", b"GET", "/mcp", GET, b"")
    notes = [out.text for out in outs if isinstance(out, Note)]
    assert notes == [
        "mockmcp: session session-1: 1 message(s) for its GET stream were dropped, the oldest first, while none "
        "was open (at most 0 messages and 1048576 bytes wait for it)"
    ]


def test_what_waits_for_a_get_stream_is_bounded_in_bytes_too_the_newest_always_kept() -> None:
    endpoint = endpoint_for(cassette(GETTABLE), backlog_bytes=10)
    endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE)
    backlog = endpoint.sessions["session-1"].backlog
    for message in (b"one", b"two", b"three", b"a message longer than the bound"):
        backlog.hold(message)
    assert (list(backlog.waiting), backlog.bytes, backlog.dropped) == (
        [b"a message longer than the bound"],
        31,
        3,
    )
    backlog.hold(b"four")
    assert (list(backlog.waiting), backlog.bytes, backlog.dropped) == ([b"four"], 4, 4)


# --- bounds: GET streams at the cap, keep-alive, an unread GET stream, resumption's budget ---------

S2 = {"mcp-session-id": "session-2"}
S3 = {"mcp-session-id": "session-3"}
# The opening of "session-2" and "session-3", whatever they write.
OPENING_2, OPENING_3 = opening(S2), opening(S3)
AT_THE_CAP = (
    "mockmcp: 2 GET streams are open, the most this server keeps open at once: the one of session session-2, "
    "quiet for longest, was ended (the most follows the limit of open files: raise it with `ulimit -n` before "
    "starting the replay)"
)
UNREAD_NOTE = (
    "mockmcp: session session-1: the client of its GET stream left more than 1048576 bytes unread, so the stream "
    "was cut; what it is sent now is {}"
)

STREAMS_AT_THE_CAP = [
    pytest.param(
        [
            *OPENING,
            *OPENING_2,
            *OPENING_3,
            (get("c1"), [("open", "c1", SID)]),
            (get("c2", {**GET, **S2}), [("open", "c2", S2)]),
            # session-1's stream says something: session-2's is now the one quiet for longest
            (post("c4", SIDE), [("event", "c1", [ON_THE_SIDE]), ("later", TURN)]),
            (WAKE, [("respond", "c4", 200, SIDE_REPLY, SID)]),
            # a request's stream that is answering (it waits for the host's answer) is never ended for a GET stream
            (post("c5", CONFIRM, {**SESSION, **S3}), [("open", "c5", S3), ("event", "c5", [ASKING, ELICIT])]),
            (get("c3", {**GET, **S3}), [("note", AT_THE_CAP), ("end, close", "c2"), ("open", "c3", S3)]),
            (
                post("c6", ACCEPT, {**SESSION, **S3}),
                [("event", "c5", [CONFIRM_REPLY]), ("end", "c5"), ("respond", "c6", 202, "", S3)],
            ),
            # the client of session-2 opens its stream again (as an SDK client does a second later)
            (
                get("c7", {**GET, **S2}),
                [("note", AT_THE_CAP.replace("session-2", "session-1")), ("end, close", "c1"), ("open", "c7", S2)],
            ),
        ],
        id="the quietest GET stream ends, never a request's stream that is answering",
    ),
    pytest.param(
        [
            *OPENING,
            *OPENING_2,
            *OPENING_3,
            (get("c1"), [("open", "c1", SID)]),
            (get("c2", {**GET, **S2}), [("open", "c2", S2)]),
            (closed("c1"), []),  # a stream whose client left is no longer counted
            (get("c3", {**GET, **S3}), [("open", "c3", S3)]),
        ],
        id="a GET stream whose connection closed leaves room",
    ),
]


@pytest.mark.parametrize("steps", STREAMS_AT_THE_CAP)
def test_at_the_cap_of_get_streams_opening_one_ends_the_one_quiet_for_longest(steps: list[tuple[Step, Any]]) -> None:
    converse(cassette(GETTABLE), steps, streams=2)


def test_a_session_whose_get_stream_was_ended_at_the_cap_expires_when_idle() -> None:
    """An open GET stream holds its session as in the SDK server; once the cap ended it, the session idles out."""
    endpoint = endpoint_for(cassette(GETTABLE), session_idle=30.0, streams=1)
    [watch] = _later(endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE))
    endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE)
    endpoint.request("c1", b"GET", "/mcp", GET, b"")
    [again] = _later(endpoint.wake(watch.token))  # its GET stream is open: watched on
    endpoint.request("c2", b"GET", "/mcp", {**GET, **S2}, b"")  # session-1's stream ends at the cap
    outs = endpoint.wake(again.token)
    assert [out.text for out in outs if isinstance(out, Note)] == [
        "mockmcp: session session-1 was idle for 30 s: ended"
    ]
    assert list(endpoint.sessions) == ["session-2"]


KEEPALIVES = [
    pytest.param(
        [
            *OPENING,
            (get("c1"), [("open", "c1", SID), ("later", 15.0)]),
            (WAKE, [("keep-alive", "c1"), ("later", 15.0)]),  # nothing said for 15 s
            (WAKE, [("keep-alive", "c1"), ("later", 15.0)]),  # a comment is not saying something
            (post("c2", SIDE), [("event", "c1", [ON_THE_SIDE]), ("later", TURN)]),
            (WAKE, [("later", 15.0)]),  # (the keep-alive timer was set first) it said something since: no comment
            (WAKE, [("respond", "c2", 200, SIDE_REPLY, SID)]),
            (WAKE, [("keep-alive", "c1"), ("later", 15.0)]),
            (closed("c1"), []),
            (WAKE, []),  # its client has gone: no more timers
        ],
        id="a quiet GET stream, until its client leaves",
    ),
    pytest.param(
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [ASKING, ELICIT]), ("later", 15.0)]),
            (WAKE, [("keep-alive", "c1"), ("later", 15.0)]),
            (post("c2", ACCEPT), [("event", "c1", [CONFIRM_REPLY]), ("end", "c1"), ("respond", "c2", 202, "", SID)]),
            (WAKE, []),  # it has ended
        ],
        id="a request's stream that waits, until it ends",
    ),
]


@pytest.mark.parametrize("steps", KEEPALIVES)
def test_an_sse_stream_that_says_nothing_for_a_while_carries_a_keep_alive_comment(
    steps: list[tuple[Step, Any]],
) -> None:
    converse(cassette(GETTABLE), steps, keepalive=15.0)


UNREAD = {"c1": (1 << 20) + 1}  # bytes each connection's client has left unread

UNREAD_GET_STREAMS = [
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (get("c1"), [("open", "c1", SID)]),
            (
                post("c2", SIDE),
                [("note", UNREAD_NOTE.format("held for its next GET stream")), ("drop", "c1"), ("later", TURN)],
            ),
            (WAKE, [("respond", "c2", 200, SIDE_REPLY, SID)]),
            (get("c3"), [("open", "c3", SID), ("event", "c3", [ON_THE_SIDE])]),
        ],
        id="cut; what it was sent waits for the next GET stream",
    ),
    pytest.param(
        cassette(GETTABLE),
        [
            *OPENING,
            (post("c1", CONFIRM), [("open", "c1", SID), ("event", "c1", [ASKING, ELICIT])]),
            (post("c2", ACCEPT), [("event", "c1", [CONFIRM_REPLY]), ("end", "c1"), ("respond", "c2", 202, "", SID)]),
        ],
        id="a request's stream is never cut: it ends with its answer",
    ),
]


@pytest.mark.parametrize(("text", "steps"), UNREAD_GET_STREAMS)
def test_a_get_stream_whose_client_reads_nothing_is_cut_past_the_unread_limit(
    text: str, steps: list[tuple[Step, Any]]
) -> None:
    converse(text, steps, unread=lambda conn: UNREAD.get(conn, 0))


def test_a_get_stream_cut_for_its_unread_bytes_is_resumed_from_the_last_event_its_client_read() -> None:
    unread: dict[str, int] = {}
    endpoint = endpoint_for(cassette(GETTABLE, event_ids=True), unread=lambda conn: unread.get(conn, 0))
    timers: list[Any] = []
    for step in [*(step for step, _ in OPENING), get("c1"), post("c2", PING)]:
        perform(endpoint, step, timers)
    assert shown(perform(endpoint, WAKE, timers)) == [("event", "c1", [("1", LIST_CHANGED)])]
    unread["c1"] = (1 << 20) + 1  # and its client reads no more
    assert shown(perform(endpoint, post("c2", SIDE), timers)) == [
        ("note", UNREAD_NOTE.format("resumable with Last-Event-ID")),
        ("drop", "c1"),
        ("later", TURN),
    ]
    perform(endpoint, WAKE, timers)
    # Resumed: what it missed, on the session's GET stream again, which goes on as it was.
    assert shown(perform(endpoint, resume("c3", "1"), timers)) == [
        ("open", "c3", SID),
        ("event", "c3", [("2", ON_THE_SIDE)]),
    ]
    assert shown(perform(endpoint, post("c4", SIDE), timers)) == [
        ("event", "c3", [("3", ON_THE_SIDE)]),
        ("later", TURN),
    ]


def test_what_is_kept_to_resume_from_is_one_budget_for_the_server() -> None:
    """The oldest events go first whichever session sent them, and a session that ends takes its own along."""
    endpoint = endpoint_for(cassette(BASE, event_ids=True, get_stream=True), resumable_events=2)
    for session in (SESSION, {**SESSION, **S2}):
        endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE)
        endpoint.request("c0", b"POST", "/mcp", session, INITIALIZED)
    endpoint.request("c1", b"POST", "/mcp", SESSION, COUNT)  # session-1's events 1 and 2
    endpoint.request("c2", b"POST", "/mcp", {**SESSION, **S2}, COUNT)  # session-2's 1 and 2: session-1's go
    assert shown(endpoint.request("c3", b"GET", "/mcp", {**GET, "last-event-id": "1"}, b"")) == [
        ("open", "c3", SID),
        ("end, close", "c3"),
    ]
    resumed = shown(endpoint.request("c4", b"GET", "/mcp", {**GET, **S2, "last-event-id": "1"}, b""))
    assert resumed == sse_answer("c4", [("2", COUNT_REPLY)], S2, "end, close")
    endpoint.request("c5", b"DELETE", "/mcp", {**GET, **S2}, b"")
    assert (len(endpoint.shared.resumable.events), endpoint.shared.resumable.size) == (0, 0)


def test_a_seeded_fuzz_of_conversations_keeps_every_bound() -> None:
    """Sessions opening, resuming and leaving GET streams, asking and answering, timers firing, clients that read
    nothing: never more GET streams open than the cap, nothing written on a stream after its end or its
    connection's close, and what is kept to resume from within its budget and only for live sessions."""
    rng = random.Random(28)
    unread: dict[str, int] = {}
    endpoint = endpoint_for(
        cassette(GETTABLE, event_ids=True),
        session_idle=60.0,
        streams=3,
        keepalive=15.0,
        unread=lambda conn: unread.get(conn, 0),
    )
    timers: list[Any] = []
    over: set[str] = set()  # connections whose stream ended, was cut, or closed
    for n in range(3000):
        conn = f"c{n}"
        session = rng.choice([*endpoint.sessions, "session-0"])  # (session-0: an unknown one)
        headers, get_headers = {**SESSION, "mcp-session-id": session}, {**GET, "mcp-session-id": session}
        step = rng.choice(
            [
                post(conn, INITIALIZE, POST) if len(endpoint.sessions) < 6 else WAKE,
                post(conn, INITIALIZED, headers),
                post(conn, rng.choice([SIDE, PING, CONFIRM, ASK, COUNT]), headers),
                post(conn, rng.choice([SIDE, PING, CONFIRM, ASK, COUNT]), headers),
                post(conn, ACCEPT, headers),
                get(conn, get_headers),
                get(conn, get_headers),
                get(conn, {**get_headers, "last-event-id": str(rng.randint(1, 40))}),
                delete(conn, get_headers) if rng.random() < 0.2 else WAKE,
                closed(f"c{rng.randrange(n)}" if n else conn),
                WAKE,
            ]
        )
        if step.kind == "wake" and not timers:
            continue
        if rng.random() < 0.05 and endpoint.shared.wire.standing:  # the client of a GET stream stops reading
            unread[rng.choice(list(endpoint.shared.wire.standing)).conn] = (1 << 20) + 1
        outs = perform(endpoint, step, timers)
        if step.kind == "closed":
            over.add(step.conn)
        for out in outs:
            if isinstance(out, Event | End | Drop):
                assert out.conn not in over, (n, step, out)
            if isinstance(out, End | Drop):
                over.add(out.conn)
        assert len(endpoint.shared.wire.standing) <= 3
        assert all(stream.state in ("open", "quiet") for stream in endpoint.shared.wire.standing)
        live = set(endpoint.sessions.values())
        assert all(kept in live for kept, *_ in endpoint.shared.resumable.events)
        assert len(endpoint.shared.resumable.events) <= 4096


def test_the_reports_of_many_ended_sessions_are_folded_into_one_that_counts_them_all() -> None:
    endpoint = endpoint_for(cassette(BASE))
    for n in range(1, 201):
        headers = {**SESSION, "mcp-session-id": f"session-{n}"}
        endpoint.request("c0", b"POST", "/mcp", POST, INITIALIZE)
        endpoint.request("c0", b"POST", "/mcp", headers, TOOLS_LIST)
        endpoint.request("c0", b"DELETE", "/mcp", headers, b"")
    assert len(endpoint.finished) <= 65
    total = Report.combine(endpoint.finished[0].cassette, endpoint.finished)
    assert total.plays_by_index()[:3] == [200, 0, 200]


BURST = """
- request: {id: 13, method: tools/call, params: {name: burst, arguments: {}}}
  server:
  - notification: {method: notifications/message, params: {level: info, data: one}}
    stream: get
  - notification: {method: notifications/message, params: {level: info, data: two}}
    stream: get
  - notification: {method: notifications/message, params: {level: info, data: three}}
    stream: get
  response: {result: {content: [{type: text, text: burst}]}}
"""
BURST_CALL = b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"burst","arguments":{}}}'


def test_one_answers_burst_on_the_get_stream_counts_toward_its_unread_bytes() -> None:
    """The shell writes a call's events only once the call returns, so its buffer (`unread`) does not yet hold the
    burst's first messages when the later ones come: they count all the same, or one interaction's messages
    would fill the buffer whole, however long, before the limit is looked at."""
    # A client that has read all it was sent (unread: 0), and a bound of two of these events, not three.
    endpoint = endpoint_for(cassette(GETTABLE + BURST), unread_bytes=150)
    timers: list[Any] = []
    for step in [*(step for step, _ in OPENING), get("c1")]:
        perform(endpoint, step, timers)
    said = shown(perform(endpoint, post("c2", BURST_CALL), timers))
    note = UNREAD_NOTE.replace("1048576", "150").format("held for its next GET stream")
    assert said == [
        ("event", "c1", [{**ON_THE_SIDE, "params": {"level": "info", "data": "one"}}]),
        ("event", "c1", [{**ON_THE_SIDE, "params": {"level": "info", "data": "two"}}]),
        ("note", note),
        ("drop", "c1"),
        ("later", TURN),
    ]
    reply = {"jsonrpc": "2.0", "id": 13, "result": {"content": [{"type": "text", "text": "burst"}]}}
    assert shown(perform(endpoint, WAKE, timers)) == [("respond", "c2", 200, reply, SID)]
    # The third waits for the next GET stream, as any message with none open.
    assert shown(perform(endpoint, get("c3"), timers)) == [
        ("open", "c3", SID),
        ("event", "c3", [{**ON_THE_SIDE, "params": {"level": "info", "data": "three"}}]),
    ]


def test_an_exit_in_one_session_never_cuts_a_connection_another_now_uses() -> None:
    """Session 1's GET stream on connection g1 is ended at the cap (cleanly: g1 stays open, HTTP/1.1 keeps it),
    and g1 then carries session 2's slow request. Session 1's `exit` knob cuts what session 1 has open, never g1,
    which its ended GET stream no longer holds."""
    endpoint = endpoint_for(cassette(BASE + ON_GET, get_stream=True), streams=1)
    for sid in ("session-1", "session-2"):
        endpoint.request("i", b"POST", "/mcp", POST, INITIALIZE)
        endpoint.request("i", b"POST", "/mcp", {**POST, "mcp-session-id": sid}, INITIALIZED)
    get = {"host": "127.0.0.1:8000", "accept": "text/event-stream"}
    endpoint.request("g1", b"GET", "/mcp", {**get, "mcp-session-id": "session-1"}, b"")
    endpoint.request("g2", b"GET", "/mcp", {**get, "mcp-session-id": "session-2"}, b"")  # ends session 1's
    endpoint.request("g1", b"POST", "/mcp", {**POST, "mcp-session-id": "session-2"}, SLOW)  # g1 reused
    outs = endpoint.request("c1", b"POST", "/mcp", {**POST, "mcp-session-id": "session-1"}, CRASH)
    assert [out.conn for out in outs if isinstance(out, Drop)] == ["c1"]


def test_a_session_whose_client_left_a_call_that_is_never_answered_still_expires() -> None:
    """Handshake era: the host calls a `drop: true` request and goes away (its connection closes; no cancel, as
    a process that dies sends none). A stream going nowhere holds no session: it expires when idle."""
    never = "- request: {id: 30, method: tools/call, params: {name: never, arguments: {}}}\n  drop: true\n"
    body = b'{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"never","arguments":{}}}'
    endpoint = endpoint_for(cassette(BASE + never), session_idle=10.0)
    sid = {**POST, "mcp-session-id": "session-1"}
    timers = [out.token for out in endpoint.request("i", b"POST", "/mcp", POST, INITIALIZE) if hasattr(out, "token")]
    endpoint.request("i", b"POST", "/mcp", sid, INITIALIZED)
    endpoint.request("c1", b"POST", "/mcp", sid, body)
    endpoint.closed("c1")
    for _ in range(5):  # fifty idle seconds
        if not timers:
            break
        timers += [out.token for out in endpoint.wake(timers.pop(0)) if hasattr(out, "token")]
    assert "session-1" not in endpoint.sessions


def test_a_batch_whose_member_breaks_off_later_is_cut_not_answered_without_it() -> None:
    """2025-03-26: a batch of tools/list and a call whose answer breaks off after 2.5 s (`drop: cut`). The
    batch's one stream waits for it and breaks off with it, never answering the array without it."""
    endpoint = endpoint_for(cassette(GETTABLE + CUT_OFF))
    timers: list = []
    for step, _ in OPENING_2025_03_26:
        perform(endpoint, step, timers)
    first = shown(perform(endpoint, post("c1", b"[" + TOOLS_LIST + b"," + LATER + b"]"), timers))
    later = shown(perform(endpoint, WAKE, timers))
    assert first == [("later", 2.5)] and later == [("drop", "c1")], (first, later)


def test_ended_sessions_cost_nothing_once_folded() -> None:
    """Past `Bounds.finished` ended sessions, their reports are folded into one, which keeps at most KEPT_MISSES of each
    kind of finding: 300 sessions that each hit a `drop: cut` do not keep 300 fault lines."""
    endpoint = endpoint_for(cassette(BASE + CUT_OFF))
    for n in range(1, 301):
        endpoint.request("i", b"POST", "/mcp", POST, INITIALIZE)
        sid = {**POST, "mcp-session-id": f"session-{n}"}
        endpoint.request(f"c{n}", b"POST", "/mcp", sid, AT_ONCE)
        endpoint.request("d", b"DELETE", "/mcp", {"host": "127.0.0.1:8000", "mcp-session-id": f"session-{n}"}, b"")
    assert sum(len(report.faults) for report in endpoint.finished) <= KEPT_MISSES + Bounds().finished
