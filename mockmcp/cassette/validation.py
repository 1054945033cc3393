"""Validating cassette data: plain data in, model objects out, or a Problem naming the place.

Each function takes the data and the place it came from (`("interactions", 3, "response")`), so that
every problem can say where it is, and what to write instead. The keys each mapping may hold are
listed once here; anything else is an error naming them, so a misspelled fault knob is never a
silent no-op.

`from_data` is the one checked constructor of a Cassette, and `checked` re-validates one built in
code (through `to_data`, so both take the same road as a file); both raise a located CassetteError.
`store` calls `cassette` directly, to add the line in the file to a Problem's place.
"""

from __future__ import annotations

from mockmcp.cassette.model import (
    AFTER,
    ANY_TIMES,
    CUT,
    EXIT_WHEN,
    EXPECTS,
    FORMAT_VERSION,
    GET_STREAM,
    MATCHER_ARGUMENTS,
    MATCHERS,
    NOTIFICATION,
    RAW,
    REQUEST,
    SERVER,
    Cassette,
    Interaction,
    ServerItem,
)
from mockmcp.errors import CassetteError, UsageError
from mockmcp.jsonrpc import MAX_DEPTH, is_valid_id
from mockmcp.protocol import CANCELLED, LISTEN
from mockmcp.words import JSON_TYPES, Place, parse_path, render_place, substitution_name, yaml_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "EXIT_KEYS",
    "HTTP_KEYS",
    "INTERACTION_KEYS",
    "META_MATCH_KEYS",
    "Problem",
    "REQUEST_ONLY",
    "SERVER_KEYS",
    "STREAMS",
    "TOP_KEYS",
    "cassette",
    "checked",
    "from_data",
    "problems",
    "response",
    "served_problems",
    "served_response",
]

TOP_KEYS = ("version", "meta", "interactions")
INTERACTION_KEYS = (
    "at",
    "request",
    "notification",
    "match",
    "delay",
    "times",
    "after",
    "server",
    "drop",
    "raw_response",
    "response",
    "exit",
    "took",
    "session",
    "expect",
)
SERVER_KEYS = ("at", "notification", "request", "response", "raw", "stream", "took")
STREAMS = (GET_STREAM,)  # a server item's `stream`: the Streamable HTTP stream it came on, when not the request's
EXIT_KEYS = ("status", "when")
HTTP_KEYS = (
    "framing",
    "event_ids",
    "priming",
    "get_stream",
    "session_errors",
    "error_status",
)  # meta.http: how the server framed
FRAMINGS = ("json", "sse")
SESSION_ERRORS = ("unknown", "missing")  # a session id the server does not know, or none where one is needed
SESSION_ERROR_KEYS = ("status", "error", "without_id")  # without_id: its body had no `id` member at all
REQUEST_ONLY = ("times", "after", "drop", "raw_response", "exit", "match")  # of a request's interaction only
META_MATCH_KEYS = ("ignore",)  # meta.match: rules for the whole cassette
# (`schema` builds the cassette's JSON Schema from these and the checks below: keep them in step.)


class Problem(Exception):
    """Raised inside validation; `from_data` and `store.load` turn it into a located CassetteError."""

    def __init__(self, place: Place, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.place, self.problem, self.fix = place, problem, fix


def from_data(data: Any, path: str | None = None) -> Cassette:
    """A Cassette from plain data (as a cassette file holds it); raises CassetteError naming the place."""
    try:
        return cassette(data, path)
    except Problem as problem:
        raise CassetteError(problem.problem, path=path, place=render_place(problem.place), fix=problem.fix) from None


def checked(built: Cassette) -> Cassette:
    """The same cassette, validated as if it were loaded from its file; raises CassetteError naming the place."""
    return from_data(built.to_data(), built.path)


def cassette(data: Any, path: str | None, served: bool = True) -> Cassette:
    """Validate plain data into a Cassette; raises Problem (a place, what is wrong, how to fix it).

    `served=False` leaves out the checks of what replay serves (`served_problems`): `store.load` does so
    for data cached from this very file, which passed them when it was cached.
    """
    _mapping(data, (), "a cassette is a mapping with `version`, `meta` and `interactions`")
    _json_data(data)
    _known_keys(data, (), TOP_KEYS)
    version = data.get("version")
    if version != FORMAT_VERSION:
        raise Problem(
            ("version",),
            f"unknown cassette version {version!r}; this mockmcp reads version {FORMAT_VERSION}",
            f"set `version: {FORMAT_VERSION}`, or upgrade mockmcp if the cassette comes from a newer one",
        )
    meta = data.get("meta") or {}
    _mapping(meta, ("meta",), "`meta` holds free-form facts about the recording as a mapping")
    _redact_rules(meta)
    _substitute(meta)
    _meta_match(meta)
    _http(meta)
    items = data.get("interactions")
    if not isinstance(items, list):
        raise Problem(
            ("interactions",),
            "`interactions` must be a list",
            "write `interactions:` followed by `- request: ...` items",
        )
    interactions = tuple(_interaction(item, ("interactions", i)) for i, item in enumerate(items))
    if served:
        for problem in served_problems(list(enumerate(interactions))):
            raise problem
    return Cassette(interactions, meta, path)


def problems(data: Any) -> tuple[list[Problem], list[tuple[int, Interaction]]]:
    """Every problem `cassette` would raise one at a time, in one pass, and the interactions that are valid.

    For a file with several mistakes (lint reports them all at once): each unknown key, then at most
    one other problem per interaction, since what follows a broken value cannot be judged.
    """
    found: list[Problem] = []
    valid: list[tuple[int, Interaction]] = []
    if not isinstance(data, dict):
        found.append(Problem((), f"expected a mapping, got {yaml_type(data)}", "a cassette is a mapping"))
        return found, valid
    found += _unknown_keys(data, (), TOP_KEYS)
    try:
        cassette({"version": data.get("version"), "meta": data.get("meta"), "interactions": []}, None)
    except Problem as problem:
        found.append(problem)
    items = data.get("interactions")
    if not isinstance(items, list):
        return found, valid
    for index, item in enumerate(items):
        place: Place = ("interactions", index)
        unknown = _unknown_keys(item, place, INTERACTION_KEYS) if isinstance(item, dict) else []
        found += unknown
        try:
            if not unknown:
                _json_data(item, place)
                valid.append((index, _interaction(item, place)))
        except Problem as problem:
            found.append(problem)
    found += served_problems(valid)
    return found, valid


def _unknown_keys(data: dict[str, Any], place: Place, known: tuple[str, ...]) -> list[Problem]:
    found = []
    for key in data:
        try:
            _known_keys({key: None}, place, known)
        except Problem as problem:
            found.append(problem)
    return found


def _interaction(data: Any, place: Place) -> Interaction:
    _mapping(data, place, "each interaction is a mapping with `request`, `notification` or `server`")
    _known_keys(data, place, INTERACTION_KEYS)
    kinds = [key for key in (REQUEST, NOTIFICATION) if key in data]
    if len(kinds) > 1:
        raise Problem(
            place,
            "an interaction has one client message: `request` or `notification`, not both",
            "split it into two interactions",
        )
    if not kinds and "server" not in data:
        raise Problem(
            place,
            "empty interaction: no `request`, `notification` or `server`",
            "add the client's message, or remove the item",
        )
    kind = kinds[0] if kinds else SERVER
    message = None if not kinds else _message(data[kind], place + (kind,), kind == REQUEST)
    if "response" in data and kind != REQUEST:
        raise Problem(
            place + ("response",),
            f"only a request gets a response, and this is a {kind}",
            "remove `response`, or make the client message a `request`",
        )
    server = data.get("server") or []
    if not isinstance(server, list):
        raise Problem(
            place + ("server",),
            "`server` must be a list of messages",
            "write each as `- notification: {...}`, `- request: {...}` or `- raw: ...`",
        )
    for knob in REQUEST_ONLY:
        if knob in data and kind != REQUEST:
            raise Problem(
                place + (knob,), f"`{knob}` applies to requests only, and this is a {kind}", f"remove `{knob}`"
            )
    return Interaction(
        kind=kind,
        message=message,
        server=tuple(_server_item(item, place + ("server", i)) for i, item in enumerate(server)),
        response=None if "response" not in data else response(data["response"], place + ("response",)),
        delay=_delay(data, place),
        at=_seconds(data, "at", place),
        took=_waited(data, "took", place, _TOOK_FIX),
        times=_times(data, place),
        after=_choice(data, "after", AFTER, place),
        drop=_drop(data, place),
        raw_response=_text(data, "raw_response", place),
        exit=_exit(data, place),
        session=_count(data, "session", 0, place),
        match=_match(data, place),
        expect=None if "expect" not in data else _choice(data, "expect", EXPECTS, place),
    )


def _count(data: dict[str, Any], key: str, least: int, place: Place) -> int:
    value = data.get(key, least)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise Problem(
            place + (key,), f"`{key}` must be a whole number, at least {least}", f"write e.g. `{key}: {least + 1}`"
        )
    return value


def _times(data: dict[str, Any], place: Place) -> int | str:
    """`times`: a count, or `any` (played as often as asked, which makes `after` meaningless)."""
    if data.get("times") != ANY_TIMES:
        try:
            return _count(data, "times", 1, place)
        except Problem as problem:
            raise Problem(problem.place, problem.problem + f", or `{ANY_TIMES}`", problem.fix) from None
    if "after" in data:
        raise Problem(
            place + ("after",),
            f"`after` never applies to an interaction with `times: {ANY_TIMES}`, which is never used up",
            "remove `after`, or give `times` a number",
        )
    return ANY_TIMES


def _choice(data: dict[str, Any], key: str, choices: tuple[str, ...], place: Place) -> str:
    value = data.get(key, choices[0])
    if value not in choices:
        raise Problem(place + (key,), f"unknown `{key}` {value!r}", f"use one of: {', '.join(choices)}")
    return str(value)


def _drop(data: dict[str, Any], place: Place) -> bool | str:
    """`drop`: true (the reply never comes), or `cut` (nor does the rest of the answer: it breaks off there)."""
    value = data.get("drop", False)
    if isinstance(value, bool):
        return value
    if value != CUT:
        raise Problem(
            place + ("drop",),
            f"`drop` must be true, false or `{CUT}`, not {value!r}",
            f"write `drop: true` (the reply never comes) or `drop: {CUT}` (the answer breaks off there)",
        )
    return CUT


def _text(data: dict[str, Any], key: str, place: Place) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise Problem(place + (key,), f"`{key}` is the exact line to send, as a string", "quote the line")
    return value


def _exit(data: dict[str, Any], place: Place) -> tuple[int, str] | None:
    if "exit" not in data:
        return None
    value = data["exit"]
    fix = "write `exit: 1` (after the reply) or `exit: {status: 1, when: before}`"
    if isinstance(value, int) and not isinstance(value, bool):
        value = {"status": value}
    value = _mapping(value, place + ("exit",), fix)
    _known_keys(value, place + ("exit",), EXIT_KEYS)
    status = value.get("status")
    if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 255:
        raise Problem(place + ("exit", "status"), "an exit `status` is a whole number from 0 to 255", fix)
    return status, _choice(value, "when", EXIT_WHEN, place + ("exit",))


def _message(data: Any, place: Place, is_request: bool) -> dict[str, Any]:
    message = _mapping(data, place, "a message is a mapping with `method` and optional `params`")
    if not isinstance(message.get("method"), str):
        raise Problem(
            place, "a message needs a `method` string", _meant(message, ("method",)) or "add e.g. `method: tools/call`"
        )
    if "params" in message and not isinstance(message["params"], (dict, list)):
        raise Problem(
            place + ("params",),
            f"`params` must be a mapping (or, by position, a list), not {yaml_type(message['params'])}",
            "write the params as `key: value` lines",
        )
    if "id" in message and not (is_request and is_valid_id(message["id"])):
        fix = "use a string or an integer" if is_request else "remove `id`: a notification has none"
        raise Problem(place + ("id",), "bad `id`", fix)
    return message


def served_response(method: str, data: Any, place: Place = ()) -> dict[str, Any]:
    """A response replay can serve to a `method` request: one `response` takes, whose result a host reads as
    MCP defines it (see `shapes.answer_flaws`); raises Problem for the first flaw."""
    from mockmcp.cassette import shapes  # deferred: off the launch path (see `served_problems`)

    answer = response(data, place)
    for flaw in shapes.answer_flaws(method, answer.get("result"), place + ("result",)) if "result" in answer else ():
        raise Problem(*flaw)
    return answer


def response(data: Any, place: Place = ()) -> dict[str, Any]:
    """A response as a cassette keeps it (without `id`); raises Problem when a cassette cannot hold it as one."""
    response = _mapping(data, place, "a response is a mapping with `result` or `error`")
    # Other keys are a message's fields, kept and replayed as on the wire (the recorder keeps what a
    # server adds); `mockmcp lint` warns about them.
    if ("result" in response) == ("error" in response):
        fix = _meant(response, ("result", "error")) or "keep the one the server sent"
        raise Problem(place, "a response has exactly one of `result` and `error`", fix)
    if "error" in response:
        error = response["error"]
        _mapping(error, place + ("error",), "an error is a mapping with `code` and `message`")
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            fix = _meant(error, ("code",)) or "use e.g. -32602 (invalid params)"
            raise Problem(place + ("error", "code"), "an error `code` must be an integer", fix)
        if not isinstance(error.get("message"), str):
            fix = _meant(error, ("message",)) or "add `message: ...`"
            raise Problem(place + ("error", "message"), "an error needs a `message` string", fix)
    return response


def _server_item(data: Any, place: Place) -> ServerItem:
    _mapping(data, place, "a server item is `notification: {...}`, `request: {...}` or `raw: ...`")
    _known_keys(data, place, SERVER_KEYS)
    kinds = [key for key in (NOTIFICATION, REQUEST, RAW) if key in data]
    if len(kinds) != 1:
        raise Problem(
            place, "a server item has exactly one of `notification`, `request` and `raw`", "split it into several items"
        )
    kind = kinds[0]
    at = _seconds(data, "at", place)
    stream = data.get("stream")
    if stream is not None and stream not in STREAMS:
        raise Problem(
            place + ("stream",),
            f"unknown `stream` {stream!r}: it names the stream a Streamable HTTP server sent this on",
            f"write `stream: {GET_STREAM}` for the session's GET stream, or leave it out for the request's own",
        )
    if kind == RAW:
        if not isinstance(data["raw"], str):
            raise Problem(place + ("raw",), "`raw` is the exact line to send, as a string", "quote the line")
        return ServerItem(RAW, data["raw"], at=at, stream=stream)
    message = _message(data[kind], place + (kind,), kind == REQUEST)
    if kind == NOTIFICATION and "response" in data:
        raise Problem(place + ("response",), "a notification gets no response", "remove `response`")
    answer = None if "response" not in data else response(data["response"], place + ("response",))
    took = _waited(data, "took", place, _TOOK_FIX)
    if took is not None and answer is None:
        raise Problem(
            place + ("took",),
            "`took` is the time the host took to answer a server request: this item has no `response`",
            "remove `took`, or add the host's `response`",
        )
    return ServerItem(kind, message, answer, at, stream, took)


def _meant(data: dict[str, Any], wanted: tuple[str, ...]) -> str | None:
    """`rename `reslt` to `result``, when a key of data is a near miss of a wanted one it lacks; else None."""
    from mockmcp.cassette.shapes import near  # deferred: only a cassette with a problem needs it

    for key in data:
        miss = near(str(key), wanted)
        if miss is not None and miss not in data:
            return f"did you mean `{miss}`? rename `{key}` to `{miss}`"
    return None


def _mapping(data: Any, place: Place, fix: str) -> dict[str, Any]:
    """data itself, known to be a mapping; raises Problem otherwise."""
    if not isinstance(data, dict):
        raise Problem(place, f"expected a mapping, got {yaml_type(data)}", fix)
    return data


def _known_keys(data: dict[str, Any], place: Place, known: tuple[str, ...]) -> None:
    for key in data:
        if key not in known:
            from mockmcp.cassette.shapes import near  # deferred: only a cassette with a problem needs it

            miss = near(str(key), known)
            hint = f"did you mean `{miss}`? " if miss else ""
            raise Problem(place + (str(key),), f"unknown key {key!r}", f"{hint}use one of: {', '.join(known)}")


def _seconds(data: dict[str, Any], key: str, place: Place) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise Problem(place + (key,), f"`{key}` must be a number of seconds, at least 0", f"write e.g. `{key}: 0.5`")
    return float(value)


# --- JSON data, and knobs in range (what YAML can say and JSON-RPC cannot) ------------------------

_MAX_DELAY = 86400.0  # a day: more is a mistake, and the timers that wait it out have limits of their own
_SHOWN = 8  # how much of a too-deep place an error spells out


def _json_data(data: Any, at: Place = ()) -> None:
    """Every value in the cassette is JSON data: what a JSON-RPC peer can receive, nested within bounds.

    YAML can also say binary, sets, timestamps, non-string keys, NaN and infinity (`.nan`, `1e400`);
    a strict JSON reader refuses each, so the cassette does. The walk keeps its own stack, so a deep
    value is a located Problem, never a RecursionError. Raises Problem for the first such value.
    """
    if _plainly_json(data):
        return
    stack: list[tuple[Place, Any]] = [(at, data)]
    while stack:
        place, value = stack.pop()
        if isinstance(value, dict):
            _within_depth(place)
            for key, item in value.items():
                if not isinstance(key, str):
                    raise Problem(
                        place + (str(key),),
                        f"the key {key!r} is {_kind(key)}; JSON keys are strings",
                        f'quote the key: `"{key}": ...`',
                    )
                stack.append((place + (key,), item))
        elif isinstance(value, list):
            _within_depth(place)
            stack.extend((place + (index,), item) for index, item in enumerate(value))
        elif isinstance(value, float) and not -_LARGEST <= value <= _LARGEST:  # also NaN
            raise Problem(
                place,
                f"{value} is not a JSON number (`.nan`, `.inf` or a number too large for a float)",
                "write a finite number, or quote it to keep it as text",
            )
        elif not (value is None or isinstance(value, (str, int, float))):  # bool is an int
            raise Problem(place, f"{_kind(value)} is not JSON data", _NOT_JSON_FIX.get(type(value).__name__, _QUOTE))


_LARGEST = 1.7976931348623157e308


def _plainly_json(data: Any) -> bool:
    """The quick pass of `_json_data`, run on every load: True when every value is plainly JSON data
    and no container is deep enough to need a look at its place (the walk with places then finds the problem)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if type(value) is dict:
            if not all(type(key) is str for key in value):
                return False
            items = value.values()
        else:
            items = value
        for item in items:
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                continue
            if kind is dict or kind is list:
                if depth >= MAX_DEPTH:
                    return False
                stack.append((item, depth + 1))
            elif kind is not float or not -_LARGEST <= item <= _LARGEST:
                return False
    return True


_QUOTE = "quote it to keep it as a string"
_NOT_JSON_FIX = {
    "bytes": "write binary data as a base64 string (without `!!binary`), as MCP does for blobs",
    "set": "write a list (`[a, b]`) instead of `!!set`",
    "date": "quote it (`'2025-01-01'`): JSON has no dates, only strings",
    "datetime": "quote it (`'2025-01-01T10:00:00Z'`): JSON has no timestamps, only strings",
}


def _kind(value: Any) -> str:
    names = {
        "bytes": "binary data (`!!binary`)",
        "set": "a set (`!!set`)",
        "date": "a date (`!!timestamp`)",
        "datetime": "a timestamp (`!!timestamp`)",
    }
    return names.get(type(value).__name__, yaml_type(value))


def _within_depth(place: Place) -> None:
    """A container at place is at most MAX_DEPTH levels deep in its message, as `jsonrpc.parse` reads messages."""
    # A message is `interactions[i].request` (3 places down) or `interactions[i].server[j].request` (5).
    envelope = 4 if place[2:3] == ("server",) else 2 if place[:1] == ("interactions",) else 0
    if len(place) - envelope <= MAX_DEPTH:
        return
    raise Problem(
        place[:_SHOWN],
        f"nested more than {MAX_DEPTH} levels deep below here; mockmcp reads messages up to {MAX_DEPTH} levels",
        "flatten the value, or keep the message as a `raw` line",
    )


def _delay(data: dict[str, Any], place: Place) -> float:
    return _waited(data, "delay", place, "write e.g. `delay: 30`; to never answer, use `drop: true`") or 0.0


def _waited(data: dict[str, Any], key: str, place: Place, fix: str) -> float | None:
    """Seconds replay may wait out (`delay`; `took`, with `--timing recorded`): at most a day."""
    seconds = _seconds(data, key, place)
    if seconds is not None and seconds > _MAX_DELAY:
        raise Problem(place + (key,), f"`{key}` is at most {_MAX_DELAY:.0f} seconds (a day), not {seconds:g}", fix)
    return seconds


_TOOK_FIX = "write the seconds the answer took, e.g. `took: 0.25` (`--timing recorded` waits that long)"


def _redact_rules(meta: dict[str, Any]) -> None:
    """`meta.redact`, which replay applies to what the host sends: `env` names and `patterns`, lists of strings."""
    if meta.get("redact") is None:
        return
    import re  # deferred: only cassettes recorded with redaction pay for it

    place: Place = ("meta", "redact")
    rules = _mapping(meta["redact"], place, "write `redact: {env: [NAME], patterns: [REGEX]}`")
    _known_keys(rules, place, ("env", "patterns"))
    for key in ("env", "patterns"):
        items = rules.get(key) or []
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise Problem(place + (key,), f"`{key}` must be a list of strings", f"write `{key}: [...]`")
    for index, pattern in enumerate(rules.get("patterns") or []):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise Problem(
                place + ("patterns", index),
                f"{pattern!r} is not a valid regular expression: {exc}",
                "fix the pattern (Python `re` syntax)",
            ) from None


def _http(meta: dict[str, Any]) -> None:
    """`meta.http`, how a Streamable HTTP server framed its answers (replay frames them the same way)."""
    if meta.get("http") is None:
        return
    place: Place = ("meta", "http")
    http = _mapping(meta["http"], place, "write e.g. `http: {framing: sse, event_ids: true, get_stream: true}`")
    _known_keys(http, place, HTTP_KEYS)
    if http.get("framing") is not None and http["framing"] not in FRAMINGS:
        raise Problem(
            place + ("framing",),
            f"`framing` is json or sse, not {http['framing']!r}",
            "write `framing: sse` (an SSE stream for every request) or `framing: json` (a JSON body when it can)",
        )
    for key in ("event_ids", "priming", "get_stream"):
        if http.get(key) is not None and not isinstance(http[key], bool):
            raise Problem(place + (key,), f"`{key}` must be true or false", f"write `{key}: true`")
    errors = http.get("session_errors") or {}
    _mapping(errors, place + ("session_errors",), "write `session_errors: {unknown: {status: 404, error: {...}}}`")
    _known_keys(errors, place + ("session_errors",), SESSION_ERRORS)
    for name, answer in errors.items():
        where = place + ("session_errors", name)
        fix = "write e.g. `{status: 404, error: {code: -32001, message: Session not found}}`"
        _mapping(answer, where, fix)
        _known_keys(answer, where, SESSION_ERROR_KEYS)
        if answer.get("without_id") is not None and not isinstance(answer["without_id"], bool):
            raise Problem(where + ("without_id",), "`without_id` must be true or false", "write `without_id: true`")
        status = answer.get("status")
        if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
            raise Problem(where + ("status",), f"`status` must be an HTTP error status (400-599), not {status!r}", fix)
        error = _mapping(answer.get("error"), where + ("error",), fix)
        if isinstance(error.get("code"), bool) or not isinstance(error.get("code"), int):
            raise Problem(where + ("error", "code"), "`code` must be an integer (a JSON-RPC error code)", fix)
        if not isinstance(error.get("message"), str):
            raise Problem(where + ("error", "message"), "`message` must be a string", fix)
    statuses = http.get("error_status") or []
    fix = "write e.g. `error_status: [{code: -32602, status: 400}, {code: -32601, status: 404}]`"
    if not isinstance(statuses, list):
        raise Problem(place + ("error_status",), "`error_status` must be a list of {code, status}", fix)
    for index, pair in enumerate(statuses):
        where = place + ("error_status", index)
        _mapping(pair, where, fix)
        _known_keys(pair, where, ("code", "status"))
        if isinstance(pair.get("code"), bool) or not isinstance(pair.get("code"), int):
            raise Problem(where + ("code",), "`code` must be an integer (a JSON-RPC error code)", fix)
        status = pair.get("status")
        if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
            raise Problem(where + ("status",), f"`status` must be an HTTP error status (400-599), not {status!r}", fix)


# --- match rules and substitutions (docs/cassette-format.md, "Match rules" and "Substitutions") ----------


def _params_path(text: Any, place: Place) -> None:
    """A params path as `--ignore` reads it (`words.parse_path`); raises Problem."""
    try:
        parse_path(text if isinstance(text, str) else "")
    except UsageError as error:
        raise Problem(place, error.problem, error.fix or "") from None


def _meta_match(meta: dict[str, Any]) -> None:
    """`meta.match`, the cassette's own match rules: `ignore`, params paths left out of matching."""
    if meta.get("match") is None:
        return
    place: Place = ("meta", "match")
    rules = _mapping(meta["match"], place, "write `match: {ignore: [arguments.when]}`")
    _known_keys(rules, place, META_MATCH_KEYS)
    paths = rules.get("ignore") or []
    if not isinstance(paths, list):
        raise Problem(
            place + ("ignore",), "`ignore` must be a list of params paths", "write `ignore: [arguments.when]`"
        )
    for index, path in enumerate(paths):
        _params_path(path, place + ("ignore", index))


def _match(data: dict[str, Any], place: Place) -> dict[str, Any] | None:
    """A request's `match:`, params path -> matcher (`model.MATCHERS`), as written; None when absent."""
    if "match" not in data:
        return None
    place += ("match",)
    rules = _mapping(
        data["match"], place, "write e.g. `match: {arguments.query: any}`: a params path, then its matcher"
    )
    for path, matcher in rules.items():
        _params_path(path, place + (path,))
        _matcher(matcher, place + (path,))
    return rules


def _matcher(matcher: Any, place: Place) -> None:
    """A matcher: a word of `model.MATCHERS`, or a mapping of one key of `model.MATCHER_ARGUMENTS`; raises Problem."""
    fix = f"use one of: {', '.join(MATCHERS)}, or {{regex: PATTERN}}, {{type: NAME}}"
    if isinstance(matcher, str):
        if matcher in MATCHER_ARGUMENTS and matcher not in MATCHERS:
            raise Problem(place, f"`{matcher}` needs its argument", f"write `{{{matcher}: ...}}`")
        if matcher not in MATCHERS:
            from mockmcp.cassette.shapes import near  # deferred: only a cassette with a problem needs it

            miss = near(matcher, MATCHERS + MATCHER_ARGUMENTS)
            raise Problem(place, f"unknown matcher {matcher!r}", (f"did you mean `{miss}`? " if miss else "") + fix)
        return
    if not isinstance(matcher, dict) or len(matcher) != 1:
        raise Problem(place, f"a matcher is a word or a mapping of one key, not {yaml_type(matcher)}", fix)
    _known_keys(matcher, place, MATCHER_ARGUMENTS)
    ((kind, argument),) = matcher.items()
    if kind == "type" and argument not in JSON_TYPES:
        quote = " (quoted: YAML reads a bare null as nothing)" if argument is None else ""
        raise Problem(place + (kind,), f"unknown JSON type {argument!r}", f"use one of: {', '.join(JSON_TYPES)}{quote}")
    if kind == "regex":
        import re  # deferred: only cassettes with a regex pay for it

        if not isinstance(argument, str):
            raise Problem(place + (kind,), "a `regex` is a string", "quote the pattern")
        try:
            re.compile(argument)
        except re.error as exc:
            raise Problem(
                place + (kind,),
                f"{argument!r} is not a valid regular expression: {exc}",
                "fix the pattern (Python `re` syntax; quote it in YAML)",
            ) from None


def _substitute(meta: dict[str, Any]) -> None:
    """`meta.substitute`: the names of the placeholders (`${NAME}`) the recorder wrote, never their values."""
    names = meta.get("substitute")
    if names is None:
        return
    place: Place = ("meta", "substitute")
    fix = "write `substitute: [PROJECT]`: the names, whose values replay is given on the machine it runs on"
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise Problem(place, "`substitute` must be a list of names", fix)
    for index, name in enumerate(names):
        try:
            substitution_name(name, "substitute")
        except UsageError as error:
            raise Problem(place + (index,), error.problem, fix) from None
        if name in names[:index]:
            raise Problem(place + (index,), f"{name!r} is named twice", "name it once")


# --- what replay serves: answers a host can read, and an answer for every request ------------------


def served_problems(interactions: list[tuple[int, Interaction]]) -> list[Problem]:
    """What replay would serve wrongly, for interactions valid one by one (with their places), in order:

    - a response whose result a host cannot read as meant (`served_response`), where it is sent;
    - a request that nothing answers: no `response`, and nothing that says why (`drop`, `raw_response`,
      `exit`, a later `notifications/cancelled` of its id in its session, or a `subscriptions/listen`,
      whose answer comes only when the stream ends). Replay could never answer it: the host would wait
      for ever, so the cassette is refused rather than served.

    A cassette cached from its file passed these when it was cached, so a replay started on it (the
    launch path) skips them; they run wherever a cassette is parsed or built afresh.
    """
    from mockmcp.cassette import shapes  # deferred: see above

    cancels = _cancels(interactions)
    found: list[Problem] = []
    for index, interaction in interactions:
        if interaction.kind != REQUEST:
            continue
        place: Place = ("interactions", index)
        before = interaction.exit is not None and interaction.exit[1] == "before"
        sent = not interaction.drop and interaction.raw_response is None and not before
        if interaction.response is not None and sent and "result" in interaction.response:
            result = interaction.response["result"]
            at = place + ("response", "result")
            found += [Problem(*flaw) for flaw in shapes.answer_flaws(str(interaction.method), result, at)]
        elif interaction.response is None and not _explained(interaction, index, cancels):
            found.append(_unanswered(interaction, place))
    return found


def _cancels(interactions: list[tuple[int, Interaction]]) -> dict[tuple[int, bool, Any], int]:
    """Where the host cancelled a request: (session, the id as JSON types tell ids apart) -> its last cancel."""
    found = {}
    for index, interaction in interactions:
        params = interaction.params if interaction.kind == NOTIFICATION and interaction.method == CANCELLED else None
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if is_valid_id(request_id):
            found[(interaction.session, isinstance(request_id, str), request_id)] = index
    return found


def _explained(interaction: Interaction, index: int, cancels: dict[tuple[int, bool, Any], int]) -> bool:
    """Whether a request without a response says why it has none (see `served_problems`)."""
    if interaction.drop or interaction.raw_response is not None or interaction.exit is not None:
        return True
    if interaction.method == LISTEN:
        return True
    request_id = (interaction.message or {}).get("id")
    if not is_valid_id(request_id):
        return False
    return cancels.get((interaction.session, isinstance(request_id, str), request_id), -1) > index


def _unanswered(interaction: Interaction, place: Place) -> Problem:
    from mockmcp.cassette.shapes import near  # deferred: see `served_problems`

    message = interaction.message or {}
    inside = next((str(key) for key in message if key == "response" or near(str(key), ("response",))), None)
    if inside is not None:  # written one level too deep (or misspelt there too)
        return Problem(
            place + (REQUEST, inside),
            f"`{inside}` is inside the request, so the request has no response: replay would never answer it",
            "did you mean the interaction's `response`? indent `response:` as far as `request:`, not under it",
        )
    return Problem(
        place,
        "a request without a `response`: replay would never answer it, and the host would wait for ever",
        "add the server's `response` (`result: ...` or `error: {code, message}`); to test a host's timeout, "
        "say so with `drop: true` (never answered) or `drop: cut` (its answer breaks off), or end the session "
        "there with `exit`",
    )
