"""The SDK host meets a cassette of the other era (both directions) and `record --record-mode new_episodes` across eras.

- a legacy host (initialize only) meeting a 2026-07-28 cassette gets -32022 naming the versions the
  cassette speaks, the answer a server of that revision gives, and a host that falls back on it
  (to `server/discover`, as the SDK's auto mode does) goes on with the recorded session;
- a cassette recorded by a legacy host, then again by an auto host with `--record-mode new_episodes`, gains the
  2026-07-28 session (the two eras never "match"), and replays to both hosts without a miss. This is
  `--record-mode new_episodes` end to end; which sessions it adds, and its notes, have their rows in test_merge.py;
- a cassette of one era from a server that speaks both (`meta.server_eras`) serves the other era's host in process
  under strict: a 2026-07-28 session to a legacy host, a handshake one to an auto host (which does not fall back),
  with the results, progress, logs and questions of the host's own era's recording of that server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import NOTES_COMMAND, NOTES_SESSION, ROOT, SHIPPED, child_env, speaks_both
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError
from sdk_host import connect, full_session, text_of
from test_causal_sdk import wait_for_save

from mockmcp._wire import protocol
from mockmcp.cassette import store

pytestmark = pytest.mark.anyio

SERVER = NOTES_COMMAND


def params(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=args[0], args=list(args[1:]), env=child_env(), cwd=str(ROOT))


def replay(cassette: Path, report: Path) -> StdioServerParameters:
    return params(sys.executable, "-m", "mockmcp", "replay", str(cassette), "--report", str(report))


def first_of(error: BaseException, kind: type[MCPError]) -> MCPError:
    """The first `kind` in an exception or (nested) exception group, as the SDK's task groups raise them."""
    pending = [error]
    while pending:
        current = pending.pop(0)
        if isinstance(current, kind):
            return current
        pending.extend(getattr(current, "exceptions", ()))
    raise AssertionError(f"no {kind.__name__} in {error!r}") from error


async def test_a_legacy_host_meeting_a_2026_cassette_is_told_the_versions_and_can_fall_back(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    server = replay(SHIPPED / "notes-session-2026.yaml", report)
    with anyio.fail_after(30), pytest.raises(Exception) as raised:
        async with connect(server, "legacy"):
            pass
    refused = first_of(raised.value, MCPError)
    assert refused.error.code == protocol.UNSUPPORTED_VERSION
    assert refused.error.data == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    summary = json.loads(report.read_text())
    assert [miss["code"] for miss in summary["misses"]] == [protocol.UNSUPPORTED_VERSION]
    assert not summary["strict_ok"]
    # A host that falls back on -32022 (as the SDK's auto mode does) gets the recorded session.
    with anyio.fail_after(30):
        async with connect(server, "auto") as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("read_file", {"path": "notes.txt"})) == "remember to buy milk"


async def host(server: StdioServerParameters, mode: str) -> dict[str, Any]:
    with anyio.fail_after(60):
        async with connect(server, mode) as client:
            seen = await full_session(client)
            seen["protocol"] = client.protocol_version
    return seen


@pytest.mark.slow
async def test_record_mode_new_adds_the_other_era_and_replays_both(tmp_path: Path) -> None:
    out = tmp_path / "notes.yaml"
    recorder = params(
        sys.executable, "-m", "mockmcp", "record", "-o", str(out), "--record-mode", "new_episodes", "--", *SERVER
    )
    # What the real server says in each era is what the host heard through the recorder (which forwards
    # the session as it is, in both eras: see test_record_sdk.py).
    live = {}
    for mode in ("legacy", "auto"):
        live[mode] = await host(recorder, mode)
        assert {key: live[mode][key] for key in NOTES_SESSION} == NOTES_SESSION
        await wait_for_save(out)
    recorded = store.load(str(out))
    eras = {
        interaction.session: protocol.params_era(interaction.params)
        for interaction in recorded.interactions
        if interaction.method == "tools/list"
    }
    assert eras == {0: protocol.HANDSHAKE, 1: protocol.STATELESS}
    for mode in ("legacy", "auto"):
        report = tmp_path / f"{mode}.json"
        seen = await host(replay(out, report), mode)
        assert {key: seen[key] for key in NOTES_SESSION} == NOTES_SESSION
        assert seen == live[mode]
        summary = json.loads(report.read_text())
        assert summary["misses"] == [] and summary["mismatches"] == [], summary


# --- one cassette, both eras: a server that spoke both answers the other era's host from the translation --------


async def everything(server: Any, mode: str) -> dict[str, Any]:
    """All a host sees of a whole notes session: each result as the SDK reads it, progress, logs, and what the
    server asked the host (elicitation, sampling, roots), as its callbacks got it."""
    from mcp import Client
    from sdk_host import elicit, roots, sampling

    asked: list[Any] = []

    def noting(callback: Any) -> Any:
        async def note(ctx: Any, *params: Any) -> Any:
            asked.append([p.model_dump(mode="json") for p in params] or "roots/list")
            return await callback(ctx, *params)

        return note

    logs: list[Any] = []

    async def log(params: Any) -> None:
        logs.append(params.data)

    callbacks = {"sampling_callback": noting(sampling), "elicitation_callback": noting(elicit)}
    callbacks |= {"list_roots_callback": noting(roots), "logging_callback": log}
    results: list[Any] = []  # every result as the SDK reads it

    def kept(call: Any) -> Any:
        async def keep(*args: Any, **kwargs: Any) -> Any:
            result = await call(*args, **kwargs)
            results.append(result.model_dump(mode="json"))
            return result

        return keep

    with anyio.fail_after(30):
        async with Client(server, mode=mode, log_level=None if mode == "legacy" else "info", **callbacks) as client:
            for name in ("list_tools", "call_tool", "read_resource", "get_prompt"):
                setattr(client, name, kept(getattr(client, name)))
            seen = await full_session(client)
            seen["protocol"] = client.protocol_version
    return {**seen, "results": results, "asked": asked, "logs": logs}


def untitled(asked: Any) -> Any:
    """What a host's callback was asked, without an elicitation schema's title."""
    if isinstance(asked, list) and asked and "requested_schema" in asked[0]:
        schema = {key: value for key, value in asked[0]["requested_schema"].items() if key != "title"}
        return [{**asked[0], "requested_schema": schema}]
    return asked


@pytest.mark.parametrize(
    ("mode", "recorded", "native"),
    [
        ("legacy", "notes-session-2026.yaml", "notes-session.yaml"),
        ("auto", "notes-session.yaml", "notes-session-2026.yaml"),
    ],
    ids=["2026-cassette-to-legacy-host", "handshake-cassette-to-auto-host"],
)
async def test_a_cassette_of_a_server_of_both_eras_serves_the_other_eras_host_as_the_server_does(
    mode: str, recorded: str, native: str, tmp_path: Path
) -> None:
    import mockmcp

    # The host's own era's recording of the same server is what the real server gives it (above: recorded through
    # the recorder, which forwards the session as it is); in process, as over stdio (test_inprocess.py).
    truth = await everything(mockmcp.transport(str(SHIPPED / native)), mode)
    translated = mockmcp.transport(str(speaks_both(recorded, tmp_path)), strict=True)
    seen = await everything(translated, mode)  # strict: no miss, nothing unplayed, no answer that differed
    # The SDK's server titles an elicitation's schema in the handshake era only (a real server's dialect, which
    # no recording of the other era holds: docs/cassette-format.md, "Both eras"); all else is the same.
    assert [untitled(asked) for asked in seen.pop("asked")] == [untitled(asked) for asked in truth.pop("asked")]
    assert seen == truth
    assert seen["protocol"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")  # no fallback: its own era
    assert {key: seen[key] for key in NOTES_SESSION} == NOTES_SESSION
    assert seen["logs"] == ["counted 1", "counted 2"]
    assert translated.report is not None and translated.report.strict_ok
