"""What loading refuses in what replay would serve: answers a host cannot read, and requests nothing answers.

Tables of the pure rules (`shapes.answer_flaws`, `validation.served_problems`, `times`), each row a
literal result or cassette; that loading, lint and the recorder use them is seen once each below.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockmcp._wire.jsonrpc import encode
from mockmcp._wire.words import render_place
from mockmcp.cassette import shapes, store, validation, yamlfile
from mockmcp.errors import CassetteError
from mockmcp.record._recorder import CLIENT, SERVER, Recorder, silent
from mockmcp.tools import _lint as lint

RESULT = ("interactions", 0, "response", "result")

# (method, result, [(place below the result, words of the problem, words of the fix)]), in the order of the text.
FLAWS: list[tuple[str, Any, list[tuple[str, str, str]]]] = [
    ("tools/call", {"content": [{"type": "text", "text": "ok"}], "isError": False}, []),
    ("tools/call", {"content": [], "isError": True, "extra": 1}, []),  # a key of its own: lint's warning only
    (
        "tools/call",
        {"content": [], "isError": "yes"},
        [("isError", "`isError` must be true or false, not 'yes'", "write `isError: true`")],
    ),
    (
        "tools/call",
        {"content": [{"type": "text", "text": "boom"}], "isErorr": True},
        [("isErorr", "unknown key 'isErorr' in a tools/call result; did you mean `isError`?", "rename it `isError`")],
    ),
    (
        "tools/call",
        {"content": [{"type": "txt", "text": "boom"}]},
        [("content[0].type", "unknown content type 'txt'", "did you mean `text`? use one of: text, image")],
    ),
    ("tools/call", {"isError": True}, [("", "a tools/call result needs `content`", "`content: []` if the tool")]),
    ("tools/call", {"content": "hi"}, [("content", "`content` is a list, not a string", "write `content: [...]`")]),
    ("tools/call", {"content": ["hi"]}, [("content[0]", "a content block is a mapping, not a string", "key: value")]),
    ("tools/call", {"content": [{"text": "hi"}]}, [("content[0]", "a content block needs a `type` string", "type:")]),
    ("tools/call", {"content": [{"type": "text"}]}, [("content[0]", "a text content block needs `text`", "add")]),
    ("tools/call", {"content": [{"type": "text", "text": 3}]}, [("content[0].text", "is a string, not a number", "")]),
    (
        "tools/call",
        {"content": [{"type": "image", "data": "AA=="}]},
        [("content[0]", "an image content block needs `mimeType`", "raw_response")],
    ),
    (  # a 2026-07-28 request for the host's input: its content comes with the retry's answer
        "tools/call",
        {"resultType": "input_required", "inputRequests": {}, "requestState": "s"},
        [],
    ),
    ("tools/call", {"content": [], "resultType": "done"}, [("resultType", "unknown `resultType` 'done'", "complete")]),
    (  # the first flaw in the text comes first: what loading says is what lint says first
        "tools/call",
        {"isErorr": True, "content": [{"type": "txt"}]},
        [("isErorr", "did you mean `isError`?", ""), ("content[0].type", "unknown content type 'txt'", "")],
    ),
    ("tools/list", {"tools": [{"name": "a"}]}, [("tools[0]", "a tool needs `inputSchema`", "{type: object}")]),
    (  # a typo of a required key is told once, as the typo
        "tools/list",
        {"tools": [{"name": "a", "inputschema": {}}]},
        [("tools[0].inputschema", "did you mean `inputSchema`?", "")],
    ),
    (
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s"}},
        [("serverInfo", "clientInfo or serverInfo needs `version`", "")],
    ),
    (
        "server/discover",
        {"protocolVersion": "2026-07-28", "capabilities": {}},
        [("", "a server/discover result needs `supportedVersions`", "`protocolVersion` is the other era's")],
    ),
    (
        "prompts/get",
        {"messages": [{"role": "user", "content": {"type": "txt", "text": "x"}}]},
        [("messages[0].content.type", "unknown content type 'txt'", "did you mean `text`?")],
    ),
    ("resources/read", {"contents": [{"text": "x"}]}, [("contents[0]", "a resource's contents needs `uri`", "")]),
    ("resources/read", {"contents": [{"uri": "a"}]}, [("contents[0]", "contents needs `text` or `blob`", "base64")]),
    (
        "tools/call",
        {"content": [{"type": "resource", "resource": {"uri": "a", "blob": "AA=="}}]},
        [],
    ),
    ("ping", 3, [("", "a result must be an object", "`result: {}` for none")]),
    ("x/own", "anything", []),  # a method MCP does not define: whatever its server says
]


@pytest.mark.parametrize(("method", "result", "expected"), FLAWS)
def test_what_a_host_cannot_read_in_an_answer(method: str, result: Any, expected: list[tuple[str, str, str]]) -> None:
    found = shapes.answer_flaws(method, result, RESULT)
    below = len(render_place(RESULT))
    assert [render_place(flaw.place)[below:].lstrip(".") for flaw in found] == [place for place, _, _ in expected]
    for flaw, (_place, problem, fix) in zip(found, expected, strict=True):
        assert problem in flaw.problem and fix in flaw.fix, flaw


HEAD = "version: 1\ninteractions:\n"
CALL = "- request: {id: 1, method: tools/call, params: {name: fetch}}\n"

# (interactions, [(place, words of the problem, words of the fix)]): requests without a response.
UNANSWERED: list[tuple[str, list[tuple[str, str, str]]]] = [
    (CALL + "  response: {result: {content: []}}\n", []),
    (CALL, [("interactions[0]", "a request without a `response`", "`drop: true` (never answered)")]),
    (
        "- request:\n    id: 1\n    method: tools/call\n    response: {result: {content: []}}\n",
        [
            (
                "interactions[0].request.response",
                "`response` is inside the request",
                "did you mean the interaction's `response`? indent `response:` as far as `request:`",
            )
        ],
    ),
    (
        "- request:\n    id: 1\n    method: tools/call\n    respone: {result: {content: []}}\n",
        [("interactions[0].request.respone", "`respone` is inside the request", "did you mean the interaction's")],
    ),
    (CALL + "  drop: true\n", []),
    (CALL + "  raw_response: '{\"id\": {{id}}}'\n", []),
    (CALL + "  exit: 1\n", []),
    ("- request: {id: 4, method: subscriptions/listen}\n", []),  # its answer comes only when its stream ends
    (CALL + "- notification: {method: notifications/cancelled, params: {requestId: 1}}\n", []),
    (  # ids are JSON values: "1" is not 1
        CALL + "- notification: {method: notifications/cancelled, params: {requestId: '1'}}\n",
        [("interactions[0]", "a request without a `response`", "")],
    ),
    (  # a cancel before the request cancels another request
        "- notification: {method: notifications/cancelled, params: {requestId: 1}}\n" + CALL,
        [("interactions[1]", "a request without a `response`", "")],
    ),
    (
        CALL + "- session: 1\n  notification: {method: notifications/cancelled, params: {requestId: 1}}\n",
        [("interactions[0]", "a request without a `response`", "")],
    ),
    (  # an answer never sent is not judged: `drop` keeps whatever it says
        CALL + "  drop: true\n  response: {result: {content: never}}\n",
        [],
    ),
    (  # ... nor one an exit before it replaces
        CALL + "  exit: {status: 1, when: before}\n  response: {result: 3}\n",
        [],
    ),
    (
        CALL + "  response: {result: {content: [{type: txt}]}}\n",
        [("interactions[0].response.result.content[0].type", "unknown content type 'txt'", "")],
    ),
]


@pytest.mark.parametrize(("text", "expected"), UNANSWERED)
def test_a_request_replay_would_leave_unanswered_or_answer_wrongly(
    text: str, expected: list[tuple[str, str, str]]
) -> None:
    found, _valid = validation.problems(yamlfile.load(HEAD + text))
    assert [render_place(problem.place) for problem in found] == [place for place, _, _ in expected]
    for problem, (_place, words, fix) in zip(found, expected, strict=True):
        assert words in problem.problem and fix in problem.fix


def test_loading_refuses_the_first_with_its_line_and_lint_says_the_same() -> None:
    text = HEAD + "- request:\n    id: 1\n    method: tools/call\n    response: {result: {content: []}}\n"
    with pytest.raises(CassetteError) as raised:
        store.loads(text, "c.yaml")
    assert (raised.value.line, raised.value.place) == (6, "interactions[0].request.response")
    [finding] = lint.lint_text(text, "c.yaml")  # one finding: not also "an unknown key in a message"
    assert (finding.line, finding.place, finding.severity) == (6, "interactions[0].request.response", lint.ERROR)
    assert finding.problem == raised.value.problem


# `times`: a count, or `any`.
TIMES: list[tuple[str, str | None]] = [
    ("  times: 2\n", None),
    ("  times: any\n", None),
    ("  times: any\n  after: unmatched\n", "interactions[0].after"),
    ("  times: some\n", "interactions[0].times"),
    ("  times: 0\n", "interactions[0].times"),
]


@pytest.mark.parametrize(("knob", "refused_at"), TIMES)
def test_times_is_a_count_or_any(knob: str, refused_at: str | None) -> None:
    text = HEAD + CALL + knob + "  response: {result: {content: []}}\n"
    if refused_at is None:
        store.loads(text)
        return
    with pytest.raises(CassetteError) as raised:
        store.loads(text)
    assert raised.value.place == refused_at
    assert "any" in raised.value.problem + (raised.value.fix or "")


# --- the recorder keeps what happened, and nothing that lies ----------------------------------------


def line(message: dict[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", **message})[:-1]


def recorded(*events: tuple[str, dict[str, Any] | int]) -> Recorder:
    """A recorder fed these (direction, message) events; ("ended", STATUS) is the server exiting first."""
    recorder = Recorder()
    for at, (direction, message) in enumerate(events):
        if direction == "ended":
            assert isinstance(message, int)
            recorder.ended(message)
        else:
            assert isinstance(message, dict)
            recorder.feed(direction, line(message), float(at))
    return recorder


def ask(request_id: int, method: str = "tools/call") -> tuple[str, dict[str, Any]]:
    return CLIENT, {"id": request_id, "method": method, "params": {"name": "fetch"}}


def answer(request_id: int, result: Any) -> tuple[str, dict[str, Any]]:
    return SERVER, {"id": request_id, "result": result}


OK = {"content": []}
ANSWERED = {"result": OK}


@pytest.mark.parametrize(
    ("events", "kept"),
    [
        ([ask(1), answer(1, OK)], [("response", ANSWERED)]),
        ([ask(1)], [("drop", True)]),  # the host left (or the recording was cut) before the answer
        ([ask(1), ("ended", 3)], [("exit", (3, "before"))]),  # the server exited first
        ([ask(1), answer(1, OK), ask(2), ("ended", 1)], [("response", ANSWERED), ("exit", (1, "before"))]),
        ([ask(1), ask(1), answer(1, OK)], [("drop", True), ("response", ANSWERED)]),  # its id was sent again
        (
            [ask(1), (CLIENT, {"method": "notifications/cancelled", "params": {"requestId": 1}})],
            [("drop", False)],  # a cancel says why there is no answer (`response` stays None)
        ),
        ([ask(1, "subscriptions/listen")], [("drop", False)]),
        ([ask(1), answer(1, {"content": [{"type": "txt"}]})], [("raw_response", line({"id": "{{id}}"}))]),
    ],
    ids=["answered", "left", "exited", "exited-later", "id-again", "cancelled", "listen", "unreadable-answer"],
)
def test_the_recorder_keeps_every_request_as_replay_can_serve_it(
    events: list[tuple[str, Any]], kept: list[tuple[str, Any]]
) -> None:
    made = recorded(*events).cassette()
    requests = [interaction for interaction in made.interactions if interaction.kind == "request"]
    for interaction, (field, value) in zip(requests, kept, strict=True):
        if field == "raw_response":  # the exact line the server sent, its id left for the live one
            assert interaction.raw_response is not None and interaction.response is None
            assert '"type":"txt"' in interaction.raw_response and '"id":{{id}}' in interaction.raw_response
        else:
            assert getattr(interaction, field) == value
    validation.from_data(made.to_data())  # and it always loads


@pytest.mark.parametrize(
    ("events", "asked"),
    [
        ([], 0),
        ([(CLIENT, {"method": "notifications/initialized"})], 0),  # nothing asked, nothing to answer
        ([ask(1)], 1),
        ([ask(1), ask(2), (SERVER, {"method": "notifications/message", "params": {"level": "info"}})], 2),
        ([ask(1), ask(2), answer(2, OK)], 0),
    ],
)
def test_a_recording_is_silent_when_the_server_answered_none_of_the_requests(
    events: list[tuple[str, Any]], asked: int
) -> None:
    assert silent(recorded(*events).cassette().interactions) == asked
