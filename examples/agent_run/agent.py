"""The agent under test: openai-agents with a real OpenAI client (chat completions) and two MCP servers over stdio.

Nothing here knows about mockmcp or vcrpy: the test hands it the model's URL and the servers' commands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, Runner, ToolCallItem, set_tracing_disabled
from agents.mcp import MCPServerStdio
from openai import AsyncOpenAI

set_tracing_disabled(True)  # its traces would go to OpenAI's API: a request no test should make


def server(name: str, command: Sequence[str], env: Mapping[str, str]) -> MCPServerStdio:
    params: Any = {"command": command[0], "args": list(command[1:]), "env": dict(env)}
    return MCPServerStdio(params=params, name=name, cache_tools_list=True, client_session_timeout_seconds=60)


async def ask(question: str, model_url: str, servers: Mapping[str, tuple[Sequence[str], Mapping[str, str]]]) -> Any:
    """Run the agent on a question; returns its final answer and the tool calls it made, in order."""
    # max_retries=0: a request the model's cassette cannot answer fails at once instead of being retried.
    client = AsyncOpenAI(base_url=model_url, api_key="sk-not-a-key", max_retries=0)
    mcp = [server(name, command, env) for name, (command, env) in servers.items()]
    for each in mcp:
        await each.connect()
    try:
        agent = Agent(
            name="assistant",
            instructions="Answer from the notes and the weather service.",
            model=OpenAIChatCompletionsModel(model="stand-in", openai_client=client),
            mcp_servers=mcp,
        )
        result = await Runner.run(agent, question)
    finally:
        for each in reversed(mcp):
            await each.cleanup()
    calls = [
        (item.raw_item.name, item.raw_item.arguments) for item in result.new_items if isinstance(item, ToolCallItem)
    ]
    return result.final_output, calls
