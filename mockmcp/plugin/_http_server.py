"""A test's mock server over Streamable HTTP: `mockmcp replay --http 127.0.0.1:0` (or `record --listen`).

The plugin starts it (an HTTP host launches nothing) and stops it after the test with SIGTERM, as
the command means to end: replay writes its report, the recorder saves. The server binds port 0 and
names its URL on stderr: a port picked here and freed could be taken by another xdist worker's
server. A thread copies its stderr to `stderr-<pid>.txt` (see `launch`), so it never blocks.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, NamedTuple

from mockmcp.errors import UsageError
from mockmcp.plugin import _launch as launch

__all__ = ["Served", "start", "stop"]

_START = 20.0  # seconds a server gets to say where it listens
_STOP = 20.0  # seconds it gets to save and exit after SIGTERM
# The line the command line prints once it listens (see `cli/commands.py`), replay's or the recorder's.
_LISTENING = re.compile(r"mockmcp: (?:serving .* at|recording) (https?://\S+)")


class Served(NamedTuple):
    """A running server: its process, the URL it said it serves, the thread reading its stderr, its folder."""

    process: subprocess.Popen[bytes]
    url: str
    reader: threading.Thread
    folder: Path


def start(command: list[str], env: Mapping[str, str], folder: Path, wait: float = _START) -> Served:
    """Start `command` (`mockmcp` on port 0), noted in `folder` as the host's launches are; returns once it says
    its URL. Raises UsageError if it never does."""
    process = subprocess.Popen(
        command, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    (folder / f"{launch.PREFIX}{process.pid}").touch()
    said: list[bytes] = []
    found: queue.Queue[str | None] = queue.Queue()
    # Closed by the reader, when the server's stderr closes.
    log = open(folder / launch.STDERR.format(pid=process.pid), "ab")  # noqa: SIM115
    assert process.stderr is not None
    reader = threading.Thread(target=_relay, args=(process.stderr, log, said, found), daemon=True)
    reader.start()
    try:
        url = found.get(timeout=wait)
    except queue.Empty:
        url, why = None, f"did not say where it listens within {wait:g} s"
    else:
        why = "ended before it said where it listens"
    if url is not None:
        return Served(process, url, reader, folder)
    stop(Served(process, "", reader, folder))
    text = b"".join(said[-20:]).decode(errors="replace").strip()
    raise UsageError(f"the mock server over HTTP {why}: {text or 'it said nothing'}")


def _relay(pipe: IO[bytes], log: IO[bytes], said: list[bytes], found: queue.Queue[str | None]) -> None:
    """Copy the server's stderr line by line until it closes, telling `found` the URL its listening line names."""
    told = False
    try:
        for line in iter(pipe.readline, b""):
            log.write(line)
            log.flush()  # the plugin reads the file while the server may still be running
            if not told:
                said.append(line)
                listening = _LISTENING.match(line.decode(errors="replace"))
                if listening:
                    found.put(listening.group(1))
                    told = True
    finally:
        if not told:
            found.put(None)
        pipe.close()
        log.close()


def stop(served: Served) -> None:
    """Stop the server with SIGTERM (killing it only if it will not end); returns once its stderr is copied whole."""
    process = served.process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=_STOP)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=_STOP)
    served.reader.join(_STOP)
    launch.exited(str(served.folder), process.pid, process.returncode)
