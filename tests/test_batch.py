"""A batch's responses go out together, once it is whole: `core.batch`, as tables of calls.

Pure, literal JSON-RPC: the array goes when every member has been read (sealed) and no job that
ends in a JSON response is pending; a cancelled job counts as done; a job ending otherwise (a
dropped reply, a raw one, the session ending before its reply) is never waited for. The engine's
batches are tested end to end in tests/test_replay_engine.py and over HTTP in tests/test_http_batch.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockmcp.cassette.model import Interaction
from mockmcp.engine.actions import Send
from mockmcp.engine.batch import Batch, answers_in_batch, array

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
ANSWERED = Interaction("request", CALL, response={"result": {}})
A = {"jsonrpc": "2.0", "id": 1, "result": {}}
B = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}}


@pytest.mark.parametrize(
    ("interaction", "answers"),
    [
        (ANSWERED, True),
        (ANSWERED._replace(drop=True), False),
        (ANSWERED._replace(raw_response='{"jsonrpc":"2.0","id":{{id}},"result":{}}'), False),
        (ANSWERED._replace(exit=(3, "after")), True),
        (ANSWERED._replace(exit=(3, "before")), False),
        (ANSWERED._replace(response=None), False),
    ],
    ids=["a-response", "dropped", "raw", "exit-after", "exit-before", "no-response"],
)
def test_what_a_batch_waits_for(interaction: Interaction, answers: bool) -> None:
    assert answers_in_batch(interaction) is answers


@pytest.mark.parametrize(
    ("calls", "results"),
    [
        # answered at once while read: the array goes when sealed
        ([("add", B), ("seal",)], [None, [B]]),
        # a job's response after the seal: the array goes with it
        ([("expect", ANSWERED), ("add", B), ("seal",), ("add", A, True)], [None, None, None, [B, A]]),
        # a cancelled job is not waited for
        ([("expect", ANSWERED), ("add", B), ("seal",), ("cancelled", ANSWERED)], [None, None, None, [B]]),
        # nor one that ends without a JSON response
        ([("expect", ANSWERED._replace(drop=True)), ("add", B), ("seal",)], [None, None, [B]]),
        ([("cancelled", ANSWERED._replace(drop=True))], [None]),
        # nothing to send: notifications only, or every job cancelled
        ([("seal",)], [None]),
        ([("expect", ANSWERED), ("seal",), ("cancelled", ANSWERED)], [None, None, None]),
        # two jobs: the array waits for both
        (
            [("expect", ANSWERED), ("expect", ANSWERED), ("seal",), ("add", A, True), ("add", B, True)],
            [None, None, None, None, [A, B]],
        ),
    ],
    ids=["at-once", "after-a-job", "cancelled", "no-json-reply", "cancel-uncounted", "nothing", "all-cancelled", "two"],
)
def test_a_batch_answers_with_one_array_once_it_is_whole(calls: list[tuple[Any, ...]], results: list[Any]) -> None:
    batch = Batch()
    assert [getattr(batch, name)(*args) for name, *args in calls] == results


def test_the_array_goes_as_one_line_naming_the_ids_it_answers() -> None:
    assert array(None) == []
    [sent] = array([A, B])
    assert isinstance(sent, Send)
    assert sent.data == json.dumps([A, B], separators=(",", ":")).encode() + b"\n"
    assert sent.batch == (1, 2) and sent.request is None and not sent.final
