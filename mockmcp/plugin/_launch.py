"""`python -m mockmcp.plugin._launch FOLDER ARGS...`: note this launch in FOLDER, then run `mockmcp ARGS...`.

So the plugin knows every server the host started: a replay killed before its report fails its test,
and a recorder that wrote nothing says why. `mockmcp` runs in this process (the pid names its report);
its stderr goes to `stderr-<pid>.txt`, its exit status to `status-<pid>` (none if killed).
"""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["PREFIX", "STATUS", "STDERR", "exited", "launches", "said", "status"]

PREFIX = "launch-"  # `launch-<pid>`: process pid was launched for the test whose reports go in the folder
STDERR = "stderr-{pid}.txt"  # what it said: a replay's notes and summary, why a recorder wrote nothing
STATUS = "status-{pid}"  # the status it exited with, once it has


def exited(folder: str, pid: int, status: int | None) -> None:
    """Note the status `pid` exited with (None: 0)."""
    with open(os.path.join(folder, STATUS.format(pid=pid)), "w") as file:
        file.write(str(status or 0))


def launches(folder: str) -> list[int]:
    """The pids noted in folder, oldest first."""
    names = [name for name in os.listdir(folder) if name.startswith(PREFIX)]
    names.sort(key=lambda name: os.stat(os.path.join(folder, name)).st_mtime)
    return [int(name.removeprefix(PREFIX)) for name in names]


def said(folder: str, pid: int, name: str = STDERR) -> str:
    """What `pid` wrote to stderr, or to its file `name` ("" if nothing)."""
    try:
        with open(os.path.join(folder, name.format(pid=pid)), errors="replace") as file:
            return file.read()
    except FileNotFoundError:
        return ""


def status(folder: str, pid: int) -> int | None:
    """The status `pid` exited with; None while it runs, or if it was killed."""
    try:
        return int(said(folder, pid, STATUS))
    except ValueError:  # no file (""), or one being written
        return None


if __name__ == "__main__":
    folder, pid = sys.argv[1], os.getpid()
    with open(os.path.join(folder, f"{PREFIX}{pid}"), "x"):
        pass
    # The notes go to a file the plugin reads, not to the host's stderr: a miss is then told once, in
    # the test's failure (in pytest's terms), and so is why a recording was refused.
    errors = os.open(os.path.join(folder, STDERR.format(pid=pid)), os.O_WRONLY | os.O_CREAT, 0o644)
    os.dup2(errors, 2)
    os.close(errors)
    sys.argv = ["mockmcp", *sys.argv[2:]]
    try:
        runpy.run_module("mockmcp", run_name="__main__", alter_sys=True)
    except SystemExit as ending:
        code = ending.code
        exited(folder, pid, code if isinstance(code, int) or code is None else 1)  # a message: status 1
        raise
    exited(folder, pid, 0)
