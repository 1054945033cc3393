"""A headless Chromium driven over the DevTools protocol on a pipe: enough of it to test a page as a person sees it.

Why not a driver library: Chromium speaks its DevTools protocol on file descriptors 3 and 4 with
`--remote-debugging-pipe` (JSON messages ended by a NUL byte), so the standard library drives it,
with no driver package and no browser download. The browser is the system's (`chromium` from the
distribution's packages); `find()` says where it is, or None.

    with Chromium(find()) as browser:
        page = browser.page(1280, 800)
        page.open(Path("page.html").resolve().as_uri())
        page.evaluate("document.title")
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["FLAGS", "Chromium", "Page", "find"]

# Quiet on a closed network: no background fetches, no updates, no sync, no first-run pages.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


def find() -> str | None:
    """The system's Chromium, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One browser process (its own fresh profile); stopped, with its whole process group, by `close`."""

    def __init__(self, executable: str, timeout: float = 20.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="mockmcp-chromium-")
        to_browser, self._send_end = os.pipe()
        self._read_end, from_browser = os.pipe()

        def give_pipes() -> None:  # in the child: the protocol's descriptors are 3 (commands in) and 4 (out)
            commands = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10)
            answers = fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=give_pipes,
            start_new_session=True,  # its helpers (renderer, zygote) in a group of its own, stopped with it
        )
        os.close(to_browser)
        os.close(from_browser)
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._read_end, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._changed:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._answers[message["id"]] = message
                    else:
                        self.events.append(message)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One command; returns its result, raises RuntimeError with the browser's error."""
        with self._changed:
            self._next += 1
            number = self._next
        command: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        os.write(self._send_end, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._changed:
            while number not in self._answers:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise RuntimeError(f"no answer from the browser to {method}")
                self._changed.wait(left)
            answer = self._answers.pop(number)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def wait_for(self, method: str, session: str, after: int, timeout: float | None = None) -> dict[str, Any]:
        """The first event `method` of the session at or after position `after` in `events`."""
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._changed:
            while True:
                for event in self.events[after:]:
                    if event.get("method") == method and event.get("sessionId") == session:
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"the browser sent no {method}")
                self._changed.wait(left)

    def page(self, width: int = 1280, height: int = 800) -> Page:
        """A new tab of that size, with console, errors and network watched."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        page.resize(width, height)
        return page

    def close(self) -> None:
        """Stop the browser (politely, then its process group by its id) and remove its profile."""
        if self.process.poll() is None:
            try:
                self.send("Browser.close")
                self.process.wait(timeout=5)
            except (RuntimeError, OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # helpers left behind by the main process, if any
        except ProcessLookupError:
            pass
        os.close(self._send_end)
        self._reader.join(timeout=5)
        os.close(self._read_end)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """A tab: open a URL, run script in it, read what it logged and fetched, take a picture."""

    def __init__(self, browser: Chromium, target: str, session: str) -> None:
        self.browser, self.target, self.session = browser, target, session
        self.since = 0  # the position in the browser's events where this page's current document began

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def resize(self, width: int, height: int) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def open(self, url: str, rendered: bool = True) -> None:
        """Load url and wait for its load event (and, with rendered, for the page to say it has drawn)."""
        self.since = len(self.browser.events)
        self.send("Page.navigate", {"url": url})
        self.browser.wait_for("Page.loadEventFired", self.session, self.since)
        if rendered:
            self.wait("document.documentElement.dataset.rendered === 'yes'")

    def wait(self, condition: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(condition):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the page never came to {condition}")
            time.sleep(0.02)

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression in the page (awaited if a promise); raises RuntimeError if it threw."""
        done = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in done:
            raise RuntimeError(f"{expression}: {done['exceptionDetails']}")
        return done["result"].get("value")

    def press(self, key: str, code: str = "", text: str = "") -> None:
        """A key pressed and released, as a keyboard sends it (`text` for a printable key)."""
        base = {"key": key, "code": code or key}
        if text:
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": text, **base})
        else:
            self.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **base})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})

    def _events(self, method: str) -> list[dict[str, Any]]:
        with self.browser._changed:
            events = self.browser.events[self.since :]
        return [e["params"] for e in events if e.get("method") == method and e.get("sessionId") == self.session]

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser log errors since the page was opened."""
        said = [
            f"console.{e['type']}: {e['args']}"
            for e in self._events("Runtime.consoleAPICalled")
            if e["type"] in ("error", "warning", "assert")
        ]
        said += [f"exception: {e['exceptionDetails']}" for e in self._events("Runtime.exceptionThrown")]
        said += [
            f"log: {e['entry'].get('text')} ({e['entry'].get('url')})"
            for e in self._events("Log.entryAdded")
            if e["entry"]["level"] in ("error", "warning")
        ]
        return said

    def console(self) -> list[tuple[str, list[Any]]]:
        """Every console call since the page was opened, of any level: its type and its arguments' values (an
        object's description)."""
        return [
            (e["type"], [arg.get("value", arg.get("description")) for arg in e["args"]])
            for e in self._events("Runtime.consoleAPICalled")
        ]

    def requests(self) -> list[str]:
        """The URLs of every request the page made since it was opened (its own document included)."""
        return [e["request"]["url"] for e in self._events("Network.requestWillBeSent")]

    def screenshot(self, path: Path, full: bool = False) -> None:
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full})
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})
