"""Validating cassette data: plain data in, a model out, or a Problem naming the place.

The format is one table of `Field`s (`CASSETTE`): each kind's check (`KINDS`) holds a value to its row, and
`schema` emits the JSON Schema from the same rows. A key no row names is an error, so a misspelled fault knob
is never a silent no-op. `from_data` is the one checked constructor.
"""

from __future__ import annotations

from mockmcp._wire.jsonrpc import MAX_DEPTH, NOTIFICATION, REQUEST, is_valid_id
from mockmcp._wire.patterns import SYNTAX, compile_pattern
from mockmcp._wire.protocol import CANCELLED, LISTEN, cancelled_request
from mockmcp._wire.words import JSON_TYPES, Place, parse_path, render_place, substitution_name, yaml_type
from mockmcp.cassette import model
from mockmcp.cassette.model import Cassette, Interaction, ServerItem
from mockmcp.errors import CassetteError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CASSETTE",
    "Field",
    "KINDS",
    "MATCHER",
    "Problem",
    "REQUEST_ONLY",
    "cassette",
    "from_data",
    "problems",
    "response",
    "served_problems",
    "served_response",
]


class Field:
    """One key of a mapping in the format: `kind` (a key of `KINDS`) checks its value, `doc` is what an editor
    shows, `fix` how to write it, `problem` what is wrong where the kind's words do not say it (`{key}`,
    `{value!r}`, `{low}` filled in). Slots, not a NamedTuple: cheaper to define on every replay's start."""

    __slots__ = ("default", "doc", "fix", "index", "kind", "name", "null", "problem", "required", "rows", "values")

    def __init__(
        self,
        name: str,
        kind: str,
        doc: str = "",
        fix: str = "",
        values: tuple[Any, ...] = (),  # a choice's values; an int's (least, most); seconds' most; a list's ("unique",)
        rows: tuple[Field, ...] = (),  # a mapping's keys; a list's one row for its items (named for what they are)
        default: Any = None,  # the value when absent (or null, where `null` says null means absent)
        null: bool = False,
        required: bool = False,  # absent is checked as null (and so refused)
        problem: str = "",
    ) -> None:
        self.name, self.kind, self.doc, self.fix, self.values = name, kind, doc, fix, values
        self.rows, self.default, self.null, self.required, self.problem = rows, default, null, required, problem
        # What `_fields` reads for each mapping: the rows by name, the values of those absent, the required ones.
        absent = {row.name: row.default for row in rows if not row.required}
        self.index = ({row.name: row for row in rows}, absent, tuple(row for row in rows if row.required))


_DAY = 86400.0  # the most replay waits: more is a mistake, and the timers that wait it out have limits of their own
_TOOK_FIX = "write the seconds the answer took, e.g. `took: 0.25` (`--timing recorded` waits that long)"
_EXIT_FIX = "write `exit: 1` (after the reply) or `exit: {status: 1, when: before}`"
_ANSWER_FIX = "write e.g. `{status: 404, error: {code: -32001, message: Session not found}}`"
_STATUS_FIX = "write e.g. `error_status: [{code: -32602, status: 400}, {code: -32601, status: 404}]`"
_NAMES_FIX = "write `substitute: [PROJECT]`: the names, whose values replay is given on the machine it runs on"
_HTTP_STATUS = "`status` must be an HTTP error status (400-599), not {value!r}"
_CODE = "`code` must be an integer (a JSON-RPC error code)"


# fmt: off
def _http_error(name: str) -> Field:
    return Field(name, "table", fix=_ANSWER_FIX, rows=(
        Field("status", "int", fix=_ANSWER_FIX, values=(400, 599), required=True, problem=_HTTP_STATUS),
        Field("error", "open", fix=_ANSWER_FIX, required=True, rows=(
            Field("code", "int", fix=_ANSWER_FIX, required=True, problem=_CODE),
            Field("message", "string", fix=_ANSWER_FIX, required=True),
        )),
        Field("without_id", "flag", "its body had no `id` member (JSON-RPC's is null)", null=True),
        Field("id_last", "flag", "its body's `id` came after `error`, as the TypeScript SDK writes it", null=True),
    ))


_SERVER_ROWS = (
    Field("at", "seconds", null=True),
    Field("notification", "message"),
    Field("request", "message"),
    Field("response", "response"),
    Field("raw", "text", "a line sent exactly as written"),
    Field("stream", "choice", "get: sent on the session's GET stream (Streamable HTTP); absent: on the request's own",
          f"write `stream: {model.GET_STREAM}` for the session's GET stream, or leave it out for the request's own",
          (model.GET_STREAM,), null=True,
          problem="unknown `stream` {value!r}: it names the stream a Streamable HTTP server sent this on"),
    Field("took", "seconds", "seconds from this server request to the host's answer (informative)", _TOOK_FIX,
          (_DAY,), null=True),
)
_DELAY = Field("delay", "seconds", "seconds to wait before replaying this interaction",
               "write e.g. `delay: 30`; to never answer, use `drop: true`", (_DAY,), default=0.0, null=True)
_SERVER = Field("server", "list", "what the server sent because of the client message, in order",
                "write each as `- notification: {...}`, `- request: {...}` or `- raw: ...`",
                rows=(Field("messages", "server_item", fix="a server item is `notification: {...}`, `request: {...}` "
                            "or `raw: ...`", rows=_SERVER_ROWS),), default=(), null=True)
_DROP = Field("drop", "choice", "true never sends the reply; cut: the answer breaks off there instead (over "
              "Streamable HTTP, the request's stream is cut after the server messages before it)",
              f"write `drop: true` (the reply never comes) or `drop: {model.CUT}` (the answer breaks off there)",
              (False, True, model.CUT), default=False,
              problem=f"`{{key}}` must be true, false or `{model.CUT}`, not {{value!r}}")
_RAW = Field("raw_response", "text", "this exact line is sent instead of the reply; {{id}} becomes the caller's id",
             null=True)
_RESPONSE = Field("response", "response", "the server's answer: `result` or `error`")
_EXIT = Field("exit", "exit", "end the session here: `exit: 1` after the reply, or `{status: 1, when: before}` "
              "instead of it", _EXIT_FIX, rows=(
                  Field("status", "int", fix=_EXIT_FIX, values=(0, 255), required=True,
                        problem="an exit `status` is a whole number from 0 to 255"),
                  Field("when", "choice", values=model.EXIT_WHEN, default=model.EXIT_WHEN[0]),
              ))
_ANSWERS_FIX = ("write each answer as an interaction's answer: `- response: {result: ...}`, `- response: {error: "
                "...}`, `- {delay: 2, response: ...}`, `- drop: true`")
_ANSWER_ROWS = (_SERVER, _DROP, _RAW, _RESPONSE, _DELAY, _EXIT)  # `model.ANSWER`: what each scripted answer holds
_INTERACTION_ROWS = (
    Field("at", "seconds", "seconds since the session began (informative; used by --timing recorded)", null=True),
    Field("request", "message", "a request the client sent: method, optional params, optional id (kept for reference)"),
    Field("notification", "message", "a notification the client sent: method, optional params, no id"),
    Field("match", "match", "match rules: a params path, then how its value is compared "
          "(any, type, subset, unordered, regex)"),
    _DELAY,
    Field("times", "times", "how many times this interaction is played before the next recording of the request "
          "takes over; `any`: as often as the host asks (never a repeat, so --strict allows it)",
          "write e.g. `times: 2`", (1,), default=1, problem="`{key}` must be a whole number, at least {low}, or `any`"),
    Field("after", "choice", "once the last recording of a request has played its `times`: repeat it, or answer "
          "unmatched", values=(model.REPEAT, model.UNMATCHED), default=model.REPEAT),
    _SERVER, _DROP, _RAW, _RESPONSE, _EXIT,
    Field("took", "seconds", "seconds from request to response (informative; used by --timing recorded)", _TOOK_FIX,
          (_DAY,), null=True),
    Field("session", "int", "which recorded session the interaction belongs to, in a cassette of several",
          "write e.g. `session: 1`", (0,), default=0),
    Field("expect", "choice", "fault: a deliberate fault, written by hand; lint keeps quiet about its warnings",
          values=(model.FAULT,)),
    Field("answers", "list", "scripted answers, one a play in turn, the last repeating: each holds what an "
          "interaction's answer holds (response, delay, drop, raw_response, exit, server)", _ANSWERS_FIX,
          rows=(Field("answers", "answer", fix=_ANSWERS_FIX, rows=_ANSWER_ROWS),), default=(), null=True),
    Field("optional", "flag", "it may be left unplayed: --strict and the plugin's verdict do not ask for it",
          default=False),
)
_META_ROWS = (
    Field("redact", "table", "what replay redacts in what the host sends, as the recording did",
          "write `redact: {env: [NAME], patterns: [REGEX]}`", null=True, rows=(
              Field("env", "list", "the names of environment variables whose values were redacted",
                    "write `env: [...]`", rows=(Field("strings", "string"),), null=True),
              Field("patterns", "list", "regular expressions whose matches were redacted", "write `patterns: [...]`",
                    rows=(Field("strings", "regex", fix=f"fix the pattern ({SYNTAX})"),), null=True),
          )),
    Field("substitute", "list", "the names of the placeholders ${NAME} standing for values of the machine that "
          "recorded; replay is given each one's value on its own machine", _NAMES_FIX, ("unique",),
          (Field("names", "name", fix=_NAMES_FIX),), null=True),
    Field("match", "table", "match rules for the whole cassette", "write `match: {ignore: [arguments.when]}`",
          null=True, rows=(
              Field("ignore", "list", "params paths left out of matching, as --ignore does",
                    "write `ignore: [arguments.when]`", rows=(Field("params paths", "path"),), null=True),
          )),
    Field("closed_world", "flag", "true: a call of a tool no recording answers is refused at once, naming the tools "
          "the cassette answers (not an explained miss)", null=True),
    Field("http", "table", "how the recorded Streamable HTTP server framed its answers; replay does the same",
          "write e.g. `http: {framing: sse, event_ids: true, get_stream: true}`", null=True, rows=(
              Field("framing", "choice", "json: a JSON body if it can; sse: SSE",
                    "write `framing: sse` (an SSE stream for every request) or `framing: json` (a JSON body when "
                    "it can)", ("json", "sse"), null=True, problem="`framing` is json or sse, not {value!r}"),
              Field("event_ids", "flag", "its SSE events carried ids", null=True),
              Field("priming", "flag", "each stream began with an id alone", null=True),
              Field("get_stream", "flag", "it offered a GET stream (false: 405)", null=True),
              Field("session_errors", "table", "its answers to a session id it did not know, or to none where one "
                    "was needed", "write `session_errors: {unknown: {status: 404, error: {...}}}`", null=True,
                    rows=(_http_error("unknown"), _http_error("missing"))),
              Field("error_status", "list", "the HTTP status of a lone reply holding each JSON-RPC error code",
                    _STATUS_FIX, null=True, rows=(Field("{code, status}", "table", fix=_STATUS_FIX, rows=(
                        Field("code", "int", fix=_STATUS_FIX, required=True, problem=_CODE),
                        Field("status", "int", fix=_STATUS_FIX, values=(400, 599), required=True,
                              problem=_HTTP_STATUS),
                    )),)),
          )),
)
CASSETTE = Field("", "table", "A recorded MCP session, both directions, in order (docs/cassette-format.md).",
                 "a cassette is a mapping with `version`, `meta` and `interactions`", rows=(
    Field("version", "choice", f"the cassette format; this mockmcp reads {model.FORMAT_VERSION}",
          f"set `version: {model.FORMAT_VERSION}`, or upgrade mockmcp if the cassette comes from a newer one",
          (model.FORMAT_VERSION,), required=True,
          problem=f"unknown cassette version {{value!r}}; this mockmcp reads version {model.FORMAT_VERSION}"),
    Field("meta", "open", "facts about the recording; `redact`, `substitute` and `match` are used by matching, "
          "`http` by replay over HTTP", "`meta` holds free-form facts about the recording as a mapping",
          rows=_META_ROWS, null=True),
    Field("interactions", "list", fix="write `interactions:` followed by `- request: ...` items", required=True,
          rows=(Field("", "interaction", fix="each interaction is a mapping with `request`, `notification` or "
                      "`server`", rows=_INTERACTION_ROWS),)),
))
REQUEST_ONLY = ("times", "after", "drop", "raw_response", "exit", "match", "answers", "optional")  # of requests only
MATCHER = Field("", "table", fix=f"use one of: {', '.join(model.MATCHERS)}, or {{regex: PATTERN}}, {{type: NAME}}",
                rows=(  # a matcher that is no word of `model.MATCHERS`: one of these, with its argument
    Field("regex", "regex", "a pattern the whole string matches",
          f"fix the pattern ({SYNTAX}; quote it in YAML)"),
    Field("type", "choice", values=JSON_TYPES, problem="unknown JSON type {value!r}"),
))
# fmt: on


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


def cassette(data: Any, path: str | None, served: bool = True) -> Cassette:
    """Validate plain data into a Cassette; raises Problem. `served=False` leaves out `served_problems`
    (`store.load`, for data cached from this very file, which passed them when it was cached)."""
    _json_data(_mapping(data, (), CASSETTE.fix))
    interactions = tuple(_table(data, (), CASSETTE)["interactions"])
    for problem in served_problems(list(enumerate(interactions))) if served else ():
        raise problem
    return Cassette(interactions, data.get("meta") or {}, path)


def problems(data: Any) -> tuple[list[Problem], list[tuple[int, Interaction]]]:
    """Every problem `cassette` would raise one at a time (lint's), and the valid interactions: each unknown
    key, then at most one other problem per interaction, since what follows a broken value cannot be judged."""
    if not isinstance(data, dict):
        return [Problem((), f"expected a mapping, got {yaml_type(data)}", "a cassette is a mapping")], []
    found, valid = _unknown_keys(data, (), CASSETTE), list[tuple[int, Interaction]]()
    try:
        cassette({"version": data.get("version"), "meta": data.get("meta"), "interactions": []}, None)
    except Problem as problem:
        found.append(problem)
    items = data.get("interactions")
    for index, value in enumerate(items if isinstance(items, list) else ()):
        place: Place = ("interactions", index)
        unknown = _unknown_keys(value, place, _INTERACTION) if isinstance(value, dict) else []
        found += unknown
        try:
            if not unknown:
                _json_data(value, place)
                valid.append((index, _interaction(value, place, _INTERACTION)))
        except Problem as problem:
            found.append(problem)
    return found + served_problems(valid), valid


# --- each kind of value: (value, place, row) -> the value as the model holds it, or Problem ---------------


def _fields(data: dict[str, Any], place: Place, table: Field) -> dict[str, Any]:
    """Each row's value in data, checked in the order of the text; a row absent (or null, where `null` says
    null means absent) has its default."""
    names, defaults, required = table.index
    values = defaults.copy()
    for key, value in data.items():
        row = names.get(key)
        if row is not None and (value is not None or not row.null):
            values[key] = KINDS[row.kind](value, place + (key,), row)
    for row in required:
        if row.name not in data:
            values[row.name] = KINDS[row.kind](None, place + (row.name,), row)
    return values


def _table(value: Any, place: Place, row: Field) -> dict[str, Any]:
    return _fields(_mapping(value, place, row.fix, None if row.kind == "open" else row), place, row)


def _list(value: Any, place: Place, row: Field) -> list[Any]:
    (item,) = row.rows
    if not isinstance(value, list) or (item.kind in _STRINGS and not all(isinstance(one, str) for one in value)):
        raise Problem(place, f"`{place[-1]}` must be a list" + (f" of {item.name}" if item.name else ""), row.fix)
    checked = []
    for index, one in enumerate(value):
        checked.append(KINDS[item.kind](one, place + (index,), item))
        if row.values and one in value[:index]:
            raise Problem(place + (index,), f"{one!r} is named twice", "name it once")
    return checked


def _int(value: Any, place: Place, row: Field) -> int:
    low, high = (*row.values, None, None)[:2]
    if isinstance(value, int) and not isinstance(value, bool) and (low is None or low <= value <= (high or value)):
        return value
    problem = row.problem or "`{key}` must be a whole number, at least {low}"
    raise Problem(place, problem.format(key=place[-1], value=value, low=low), row.fix)


def _times(value: Any, place: Place, row: Field) -> int | str:
    return model.ANY_TIMES if value == model.ANY_TIMES else _int(value, place, row)


def _seconds(value: Any, place: Place, row: Field) -> float:
    key = place[-1]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise Problem(place, f"`{key}` must be a number of seconds, at least 0", f"write e.g. `{key}: 0.5`")
    if row.values and value > row.values[0]:
        raise Problem(place, f"`{key}` is at most {row.values[0]:.0f} seconds (a day), not {float(value):g}", row.fix)
    return float(value)


def _choice(value: Any, place: Place, row: Field) -> Any:
    for choice in row.values:  # `true` is not `1`, nor `1` true: a bool matches a bool only
        if choice == value and isinstance(choice, bool) == isinstance(value, bool):
            return choice
    problem = (row.problem or "unknown `{key}` {value!r}").format(key=place[-1], value=value)
    quote = " (quoted: YAML reads a bare null as nothing)" if value is None and "null" in row.values else ""
    raise Problem(place, problem, row.fix or f"use one of: {', '.join(map(str, row.values))}{quote}")


def _typed(value: Any, place: Place, row: Field) -> Any:
    kind, problem, fix = _TYPED[row.kind]
    if not isinstance(value, kind):
        raise Problem(place, problem.format(key=place[-1]), fix.format(key=place[-1]) or row.fix)
    return value


_TYPED = {  # the kinds that are a JSON type and nothing more: (the type, what is wrong, how to fix it)
    "flag": (bool, "`{key}` must be true or false", "write `{key}: true`"),
    "string": (str, "`{key}` must be a string", ""),
    "text": (str, "`{key}` is the exact line to send, as a string", "quote the line"),
}


def _regex(value: Any, place: Place, row: Field) -> str:
    if not isinstance(value, str):
        raise Problem(place, f"a `{place[-1]}` is a string", "quote the pattern")
    try:
        compile_pattern(value)
    except ValueError as exc:
        raise Problem(place, f"{value!r} is not a regular expression mockmcp takes: {exc}", row.fix) from None
    return value


def _name(value: str, place: Place, row: Field) -> str:
    try:
        return substitution_name(value, "substitute")
    except UsageError as error:
        raise Problem(place, error.problem, row.fix) from None


def _path(value: Any, place: Place, row: Field) -> Any:
    try:
        parse_path(value if isinstance(value, str) else "")
    except UsageError as error:
        raise Problem(place, error.problem, error.fix or "") from None
    return value


def _exit(value: Any, place: Place, row: Field) -> tuple[int, str]:
    values = _table({"status": value} if isinstance(value, int) and not isinstance(value, bool) else value, place, row)
    return values["status"], values["when"]


def _message(data: Any, place: Place, row: Field) -> dict[str, Any]:
    message = _mapping(data, place, "a message is a mapping with `method` and optional `params`")
    if not isinstance(message.get("method"), str):
        fix = _meant(message, ("method",)) or "add e.g. `method: tools/call`"
        raise Problem(place, "a message needs a `method` string", fix)
    params = message.get("params", {})
    if not isinstance(params, (dict, list)):
        problem = f"`params` must be a mapping (or, by position, a list), not {yaml_type(params)}"
        raise Problem(place + ("params",), problem, "write the params as `key: value` lines")
    if "id" in message and not (row.name == REQUEST and is_valid_id(message["id"])):
        fix = "use a string or an integer" if row.name == REQUEST else "remove `id`: a notification has none"
        raise Problem(place + ("id",), "bad `id`", fix)
    return message


def response(data: Any, place: Place = (), row: Field | None = None) -> dict[str, Any]:
    """A response as a cassette keeps it (without `id`), or Problem. Keys besides `result` and `error` are kept
    and replayed as on the wire (the recorder keeps what a server adds); `mockmcp lint` warns about them."""
    answer = _mapping(data, place, "a response is a mapping with `result` or `error`")
    if ("result" in answer) == ("error" in answer):
        fix = _meant(answer, ("result", "error")) or "keep the one the server sent"
        raise Problem(place, "a response has exactly one of `result` and `error`", fix)
    error = _mapping(answer.get("error", {}), place + ("error",), "an error is a mapping with `code` and `message`")
    if "error" in answer and (isinstance(error.get("code"), bool) or not isinstance(error.get("code"), int)):
        fix = _meant(error, ("code",)) or "use e.g. -32602 (invalid params)"
        raise Problem(place + ("error", "code"), "an error `code` must be an integer", fix)
    if "error" in answer and not isinstance(error.get("message"), str):
        fix = _meant(error, ("message",)) or "add `message: ...`"
        raise Problem(place + ("error", "message"), "an error needs a `message` string", fix)
    return answer


def served_response(method: str, data: Any, place: Place = ()) -> dict[str, Any]:
    """A response `response` takes, whose result a host reads as MCP defines it (`shapes.answer_flaws`)."""
    from mockmcp.cassette import shapes  # deferred: off the launch path (see `served_problems`)

    answer = response(data, place)
    for flaw in shapes.answer_flaws(method, answer.get("result"), place + ("result",)) if "result" in answer else ():
        raise Problem(*flaw)
    return answer


def _match(data: Any, place: Place, row: Field) -> dict[str, Any]:
    """A request's `match:`, params path -> matcher (a word of `model.MATCHERS`, or one of `MATCHER`)."""
    rules = _mapping(data, place, "write e.g. `match: {arguments.query: any}`: a params path, then its matcher")
    arguments = tuple(MATCHER.index[0])  # the matchers that take an argument
    for path, matcher in rules.items():
        at = place + (path,)
        _path(path, at, row)
        if isinstance(matcher, str) and matcher in arguments and matcher not in model.MATCHERS:
            raise Problem(at, f"`{matcher}` needs its argument", f"write `{{{matcher}: ...}}`")
        if isinstance(matcher, str) and matcher not in model.MATCHERS:
            miss = _near(matcher, model.MATCHERS + arguments)
            hint = f"did you mean `{miss}`? " if miss else ""
            raise Problem(at, f"unknown matcher {matcher!r}", hint + MATCHER.fix)
        if not isinstance(matcher, (str, dict)) or (isinstance(matcher, dict) and len(matcher) != 1):
            problem = f"a matcher is a word or a mapping of one key, not {yaml_type(matcher)}"
            raise Problem(at, problem, MATCHER.fix)
        if isinstance(matcher, dict):
            _table(matcher, at, MATCHER)
    return rules


# --- what is not one field's: an interaction's client message, and a server item's kind ---------------


def _interaction(data: Any, place: Place, row: Field) -> Interaction:
    _mapping(data, place, row.fix, row)
    kinds = [key for key in (REQUEST, NOTIFICATION) if key in data]
    kind = kinds[0] if kinds else model.SERVER
    if len(kinds) > 1:
        problem = "an interaction has one client message: `request` or `notification`, not both"
        raise Problem(place, problem, "split it into two interactions")
    if not kinds and model.SERVER not in data:
        problem = "empty interaction: no `request`, `notification` or `server`"
        raise Problem(place, problem, "add the client's message, or remove the item")
    if "response" in data and kind != REQUEST:
        problem = f"only a request gets a response, and this is a {kind}"
        raise Problem(place + ("response",), problem, "remove `response`, or make the client message a `request`")
    for knob in (knob for knob in REQUEST_ONLY if knob in data and kind != REQUEST):
        raise Problem(place + (knob,), f"`{knob}` applies to requests only, and this is a {kind}", f"remove `{knob}`")
    if data.get("times") == model.ANY_TIMES and "after" in data:
        problem = f"`after` never applies to an interaction with `times: {model.ANY_TIMES}`, which is never used up"
        raise Problem(place + ("after",), problem, "remove `after`, or give `times` a number")
    scripted = [key for key in model.ANSWER if key in data] if data.get("answers") is not None else []
    if scripted:
        problem = f"`{scripted[0]}` beside `answers`: each scripted answer holds its own"
        raise Problem(place + (scripted[0],), problem, f"move `{scripted[0]}` into the answers it belongs to")
    if data.get("answers") == []:
        raise Problem(place + ("answers",), "`answers` is empty", _ANSWERS_FIX)
    values = _fields(data, place, row)
    message, server = values[kind] if kinds else None, tuple(values.pop(model.SERVER))
    del values[REQUEST], values[NOTIFICATION]
    values["answers"] = tuple(values["answers"])
    marks = (model.FAULT,) * (values.pop("expect") == model.FAULT) + (model.OPTIONAL,) * values.pop("optional")
    marks += (model.UNMATCHED,) * (values.pop("after") == model.UNMATCHED)
    return Interaction(kind, message, server, **values, marks=marks)


def _answer(data: Any, place: Place, row: Field) -> Interaction:
    """One scripted answer: the keys of an interaction's answer (`model.ANSWER`), as an interaction holding them."""
    values = _table(data, place, row)
    return Interaction(REQUEST, None, tuple(values.pop(model.SERVER)), **values)


def _server_item(data: Any, place: Place, row: Field) -> ServerItem:
    _mapping(data, place, row.fix, row)
    kinds = [key for key in (NOTIFICATION, REQUEST, model.RAW) if key in data]
    if len(kinds) != 1:
        problem = "a server item has exactly one of `notification`, `request` and `raw`"
        raise Problem(place, problem, "split it into several items")
    if NOTIFICATION in data and "response" in data:
        _message(data[NOTIFICATION], place + (NOTIFICATION,), row.rows[1])  # a problem of its own comes first
        raise Problem(place + ("response",), "a notification gets no response", "remove `response`")
    values = _fields(data, place, row)
    if values["took"] is not None and values["response"] is None:
        problem = "`took` is the time the host took to answer a server request: this item has no `response`"
        raise Problem(place + ("took",), problem, "remove `took`, or add the host's `response`")
    return ServerItem(kinds[0], values[kinds[0]], values["response"], values["at"], values["stream"], values["took"])


# fmt: off
KINDS = {  # each kind of value by its name in the table, and its check (`schema` emits each too)
    "open": _table, "table": _table,  # a mapping that may hold keys besides its rows' (`open`), or may not
    "list": _list, "int": _int, "times": _times, "seconds": _seconds, "choice": _choice,
    "flag": _typed, "string": _typed, "text": _typed, "regex": _regex, "name": _name, "path": _path,
    "exit": _exit, "message": _message, "response": response, "match": _match,
    "interaction": _interaction, "server_item": _server_item, "answer": _answer,
}
# fmt: on
_STRINGS = ("string", "regex", "name")  # a list of these is refused whole when an item is no string
_INTERACTION = CASSETTE.rows[2].rows[0]


# --- mappings, keys and near misses ----------------------------------------------------------------


def _near(key: str, known: tuple[str, ...]) -> str | None:
    from mockmcp.cassette.shapes import near  # deferred: only a cassette with a problem needs it

    return near(key, known)


def _meant(data: dict[str, Any], wanted: tuple[str, ...]) -> str | None:
    """`rename `reslt` to `result``, when a key of data is a near miss of a wanted one it lacks; else None."""
    for key in data:
        miss = _near(str(key), wanted)
        if miss is not None and miss not in data:
            return f"did you mean `{miss}`? rename `{key}` to `{miss}`"
    return None


def _mapping(data: Any, place: Place, fix: str, table: Field | None = None) -> dict[str, Any]:
    """data itself, known to be a mapping (with no key but the rows of `table`, if given); else Problem."""
    if not isinstance(data, dict):
        raise Problem(place, f"expected a mapping, got {yaml_type(data)}", fix)
    for problem in _unknown_keys(data, place, table) if table is not None else ():
        raise problem
    return data


def _unknown_keys(data: dict[str, Any], place: Place, table: Field) -> list[Problem]:
    found = []
    for key in (key for key in data if key not in table.index[0]):
        known = tuple(table.index[0])
        miss = _near(str(key), known)
        fix = (f"did you mean `{miss}`? " if miss else "") + f"use one of: {', '.join(known)}"
        found.append(Problem(place + (str(key),), f"unknown key {key!r}", fix))
    return found


# --- JSON data (what YAML can say and JSON-RPC cannot) ------------------------------------------------


def _json_data(data: Any, at: Place = ()) -> None:
    """Raises Problem for the first value that is not JSON data nested within bounds: YAML can also say binary,
    sets, timestamps, non-string keys, NaN and infinity, which a strict JSON reader refuses. Its own stack: a
    deep value is a located Problem, never a RecursionError. Run on every load: a plain scalar costs one test."""
    stack: list[tuple[Place, Any]] = [(at, data)]
    while stack:
        place, value = stack.pop()
        kind = type(value)
        if kind is not dict and kind is not list:
            _scalar(value, place)
            continue
        # A message is `interactions[i].request` (3 places down) or `interactions[i].server[j].request` (5).
        if len(place) > MAX_DEPTH:  # as `jsonrpc.parse` reads them
            envelope = 4 if place[2:3] == ("server",) else 2 if place[:1] == ("interactions",) else 0
            if len(place) - envelope > MAX_DEPTH:
                raise Problem(place[:_SHOWN], _TOO_DEEP, "flatten the value, or keep the message as a `raw` line")
        for key, item in value.items() if kind is dict else enumerate(value):
            if kind is dict and not isinstance(key, str):
                problem = f"the key {key!r} is {_kind(key)}; JSON keys are strings"
                raise Problem(place + (str(key),), problem, f'quote the key: `"{key}": ...`')
            sort = type(item)
            if not (sort is str or sort is int or sort is bool or item is None):
                stack.append((place + (key,), item))


def _scalar(value: Any, place: Place) -> None:
    if isinstance(value, float) and not -_LARGEST <= value <= _LARGEST:  # also NaN
        problem = f"{value} is not a JSON number (`.nan`, `.inf` or a number too large for a float)"
        raise Problem(place, problem, "write a finite number, or quote it to keep it as text")
    if not (value is None or isinstance(value, (str, int, float))):  # bool is an int
        fix = _NOT_JSON.get(type(value).__name__, ("", "quote it to keep it as a string"))[1]
        raise Problem(place, f"{_kind(value)} is not JSON data", fix)


_LARGEST = 1.7976931348623157e308
_SHOWN = 8  # how much of a too-deep place an error spells out
_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep below here; mockmcp reads messages up to {MAX_DEPTH} levels"
_NOT_JSON = {  # what YAML can say and JSON cannot: what it is, and how to write it instead
    "bytes": ("binary data (`!!binary`)",
              "write binary data as a base64 string (without `!!binary`), as MCP does for blobs"),
    "set": ("a set (`!!set`)", "write a list (`[a, b]`) instead of `!!set`"),
    "date": ("a date (`!!timestamp`)", "quote it (`'2025-01-01'`): JSON has no dates, only strings"),
    "datetime": ("a timestamp (`!!timestamp`)",
                 "quote it (`'2025-01-01T10:00:00Z'`): JSON has no timestamps, only strings"),
}  # fmt: skip


def _kind(value: Any) -> str:
    return _NOT_JSON.get(type(value).__name__, (yaml_type(value),))[0]


# --- what replay serves: answers a host can read, and an answer for every request -------------------------


def served_problems(interactions: list[tuple[int, Interaction]]) -> list[Problem]:
    """What replay would serve wrongly, for interactions valid one by one (with their places), in order: a
    result a host cannot read as meant (`shapes.answer_flaws`), where it is sent; a request that nothing
    answers and nothing says why (`drop`, `raw_response`, `exit`, a later cancel of its id in its session, a
    `subscriptions/listen`): the host would wait for ever. Left out of a load from the cache (the launch path)."""
    from mockmcp.cassette import shapes  # deferred: see above

    def key(one: Interaction, request_id: Any) -> tuple[int, bool, Any]:  # ids as JSON types tell them apart
        return one.session, isinstance(request_id, str), request_id

    cancels = {}  # each cancelled request's key -> its last cancel
    for index, one in interactions:
        request_id = cancelled_request(one.params) if one.kind == NOTIFICATION and one.method == CANCELLED else None
        if request_id is not None:
            cancels[key(one, request_id)] = index
    found: list[Problem] = []
    for index, one in interactions:
        if one.kind != REQUEST:
            continue
        place: Place = ("interactions", index)
        cancelled = cancels.get(key(one, (one.message or {}).get("id")), -1) > index
        turns = [(place + ("answers", n), one.played(n)) for n in range(len(one.answers))] or [(place, one)]
        for at, played in turns:
            sent = not played.drop and played.raw_response is None
            sent = sent and not (played.exit is not None and played.exit[1] == "before")
            if played.response is not None and sent and "result" in played.response:
                at += ("response", "result")
                found += [
                    Problem(*flaw) for flaw in shapes.answer_flaws(str(one.method), played.response["result"], at)
                ]
            elif played.response is None and not (
                cancelled or not sent or played.exit is not None or one.method == LISTEN
            ):
                found.append(_unanswered(played, at))
    return found


def _unanswered(interaction: Interaction, place: Place) -> Problem:
    message = interaction.message or {}
    inside = next((str(key) for key in message if key == "response" or _near(str(key), ("response",))), None)
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
