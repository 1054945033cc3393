"""Which request a server message is recorded under, with the official SDK as host and server
(tests/servers/attribution.py), over stdio and through the HTTP recording proxy; then the cassette replays
to the same host, which must not wait for a message replay keeps back.

Two sessions a real host has:
- a call in flight, a notification naming no request (the notes changed), then a second call the
  host makes once it has seen the notification, answered first: the notification is the first
  call's; filed under the second, replay would send it only when the host makes that call, which
  it makes only after the notification (the host hangs);
- two calls in flight, the server asks the host (naming no request) for the first, answers the
  second while the question waits: the question is the first call's, so replay does not send that
  call's result before its question.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import ROOT, SDK_PYTHON, child_env, notes_over_http, recording, served
from mcp import Client, StdioServerParameters, types
from mcp_types import ElicitResult
from sdk_host import text_of

from mockmcp.cassette import store

pytestmark = pytest.mark.anyio

SERVER = [*SDK_PYTHON, str(ROOT / "tests" / "servers" / "attribution.py")]


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


async def host(server: Any) -> list[str]:
    """What the host sees, in order: each call's result, the notification, the question."""
    seen: list[str] = []
    updated, hurried = anyio.Event(), anyio.Event()

    async def notified(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append("updated")
            updated.set()

    async def confirm(_ctx: Any, _params: Any) -> ElicitResult:
        seen.append("question")
        await hurried.wait()  # answered once the other call is back: it did not wait for this answer
        return ElicitResult(action="accept", content={"confirm": True})

    async def call(client: Client, name: str, done: anyio.Event | None = None) -> None:
        seen.append(text_of(await client.call_tool(name, {})))
        if done is not None:
            done.set()

    with anyio.fail_after(30):
        async with Client(server, mode="legacy", message_handler=notified, elicitation_callback=confirm) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(call, client, "watch")
                await updated.wait()  # the host makes its next call once the notes changed
                await call(client, "poke")
            async with anyio.create_task_group() as group:
                group.start_soon(call, client, "delete")
                await anyio.sleep(0)
                group.start_soon(call, client, "hurry", hurried)
    return seen


SEEN = ["updated", "poked", "watched", "question", "hurried", "delete: accept"]


def replayed_causally(seen: list[str]) -> bool:
    """Whether replay gave the host everything, the notification before the call the host makes on
    it, the question before its call's result. (When a reply goes relative to another call's is
    replay's timing, not the recording's.)"""
    return sorted(seen) == sorted(SEEN) and seen.index("question") < seen.index("delete: accept")


def filed(path: Path) -> dict[str, list[tuple[str, str | None, bool]]]:
    """Each call's server items: method, the stream it came on, whether the host's answer has its time."""
    return {
        interaction.params["name"]: [(s.message["method"], s.stream, s.took is not None) for s in interaction.server]
        for interaction in store.load(str(path)).interactions
        if interaction.method == "tools/call"
    }


@pytest.mark.slow
async def test_over_stdio_messages_stay_with_the_call_in_flight_and_replay_sends_them_there(tmp_path: Path) -> None:
    out = tmp_path / "causal.yaml"
    live = await host(
        params(*[sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--record-mode", "rewrite", "--"], *SERVER)
    )
    assert live == SEEN
    assert filed(out) == {
        "watch": [("notifications/resources/updated", None, False)],
        "poke": [],
        "delete": [("elicitation/create", None, True)],
        "hurry": [],
    }
    assert replayed_causally(await host(params(sys.executable, "-m", "mockmcp", "replay", str(out))))


@pytest.mark.slow
async def test_through_the_http_proxy_messages_on_the_get_stream_stay_with_the_call_in_flight(tmp_path: Path) -> None:
    out = tmp_path / "causal.yaml"
    with notes_over_http(SERVER[-1]) as target, recording(target, out) as url:
        live = await host(url)
    assert live == SEEN
    assert filed(out) == {
        "watch": [("notifications/resources/updated", "get", False)],
        "poke": [],
        "delete": [("elicitation/create", "get", True)],
        "hurry": [],
    }
    with served(out, tmp_path) as replay:
        assert replayed_causally(await host(replay.url))
        replay.stop()
