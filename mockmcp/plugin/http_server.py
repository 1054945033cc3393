"""A mock server over Streamable HTTP for one test: `mockmcp replay --http` (or `record --http-target`) on a free port.

The process is the command line's, started by the plugin rather than by the host (an HTTP host
connects to a URL, it launches nothing), and stopped by the plugin after the test with SIGTERM,
which is how both commands are meant to end: replay writes its report then, the recorder saves.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from mockmcp.errors import UsageError

__all__ = ["free_port", "start", "stop"]

_START = 20.0  # seconds a server gets to listen
_STOP = 20.0  # seconds it gets to save and exit after SIGTERM


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the system's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(command: list[str], env: Mapping[str, str], port: int, stderr: Path) -> subprocess.Popen[bytes]:
    """Start `command`, which is to listen on `port`; returns once it does. Raises UsageError if it never does.

    `stderr` is the file the command writes its diagnostics to (named by the process id, `{pid}`).
    """
    process = subprocess.Popen(command, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + _START
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.05)
    stop(process)
    said = Path(str(stderr).replace("{pid}", str(process.pid)))
    text = said.read_text(errors="replace").strip() if said.exists() else ""
    raise UsageError(f"the mock server over HTTP did not start listening on port {port}: {text or 'it said nothing'}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server as its command means to be stopped (SIGTERM), killing it only if it will not end."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=_STOP)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=_STOP)
