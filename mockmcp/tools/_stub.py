"""`mockmcp stub`: a cassette from a server's contract, with an answer per tool for a person to write. Pure.

The contract is the session that asked it (the handshake and the listings, replayed as they came). Each tool
gets one interaction that answers any call of it (`match: {arguments: any}`, `times: any`, `optional`), its
result a placeholder (`words.STUB_ANSWER`) with `structuredContent` shaped by the tool's `outputSchema` when it
declares one, so the host's SDK takes it; comments in the file say what to edit, and lint names what is left.
"""

from __future__ import annotations

from typing import Any

from mockmcp._wire import protocol
from mockmcp._wire.words import STUB_ANSWER
from mockmcp.cassette import yamlfile
from mockmcp.cassette.model import OPTIONAL, REQUEST, Cassette, Interaction
from mockmcp.cassette.store import dump

__all__ = ["example", "is_placeholder", "stub_cassette", "stub_text"]

_DEPTH = 8  # how deep an example follows nested schemas
_SCALARS = {"string": "", "integer": 0, "number": 0, "boolean": False, "null": None, "array": [], "object": {}}


def stub_cassette(contract: Cassette) -> Cassette:
    """The contract's session, then a placeholder answer for each tool its tools/list offers."""
    exchanges = [(i.message, i.response) for i in contract.interactions]
    tools = protocol.listed(exchanges, protocol.TOOLS_LIST) or []
    placeholders = tuple(_placeholder(tool) for tool in tools)
    meta = {**contract.meta, "description": f"a stub of {len(tools)} tool(s): write what each answers"}
    return contract._replace(interactions=(*contract.interactions, *placeholders), meta=meta)


def _placeholder(tool: dict[str, Any]) -> Interaction:
    result: dict[str, Any] = {"content": [{"type": "text", "text": STUB_ANSWER}]}
    schema = tool.get("outputSchema")
    if isinstance(schema, dict):
        result["structuredContent"] = example(schema)
    request = {"method": "tools/call", "params": {"name": tool["name"], "arguments": {}}}
    return Interaction(
        REQUEST, request, response={"result": result}, times="any", match={"arguments": "any"}, marks=(OPTIONAL,)
    )


def example(schema: dict[str, Any], defs: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A value `schema` accepts, the plainest one: each property of an object, the first of an enum or of a
    union, an empty string, 0, false, an empty list (a `minItems` list: that many items)."""
    defs = schema.get("$defs", defs or {}) if isinstance(schema.get("$defs"), dict) else (defs or {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs and depth < _DEPTH:
        return example(defs[ref[8:]], defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key] and isinstance(schema[key][0], dict):
            return example(schema[key][0], defs, depth + 1)
    kind = schema.get("type")
    kind = next((one for one in kind if one != "null"), "null") if isinstance(kind, list) else kind
    properties = schema.get("properties")
    if kind == "object" or (kind is None and isinstance(properties, dict)):
        shown = properties if isinstance(properties, dict) and depth < _DEPTH else {}
        return {name: example(sub, defs, depth + 1) for name, sub in shown.items() if isinstance(sub, dict)}
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [example(items, defs, depth + 1) for _ in range(int(schema.get("minItems") or 0))]
    if kind == "string":
        return "x" * int(schema.get("minLength") or 0)
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    return _SCALARS.get(str(kind))


def stub_text(cassette: Cassette) -> str:
    """The stub cassette as YAML, with comments saying what to edit: at the top, and above each placeholder."""
    text = dump(cassette)
    lines = text.splitlines(keepends=True)
    notes: dict[int, str] = {}
    for index, interaction in enumerate(cassette.interactions):
        if is_placeholder(interaction):
            line = yamlfile.line_of(text, ("interactions", index))
            if line is not None:
                notes[line - 1] = _comment(interaction)
    for at in sorted(notes, reverse=True):
        lines.insert(at, notes[at])
    return lines[0] + _HEADER + "".join(lines[1:])


def is_placeholder(interaction: Interaction) -> bool:
    """Whether the interaction's answer is still the placeholder `mockmcp stub` wrote."""
    result = (interaction.response or {}).get("result")
    content = result.get("content") if isinstance(result, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("text") == STUB_ANSWER for b in content)


def _comment(interaction: Interaction) -> str:
    name = (interaction.params or {}).get("name")
    shaped = "structuredContent" in ((interaction.response or {}).get("result") or {})
    said = f"# {name}: write its answer in `content` (a tool error: `isError: true`; a protocol error: `error:`)"
    if shaped:
        said += "\n#   and in `structuredContent`, shaped by the tool's outputSchema (the SDK checks it)"
    said += (
        "\n#   to tell calls apart, replace `match: {arguments: any}` with their `arguments`; `answers:` for a script"
    )
    return said + "\n"


_HEADER = """\
# Written by `mockmcp stub` from the server's contract (its handshake and listings, as it answered them).
# Each tool below answers any call with a placeholder: write what it answers, then `mockmcp lint` this file
# (it names each placeholder still left). See docs/without-recording.md.
"""
