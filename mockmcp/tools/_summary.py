"""One-line summaries of MCP messages, for people (`show`, the HTML timeline): a function per method, in a table.
A method without one, or data of a shape it does not expect (cassettes are hand-edited), falls back to the
data in YAML's flow style, so a summary never fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from mockmcp._wire import protocol

__all__ = ["PARAMS", "RESULTS", "summarize"]


_SHOWN_DEPTH = 20  # a summary is one line: what is nested deeper shows as `{...}` or `[...]`


def _compact(value: Any, depth: int = 0) -> str:
    """A value in YAML's flow style (`{path: notes.txt}`): what the cassette shows, on one line."""
    if isinstance(value, (dict, list)) and value and depth >= _SHOWN_DEPTH:
        return "{...}" if isinstance(value, dict) else "[...]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_compact(str(k))}: {_compact(v, depth + 1)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_compact(v, depth + 1) for v in value) + "]"
    if isinstance(value, str) and re.fullmatch(r"[\w./@+~-][\w./@+~:?!'-]*( [\w./@+~:?!'-]+)*", value):
        try:
            json.loads(value)  # "1", "true": quoted, so that they do not read as a number or a boolean
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


def _who(info: Any) -> str:
    return f"{info.get('name', '?')} {info.get('version') or ''}".strip()


def _text(text: Any) -> str:
    """Text content; JSON text (tools often answer with pretty-printed JSON) in flow style, to fit a line."""
    if isinstance(text, str) and text.lstrip()[:1] in ("{", "["):
        try:
            return _compact(json.loads(text))
        except (ValueError, RecursionError):  # not JSON, or nested past what json reads
            pass
    return str(text)


def _block(block: Any) -> str:
    """One content block (text, image, resource...) as a person reads it."""
    if block.get("type") == "text":
        return _text(block["text"])
    what = block.get("resource", block).get("uri") or block.get("mimeType") or ""
    return f"[{block.get('type')} {what}]".replace(" ]", "]")


def _first(items: list[Any], describe: Callable[[Any], str], empty: str = "nothing") -> str:
    more = f" (+{len(items) - 1} more)" if len(items) > 1 else ""
    return (describe(items[0]) + more) if items else empty


def _named(p: Any) -> str:
    return f"{p['name']} {_compact(p['arguments'])}" if "arguments" in p else str(p["name"])


def _tool_call(p: Any) -> str:
    answers = p.get("inputResponses")
    return _named(p) + (f" with input {', '.join(map(_compact, answers.values()))}" if answers else "")


def _tool_result(r: Any) -> str:
    if not r.get("content") and "structuredContent" in r:
        return _compact(r["structuredContent"])
    return _first(r.get("content") or [], _block, "no content")


def _names(key: str, noun: str) -> Callable[[Any], str]:
    def names(r: Any) -> str:
        items, more = r[key], ", more after nextCursor" if r.get("nextCursor") else ""
        listed = ": " + ", ".join(str(i.get("name", i.get("uri"))) for i in items) if items else ""
        return f"{len(items) or 'no'} {noun}{'' if len(items) == 1 else 's'}{listed}{more}"

    return names


def _progress(p: Any) -> str:
    total = "" if p.get("total") is None else f"/{_compact(p['total'])}"
    return f"progress {_compact(p['progress'])}{total} {p.get('message', '')}".rstrip()


def _log(p: Any) -> str:
    data = p.get("data")
    logger = f" {p['logger']}" if p.get("logger") else ""
    return f"{p['level']}{logger}: {data if isinstance(data, str) else _compact(data)}"


def _discover(r: Any) -> str:
    server = protocol.meta(r).get(protocol.SERVER_INFO_KEY)
    return f"versions {', '.join(r['supportedVersions'])}" + (f", server {_who(server)}" if server else "")


PARAMS: dict[str, Callable[[Any], str]] = {
    "completion/complete": lambda p: f"{_compact(p['ref'])} {_compact(p['argument'])}",
    "elicitation/create": lambda p: f"{p.get('mode', 'form')}: {p['message']}",
    "initialize": lambda p: f"protocol {p['protocolVersion']}, client {_who(p['clientInfo'])}",
    "logging/setLevel": lambda p: str(p["level"]),
    protocol.CANCELLED: lambda p: (
        f"request {_compact(p['requestId'])}" + (f": {p['reason']}" if p.get("reason") else "")
    ),
    "notifications/message": _log,
    protocol.PROGRESS: _progress,
    "notifications/resources/updated": lambda p: str(p["uri"]),
    "prompts/get": _named,
    "resources/read": lambda p: str(p["uri"]),
    "resources/subscribe": lambda p: str(p["uri"]),
    "resources/unsubscribe": lambda p: str(p["uri"]),
    "sampling/createMessage": lambda p: _first(p["messages"][::-1], lambda m: f"{m['role']}: {_block(m['content'])}"),
    "tools/call": _tool_call,
}

RESULTS: dict[str, Callable[[Any], str]] = {
    "completion/complete": lambda r: ", ".join(map(str, r["completion"]["values"])) or "no values",
    "elicitation/create": lambda r: f"{r['action']} {_compact(r['content']) if 'content' in r else ''}".rstrip(),
    "initialize": lambda r: f"protocol {r['protocolVersion']}, server {_who(r['serverInfo'])}",
    "prompts/get": lambda r: _first(r["messages"], lambda m: f"{m['role']}: {_block(m['content'])}"),
    "prompts/list": _names("prompts", "prompt"),
    "resources/list": _names("resources", "resource"),
    "resources/read": lambda r: _first(
        r["contents"], lambda c: f"{c['uri']}: {c.get('text', c.get('mimeType', 'blob'))}"
    ),
    "resources/templates/list": _names("resourceTemplates", "template"),
    "roots/list": lambda r: ", ".join(str(root["uri"]) for root in r["roots"]) or "no roots",
    "sampling/createMessage": lambda r: f"{r.get('model', '?')}: {_block(r['content'])}",
    "server/discover": _discover,
    "tools/call": _tool_result,
    "tools/list": _names("tools", "tool"),
}


def _quiet(data: Any) -> Any:
    """data without what the stateless era puts on every message: its `_meta` keys, `resultType: complete`..."""
    if not isinstance(data, dict):
        return data
    out = {k: v for k, v in data.items() if k not in ("cacheScope", "ttlMs") and (k, v) != ("resultType", "complete")}
    meta = out.pop("_meta", None)
    if isinstance(meta, dict):
        own = (k for k in meta if not k.startswith(protocol.SPEC_PREFIX) and k != protocol.PROGRESS_TOKEN)
        meta = {k: meta[k] for k in own}
    return out if not meta else {**out, "_meta": meta}


def summarize(table: dict[str, Callable[[Any], str]], method: str | None, data: Any) -> str:
    """The table's summary of data; compact data when the method has none or data has a shape it does not expect."""
    summarize = table.get(method or "")
    if summarize is not None:
        try:  # a hand-edited cassette may hold any shape, and show must show it anyway
            return summarize(data)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            pass
    data = _quiet(data)
    return "" if data in (None, {}) else _compact(data)
