"""The `mockmcp` command's entry point: a plain `mockmcp replay` starts without click, the rest goes to click.

Theory of operation: see `mockmcp.cli.options` for why a plain replay command line is read without
click, and how that reading and click's cannot drift apart. Everything a replay needs beyond its
options is imported only once the command line is known to be one (and only what a replay over
stdio of a cached cassette uses: YAML, deepdiff and HTTP load later, when needed).

This module is also the one place that turns an error no command could get past into a message on
stderr and an exit status (`fail`, `abort`); click's main (`mockmcp.cli.app`) uses them too, so an
error reads the same whichever way the command line was read.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from mockmcp.errors import MockmcpError

__all__ = ["abort", "fail", "main"]


def main(argv: list[str] | None = None) -> Any:
    """Run the `mockmcp` command on argv (default: sys.argv[1:]); returns what click's main returns, or exits."""
    from mockmcp.cli import options

    args = sys.argv[1:] if argv is None else argv
    values = None
    if args[:1] == ["replay"]:
        # Serving over HTTP is long-lived, its start-up time does not count: click reads that command line.
        values = options.read_plain(options.REPLAY, args[1:], declined=("listen",))
    if values is None:
        from mockmcp.cli.app import main as click_main

        return click_main(argv)
    _replay(values)
    return None


def _replay(values: dict[str, Any]) -> None:
    """What the click command `replay` does with its values, errors handled as click's main handles them."""
    import gc

    # Starting up makes objects that live as long as the process (modules, the cassette) and next to no
    # garbage, so the collector's passes over them are wasted: it stays off until replay_cassette has
    # loaded the cassette, frozen what exists and turned it back on.
    gc.disable()
    from mockmcp.cli.commands import replay_cassette
    from mockmcp.errors import MockmcpError

    try:
        status = replay_cassette(**values)
    except (MockmcpError, OSError) as error:
        fail(error)
    except KeyboardInterrupt:
        print(file=sys.stderr)  # click ends the ^C line the same way before it aborts
        abort()
    if status:
        raise SystemExit(status)  # the cassette's `exit` knob ended the session with this status


def fail(error: MockmcpError | OSError) -> NoReturn:
    """Show an error that ended the command, on stderr, and exit with its status (2 for a file or socket error)."""
    import errno

    from mockmcp.errors import MockmcpError

    if isinstance(error, MockmcpError):
        _say(f"mockmcp: error: {error.render()}")
        sys.exit(error.exit_code)
    if error.errno == errno.EPIPE:  # the reader went away: nothing to tell it (click's own rule: status 1)
        _silence()
        sys.exit(1)
    where = f" ({error.filename})" if error.filename else ""
    _say(
        f"mockmcp: error: {error.strerror or error}{where}\n"
        "  how to fix: check the path, its folder and their permissions"
    )
    sys.exit(2)


def abort() -> NoReturn:
    """Ctrl-C outside a session (a session ends itself on SIGINT): say so, exit 130."""
    _say("mockmcp: aborted")
    sys.exit(130)


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _silence() -> None:
    """Point stdout and stderr at /dev/null, so that flushing them at exit cannot fail on the broken pipe."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
