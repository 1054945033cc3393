"""The options of `mockmcp replay` as data, and the parsers of option values: one definition, two readers.

Theory of operation. A host's test suite starts `mockmcp replay` once per test, and importing click
costs more than everything else a cached replay does before its first answer. So the launcher
(`mockmcp.cli.launch`) reads a plain, well-formed replay command line itself, from the table
`REPLAY` below, and hands anything else to click: help, an unknown or repeated option, a value its
parser refuses, `--http`, `--`, another command. The click command is built from the same table
(`mockmcp.cli.app`), and click's parameter types call the same parsers, so help, errors and values
cannot drift apart; tests/test_cli.py checks that the two readers agree on a table of command lines.

It is on the launch path (docs/architecture.md, "Start-up rules").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from mockmcp.errors import UsageError
from mockmcp.namedtuple import NamedTuple
from mockmcp.protocol import SESSION_IDLE
from mockmcp.words import parse_substitution, timing_factor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mockmcp.words import RecordMode

__all__ = ["EXEC", "PARSERS", "Param", "REPLAY", "parse_listen", "read_plain"]


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


def parse_idle(text: str) -> float | None:
    """`--session-idle`: seconds (more than 0), or `never`."""
    if text == "never":
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise UsageError(
            f"--session-idle {text!r} is neither a number of seconds nor never", "write e.g. 1800, or never"
        )
    return seconds


def _plain_file(text: str) -> str:
    """A file path as click.Path(dir_okay=False) takes it; refuses (for click to explain) what click would refuse."""
    if os.path.isdir(text) or (os.path.exists(text) and not os.access(text, os.R_OK)):
        raise UsageError(f"{text!r} is a folder or cannot be read")
    return text


def _seconds(text: str) -> float:
    """A number of seconds, 0 or more; raises UsageError."""
    try:
        seconds = float(text)
        if not seconds >= 0:  # also refuses NaN
            raise ValueError
    except ValueError:
        raise UsageError(f"cannot read {text!r} as seconds", "write a number of seconds, e.g. 2 or 0.5") from None
    return seconds


def _record_mode(text: str) -> RecordMode:
    from mockmcp.words import RecordMode  # `exec`'s only (the words module is loaded already)

    return RecordMode.parse(text, allow_none=True)


# What a value's kind means to the launcher; mockmcp.cli.app gives click a parameter type of the
# same kind, calling the same parser (click.Path for "file").
PARSERS: dict[str, Callable[[str], Any]] = {
    "seconds": _seconds,
    "record_mode": _record_mode,
    "file": _plain_file,
    "text": str,
    "timing": timing_factor,
    "listen": parse_listen,
    "substitution": parse_substitution,
    "idle": parse_idle,
}


class Param(NamedTuple):
    """One parameter of a command: where its value goes, how it is written, how its text is read."""

    dest: str  # the command function's parameter
    flags: tuple[str, ...]  # () for a positional argument
    kind: str  # "flag", or a key of PARSERS
    help: str = ""
    metavar: str | None = None
    default: str | None = None  # as written on the command line; parsed like a given value
    multiple: bool = False
    required: bool = False  # an option that must be given (the launcher leaves a command line without it to click)


REPLAY = (
    Param("cassette", (), "file"),
    Param(
        "ignores",
        ("--ignore",),
        "text",
        "A params path left out of matching (repeatable), e.g. arguments.when.",
        metavar="PATH",
        multiple=True,
    ),
    Param(
        "substitutions",
        ("--substitute",),
        "substitution",
        "The value on this machine of a placeholder the cassette was recorded with, ${NAME} (repeatable); NAME "
        "alone takes the environment variable NAME's value, as does a placeholder not given.",
        metavar="NAME[=VALUE]",
        multiple=True,
    ),
    Param(
        "strict",
        ("--strict",),
        "flag",
        "Exit 1 when a request missed, a recorded interaction was never played, the host answered a server "
        "request otherwise than recorded, or a server request was withheld.",
    ),
    Param(
        "report_path",
        ("--report",),
        "file",
        "Write the session summary as JSON to this file ({pid} in it becomes the process id).",
    ),
    Param(
        "html_path",
        ("--html",),
        "file",
        "Write the session as an HTML timeline to this file when it ends ({pid} as in --report): what was "
        "recorded beside what the host did, each miss with the closest recordings and how they differ.",
        metavar="FILE",
    ),
    Param(
        "timing",
        ("--timing",),
        "timing",
        "none: answer at once; recorded: as fast as the server did; or a factor scaling that (0.5 is twice as fast).",
        metavar="HOW",
        default="none",
    ),
    Param(
        "listen",
        ("--http",),
        "listen",
        "Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: 127.0.0.1; needs mockmcp[http]).",
        metavar="[HOST:]PORT",
    ),
    Param(
        "allow_hosts",
        ("--allow-host",),
        "text",
        "With --http: a host name or address requests may name in Host and Origin, beyond loopback and the "
        "bound address (repeatable).",
        metavar="NAME",
        multiple=True,
    ),
    Param(
        "state_path",
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


# `mockmcp exec`'s options; the server's command line follows `--`. A replay by exec is on the launch path too.
EXEC = (
    Param("cassette", ("--cassette",), "file", "The test's cassette.", metavar="C", required=True),
    Param(
        "mode",
        ("--record-mode",),
        "record_mode",
        "none: replay, a missing cassette is an error; once: record only if the cassette is missing, else replay; "
        "new: add this session; all: record afresh.",
        metavar="none|once|new|all",
        default="none",
    ),
    Param("strict", ("--strict",), "flag", "When replaying: exit 1 on anything replay --strict refuses."),
    Param(
        "report_path",
        ("--report",),
        "file",
        "Write what happened as JSON (docs/report.md); {pid} in it becomes the process id.",
    ),
    Param("ignores", ("--ignore",), "text", "When replaying: as replay --ignore (repeatable).", "PATH", None, True),
    Param(
        "substitutions",
        ("--substitute",),
        "substitution",
        "The placeholder ${NAME} stands for VALUE on this machine, as in replay and record (repeatable).",
        metavar="NAME[=VALUE]",
        multiple=True,
    ),
    Param("grace", ("--grace",), "seconds", "When recording: as record --grace.", metavar="SECONDS", default="2"),
    Param(
        "listen",
        ("--http",),
        "listen",
        "Over Streamable HTTP at http://HOST:PORT/mcp (port 0: any free one; the URL is printed on stderr) until "
        "SIGTERM: replay serves there, a recording proxies to the URL given as the server.",
        metavar="[HOST:]PORT",
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
