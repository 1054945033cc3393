"""One agent run, frozen whole: the model's API in a VCR cassette (pytest-recording), the MCP servers in
mockmcp's cassettes, side by side in cassettes/test_agent_run/ (docs/agent-run.md).

    pytest examples/agent_run --record-mode=once   # record what is missing, against the model and the servers
    pytest examples/agent_run                      # replay both: no model endpoint, no server started
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import model
import pytest
from agent import ask

HERE = Path(__file__).parent
NOTES = [sys.executable, str(HERE.parent / "notes_server.py")]
WEATHER = [sys.executable, str(HERE / "weather_server.py")]
QUESTION = "What does notes.txt say, and what is the weather in Paris?"


@pytest.fixture(scope="module")
def model_url(record_mode: str) -> Iterator[str]:
    """The model's base URL: the stand-in endpoint while recording; on replay nothing listens (vcrpy answers)."""
    if record_mode == "none":
        yield "http://127.0.0.1:9/v1"
        return
    with model.serving() as url:
        yield url


@pytest.fixture
def vcr_config() -> dict[str, object]:
    # The body compared as JSON (a changed prompt is a miss, not the old answer); the port left out, as the
    # stand-in's changes from run to run where a provider's URL would not; the API key never written.
    return {"match_on": ["method", "scheme", "host", "path", "query", "json_body"], "filter_headers": ["authorization"]}


@pytest.mark.vcr
@pytest.mark.mockmcp(servers={"notes": NOTES, "weather": WEATHER})
def test_the_agent_answers_from_its_notes_and_the_weather(mockmcp: object, model_url: str) -> None:
    servers = {name: (mockmcp[name].command, mockmcp[name].env) for name in ("notes", "weather")}
    answer, calls = asyncio.run(ask(QUESTION, model_url, servers))
    assert calls == [("read_file", '{"path": "notes.txt"}'), ("forecast", '{"city": "Paris"}')]
    assert "remember to buy milk" in answer and "Paris: sunny, 21 °C" in answer
