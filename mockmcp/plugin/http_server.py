"""A mock server over Streamable HTTP for one test: `mockmcp replay --http 127.0.0.1:0` (or `record --listen`).

The process is the command line's, started by the plugin rather than by the host (an HTTP host
connects to a URL, it launches nothing), and stopped by the plugin after the test with SIGTERM,
which is how both commands are meant to end: replay writes its report then, the recorder saves.

Theory of operation. The port is the system's choice, made when the server binds port 0, and the
server says it: its first line on stderr names the URL it serves (`mockmcp: serving CASSETTE at
URL ...`, `mockmcp: recording URL -> TARGET ...`). A port chosen here and released before the
server binds it could be taken meanwhile by another test's server (pytest-xdist runs several at
once), and a connect to it would then reach the wrong one. A thread reads the server's stderr to
the end, so the server never blocks on a full pipe; it copies each line to the server's
`stderr-<pid>.txt`, as a launch's (see `launch`), and `stop` notes the status it exited with.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from mockmcp.errors import UsageError
from mockmcp.plugin import launch

__all__ = ["Served", "start", "stop"]

_START = 20.0  # seconds a server gets to say where it listens
_STOP = 20.0  # seconds it gets to save and exit after SIGTERM
# The line the command line prints once it listens (see `cli/commands.py`), replay's or the recorder's.
_LISTENING = re.compile(r"mockmcp: (?:serving .* at|recording) (https?://\S+)")


class Served:
    """A running server: its process, the URL it said it serves, and the thread reading its stderr."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, reader: threading.Thread, folder: Path) -> None:
        self.process, self.url, self.reader, self.folder = process, url, reader, folder


def start(command: list[str], env: Mapping[str, str], folder: Path, wait: float = _START) -> Served:
    """Start `command` (`mockmcp` on port 0); returns once it says its URL. Raises UsageError if it never does.

    Its launch is noted in `folder` as the host's are (`launch-<pid>`), its stderr goes to
    `stderr-<pid>.txt` there.
    """
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
    """Stop the server as its command means to be stopped (SIGTERM), killing it only if it will not end.

    Returns once its stderr is copied whole, so what it said is there for the verdict.
    """
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
