"""The commands' options as data, and the parsers of option values: one definition, two readers.

Theory of operation. A host's test suite starts `mockmcp replay` (or `exec`) once per test, and
importing click costs more than everything else a cached replay does before its first answer. So the
launcher (`mockmcp.cli.launch`) reads a plain, well-formed command line itself, from the tables
below, and hands anything else to click: help, an unknown, old or repeated option, a value its
parser refuses, `--http`, another command. The click commands are built from the same tables
(`mockmcp.cli.app`), and click's parameter types call the same parsers, so help, errors and values
cannot drift apart. Each concept is one `Param` written once and shared by every command that takes
it (docs/cli.md, "One word per concept"); the values travel on as `mockmcp.options` values (`build`).

It is on the launch path (docs/architecture.md, "Start-up rules").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from mockmcp.errors import UsageError
from mockmcp.namedtuple import NamedTuple
from mockmcp.options import Bounds, ReplayOptions
from mockmcp.protocol import SESSION_IDLE
from mockmcp.words import RecordMode, parse_substitution, timing_factor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["EXEC", "PARSERS", "Param", "RECORD", "REPLAY", "STDIO", "Serving", "build", "parse_listen", "read_plain"]


class Serving(NamedTuple):
    """Where a replay (or a recording proxy) is served: over stdio, or over Streamable HTTP at listen."""

    listen: tuple[str, int] | None = None  # (host, port); None: stdio
    allow_hosts: tuple[str, ...] = ()  # names requests may give in Host and Origin, beyond loopback
    state: str | None = None  # over stdio: the file of the recorded sessions earlier replays took


STDIO = Serving()
PLAIN = ReplayOptions()  # answer at once, match exactly, judge nothing, write no report
BOUNDS = Bounds()  # the product's


def build(kind: Any, values: dict[str, Any]) -> Any:
    """A value of `kind` (ReplayOptions, RecordOptions, Serving, Bounds) from a command's values, field by name."""
    return kind(**{name: values[name] for name in kind._fields if name in values})


def replay_call(values: dict[str, Any]) -> tuple[str, ReplayOptions, Serving, Bounds]:
    """`replay_cassette`'s arguments from the values of REPLAY, as both readers of the command line give them."""
    return values["cassette"], build(ReplayOptions, values), build(Serving, values), build(Bounds, values)


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


def _plain_file(text: str) -> str:
    """A file path as click.Path(dir_okay=False) takes it; refuses (for click to explain) what click would refuse."""
    if os.path.isdir(text) or (os.path.exists(text) and not os.access(text, os.R_OK)):
        raise UsageError(f"{text!r} is a folder or cannot be read")
    return text


# What a value's kind means to the launcher; mockmcp.cli.app gives click a parameter type of the
# same kind, calling the same parser (click.Path for "file"). The launcher refuses a record mode
# spelled the old way, so that click reads it and says it is deprecated.
PARSERS: dict[str, Callable[[str], Any]] = {
    "seconds": parse_seconds,
    "idle": lambda text: parse_seconds(text, never=True),
    "record_mode": lambda text: RecordMode.parse(text, old=False),
    "any_mode": lambda text: RecordMode.parse(text, allow_none=True, old=False),
    "file": _plain_file,
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


def _also(param: Param, help: str, **changes: Any) -> Param:
    """The same concept with the help a command gives it."""
    return param._replace(help=help, **changes)


CASSETTE = Param("cassette", (), "file", metavar="CASSETTE")
# Where a server's command line follows (record, exec), the cassette is an option: the one file written.
CASSETTE_OPTION = Param(
    "cassette", ("-o", "--output"), "file", "The cassette to write (or replay).", "CASSETTE", required=True
)
IGNORE = Param(
    "ignores",
    ("--ignore",),
    "text",
    "A params path left out of matching (repeatable), e.g. arguments.when.",
    metavar="PATH",
    multiple=True,
)
SUBSTITUTE = Param(
    "substitutions",
    ("--substitute",),
    "substitution",
    "The placeholder ${NAME} stands for VALUE on this machine (NAME alone: the environment variable NAME's "
    "value): recording writes it in VALUE's place, replay and verify put VALUE back (repeatable).",
    metavar="NAME[=VALUE]",
    multiple=True,
)
STRICT = Param(
    "strict",
    ("--strict",),
    "flag",
    "Exit 1 when a request missed, a recorded interaction was never played, the host answered a server "
    "request otherwise than recorded, or a server request was withheld.",
)
REPORT = Param(
    "report", ("--report",), "file", "Write the session's JSON report to FILE ({pid} in it: the process id).", "FILE"
)
HTML = Param(
    "html",
    ("--html",),
    "file",
    "Write the session as an HTML timeline to FILE when it ends ({pid} as in --report): what was recorded "
    "beside what the host did, each miss with the closest recordings and how they differ.",
    metavar="FILE",
)
LISTEN = Param(
    "listen",
    ("--http",),
    "listen",
    "Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: 127.0.0.1; port 0: any free "
    "one, the URL is printed on stderr; needs mockmcp[http]).",
    metavar="[HOST:]PORT",
)
ALLOW_HOST = Param(
    "allow_hosts",
    ("--allow-host",),
    "text",
    "With --http: a host name or address requests may name in Host and Origin, beyond loopback and the "
    "bound address (repeatable).",
    metavar="NAME",
    multiple=True,
)
TARGET = Param(
    "target",
    ("--http-target",),
    "text",
    "Record a Streamable HTTP server instead: a proxy at --http (default: any free port) to this endpoint URL "
    "(needs mockmcp[http]).",
    metavar="URL",
)
RECORD_MODE = Param(
    "mode",
    ("--record-mode",),
    "record_mode",
    "once: record only if the cassette does not exist, else replay it; new_episodes: add this session to the "
    "cassette; rewrite: record afresh.",
    metavar="MODE",
    default="once",
)
REDACT_ENV = Param(
    "redact_env",
    ("--redact-env",),
    "text",
    "Replace the value of this environment variable wherever it appears (repeatable).",
    "NAME",
    multiple=True,
)
REDACT = Param(
    "redact_patterns",
    ("--redact",),
    "text",
    "Replace whatever matches this pattern (repeatable).",
    metavar="REGEX",
    multiple=True,
)
GRACE = Param(
    "grace",
    ("--grace",),
    "seconds",
    "Seconds the server gets to exit after stdin closes and the requests in flight are answered (a line it is "
    "sending is let through first), and again after SIGTERM.",
    metavar="SECONDS",
    default="2",
)
UPSTREAM_TIMEOUT = Param(
    "upstream_timeout",
    ("--upstream-timeout",),
    "seconds",
    "With --http-target: how long the target may take to start answering a request (504 after).",
    metavar="SECONDS",
    default="60",
)

REPLAY = (
    CASSETTE,
    IGNORE,
    _also(
        SUBSTITUTE,
        "The value on this machine of a placeholder the cassette was recorded with, ${NAME} (repeatable); NAME "
        "alone takes the environment variable NAME's value, as does a placeholder not given.",
    ),
    STRICT,
    REPORT,
    HTML,
    Param(
        "timing",
        ("--timing",),
        "timing",
        "none: answer at once; recorded: as fast as the server did; or a factor scaling that (0.5 is twice as fast).",
        metavar="HOW",
        default="none",
    ),
    LISTEN,
    ALLOW_HOST,
    Param(
        "state",
        ("--state",),
        "file",
        "Over stdio: keep in this file which recorded sessions earlier replays took (created if missing), so this "
        "one starts from the next: a host that starts one server per call sees the state evolve as recorded.",
        metavar="FILE",
    ),
    Param(
        "session_idle",
        ("--session-idle",),
        "idle",
        "With --http: end a session after this many seconds with no request under way and no GET stream open, "
        "as the SDK's server does (its id then answers 404); never: keep it until DELETE or the end.",
        metavar="SECONDS",
        default=f"{SESSION_IDLE:g}",
    ),
)

# `mockmcp record`'s options; the server's command line follows them.
RECORD = (
    CASSETTE_OPTION._replace(help="The cassette to write."),
    RECORD_MODE,
    REDACT_ENV,
    REDACT,
    SUBSTITUTE,
    GRACE,
    TARGET,
    _also(LISTEN, "With --http-target: where the proxy listens (default: 127.0.0.1, any free port)."),
    ALLOW_HOST,
    UPSTREAM_TIMEOUT,
)

# `mockmcp exec`'s options; the server's command line follows `--`. A replay by exec is on the launch path too.
EXEC = (
    CASSETTE_OPTION,
    RECORD_MODE._replace(
        kind="any_mode",
        help=f"none: replay, a missing cassette is an error; {RECORD_MODE.help}",
        default="none",
    ),
    _also(STRICT, "When replaying: exit 1 on anything replay --strict refuses."),
    _also(REPORT, "Write what happened as JSON (docs/report.md) to FILE; {pid} in it becomes the process id."),
    _also(IGNORE, "When replaying: as replay --ignore (repeatable)."),
    SUBSTITUTE,
    _also(REDACT_ENV, "When recording: as record --redact-env (repeatable)."),
    _also(REDACT, "When recording: as record --redact (repeatable)."),
    _also(GRACE, "When recording: as record --grace."),
    _also(TARGET, "When recording: record this Streamable HTTP endpoint URL through a proxy at --http."),
    _also(
        LISTEN,
        "Over Streamable HTTP at http://HOST:PORT/mcp (port 0: any free one; the URL is printed on stderr) until "
        "SIGTERM: replay serves there, a recording is a proxy there to --http-target.",
    ),
)


def read_plain(params: Sequence[Param], args: Sequence[str], declined: Sequence[str] = ()) -> dict[str, Any] | None:
    """The values of a plain, well-formed command line, as click would read them; None for anything else.

    Anything else is left to click, which reads it fully and explains what is wrong: an option not in
    params or named in declined, a repeated one, one without its value or with a value starting with
    `-`, `--`, a value its parser refuses, a positional argument too many or missing.
    """
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
