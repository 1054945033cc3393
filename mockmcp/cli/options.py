"""The commands' options as data, and the parsers of option values: one definition, two readers.

A host's tests start `mockmcp replay` (or `exec`) once per test, and importing click costs more than
the rest of a cached replay's start. So the launcher reads a plain, well-formed command line itself
from these tables (`read_plain`) and hands anything else to click, whose commands (`mockmcp.cli.app`)
are built from the same tables and call the same parsers: help, errors and values cannot drift apart.
One `Param` per concept (docs/cli.md, "One word per concept"). On the launch path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from mockmcp._wire.namedtuple import NamedTuple
from mockmcp._wire.protocol import SESSION_IDLE
from mockmcp._wire.words import RecordMode, parse_substitution, timing_factor
from mockmcp.errors import UsageError
from mockmcp.options import BOUNDS, Bounds, RecordOptions, ReplayOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "EXEC",
    "PARSERS",
    "Param",
    "RECORD",
    "REPLAY",
    "STDIO",
    "Serving",
    "apart_from",
    "build",
    "option",
    "read_plain",
]


class Serving(NamedTuple):
    """Where a replay (or a recording proxy) is served: over stdio, or over Streamable HTTP at listen."""

    listen: tuple[str, int] | None = None  # (host, port); None: stdio
    allow_hosts: tuple[str, ...] = ()  # names requests may give in Host and Origin, beyond loopback
    state: str | None = None  # over stdio: the file of the recorded sessions earlier replays took


STDIO = Serving()
PLAIN = ReplayOptions()  # answer at once, match exactly, judge nothing, write no report


def build(kind: Any, values: dict[str, Any]) -> Any:
    """A value of `kind` (ReplayOptions, RecordOptions, Serving, Bounds) from a command's values, field by name."""
    return kind(**{name: values[name] for name in kind._fields if name in values})


def replay_call(values: dict[str, Any]) -> tuple[str, ReplayOptions, Serving, Bounds]:
    """`replay_cassette`'s arguments from the values of REPLAY, as both readers of the command line give them."""
    return values["cassette"], build(ReplayOptions, values), build(Serving, values), build(Bounds, values)


def apart_from(cassette: str, outputs: Iterable[tuple[str, str | None]]) -> None:
    """Refuse (UsageError) an output, (option, FILE or None), that is the cassette or an earlier output: the same
    path resolved, or the same file by another name."""
    seen: list[tuple[str, str]] = [("", cassette)]
    for option, output in outputs:
        if not output:
            continue
        written = output.replace("{pid}", str(os.getpid()))
        for earlier, path in seen:
            if _same_file(written, path):
                what = f"the output of {earlier}" if earlier else "the cassette itself"
                harm = "the other" if earlier else "the recording"
                raise UsageError(
                    f"{option} {output} names {what}: writing it would overwrite {harm}",
                    f"write {option.lstrip('-')} to another file, e.g. {option} "
                    f"{os.path.splitext(cassette)[0]}.{_SUFFIX.get(option, 'report.json')}",
                )
        seen.append((option, written))


_SUFFIX = {"--html": "html", "--state": "state.json"}


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist (yet): the paths, resolved
        return os.path.realpath(one) == os.path.realpath(other)


def parse_listen(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` (HOST defaults to 127.0.0.1; `[::1]:8000` for IPv6). Returns (host, port); raises UsageError."""
    host, _, port = text.rpartition(":")
    try:
        number = int(port)
        if not 0 <= number <= 65535:
            raise ValueError
    except ValueError:
        raise UsageError(
            f"cannot read {text!r} as [HOST:]PORT", "write e.g. 8000 or 127.0.0.1:8000 (port 0: any free port)"
        ) from None
    return (host.strip("[]") or "127.0.0.1"), number


def parse_seconds(text: str, never: bool = False) -> float | None:
    """SECONDS: a number, 0 or more (with never: more than 0, or `never`, read as None); raises UsageError."""
    if never and text == "never":
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not (seconds > 0 if never else seconds >= 0) or seconds == float("inf"):  # also refuses NaN
        fix = "write a number of seconds, e.g. 2 or 0.5" + (", or never" if never else "")
        raise UsageError(f"cannot read {text!r} as seconds", fix)
    return seconds


def _plain_folder(text: str) -> str:
    """A folder path as click.Path(file_okay=False) takes it; refuses (for click to explain) a file."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise UsageError(f"{text!r} is a file, not a folder")
    return text


def _plain_file(text: str) -> str:
    """A file path as click.Path(dir_okay=False) takes it; refuses (for click to explain) what click would refuse."""
    if os.path.isdir(text) or (os.path.exists(text) and not os.access(text, os.R_OK)):
        raise UsageError(f"{text!r} is a folder or cannot be read")
    return text


# A value kind's parser; mockmcp.cli.app's click types call the same. The launcher refuses a record mode's
# old spelling, so that click reads it and says it is deprecated.
PARSERS: dict[str, Callable[[str], Any]] = {
    "seconds": parse_seconds,
    "idle": lambda text: parse_seconds(text, never=True),
    "record_mode": lambda text: RecordMode.parse(text, old=False),
    "any_mode": lambda text: RecordMode.parse(text, allow_none=True, old=False),
    "file": _plain_file,
    "folder": _plain_folder,
    "text": str,
    "timing": timing_factor,
    "listen": parse_listen,
    "substitution": parse_substitution,
}


class Param(NamedTuple):
    """One parameter of a command: where its value goes, how it is written, how its text is read."""

    dest: str  # the command function's parameter (a field of an options value where there is one)
    flags: tuple[str, ...]  # () for a positional argument
    kind: str  # "flag", or a key of PARSERS
    help: str = ""
    metavar: str | None = None
    default: str | None = None  # as written on the command line; parsed like a given value
    multiple: bool = False
    required: bool = False  # an option that must be given (the launcher leaves a command line without it to click)


def option(spelling: str, dest: str, kind: str, help: str, **more: Any) -> Param:
    """A Param written as help shows it: `"-o --output CASSETTE"` (the metavar last, in capitals or brackets)."""
    words = spelling.split()
    metavar = words.pop() if not words[-1].startswith("-") else None
    return Param(dest, tuple(words), kind, help, metavar, **more)


# The parameters, one per concept, shared by the commands that take it: a table, laid out by hand.
# fmt: off
CASSETTE = Param("cassette", (), "file", metavar="CASSETTE")
# Where a server's command line follows (record, exec), the cassette is an option: the one file written.
CASSETTE_OPTION = option("-o --output CASSETTE", "cassette", "file", "The cassette to write.", required=True)
IGNORE = option(
    "--ignore PATH", "ignores", "text", "A params path left out of matching (repeatable), e.g. arguments.when.",
    multiple=True,
)
SUBSTITUTE = option(
    "--substitute NAME[=VALUE]", "substitutions", "substitution",
    "The placeholder ${NAME} stands for VALUE on this machine (NAME alone: the environment variable NAME's value): "
    "recording writes it in VALUE's place, replay and verify put VALUE back (repeatable).",
    multiple=True,
)
STRICT = option(
    "--strict", "strict", "flag", "Exit 1 when a request missed, a recorded interaction was never played, the host "
    "answered a server request otherwise than recorded, or a server request was withheld.",
)
CLOSED_WORLD = option(
    "--closed-world", "closed_world", "flag", "Refuse at once a call of a tool the cassette does not answer, naming "
    "the tools it answers (as the cassette's meta.closed_world: true).",
)
REPORT = option("--report FILE", "report", "file", "Write the session's JSON report to FILE ({pid}: the process id).")
HTML = option(
    "--html FILE", "html", "file", "Write the session as an HTML timeline to FILE when it ends ({pid} as in "
    "--report): what was recorded beside what the host did, each miss with the closest recordings.",
)
LISTEN = option(
    "--http [HOST:]PORT", "listen", "listen", "Serve over Streamable HTTP at http://HOST:PORT/mcp (and legacy "
    "HTTP+SSE at /sse) instead of stdio (HOST: 127.0.0.1; port 0: any free one, the URL is printed on stderr; needs "
    "mockmcp[http]).",
)
ALLOW_HOST = option(
    "--allow-host NAME", "allow_hosts", "text", "With --http: a host name or address requests may name in Host and "
    "Origin, beyond loopback and the bound address (repeatable).", multiple=True,
)
TARGET = option(
    "--http-target URL", "target", "text", "Record a Streamable HTTP server instead: a proxy at --http (default: "
    "any free port) to this endpoint URL (a legacy HTTP+SSE server's: its SSE URL; needs mockmcp[http]).",
)
RECORD_MODE = option(
    "--record-mode MODE", "mode", "record_mode", "once: record only if the cassette does not exist, else replay "
    "it; new_episodes: add this session to the cassette; rewrite: record afresh.", default="once",
)
REDACT_ENV = option(
    "--redact-env NAME", "redact_env", "text", "Replace the value of this environment variable wherever it "
    "appears (repeatable).", multiple=True,
)
REDACT = option(
    "--redact REGEX", "redact_patterns", "text", "Replace whatever matches it (repeatable).", multiple=True
)
GRACE = option(
    "--grace SECONDS", "grace", "seconds", "Seconds the server gets to exit after stdin closes and the requests in "
    "flight are answered (a line it is sending is let through first), and again after SIGTERM.",
    default=f"{RecordOptions().grace:g}",
)
CASSETTES = option(
    "--cassettes DIR", "folder", "folder", "Where the servers' cassettes are, one per server (a folder), each named "
    "after its server's command line as interception names it.", default="cassettes",
)
PROJECT = option(
    "--project DIR", "project", "folder", "With --cassettes: the host's folder, which paths on a server's command "
    "line are written relative to (default: the current folder).",
)
UPSTREAM_TIMEOUT = option(
    "--upstream-timeout SECONDS", "upstream_timeout", "seconds", "With --http-target: how long the target may "
    "take to start answering a request (504 after).", default=f"{BOUNDS.upstream_timeout:g}",
)

REPLAY = (
    CASSETTE, IGNORE, SUBSTITUTE, STRICT, CLOSED_WORLD, REPORT, HTML,
    option(
        "--timing HOW", "timing", "timing", "none: answer at once; recorded: as fast as the server did; or a "
        "factor scaling that (0.5 is twice as fast).", default="none",
    ),
    LISTEN, ALLOW_HOST,
    option(
        "--state FILE", "state", "file", "Over stdio: keep in this file which recorded sessions earlier replays "
        "took (created if missing), so this one starts from the next, as a host that starts one server per call "
        "would see the state evolve as recorded.",
    ),
    option(
        "--session-idle SECONDS", "session_idle", "idle", "With --http: end a session after this many seconds "
        "with no request under way and no GET stream open (its id then answers 404); never: keep it.",
        default=f"{SESSION_IDLE:g}",
    ),
)

# `mockmcp record`'s options; the server's command line follows them.
RECORD = (
    CASSETTE_OPTION, RECORD_MODE, REDACT_ENV, REDACT, SUBSTITUTE, GRACE, TARGET, LISTEN, ALLOW_HOST, UPSTREAM_TIMEOUT,
)

# `mockmcp exec`'s options (replay's apply when it replays, record's when it records); the server's command line
# follows `--`. A replay by exec is on the launch path too.
EXEC = (
    CASSETTE_OPTION._replace(help="The test's cassette, replayed or recorded into (or --cassettes).", required=False),
    CASSETTES._replace(default=None), PROJECT,
    RECORD_MODE._replace(kind="any_mode", help=f"none: replay, a missing cassette is an error; {RECORD_MODE.help}",
                         default="none"),
    STRICT, CLOSED_WORLD, REPORT, IGNORE, SUBSTITUTE, REDACT_ENV, REDACT, GRACE, TARGET, LISTEN,
)
# fmt: on


def read_plain(params: Sequence[Param], args: Sequence[str], declined: Sequence[str] = ()) -> dict[str, Any] | None:
    """The values of a plain, well-formed command line, as click would read them; None for anything else (left
    to click, which explains it): an option not in params or in declined, repeated, without its value or with one
    starting with `-`; `--`; a value its parser refuses; a positional argument too many or missing."""
    by_flag = {flag: param for param in params if param.dest not in declined for flag in param.flags}
    texts: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        flag, equals, value = arg.partition("=")
        param = by_flag.get(flag)
        if param is None or (param.dest in texts and not param.multiple):
            return None
        if param.kind == "flag":
            if equals:
                return None
            texts[param.dest] = []
            continue
        if not equals:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        texts.setdefault(param.dest, []).append(value)
    if any(param.required and param.dest not in texts for param in params):
        return None
    arguments = [param for param in params if not param.flags]
    if len(positional) != len(arguments):
        return None
    texts.update((param.dest, [text]) for param, text in zip(arguments, positional, strict=True))
    try:
        return {param.dest: _value(param, texts.get(param.dest)) for param in params}
    except UsageError:
        return None


def _value(param: Param, given: list[str] | None) -> Any:
    """A parameter's value from the texts given for it (None: not given); raises UsageError for a refused text."""
    if param.kind == "flag":
        return given is not None
    written = given if given is not None else ([] if param.default is None else [param.default])
    parsed = [PARSERS[param.kind](text) for text in written]
    return tuple(parsed) if param.multiple else (parsed[-1] if parsed else None)
