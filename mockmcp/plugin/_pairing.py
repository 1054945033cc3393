"""A test that freezes both sides of an agent run: its model's API in pytest-recording's VCR cassette (vcrpy), its
MCP servers in mockmcp's cassettes, side by side in the test's folder.

Which record mode a pytest-recording mode means here (`VCR_MODES`), what became of each side's file (`Side`,
`summary`), a VCR miss as one line (`vcr_miss`), the model's requests matched by their JSON (`json_body`), and
the model's exchanges noted as vcrpy plays or records them, on the wall clock (`note_exchanges`): vcrpy keeps no
times, and the failed test's page places them among the MCP messages by their replays' clock.

The pair id: the files a test recorded together carry one id, mockmcp's as `meta.pair`, the VCR cassette as its
first line, a YAML comment (`# mockmcp pair: ID ...`). Not in vcrpy's own `metadata`: pytest-recording's loader
cannot read a cassette that has it. vcrpy rewrites its file on its own terms (new_episodes, all) and drops the
comment: the pair then reads as recorded apart (`mismatch`), never as an unreadable file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from mockmcp._wire.words import RecordMode
from mockmcp.cassette import files, store
from mockmcp.errors import CassetteError

__all__ = ["Side", "VCR_MODES", "json_body", "mismatch", "mode_word", "note_exchanges", "pair", "summary", "used"]
__all__ += ["vcr_cassette", "vcr_miss"]

_PAIR_LINE = re.compile(r"# mockmcp pair: (\w+)[^\n]*\n")
_PAIR_SAID = "# mockmcp pair: {id} (its MCP cassettes say meta.pair: {id}; vcrpy drops this line when it rewrites)\n"

_SHOWN = 80  # characters of a value shown in a difference
_SAID = 200  # characters of a body shown of a model's exchange (the page cuts it again to its own width)

# pytest-recording's --record-mode -> mockmcp's mode (docs/agent-run.md, "One switch"). A session is recorded
# whole, so vcrpy's `all` (record every request again, replacing what it matches) is a rewrite here.
VCR_MODES = {
    "none": RecordMode.NONE,
    "once": RecordMode.ONCE,
    "new_episodes": RecordMode.NEW,
    "all": RecordMode.ALL,
    "rewrite": RecordMode.ALL,
}


def mode_word(own: str | None, vcr: str | None) -> str:
    """The run's record mode, as a word of mockmcp's: its own option's when given (it wins), else the one
    pytest-recording's `--record-mode` maps to, else none."""
    if own:
        return own
    return VCR_MODES[vcr].word if vcr in VCR_MODES else RecordMode.NONE.word


def vcr_cassette(item: Any) -> Any:
    """The VCR cassette pytest-recording's `vcr` fixture holds for this test (it has a `vcr` marker), or None."""
    cassette = getattr(item, "funcargs", {}).get("vcr")
    return cassette if cassette is not None and hasattr(cassette, "play_count") else None


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _content(side: str, text: str | None) -> str | None:
    """A digest of what a file says, its pair id aside (the VCR cassette's first line)."""
    if text is None:
        return None
    body = _PAIR_LINE.sub("", text, count=1) if side == "model" and text.startswith("# mockmcp pair:") else text
    return hashlib.sha256(body.encode()).hexdigest()


def _pair_id(side: str, path: Path, text: str | None) -> str | None:
    """The pair id a file carries: the VCR cassette's first line, mockmcp's `meta.pair`; None for none."""
    if text is None:
        return None
    if side == "model":
        found = _PAIR_LINE.match(text)
        return found.group(1) if found else None
    try:
        said = store.load(str(path)).meta.get("pair")
    except CassetteError:
        return None
    return str(said) if said is not None else None


class Side(NamedTuple):
    """One file of a pair as it stood before the test: whose side (`model`, `MCP`), whether the test records it
    (None: only the file can tell), and what it said (a digest, its pair id aside), and its pair id."""

    side: str
    path: Path
    before: tuple[int, int] | None
    recording: bool | None = None
    content: str | None = None
    pair: str | None = None

    @classmethod
    def of(cls, side: str, path: Path | str, recording: bool | None = None) -> Side:
        path = Path(path)
        text = _read(path)
        return cls(side, path, _stamp(path), recording, _content(side, text), _pair_id(side, path, text))

    def written(self) -> bool:
        """Whether the test wrote the file."""
        after = _stamp(self.path)
        return after is not None and after != self.before

    def told(self, root: Path) -> str:
        """What became of the file: recorded, replayed, or missing, and where it is (from `root`)."""
        if _stamp(self.path) is None:
            verb = "missing"
        elif self.written():
            verb = "recorded"
        elif self.recording:
            verb = "recorded (no change)"
        else:
            verb = "replayed"
        return f"{self.side} {verb}: {os.path.relpath(self.path, root)}"


def mismatch(sides: list[Side], root: Path, nodeid: str) -> str | None:
    """Why a pair about to be replayed was not recorded together (its files' pair ids differ), naming each file
    and its id; None when they agree, when no file carries one (recorded before pair ids, or by hand), or when a
    file is missing (its side's miss tells)."""
    ids = {side.pair for side in sides}
    if len(ids) < 2 or any(side.before is None for side in sides):
        return None
    named = ", ".join(f"{os.path.relpath(side.path, root)} ({side.pair or 'no id'})" for side in sides)
    return (
        f"mockmcp: the model's VCR cassette and the MCP cassettes of {nodeid} were not recorded together (their pair "
        f"ids differ: {named}); the model's answers may not fit the tools' any more (a file recorded alone, or "
        f"rewritten by vcrpy, which drops its id): record both again with pytest --record-mode=all '{nodeid}'"
    )


def pair(sides: list[Side]) -> str | None:
    """After a paired test: the files it wrote carry a new pair id (all of them, when recorded together: one id),
    and the id it returns; when what they say did not change, the id they had stands (put back on the VCR cassette,
    whose line vcrpy drops when it rewrites it). None when the test wrote nothing new."""
    written = [side for side in sides if side.written()]
    changed = [side for side in written if _content(side.side, _read(side.path)) != side.content]
    if not changed:
        for side in written:
            if side.side == "model" and side.pair:
                _write_pair(side, side.pair)
        return None
    new = secrets.token_hex(6)
    for side in written:
        _write_pair(side, new)
    return new


def _write_pair(side: Side, id: str) -> None:
    text = _read(side.path)
    if text is None:
        return
    if side.side == "model":
        if _PAIR_LINE.match(text):
            text = _PAIR_LINE.sub("", text, count=1)
        files.atomic_write(str(side.path), _PAIR_SAID.format(id=id) + text)
        return
    cassette = store.load(str(side.path))
    store.save(cassette._replace(meta={**cassette.meta, "pair": id}), str(side.path))


def used(sides: list[Side], mocks: Iterable[Path], intercepted: Iterable[Path]) -> list[Side]:
    """The sides a test used: the model's, its mock servers', and the intercepted servers' it reached (a file
    that was not there before the test, as a new one)."""
    keep = {Path(path) for path in [*mocks, *intercepted]}
    known = {side.path: side for side in sides}
    new = [Side("MCP", Path(path), None) for path in intercepted if Path(path) not in known]
    return [side for side in sides if side.side == "model" or side.path in keep] + new


def summary(pairs: Iterable[tuple[str, list[str]]]) -> list[str]:
    """The terminal summary's lines: each paired test's node id, then one line per side."""
    lines = []
    for nodeid, told in pairs:
        lines += [f"{nodeid}", *(f"  {line}" for line in told)]
    return ["mockmcp: the model's VCR cassette and the MCP cassettes of each paired test:", *lines] if lines else []


def _json(body: Any) -> Any:
    """A request's body as JSON data when it is JSON, else as it is (text when it decodes)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) or len(value) < _SHOWN else value
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _difference(incoming: Any, recorded: Any, path: str = "") -> str | None:
    """Where two JSON values first differ (`messages[1].content: recorded "a", incoming "b"`), or None."""
    if isinstance(incoming, dict) and isinstance(recorded, dict):
        for key in sorted(incoming.keys() | recorded.keys(), key=str):
            here = f"{path}.{key}" if path else str(key)
            if key not in incoming or key not in recorded:
                return f"{here}: only {'recorded' if key in recorded else 'incoming'}"
            found = _difference(incoming[key], recorded[key], here)
            if found:
                return found
        return None
    if isinstance(incoming, list) and isinstance(recorded, list):
        for index, (one, two) in enumerate(zip(incoming, recorded, strict=False)):
            found = _difference(one, two, f"{path}[{index}]")
            if found:
                return found
        if len(incoming) != len(recorded):
            return f"{path or 'body'}: {len(recorded)} items recorded, {len(incoming)} incoming"
        return None
    if incoming == recorded and type(incoming) is type(recorded):
        return None
    return f"{path or 'body'}: recorded {_shown(recorded)}, incoming {_shown(incoming)}"


def json_body(r1: Any, r2: Any) -> None:
    """vcrpy's matcher of two requests' bodies compared as JSON (key order and spacing aside), as text when either
    is not JSON; `r1` the incoming request, `r2` the recorded one, as vcrpy passes them. Raises AssertionError
    naming the first difference (how vcrpy's matchers say no)."""
    found = _difference(_json(r1.body), _json(r2.body))
    if found:
        raise AssertionError(found)


_WHY = {
    "cassette_not_found": "the cassette is missing",
    "already_played": "its recording was played already",
    "no_match": "no recorded request matches it",
    "nothing_similar": "nothing recorded is like it",
}


def _misses(error: BaseException | None) -> list[BaseException]:
    """vcrpy's CannotOverwriteExistingCassetteException in an error's chain (causes, contexts, and the errors of
    a group, as a framework's task group raises them), nearest first."""
    found, todo, seen = [], [error], set()
    while todo:
        each = todo.pop(0)
        if each is None or id(each) in seen:
            continue
        seen.add(id(each))
        if type(each).__name__ == "CannotOverwriteExistingCassetteException" and hasattr(each, "failed_request"):
            found.append(each)
        todo += [each.__cause__, each.__context__, *getattr(each, "exceptions", ())]
    return found


def vcr_miss(error: BaseException | None, root: Path, nodeid: str) -> str | None:
    """The model side's miss in a test's failure, as one line: the request, the VCR cassette and its record mode,
    why vcrpy could not play it (the closest recording's difference), how to record it; None when vcrpy missed
    nothing."""
    misses = _misses(error)
    if not misses:
        return None
    miss: Any = misses[0]
    request, cassette = miss.failed_request, miss.cassette
    mode = getattr(cassette.record_mode, "value", cassette.record_mode)
    path = os.path.relpath(cassette._path, root)
    why = _WHY.get(getattr(miss, "reason", ""), "it is not in the cassette")
    similar = getattr(miss, "similar_requests", None) or []
    differs = (
        "; ".join(f"{name}: {str(said).strip().splitlines()[0]}" for name, said in similar[0][2] if said)
        if similar
        else ""
    )
    fix = "once" if getattr(miss, "reason", "") == "cassette_not_found" else "all"
    return (
        f"{request.method} {request.uri} could not be played from {path} (record mode {mode}): {why}"
        f"{f' ({differs})' if differs else ''}; to record it: pytest --record-mode={fix} '{nodeid}'"
    )


def _said(body: Any) -> str:
    """A body in short, as one line: its JSON compact (text as it is), cut to a couple of hundred characters."""
    if not body:
        return ""
    data = _json(body)
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(str(text).split())
    return text if len(text) <= _SAID else text[: _SAID - 1] + "…"


def _exchange(request: Any, response: Any, how: str, at: float) -> dict[str, Any]:
    """One model exchange as the page shows it: method, URL, a short request and answer, status, when, and how."""
    response = response if isinstance(response, dict) else {}
    status, body = response.get("status"), response.get("body")
    code = status.get("code") if isinstance(status, dict) else None
    answer = body.get("string") if isinstance(body, dict) else body
    said = {"method": str(getattr(request, "method", "")), "url": str(getattr(request, "uri", ""))}
    said |= {"request": _said(getattr(request, "body", None)), "answer": _said(answer)}
    return {**said, "status": code if isinstance(code, int) else None, "how": how, "at": at}


def note_exchanges(cassette: Any, clock: Callable[[], float] = time.time) -> list[dict[str, Any]]:
    """From now on, each exchange the VCR cassette plays or records (vcrpy's `play_response`, `append`: wrapped on
    this cassette object alone, never on its class) is noted, with when by `clock`; returns the list it fills."""
    noted: list[dict[str, Any]] = []
    play, append = cassette.play_response, cassette.append

    def play_response(request: Any) -> Any:
        response = play(request)  # a request it cannot play raises, and is no exchange
        noted.append(_exchange(request, response, "played", clock()))
        return response

    def appended(request: Any, response: Any) -> None:
        append(request, response)
        noted.append(_exchange(request, response, "recorded", clock()))

    cassette.play_response, cassette.append = play_response, appended
    return noted
