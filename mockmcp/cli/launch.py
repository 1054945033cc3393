"""The `mockmcp` command's entry point: a plain `mockmcp replay` starts without click (`mockmcp.cli.options`
says why), the rest goes to click. What a replay needs is imported once the command line is known to be one."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["main"]


def main(argv: list[str] | None = None) -> Any:
    """Run the `mockmcp` command on argv (default: sys.argv[1:]); returns what click's main returns, or exits."""
    from mockmcp.cli import options

    args = sys.argv[1:] if argv is None else argv
    values = None
    if args[:1] == ["replay"]:
        # Serving over HTTP is long-lived, its start-up time does not count: click reads that command line.
        values = options.read_plain(options.REPLAY, args[1:], declined=("listen",))
    elif args[:1] == ["exec"]:  # a test runner's replay (or recording): the server's command line follows `--`
        split = args.index("--") if "--" in args else len(args)
        values = options.read_plain(options.EXEC, args[1:split], declined=("listen", "target"))
        if values is not None:
            values["command"] = args[split + 1 :]
    if values is None:
        from mockmcp.cli.app import main as click_main

        return click_main(argv)
    _run(values)
    return None


def _run(values: dict[str, Any]) -> None:
    """What the click command `replay` (or `exec`) does with its values, errors handled as click's main does."""
    import gc

    # Starting up makes next to no garbage: the collector stays off until replay_cassette has loaded the cassette,
    # frozen what exists and turned it back on.
    gc.disable()
    from mockmcp.errors import MockmcpError

    try:
        if "command" in values:
            from mockmcp.cli.executing import exec_command

            status = exec_command(values)
        else:
            from mockmcp.cli.options import replay_call
            from mockmcp.cli.replaying import replay_cassette

            status = replay_cassette(*replay_call(values))
    except (MockmcpError, OSError) as error:
        from mockmcp.cli.exits import fail

        fail(error)
    except KeyboardInterrupt:
        from mockmcp.cli.exits import abort

        print(file=sys.stderr)  # click ends the ^C line the same way before it aborts
        abort()
    if status:
        raise SystemExit(status)  # the cassette's `exit` knob ended the session with this status
