"""`mockmcp verify`: drive a live server with a cassette's client side, and record what it answers.

Each request goes with a fresh id, its response awaited before the next. Values the server minted and the
client echoed are taken from the live answers; the server's requests get the client's recorded answers, by
method. A `Recorder` makes the live session a cassette that `drift.compare` judges.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from typing import Any

from mockmcp._wire import jsonrpc
from mockmcp._wire.protocol import MINTED_KEYS
from mockmcp.cassette import model
from mockmcp.cassette.model import Cassette
from mockmcp.engine.redact import Redactor
from mockmcp.errors import UsageError
from mockmcp.record._recorder import CLIENT, SERVER, Recorder
from mockmcp.stdio.processes import stop_child
from mockmcp.stdio.toolkit import LineSplitter, read_chunk, write_all

__all__ = ["drive"]


class _Live:
    """The live server process, its output as a queue of lines, and the recording of both sides."""

    def __init__(self, command: list[str], meta: dict[str, Any], redactor: Redactor) -> None:
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            problem = f"cannot start the server {command[0]!r}: {exc.strerror or exc}"
            raise UsageError(problem, "check the command after `--`") from None
        self.start = time.monotonic()
        self.redactor = redactor  # the cassette's own rules: what is recorded (and maybe written) is redacted
        self.recorder = Recorder(meta)
        self.eof = False
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        source, splitter = self.process.stdout.fileno(), LineSplitter()
        while chunk := read_chunk(source):
            for line in splitter.feed(chunk):
                self.lines.put(line)
        if last := splitter.rest():
            self.lines.put(last)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        line = jsonrpc.encode(self.redactor.substitutions.expand(message))
        self.recorder.feed(CLIENT, self.redactor.line(line[:-1]), time.monotonic() - self.start)
        assert self.process.stdin is not None
        try:
            write_all(self.process.stdin.fileno(), line)
        except (OSError, ValueError):  # ValueError: stdin was closed already
            pass  # the server is gone; what it did not answer shows as drift

    def next_line(self, deadline: float) -> bytes | None:
        """The server's next line, or None at EOF (then at once, every time) or when the deadline passes."""
        if self.eof:
            return None
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is None:
            self.eof = True
        else:
            self.recorder.feed(SERVER, self.redactor.line(line), time.monotonic() - self.start)
        return line

    def stop(self, grace: float) -> None:
        """Close stdin; escalate to SIGTERM, then SIGKILL, a grace period apart; keep what the server still says."""
        stop_child(self.process, grace)
        while self.next_line(time.monotonic() + 0.5) is not None:
            pass


def drive(
    cassette: Cassette,
    command: list[str],
    timeout: float = 10.0,
    grace: float = 2.0,
    substitutions: tuple[tuple[str, str | None], ...] = (),
) -> Cassette:
    """Play the cassette's client side to the live server; returns the live session as a cassette, redacted and
    substituted as the cassette was. Raises CassetteError for a placeholder whose value is not given."""
    where, asker = cassette.path or "the cassette", "mockmcp verify --substitute"
    redactor = Redactor.for_replay(cassette, os.environ, substitutions, where, asker) or Redactor()
    live = _Live(command, {**cassette.meta, "server": command}, redactor)
    answers = _recorded_answers(cassette)
    minted: dict[str, str] = {}
    next_id = 1
    try:
        for interaction in cassette.interactions:
            if interaction.kind == model.SERVER or interaction.message is None:
                continue
            echoed = jsonrpc.map_strings(interaction.message, lambda text: minted.get(text, text))
            body = {k: v for k, v in echoed.items() if k != "id"}
            if interaction.kind == model.NOTIFICATION:
                live.send({"jsonrpc": "2.0", **body})
                continue
            live.send({"jsonrpc": "2.0", "id": next_id, **body})
            response = _await(live, next_id, answers, time.monotonic() + timeout)
            if response is not None and interaction.response is not None:
                _learn(interaction.response.get("result"), response.get("result"), minted)
            next_id += 1
    finally:
        live.stop(grace)
    return live.recorder.cassette()


def _await(
    live: _Live, request_id: int, answers: dict[str, list[dict[str, Any]]], deadline: float
) -> dict[str, Any] | None:
    """Read until the response to request_id, answering the server's requests on the way."""
    while True:
        line = live.next_line(deadline)
        if line is None:
            return None
        try:
            message = jsonrpc.parse(line)
        except ValueError:
            continue
        found = jsonrpc.classify(message)
        if found.kind == jsonrpc.RESPONSE and message["id"] == request_id:
            return dict(message)
        if found.kind == jsonrpc.REQUEST:
            unknown = {
                "code": jsonrpc.METHOD_NOT_FOUND,
                "message": "mockmcp verify: the cassette has no answer to this",
            }
            recorded = answers.get(message["method"]) or [{"error": unknown}]
            reply = recorded.pop(0) if len(recorded) > 1 else recorded[0]
            live.send({"jsonrpc": "2.0", "id": message["id"], **{k: v for k, v in reply.items() if k != "id"}})


def _recorded_answers(cassette: Cassette) -> dict[str, list[dict[str, Any]]]:
    """The client's recorded answers to server requests, by method, in recorded order."""
    answers: dict[str, list[dict[str, Any]]] = {}
    for interaction in cassette.interactions:
        for item in interaction.server:
            if item.kind == model.REQUEST and item.response is not None:
                answers.setdefault(item.message["method"], []).append(item.response)
    return answers


def _learn(recorded: Any, live: Any, minted: dict[str, str]) -> None:
    """Note each minted value that differs live (same key, same place in both results)."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key, value in recorded.items():
            if key in MINTED_KEYS and isinstance(value, str) and isinstance(live.get(key), str) and live[key] != value:
                minted[value] = live[key]
            else:
                _learn(value, live.get(key), minted)
    elif isinstance(recorded, list) and isinstance(live, list):
        for a, b in zip(recorded, live, strict=False):  # a list that grew or shrank: learn from the common part
            _learn(a, b, minted)
