"""`python -m mockmcp.plugin.launch FOLDER ARGS...`: note this launch in FOLDER, then run `mockmcp ARGS...`.

The plugin hands this command to the host instead of a bare `mockmcp replay` (or `record`), so that
it knows every replay the host really started (one `launch-<pid>` file each) and can fail a test
whose replay left no report: killed before it could write one, its verdict is unknown, never clean;
and that a recorder the host started and that has ended without a recording recorded nothing. The
command runs in this same process, so the pid is the one replay puts in its report's name, and
start-up costs nothing more than a plain `python -m mockmcp` (runpy is already loaded by `-m`). A
replay's stderr goes to `stderr-<pid>.txt` in the same folder; a recorder's stays the host's.
(A server over HTTP is started by the plugin itself, which notes it the same way: see `http_server`.)
"""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["PREFIX"]

PREFIX = "launch-"  # `launch-<pid>`: process pid was launched for the test whose reports go in the folder


if __name__ == "__main__":
    with open(os.path.join(sys.argv[1], f"{PREFIX}{os.getpid()}"), "x"):
        pass
    if sys.argv[2:3] == ["replay"]:
        # Replay's notes go to a file the plugin reads, not to the host's stderr: a miss is then told once,
        # in the test's failure (in pytest's terms), and the notes of a replay that left no report with it.
        errors = os.open(os.path.join(sys.argv[1], f"stderr-{os.getpid()}.txt"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.dup2(errors, 2)
        os.close(errors)
    sys.argv = ["mockmcp", *sys.argv[2:]]
    runpy.run_module("mockmcp", run_name="__main__", alter_sys=True)
