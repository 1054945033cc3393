"""What the mockmcp benchmarks share: child processes on stdio pipes, their environment, results, reports.

Imported by bench_replay.py and bench_record.py, which are run as scripts
(`python benchmarks/bench_replay.py`), so this folder is the first entry of sys.path whatever the
current directory. Standard library only.

- Children run with the environment CHILD_ENV (bytecode caches on, a cache folder of this run's).
- `Process` is one child on stdin/stdout pipes: write, read whole lines with a timeout, send a
  pipelined batch timed, always stopped (stdin closed, then killed if it does not exit in time).
- `check_answers` checks every answer to a batch of tools/call requests; `BenchError` is what any
  misbehaviour raises, and `guarded` turns it into an ERROR row.
- `Result` is one row of the report; `print_heading` starts a run and `report` ends it (table,
  wall time, JSON file, exit status).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import queue
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable

# Children run as on an ordinary machine: bytecode caches are written and used (pip compiles an
# installed package's bytecode at install time anyway), whatever this shell's environment says.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# mockmcp's cache of parsed cassettes goes to a folder of this run's, removed at exit.
CHILD_ENV["MOCKMCP_CACHE_DIR"] = tempfile.mkdtemp(prefix="mockmcp-bench-cache-")
atexit.register(shutil.rmtree, CHILD_ENV["MOCKMCP_CACHE_DIR"], True)

STOP_TIMEOUT = 10.0  # seconds a process gets to exit after its stdin closes, unless given longer
READ_TIMEOUT = 120.0  # seconds without progress before a run is declared stuck


class BenchError(Exception):
    """A process misbehaved (died, hung, answered wrongly): the figure cannot be trusted."""


# --- requests and answers --------------------------------------------------------------------------


def request(rid: int, params: dict[str, Any]) -> bytes:
    """One tools/call request, as the line a host writes."""
    return (
        json.dumps(
            {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, separators=(",", ":")
        ).encode()
        + b"\n"
    )


def check_answers(label: str, lines: list[bytes], expected: Mapping[int, Any]) -> None:
    """Every expected id answered exactly once, each with the expected result.

    An answer's id must be `in expected`; `expected[id]` is the result it must carry.
    """
    if len(lines) != len(expected):
        raise BenchError(f"{label}: {len(lines)} answers for {len(expected)} requests")
    seen: set[int] = set()
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            raise BenchError(f"{label}: an answer is not JSON: {line[:200]!r}") from None
        rid: Any = message.get("id") if isinstance(message, dict) else None
        if rid not in expected or rid in seen:
            raise BenchError(f"{label}: unexpected or repeated id in answer {line[:200]!r}")
        seen.add(rid)
        if message.get("result") != expected[rid]:
            raise BenchError(f"{label}: wrong answer to id {rid}: {line[:300]!r}")


# --- processes -------------------------------------------------------------------------------------


class Process:
    """One stdio process: stdin/stdout pipes, stderr to a temporary file, always stopped.

    Use it as a context manager, or call close(): stop() ends the process, close() also drops its stderr.
    """

    def __init__(
        self, argv: list[str], label: str, env: dict[str, str] | None = None, stop_timeout: float = STOP_TIMEOUT
    ) -> None:
        self.label = label
        self.stop_timeout = stop_timeout
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 (open for the process's life; closed in stop)
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            bufsize=0,
            cwd=ROOT,
            env=env or CHILD_ENV,
        )
        self.out_fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        self.in_fd = self.proc.stdin.fileno()  # type: ignore[union-attr]
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.out_fd, selectors.EVENT_READ)
        self.buffer = b""  # bytes read past the last complete line
        self.stopped: tuple[int | None, float] | None = None  # (exit status, seconds from stdin close to exit)

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.in_fd, view[: 1 << 16]) :]
        except (BrokenPipeError, OSError):
            pass  # the reader reports the death, with the process's stderr

    def read_lines(self, count: int) -> list[bytes]:
        """Read exactly `count` complete lines (more may be buffered for later)."""
        chunks = [self.buffer]
        seen = self.buffer.count(b"\n")
        while seen < count:
            if not self.selector.select(READ_TIMEOUT):
                raise BenchError(
                    f"{self.label}: no answer for {READ_TIMEOUT:.0f} s "
                    f"({seen} of {count} lines read){self.stderr_tail()}"
                )
            chunk = os.read(self.out_fd, 1 << 20)
            if not chunk:
                try:
                    status = self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    status = None
                raise BenchError(
                    f"{self.label}: stdout closed after {seen} of {count} lines "
                    f"(exit status {status}){self.stderr_tail()}"
                )
            chunks.append(chunk)
            seen += chunk.count(b"\n")
        data = b"".join(chunks)
        lines = data.split(b"\n")
        self.buffer = lines.pop()
        if len(lines) > count:
            self.buffer = b"\n".join(lines[count:] + [self.buffer])
            lines = lines[:count]
        return lines

    def send_pipelined(self, payload: bytes, count: int) -> tuple[list[bytes], float]:
        """Write `payload` from a thread while reading `count` lines: the lines, and seconds to the last."""
        writer = threading.Thread(target=self.write_all, args=(payload,), daemon=True)
        start = time.perf_counter()
        writer.start()
        lines = self.read_lines(count)
        elapsed = time.perf_counter() - start
        writer.join(STOP_TIMEOUT)
        return lines, elapsed

    def stderr_text(self) -> str:
        try:
            self.err.seek(0)
            return self.err.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def stderr_tail(self, limit: int = 1500) -> str:
        text = self.stderr_text()
        return "" if not text else "\n  stderr: " + text[-limit:].replace("\n", "\n  ")

    def stop(self) -> tuple[int | None, float]:
        """Close stdin, wait for the exit, kill if it does not come. (exit status or None if killed, seconds waited)."""
        if self.stopped is not None:
            return self.stopped
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        start = time.perf_counter()
        try:
            status: int | None = self.proc.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            status = None  # killed: not a clean exit
            self.proc.kill()
            self.proc.wait(timeout=STOP_TIMEOUT)
        waited = time.perf_counter() - start
        self.selector.close()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.stopped = (status, waited)
        return self.stopped

    def close(self) -> None:
        self.stop()
        self.err.close()


# --- reporting -------------------------------------------------------------------------------------


@contextmanager
def listening(
    command: list[str], pattern: str, env: Mapping[str, str] = CHILD_ENV, cwd: str | None = None, wait: float = 30.0
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A child server, and the first group of `pattern` in the first line of its stderr that matches it (its
    URL); its stderr is read to the end so the pipe never fills. Stopped with SIGTERM, killed if it lingers."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    try:
        seen: list[str] = []
        while True:
            try:
                line = lines.get(timeout=wait)
            except queue.Empty:
                raise BenchError(f"{command[:4]}: no address within {wait:g} s:\n{''.join(seen)}") from None
            if line is None:
                raise BenchError(f"{command[:4]} exited before saying where it listens:\n{''.join(seen)}")
            seen.append(line)
            if found := re.search(pattern, line):
                break
        yield proc, found.group(1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


@dataclass
class Result:
    """One row of the table: a figure (or a figure's part) measured, with its goal and verdict."""

    figure: str
    subject: str
    values: dict[str, Any]
    shown: str
    ratio: float | None
    goal: float | None  # None: shown for information, no verdict
    lower_is_better: bool = False
    error: str | None = None
    figure_text: str | None = None  # what the result column shows when there is no ratio

    @property
    def goal_text(self) -> str:
        if self.goal is None:
            return "info"
        return f"{'<=' if self.lower_is_better else '>='} {self.goal}x"

    @property
    def result_text(self) -> str:
        if self.ratio is not None:
            return f"{self.ratio:.2f}x"
        return self.figure_text or "-"

    @property
    def verdict(self) -> str:
        if self.error:
            return "ERROR"
        if self.goal is None:
            return "info"
        if self.ratio is None:
            return "SKIP"
        ok = self.ratio <= self.goal if self.lower_is_better else self.ratio >= self.goal
        return "PASS" if ok else "MISS"

    def to_json(self, with_result_text: bool = True) -> dict[str, Any]:
        document: dict[str, Any] = {
            "figure": self.figure,
            "subject": self.subject,
            "values": self.values,
            "ratio": self.ratio,
        }
        if with_result_text:
            document["result"] = self.result_text
        document.update({"goal": self.goal_text, "verdict": self.verdict, "error": self.error})
        return document


def guarded(
    figure: str, subject: str, goal: float | None, run: Callable[[], list[Result]], lower_is_better: bool = False
) -> list[Result]:
    """The rows `run` returns; if it raises BenchError, one ERROR row for the figure instead."""
    try:
        return run()
    except BenchError as error:
        return [Result(figure, subject, {}, "", None, goal, lower_is_better, error=str(error))]


def make_parser(doc: str, quick_help: str) -> argparse.ArgumentParser:
    """The command line every benchmark has: its docstring's first paragraph, --quick and --json FILE."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON to FILE")
    return parser


def print_heading(name: str, settings: str) -> None:
    """The machine the benchmark runs on, then what it is about to do, then a blank line."""
    print(
        f"mockmcp {name} benchmark: {PY} (Python {platform.python_version()}), "
        f"{os.cpu_count()} CPUs, {platform.platform()}"
    )
    print(settings + "\n")


def print_table(results: list[Result], result_heading: str = "result", strip: bool = True) -> None:
    """One row per result, the columns padded to their widest cell; `strip` drops the rows' trailing spaces.

    The measured column shows the first line of the error where a row has nothing else to show.
    """
    head = ("figure", "subject", "measured", result_heading, "goal", "verdict")
    rows = [
        (r.figure, r.subject, r.shown or (r.error or "").splitlines()[0], r.result_text, r.goal_text, r.verdict)
        for r in results
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        text = line.format(*row)
        print(text.rstrip() if strip else text)


def write_json(
    path: str, config: dict[str, Any], wall: float, results: list[Result], with_result_text: bool = True
) -> None:
    """The machine, the settings, the wall time and every result, as JSON in `path`."""
    document = {
        "python": PY,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "config": config,
        "wall_s": wall,
        "results": [r.to_json(with_result_text) for r in results],
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")


def exit_status(results: list[Result]) -> int:
    """2 if any row is an ERROR (a MISS does not count), else 0."""
    return 2 if any(r.error for r in results) else 0


def report(
    results: list[Result],
    wall: float,
    json_path: str | None,
    config: dict[str, Any],
    print_error_details: Callable[[list[Result]], None],
    result_heading: str = "result",
    strip: bool = True,
    with_result_text: bool = True,
) -> int:
    """The end of a run: the table, the errors in full (as the benchmark prints them), the wall time,
    the JSON file if one was asked for. Returns the exit status."""
    print_table(results, result_heading, strip)
    print_error_details(results)
    print(f"\nwall time {wall:.1f} s")
    if json_path:
        write_json(json_path, config, wall, results, with_result_text)
    return exit_status(results)
