"""A recorded message as the live session gets it: `core.live`, row by row.

Pure, literal JSON-RPC: the live request's id in its reply (the recorded body encoded once), in a
raw reply's `{{id}}`, and as a listen event's subscription id; the live progress token in a
progress notification, and none sent when the live request asked for no progress; lone
surrogates in what the host sends read as the recorder wrote them, ids kept.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.model import Interaction
from mockmcp.engine import live
from mockmcp.engine.actions import Cut, Send

SUB = "io.modelcontextprotocol/subscriptionId"
PROGRESS = {"method": "notifications/progress", "params": {"progressToken": 3, "progress": 1}}
LISTENED = {"method": "notifications/resources/updated", "params": {"uri": "u", "_meta": {SUB: 1, "k": 1}}}
LOG = {"method": "notifications/message", "params": {"level": "info", "data": "x"}}


@pytest.mark.parametrize(
    ("recorded", "token", "reply_id", "sent"),
    [
        (PROGRESS, "tok", 7, {"method": "notifications/progress", "params": {"progressToken": "tok", "progress": 1}}),
        (PROGRESS, None, 7, None),  # the live request asked for no progress
        (
            LISTENED,
            None,
            "c-9",
            {"method": "notifications/resources/updated", "params": {"uri": "u", "_meta": {SUB: "c-9", "k": 1}}},
        ),
        (LOG, "tok", 7, LOG),
        (
            {"method": "notifications/progress", "params": "odd"},
            "tok",
            7,
            {"method": "notifications/progress", "params": "odd"},
        ),
    ],
    ids=["progress", "no-progress-asked", "listen-event", "other", "progress-without-params"],
)
def test_a_server_message_carries_the_live_requests_values(
    recorded: dict[str, Any], token: Any, reply_id: Any, sent: dict[str, Any] | None
) -> None:
    assert live.server_message(recorded, token, reply_id) == sent


@pytest.mark.parametrize(
    ("response", "reply_id", "line"),
    [
        ({"id": 1, "result": {"a": 1}}, 7, b'{"jsonrpc":"2.0","id":7,"result":{"a":1}}\n'),
        ({"result": {}}, "x\u00e9", b'{"jsonrpc":"2.0","id":"x\\u00e9","result":{}}\n'),
        (
            {"error": {"code": -32602, "message": "no"}},
            0,
            b'{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"no"}}\n',
        ),
    ],
    ids=["result", "string-id", "error"],
)
def test_a_reply_is_the_recorded_body_under_the_live_id(response: dict[str, Any], reply_id: Any, line: bytes) -> None:
    got = live.reply_line(reply_id, live.reply_tail(response))
    assert json.loads(got) == json.loads(line)
    assert got.endswith(b"\n") and got.count(b"\n") == 1


@pytest.mark.parametrize(
    ("raw", "reply_id", "line"),
    [
        ('{"jsonrpc":"2.0","id":{{id}},"result":{}}', 7, b'{"jsonrpc":"2.0","id":7,"result":{}}\n'),
        ('{"id": {{id}}, "also": {{id}}}\n', "s", b'{"id": "s", "also": "s"}\n'),
        ("not json", 7, b"not json\n"),
    ],
    ids=["placeholder", "twice-and-a-newline", "kept-as-written"],
)
def test_a_raw_reply_carries_the_live_id_where_it_says_so(raw: str, reply_id: Any, line: bytes) -> None:
    assert live.raw_reply(raw, reply_id) == line


def test_a_raw_line_goes_out_as_written_with_one_newline() -> None:
    assert live.raw_line("{oops") == b"{oops\n"
    assert live.raw_line("{oops}\n") == b"{oops}\n"


@pytest.mark.parametrize(
    ("message", "read"),
    [
        ({"id": "\ud800", "params": {"a": "\ud800x"}}, {"id": "\ud800", "params": {"a": "\ufffdx"}}),
        ([{"id": 1, "method": "\udfff"}], [{"id": 1, "method": "\ufffd"}]),
        ({"id": 1, "method": "m"}, {"id": 1, "method": "m"}),
    ],
    ids=["the-id-kept", "a-batch", "clean"],
)
def test_what_the_host_sends_is_read_as_the_recorder_wrote_it(message: Any, read: Any) -> None:
    assert live.as_recorded(message) == read


CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
ANSWERED = Interaction("request", CALL, response={"result": {"n": 1}})


@pytest.mark.parametrize(
    ("interaction", "sent", "fault"),
    [
        (ANSWERED, [Send(b'{"jsonrpc":"2.0","id":"r","result":{"n":1}}\n', "k", final=True)], ""),
        (
            ANSWERED._replace(response={"error": {"code": -32000, "message": "m"}}),
            [Send(b'{"jsonrpc":"2.0","id":"r","error":{"code":-32000,"message":"m"}}\n', "k", final=True, code=-32000)],
            "",
        ),
        (ANSWERED._replace(drop=True), [], "interactions[3]: the reply to request 'r' was dropped"),
        (
            ANSWERED._replace(drop="cut"),
            [Cut("k")],
            "interactions[3]: the answer to request 'r' broke off before its reply (`drop: cut`: over HTTP its "
            "stream was cut; over stdio, no reply)",
        ),
        (
            ANSWERED._replace(raw_response='{"jsonrpc":"2.0","id":{{id}},"error":{"code":-1,"message":"x"}}'),
            [Send(b'{"jsonrpc":"2.0","id":"r","error":{"code":-1,"message":"x"}}\n', "k", final=True, code=-1)],
            "",
        ),
        (ANSWERED._replace(response=None), [], ""),
    ],
    ids=["recorded", "an-error", "dropped", "cut", "raw", "none-recorded"],
)
def test_the_reply_is_what_the_recording_and_its_fault_knobs_say(
    interaction: Interaction, sent: list[Any], fault: str
) -> None:
    writer = live.Writer(None, {}, {3: "handshake"})
    assert writer.reply(3, interaction, "r", "k") == (sent, fault)
    assert writer.reply(3, interaction, "r", "k") == (sent, fault)  # the second from the encoded tail
