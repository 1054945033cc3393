"""`mockmcp stub`'s driver: a live server asked only what has no side effect (its contract), recorded.

The handshake (`initialize`, then `notifications/initialized`), then each listing its capabilities offer
(`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`), every page: nothing that runs a
tool, reads a resource or gets a prompt. A server's request on the way (it should send none) is refused.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mockmcp._wire import jsonrpc, protocol
from mockmcp._wire.credentials import server_words
from mockmcp.cassette.model import Cassette
from mockmcp.engine.redact import Redactor
from mockmcp.errors import UsageError
from mockmcp.record._live import _await, _Live
from mockmcp.record._recorder import CLIENT, SERVER, Recorder

__all__ = ["CONTRACT_VERSION", "ask_contract", "ask_contract_http", "contract_requests"]

CONTRACT_VERSION = "2025-11-25"  # the handshake asked: every SDK server of both eras speaks it
_PAGES = 100  # the most pages of one listing asked (a server that pages for ever stops here)
# Each listing, and the capability a server declares when it answers it.
_ASKED = {
    protocol.TOOLS_LIST: "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
}


def contract_requests() -> tuple[str, ...]:
    """The methods a stub asks: the handshake and the listings (none with a side effect)."""
    return (protocol.INITIALIZE, *_ASKED)


def ask_contract(command: list[str], timeout: float = 10.0, grace: float = 2.0) -> Cassette:
    """The live server's contract over stdio, as the session that asked it: raises UsageError when it does not
    answer the handshake (within `timeout` seconds a request)."""
    live = _Live(command, {"server": server_words(command)}, Redactor())
    try:

        def ask(message: dict[str, Any]) -> dict[str, Any] | None:
            live.send(message)
            return None if "id" not in message else _await(live, message["id"], {}, time.monotonic() + timeout)

        _converse(ask, "check the command after `--` (it must speak MCP over stdio)")
    finally:
        live.stop(grace)
    return live.recorder.cassette()


def ask_contract_http(url: str, timeout: float = 10.0) -> Cassette:
    """The contract of the Streamable HTTP server at `url` (its handshake-era session, its id kept); UsageError
    when it does not answer the handshake."""
    import urllib.error  # deferred: every recorder imports this module, only a stub of an HTTP server asks by URL
    import urllib.request

    recorder, start, session = Recorder({"server": server_words([url])}), time.monotonic(), [""]

    def ask(message: dict[str, Any]) -> dict[str, Any] | None:
        recorder.feed(CLIENT, jsonrpc.encode(message)[:-1], time.monotonic() - start)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        headers |= {"Mcp-Session-Id": session[0]} if session[0] else {}
        request = urllib.request.Request(url, jsonrpc.encode(message), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:  # the URL the user gave
                session[0] = answer.headers.get("mcp-session-id") or session[0]
                body = answer.read().decode("utf-8", "replace")
                streamed = "event-stream" in (answer.headers.get("content-type") or "")
        except (urllib.error.URLError, OSError) as error:
            raise UsageError(
                f"cannot reach {url}: {error}", "check --http-target (the server's MCP endpoint)"
            ) from None
        found = None
        for text in _events(body) if streamed else ([body] if body.strip() else []):
            recorder.feed(SERVER, text.encode(), time.monotonic() - start)
            parsed = json.loads(text)
            found = parsed if isinstance(parsed, dict) and parsed.get("id") == message.get("id") else found
        return found

    _converse(ask, "check --http-target: the server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    return recorder.cassette()


def _events(body: str) -> list[str]:
    """The data of each SSE event of a body (its `data:` lines joined)."""
    found: list[str] = []
    for event in body.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")]
        if data and "".join(data).strip():
            found.append("\n".join(data))
    return found


def _converse(ask: Any, fix: str) -> None:
    """The handshake, then every page of each listing the server's capabilities offer."""
    asked = [0]

    def request(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        asked[0] += 1
        return ask({"jsonrpc": "2.0", "id": asked[0], "method": method, "params": params})

    hello = {"protocolVersion": CONTRACT_VERSION, "capabilities": {}, "clientInfo": _CLIENT}
    answer = request(protocol.INITIALIZE, hello)
    result = (answer or {}).get("result")
    if not isinstance(result, dict):
        said = (answer or {}).get("error") or "no answer in time"
        raise UsageError(f"the server did not answer initialize: {said}", fix)
    ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
    offered = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
    for method, capability in _ASKED.items():
        if capability in offered:
            _pages(request, method)


def _pages(ask: Any, method: str) -> None:
    """Every page of a listing: the next asked with the cursor the last one gave."""
    params: dict[str, Any] = {}
    for _ in range(_PAGES):
        result = (ask(method, params) or {}).get("result")
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(cursor, str) or not cursor:
            return
        params = {"cursor": cursor}


_CLIENT = {"name": "mockmcp stub", "version": "1"}
