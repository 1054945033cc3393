"""The cassette: a recorded MCP session as data, validated when it is built.

A cassette is a list of interactions in the order they happened. Each interaction is one message
the client sent (a `request` or a `notification`) with everything the server sent because of it
(`server`: notifications, server-to-client requests with the client's recorded response, raw lines),
then, for a request, the `response`. An interaction with only `server` holds messages the server
sent unprompted, at their place in the session. Messages are kept as plain dicts, as on the wire
(without the constant `"jsonrpc": "2.0"`), so nothing a model does not know is lost.

Building a Cassette validates everything; a problem raises CassetteError naming the place
(`interactions[3].response`) and, when loaded from a file, the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import os

from mockmcp import files
from mockmcp.errors import CassetteError
from mockmcp.jsonrpc import is_valid_id

__all__ = ["Cassette", "FORMAT_VERSION", "Interaction", "ServerItem", "load", "loads", "save"]

FORMAT_VERSION = 1
_TOP_KEYS = ("version", "meta", "interactions")
_INTERACTION_KEYS = ("at", "request", "notification", "delay", "times", "after", "server", "drop", "raw_response", "response", "exit", "took")
AFTER = ("repeat", "unmatched")  # what an interaction does once its `times` are used up
EXIT_WHEN = ("after", "before")  # `exit`: end the session after the reply, or before (instead of) it
_SERVER_KEYS = ("at", "notification", "request", "response", "raw")


Place = tuple[str | int, ...]


def render_place(place: Place) -> str:
    """`("interactions", 3, "response")` -> `interactions[3].response`."""
    out = ""
    for part in place:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


class _Problem(Exception):
    """Raised inside validation; load() turns it into a located CassetteError."""

    def __init__(self, place: Place, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.place, self.problem, self.fix = place, problem, fix


@dataclass(frozen=True, slots=True)
class ServerItem:
    """One thing the server sent: kind is "notification", "request" (with the client's `response`) or "raw"."""

    kind: str
    message: Any
    response: dict[str, Any] | None = None
    at: float | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.at is None else {"at": self.at}
        data[self.kind] = self.message
        if self.response is not None:
            data["response"] = self.response
        return data


@dataclass(frozen=True, slots=True)
class Interaction:
    """A client message (or none, for unsolicited server messages), what the server sent, the response.

    The fault knobs a person adds by hand (see docs/cassette-format.md): `delay` before replaying,
    `times` this interaction is played before the next recording of the same request takes over
    and `after` (repeat or unmatched) once the last one is used up, `drop` the reply, send
    `raw_response` instead of it, `exit` (status, when) to end the session.
    """

    kind: str  # "request", "notification" or "server" (unsolicited)
    message: dict[str, Any] | None = None
    server: tuple[ServerItem, ...] = ()
    response: dict[str, Any] | None = None
    delay: float = 0.0
    at: float | None = None
    took: float | None = None
    times: int = 1
    after: str = "repeat"
    drop: bool = False
    raw_response: str | None = None
    exit: tuple[int, str] | None = None  # (status, "after" or "before")

    @property
    def method(self) -> str | None:
        return None if self.message is None else self.message["method"]

    @property
    def params(self) -> Any:
        return None if self.message is None else self.message.get("params")

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {} if self.at is None else {"at": self.at}
        if self.message is not None:
            data[self.kind] = self.message
        if self.delay:
            data["delay"] = self.delay
        if self.times != 1:
            data["times"] = self.times
        if self.after != "repeat":
            data["after"] = self.after
        if self.server:
            data["server"] = [item.to_data() for item in self.server]
        if self.drop:
            data["drop"] = True
        if self.raw_response is not None:
            data["raw_response"] = self.raw_response
        if self.response is not None:
            data["response"] = self.response
        if self.exit is not None:
            data["exit"] = {"status": self.exit[0], "when": self.exit[1]}
        if self.took is not None:
            data["took"] = self.took
        return data


@dataclass(frozen=True, slots=True)
class Cassette:
    """A whole recorded session: format version, free-form metadata, interactions in order."""

    interactions: tuple[Interaction, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    path: str | None = None

    @classmethod
    def from_data(cls, data: Any, path: str | None = None) -> Cassette:
        """Validate plain data (as loaded from YAML) into a Cassette; raises CassetteError."""
        try:
            return _cassette(data, path)
        except _Problem as problem:
            raise CassetteError(problem.problem, path=path, place=render_place(problem.place), fix=problem.fix) from None

    def to_data(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "meta": self.meta,
            "interactions": [interaction.to_data() for interaction in self.interactions],
        }


def loads(text: str, path: str | None = None) -> Cassette:
    """Parse and validate cassette text; errors carry the file, the line and the place."""
    return _validate(_parse(text, path), text, path)


def _parse(text: str, path: str | None) -> Any:
    from mockmcp import yamlfile  # deferred: see `files` on the cache of parsed cassettes

    try:
        return yamlfile.load(text)
    except Exception as exc:  # yaml.YAMLError; kept broad so that no parser failure escapes unexplained
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise CassetteError(
            f"not valid YAML: {problem}", path=path, line=line, fix="correct the YAML syntax at that line"
        ) from None


def _validate(data: Any, text: str | None, path: str | None) -> Cassette:
    try:
        return _cassette(data, path)
    except _Problem as problem:
        from mockmcp import yamlfile

        raise CassetteError(
            problem.problem,
            path=path,
            place=render_place(problem.place),
            line=None if text is None else yamlfile.line_of(text, problem.place),
            fix=problem.fix,
        ) from None


def load(path: str) -> Cassette:
    """Read and validate the cassette at path (through the cache of parsed cassettes); raises CassetteError."""
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            data = files.read_cache(path, stat)
            if data is not None:
                return _validate(data, None, path)
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        raise CassetteError(
            "no such cassette", path=path, fix="check the path, or record one with `mockmcp record -o PATH -- SERVER...`"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read the cassette: {exc}", path=path) from None
    data = _parse(text, path)
    cassette = _validate(data, text, path)
    files.write_cache(path, stat, data)
    return cassette


def save(cassette: Cassette, path: str) -> None:
    """Write the cassette atomically (the old file stays whole until the new one is complete)."""
    files.atomic_write(path, dump(cassette))


def dump(cassette: Cassette) -> str:
    """The cassette as YAML text."""
    from mockmcp import yamlfile

    return yamlfile.dump(cassette.to_data())


def now_iso() -> str:
    """The current UTC time as cassettes write it."""
    import datetime  # deferred: only recording needs it

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- validation: each function takes plain data and the place it came from -------------------------


def _cassette(data: Any, path: str | None) -> Cassette:
    _mapping(data, (), "a cassette is a mapping with `version`, `meta` and `interactions`")
    _known_keys(data, (), _TOP_KEYS)
    version = data.get("version")
    if version != FORMAT_VERSION:
        raise _Problem(
            ("version",),
            f"unknown cassette version {version!r}; this mockmcp reads version {FORMAT_VERSION}",
            f"set `version: {FORMAT_VERSION}`, or upgrade mockmcp if the cassette comes from a newer one",
        )
    meta = data.get("meta") or {}
    _mapping(meta, ("meta",), "`meta` holds free-form facts about the recording as a mapping")
    items = data.get("interactions")
    if not isinstance(items, list):
        raise _Problem(("interactions",), "`interactions` must be a list", "write `interactions:` followed by `- request: ...` items")
    interactions = tuple(_interaction(item, ("interactions", i)) for i, item in enumerate(items))
    return Cassette(interactions, meta, path)


def _interaction(data: Any, place: Place) -> Interaction:
    _mapping(data, place, "each interaction is a mapping with `request`, `notification` or `server`")
    _known_keys(data, place, _INTERACTION_KEYS)
    kinds = [key for key in ("request", "notification") if key in data]
    if len(kinds) > 1:
        raise _Problem(place, "an interaction has one client message: `request` or `notification`, not both", "split it into two interactions")
    if not kinds and "server" not in data:
        raise _Problem(place, "empty interaction: no `request`, `notification` or `server`", "add the client's message, or remove the item")
    kind = kinds[0] if kinds else "server"
    message = None if not kinds else _message(data[kind], place + (kind,), kind == "request")
    if "response" in data and kind != "request":
        raise _Problem(place + ("response",), f"only a request gets a response, and this is a {kind}", "remove `response`, or make the client message a `request`")
    server = data.get("server") or []
    if not isinstance(server, list):
        raise _Problem(place + ("server",), "`server` must be a list of messages", "write each as `- notification: {...}`, `- request: {...}` or `- raw: ...`")
    for knob in ("times", "after", "drop", "raw_response", "exit"):
        if knob in data and kind != "request":
            raise _Problem(place + (knob,), f"`{knob}` applies to requests only, and this is a {kind}", f"remove `{knob}`")
    return Interaction(
        kind=kind,
        message=message,
        server=tuple(_server_item(item, place + ("server", i)) for i, item in enumerate(server)),
        response=None if "response" not in data else _response(data["response"], place + ("response",)),
        delay=_seconds(data, "delay", place) or 0.0,
        at=_seconds(data, "at", place),
        took=_seconds(data, "took", place),
        times=_times(data, place),
        after=_choice(data, "after", AFTER, place),
        drop=_flag(data, "drop", place),
        raw_response=_text(data, "raw_response", place),
        exit=_exit(data, place),
    )


def _times(data: dict[str, Any], place: Place) -> int:
    value = data.get("times", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Problem(place + ("times",), "`times` must be a whole number, at least 1", "write e.g. `times: 2`")
    return value


def _choice(data: dict[str, Any], key: str, choices: tuple[str, ...], place: Place) -> str:
    value = data.get(key, choices[0])
    if value not in choices:
        raise _Problem(place + (key,), f"unknown `{key}` {value!r}", f"use one of: {', '.join(choices)}")
    return str(value)


def _flag(data: dict[str, Any], key: str, place: Place) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise _Problem(place + (key,), f"`{key}` must be true or false", f"write `{key}: true`")
    return value


def _text(data: dict[str, Any], key: str, place: Place) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _Problem(place + (key,), f"`{key}` is the exact line to send, as a string", "quote the line")
    return value


def _exit(data: dict[str, Any], place: Place) -> tuple[int, str] | None:
    if "exit" not in data:
        return None
    value = data["exit"]
    fix = "write `exit: 1` (after the reply) or `exit: {status: 1, when: before}`"
    if isinstance(value, int) and not isinstance(value, bool):
        value = {"status": value}
    value = _mapping(value, place + ("exit",), fix)
    _known_keys(value, place + ("exit",), ("status", "when"))
    status = value.get("status")
    if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 255:
        raise _Problem(place + ("exit", "status"), "an exit `status` is a whole number from 0 to 255", fix)
    return status, _choice(value, "when", EXIT_WHEN, place + ("exit",))


def _message(data: Any, place: Place, is_request: bool) -> dict[str, Any]:
    message = _mapping(data, place, "a message is a mapping with `method` and optional `params`")
    if not isinstance(message.get("method"), str):
        raise _Problem(place, "a message needs a `method` string", "add e.g. `method: tools/call`")
    if "params" in message and not isinstance(message["params"], (dict, list)):
        raise _Problem(place + ("params",), "`params` must be a mapping", "write the params as `key: value` lines")
    if "id" in message and not (is_request and is_valid_id(message["id"])):
        fix = "use a string or an integer" if is_request else "remove `id`: a notification has none"
        raise _Problem(place + ("id",), "bad `id`", fix)
    return message


def _response(data: Any, place: Place) -> dict[str, Any]:
    response = _mapping(data, place, "a response is a mapping with `result` or `error`")
    _known_keys(response, place, ("result", "error", "id"))
    if ("result" in response) == ("error" in response):
        raise _Problem(place, "a response has exactly one of `result` and `error`", "keep the one the server sent")
    if "error" in response:
        error = response["error"]
        _mapping(error, place + ("error",), "an error is a mapping with `code` and `message`")
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            raise _Problem(place + ("error", "code"), "an error `code` must be an integer", "use e.g. -32602 (invalid params)")
        if not isinstance(error.get("message"), str):
            raise _Problem(place + ("error", "message"), "an error needs a `message` string", "add `message: ...`")
    return response


def _server_item(data: Any, place: Place) -> ServerItem:
    _mapping(data, place, "a server item is `notification: {...}`, `request: {...}` or `raw: ...`")
    _known_keys(data, place, _SERVER_KEYS)
    kinds = [key for key in ("notification", "request", "raw") if key in data]
    if len(kinds) != 1:
        raise _Problem(place, "a server item has exactly one of `notification`, `request` and `raw`", "split it into several items")
    kind = kinds[0]
    at = _seconds(data, "at", place)
    if kind == "raw":
        if not isinstance(data["raw"], str):
            raise _Problem(place + ("raw",), "`raw` is the exact line to send, as a string", "quote the line")
        return ServerItem("raw", data["raw"], at=at)
    message = _message(data[kind], place + (kind,), kind == "request")
    if kind == "notification" and "response" in data:
        raise _Problem(place + ("response",), "a notification gets no response", "remove `response`")
    response = None if "response" not in data else _response(data["response"], place + ("response",))
    return ServerItem(kind, message, response, at)


def _mapping(data: Any, place: Place, fix: str) -> dict[str, Any]:
    """data itself, known to be a mapping; raises _Problem otherwise."""
    if not isinstance(data, dict):
        got = "nothing" if data is None else type(data).__name__
        got = {"list": "a list", "str": "a string", "int": "a number", "float": "a number", "bool": "a boolean"}.get(got, got)
        raise _Problem(place, f"expected a mapping, got {got}", fix)
    return data


def _known_keys(data: dict[str, Any], place: Place, known: tuple[str, ...]) -> None:
    for key in data:
        if key not in known:
            raise _Problem(place + (str(key),), f"unknown key {key!r}", f"use one of: {', '.join(known)}")


def _seconds(data: dict[str, Any], key: str, place: Place) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise _Problem(place + (key,), f"`{key}` must be a number of seconds, at least 0", f"write e.g. `{key}: 0.5`")
    return float(value)
