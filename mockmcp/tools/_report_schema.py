"""The `--report` JSON as a JSON Schema: the contract with test tools in any language (docs/report.md).

A report is a replay's (`Report.to_json`), or `mockmcp exec`'s saying it recorded or could not start, so the
schema is one object of every key and a `oneOf` of what each kind requires. Each key is described here once
(docs/report.md shows these descriptions); within a version keys are only added.
"""

from __future__ import annotations

import json
from typing import Any

from mockmcp.engine.report import REPORT_VERSION

__all__ = ["KEYS", "MISS_KEYS", "RECORDED_KEYS", "REPLAY_KEYS", "TIMED_KEYS", "report_problem", "report_schema_text"]
__all__ += ["schema"]

_INDEX = _COUNT = {"type": "integer", "minimum": 0}
_METHOD = _TEXT = {"type": "string"}
_TEXTS = {"type": "array", "items": _TEXT}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _list(facts: dict[str, Any]) -> dict[str, Any]:
    """A list of findings: these facts, and the `explanation` text to show."""
    return {"type": "array", "items": _object({**facts, "explanation": _TEXT})}


# Every key of a report: its schema and what it means (the descriptions are docs/report.md's table).
KEYS: dict[str, tuple[dict[str, Any], str]] = {
    "version": ({"const": REPORT_VERSION}, f"the report format: {REPORT_VERSION}"),
    "cassette": ({"type": ["string", "null"]}, "the cassette's path, as it was given"),
    "interactions": (_COUNT, "client messages the host could have sent: those of the recorded sessions it used"),
    "played": (_COUNT, "how many of them it did send"),
    "plays": ({"type": "array", "items": _COUNT}, "times each `interactions[i]` of the cassette was played, by index"),
    "repeats": (
        {"type": "array", "items": _object({"interaction": _INDEX, "method": _METHOD, "extra": _INDEX})},
        "requests asked more often than recorded: `extra` times more (the last answer was sent again)",
    ),
    "misses": (
        {"type": "array", "items": {"$ref": "#/definitions/miss"}},
        "requests the cassette could not answer, the first 100 in full (see `misses[]` below)",
    ),
    "missed": (_COUNT, "all the misses, also those past the first 100"),
    "unplayed": (
        {"type": "array", "items": _object({"interaction": _INDEX, "method": _METHOD})},
        "recorded client messages the host never sent",
    ),
    "mismatches": (
        _list({"interaction": {"type": ["integer", "null"], "minimum": 0}, "method": _METHOD, "differences": _TEXTS}),
        "the host answered a server request otherwise than recorded, or (`interaction` null) left every "
        "recorded session; `explanation` is the text to show",
    ),
    "withheld": (
        _list({"interaction": _INDEX, "method": _METHOD, "capability": _METHOD}),
        "recorded server requests not sent, as the host did not declare the capability they need",
    ),
    "capabilities": (_TEXTS, "how the host's declared capabilities differ from the recording's host's (a note)"),
    "unanswered": (_TEXTS, "requests of the host left unanswered when the session ended (a note)"),
    "faults": (
        _TEXTS,
        "fault knobs of the cassette that took effect (a dropped reply, an answer broken off, an ended session)",
    ),
    "reordered": (
        _TEXTS,
        "answers that went on without what the recording's host had sent first (the recorded order), each a note "
        "(not a strict failure)",
    ),
    "calls": (
        {"type": "array", "items": _object({"method": _METHOD, "params": {}})},
        "the host's requests, in order, as they came (after redaction): what `mockmcp.calls` reads; the first 10000",
    ),
    "strict_ok": (
        {"type": "boolean"},
        "what `--strict` demands held: no miss, nothing unplayed, no repeat, no mismatch, nothing withheld",
    ),
    "started": (
        {"type": "number"},
        "when the session started, in seconds since the epoch (the wall clock of the machine that replayed it); "
        "absent from a report written before it",
    ),
    "played_at": (
        {"type": "array", "items": {"type": ["number", "null"], "minimum": 0}},
        "for each `interactions[i]`, when it was first played, in seconds after `started` (null: never played); "
        "with `started`",
    ),
    "recorded": (
        _object({"mode": {"enum": ["once", "new", "all"]}, "status": {"type": "integer"}, "outcome": _TEXT}),
        "`mockmcp exec` only: this launch recorded the real server into the cassette instead of replaying; "
        "`status` is the recorder's exit status, `outcome` how the session ended",
    ),
    "error": (
        _TEXT,
        "`mockmcp exec` only: why it could not replay or record (a missing cassette, one that does not load, "
        "a server that never answered), with how to fix it",
    ),
}

# A replay's times, which a report written before them lacks (and a session no shell timed).
TIMED_KEYS = ("started", "played_at")
# The keys of a replay's report, in the order `Report.to_json` writes them (the times last, when it has them).
REPLAY_KEYS = tuple(key for key in KEYS if key not in ("recorded", "error", *TIMED_KEYS))
RECORDED_KEYS = ("version", "cassette", "recorded")

_CANDIDATE = _object(
    {"interaction": _INDEX, "plays": _INDEX, "differences": _TEXTS, "first_path": _TEXT, "ruled": {"type": "boolean"}}
)

# Each entry of `misses`, in the order `Miss.to_json` writes its keys.
MISS_KEYS: dict[str, tuple[dict[str, Any], str]] = {
    "id": ({"type": ["string", "integer"]}, "the id of the host's request"),
    "method": (_METHOD, "its method"),
    "params": ({}, "its params, as they came (after redaction)"),
    "params_cut": (
        {"type": ["integer", "null"], "minimum": 0},
        "null when `params` are whole; else they were cut to a few KiB (each cut says what it left out) and this is "
        "their full size, in bytes of compact JSON",
    ),
    "code": ({"type": "integer"}, "the JSON-RPC error code the host was answered: -32601, -32099, or -32022"),
    "reason": (_TEXT, "why it missed, in one sentence"),
    "closest": (
        {"type": "array", "items": _CANDIDATE, "maxItems": 3},
        "up to 3 recorded requests closest to it: `interaction`, its `plays`, the exact `differences`, the "
        "`first_path` that differs, and whether a match rule refused it (`ruled`)",
    ),
    "fixes": (_TEXTS, "how to fix it, in order"),
    "record": ({"enum": ["new", "all"]}, "the record mode that would fix it"),
    "explanation": (
        _TEXT,
        "all of the above as text: the reason, the request, the closest ones, the fixes; what a test shows",
    ),
}


def schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of a report, as plain data."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "mockmcp report",
        "description": "What one mock server did in one session: `mockmcp replay --report`, `mockmcp exec "
        "--report` (docs/report.md).",
        "type": "object",
        "properties": {key: {**shape, "description": text} for key, (shape, text) in KEYS.items()},
        "oneOf": [
            {"required": [key for key in REPLAY_KEYS if key != "calls"]},  # reports written before it lack it
            {"required": list(RECORDED_KEYS), "not": {"required": ["error"]}},
            {"required": ["version", "cassette", "error"]},
        ],
        "definitions": {
            "miss": {
                "type": "object",
                "properties": {key: {**shape, "description": text} for key, (shape, text) in MISS_KEYS.items()},
                "required": [key for key in MISS_KEYS if key != "params_cut"],  # reports written before it lack it
            }
        },
    }


def report_schema_text() -> str:
    """The schema as the JSON text `mockmcp schema --report` prints."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


# --- a report read back (`show --html --with-report`): held to the schema above, without a validator library ---

_TYPES = {"object": dict, "array": list, "string": str, "integer": int, "number": (int, float), "boolean": bool}
_TYPES["null"] = type(None)


def _is(value: Any, kind: str) -> bool:
    return isinstance(value, _TYPES[kind]) and (kind == "boolean" or not isinstance(value, bool))


def _mismatch(value: Any, shape: dict[str, Any], where: str, root: dict[str, Any]) -> str | None:
    """What is wrong with value at `where` by the subset of JSON Schema `schema()` uses; None when nothing."""
    if "$ref" in shape:
        shape = root["definitions"][shape["$ref"].rsplit("/", 1)[-1]]
    kinds = [shape["type"]] if isinstance(shape.get("type"), str) else shape.get("type", [])
    if kinds and not any(_is(value, kind) for kind in kinds):
        return f"{where}: must be {' or '.join(kinds)}"
    if "const" in shape and value != shape["const"]:
        return f"{where}: must be {json.dumps(shape['const'])}"
    if "enum" in shape and value not in shape["enum"]:
        return f"{where}: must be one of {', '.join(map(json.dumps, shape['enum']))}"
    if "minimum" in shape and _is(value, "number") and value < shape["minimum"]:
        return f"{where}: must be {shape['minimum']} or more"
    if isinstance(value, list):
        if len(value) > shape.get("maxItems", len(value)):
            return f"{where}: must hold at most {shape['maxItems']} items"
        for index, item in enumerate(value if "items" in shape else []):
            if found := _mismatch(item, shape["items"], f"{where}[{index}]", root):
                return found
    if isinstance(value, dict):
        missing = [key for key in shape.get("required", []) if key not in value]
        if missing:
            return f"{where}.{missing[0]}: is missing" if where else f"{missing[0]}: is missing"
        for key, inner in shape.get("properties", {}).items():
            if key in value and (found := _mismatch(value[key], inner, f"{where}.{key}" if where else key, root)):
                return found
    return None


def report_problem(data: Any) -> str | None:
    """What makes data no replay report by `schema()`, its key path first (`misses[0].method: is missing`), or None."""
    root = schema()
    if not isinstance(data, dict):
        return "the report: must be an object"
    return _mismatch(data, {**root, "required": list(REPLAY_KEYS)}, "", root)
