"""The one place where an error that ended a command becomes a message on stderr and an exit status, for both
readers of the command line (the launcher and click's main). Imported only when something failed."""

from __future__ import annotations

import errno
import os
import sys
from typing import NoReturn

from mockmcp.errors import MockmcpError

__all__ = ["abort", "fail"]


def fail(error: MockmcpError | OSError) -> NoReturn:
    """Show an error that ended the command, on stderr, and exit with its status (2 for a file or socket error)."""
    if isinstance(error, MockmcpError):
        _say(f"mockmcp: error: {error.render()}")
        sys.exit(error.exit_code)
    if error.errno == errno.EPIPE:  # the reader went away: nothing to tell it (click's own rule: status 1)
        devnull = os.open(os.devnull, os.O_WRONLY)  # so that flushing stdout and stderr at exit cannot fail
        for fd in (1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
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
