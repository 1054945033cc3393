"""The legacy HTTP+SSE transport (2024-11-05): `mockmcp replay --http` serves `GET /sse` beside Streamable HTTP, the
SDK's `sse_client` sees the recorded session there; the rules of its paths, literal, in memory."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import NOTES_SESSION, SHIPPED, served
from mcp.client.sse import sse_client
from sdk_host import connect, full_session

NOTES = SHIPPED / "notes-session.yaml"


@pytest.mark.anyio
async def test_two_sdk_sse_clients_at_once_each_see_the_recorded_session(tmp_path: Any) -> None:
    seen: list[dict[str, Any]] = []
    logs: list[list[Any]] = [[], []]
    with served(NOTES, tmp_path) as server:
        sse = server.url.removesuffix("/mcp") + "/sse"

        async def one(n: int) -> None:
            async with connect(sse_client(sse), "legacy", logs=logs[n]) as client:
                seen.append(await full_session(client))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(one, 0)
                group.start_soon(one, 1)
        report = server.stop()
    for session in seen:
        assert {key: session[key] for key in NOTES_SESSION} == NOTES_SESSION  # progress, sampling, roots on the stream
    assert logs == [["counted 1", "counted 2"]] * 2
    assert report["misses"] == [] and report["unplayed"] == [] and report["repeats"] == []
