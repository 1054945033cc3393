"""A second MCP server for the agent run: a weather service whose forecasts are fixed (the example's, not a real
one), built with the official SDK. Run it with ``python examples/agent_run/weather_server.py`` (stdio)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

FORECASTS = {"Paris": "sunny, 21 °C", "Oslo": "snow, -3 °C"}

server = MCPServer("weather")


@server.tool()
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: {FORECASTS.get(city, 'no forecast')}"


if __name__ == "__main__":
    server.run()
