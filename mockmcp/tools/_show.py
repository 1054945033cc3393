"""`mockmcp show`: a cassette as a transcript a person reads at a glance, one line per message (`parts`, which
the HTML timeline tells too). A line is three groups of (text, style) spans (head, summary, tail), cut to the
width on its visible text (the summary gives way first) and only then coloured, so colour never changes what fits.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from typing import Any, NamedTuple, TextIO

from mockmcp._wire import protocol
from mockmcp._wire.jsonrpc import RESPONSE
from mockmcp._wire.words import Place, placeholder
from mockmcp.cassette.model import CUT, NOTIFICATION, RAW, REQUEST, Cassette, Interaction
from mockmcp.cassette.store import load
from mockmcp.engine.eras import translated_eras
from mockmcp.errors import UsageError
from mockmcp.tools._summary import PARAMS, RESULTS, summarize

__all__ = ["FROM", "Part", "counts", "header", "parts", "print_show", "render", "rules", "want_color"]

_Span = tuple[str, str]  # (text, style); style "" is plain
TO, FROM = "to", "from"  # to the server (what the host sent), from it
ANSWER = "answer"  # the host's answer to a server request
_ANSI = {"to": "36", "from": "32", "error": "31", "tool": "33", "fault": "35", "dim": "2", "bold": "1"}


class _Symbols(NamedTuple):
    to_server: str
    to_client: str
    warn: str
    more: str
    rule: str  # around the line that marks where a recorded session begins


_UNICODE = _Symbols("→", "←", "⚠", "…", "──")
_ASCII = _Symbols("->", "<-", "!", "...", "--")


class _Line(NamedTuple):
    head: list[_Span]
    body: list[_Span]
    tail: list[_Span]  # see the module docstring


class Part(NamedTuple):
    """One message of an interaction as show and the HTML timeline tell it."""

    dir: str  # TO the server (what the host sent) or FROM it
    kind: str  # request, notification, raw, response, or answer (the host's, to a server request)
    method: str | None  # for a response or an answer, the request's
    text: str  # the summary
    style: str  # show's: "", "error", "tool", "fault" or "dim"
    json: Any  # the message as recorded (a raw line: its text)
    at: float | None
    place: Place  # where it is in the cassette
    depth: int = 0  # 1: sent for the request above it; 2: the host's answer to such a request
    marks: tuple[str, ...] = ()  # the fault knobs that act on it
    notes: tuple[str, ...] = ()
    took: str = ""  # how long a response took


def parts(n: int, item: Interaction) -> list[Part]:
    """interactions[n]'s messages in order: the client's, what the server sent for it, the response."""
    place: Place = ("interactions", n)
    found = [] if item.message is None else [_sent(item.message, TO, item.kind, item.at, place)]
    depth = 0 if item.message is None else 1
    for j, server in enumerate(item.server):
        at: Place = (*place, "server", j)
        notes = ("unsolicited",) * (not depth) + ("on the GET stream",) * (server.stream is not None)
        if server.kind == RAW:
            text = f"raw: {server.message}"
            found.append(
                Part(FROM, RAW, None, text, "fault", server.message, server.at, at, depth, ("not JSON",), notes)
            )
            continue
        found.append(_sent(server.message, FROM, server.kind, server.at, at)._replace(depth=depth, notes=notes))
        if server.kind == REQUEST:
            method, answer = server.message["method"], server.response
            text, style = ("no answer recorded", "dim") if answer is None else _reply(method, answer)
            found.append(Part(TO, ANSWER, method, text, style, answer, None, (*at, "response"), depth + 1))
    if item.kind == REQUEST:
        text, style = ("no response recorded", "dim") if item.response is None else _reply(item.method, item.response)
        json = item.response
        if item.raw_response is not None:
            text, style, json = f"raw: {item.raw_response}", "fault", item.raw_response
        took = "" if item.took is None else f"{item.took * 1000:.0f} ms" if item.took < 1 else f"{item.took:.2f} s"
        marks = tuple(_reply_marks(item))
        found.append(
            Part(FROM, RESPONSE, item.method, text, style, json, None, (*place, "response"), 0, marks, (), took)
        )
    if found:  # delay and times act on the whole interaction: marked on its first message
        found[0] = found[0]._replace(marks=found[0].marks + tuple(_client_marks(item)))
    return found


def _sent(message: dict[str, Any], direction: str, kind: str, at: float | None, place: Place) -> Part:
    text = summarize(PARAMS, message["method"], message.get("params"))
    return Part(direction, kind, message["method"], text, "", message, at, place)


def _reply(method: str | None, response: dict[str, Any]) -> _Span:
    """A response's summary, styled: protocol errors, tool errors, input_required, or the result."""
    if "error" in response:
        error = response["error"]
        return f"ERROR {error['code']} {error['message']}", "error"
    result = response["result"]
    if not isinstance(result, dict):
        return summarize(RESULTS, method, result) or "{}", ""
    if result.get("resultType") == "input_required" and isinstance(asked := result.get("inputRequests"), dict):
        asks = [
            f"{a.get('method')} {summarize(PARAMS, a.get('method'), a.get('params'))}".rstrip()
            for a in asked.values()
            if isinstance(a, dict)
        ]
        return "input required: " + "; ".join(asks), "tool"
    text = summarize(RESULTS, method, result) or "{}"
    return ("TOOL ERROR " + text, "tool") if result.get("isError") is True else (text, "")


def _client_marks(item: Interaction) -> list[str]:
    """Knobs that change when or whether the client message is answered: delay, times and after."""
    marks = [f"delay {item.delay:g}s"] if item.delay else []
    plays = [f"times {item.times}"] if item.times != 1 else []
    plays += [f"then {item.after}"] if item.after != "repeat" else []
    return marks + ([", ".join(plays)] if plays else [])


def _reply_marks(item: Interaction) -> list[str]:
    """Knobs that change the reply itself: drop (`cut off`: its answer breaks off there), raw_response, exit."""
    marks = (["cut off"] if item.drop == CUT else ["dropped"]) if item.drop else []
    marks += ["raw reply"] if item.raw_response is not None else []
    return marks + ([f"exit {item.exit[0]} {item.exit[1]} reply"] if item.exit is not None else [])


def _eras(cassette: Cassette) -> list[str]:
    """The eras the cassette speaks: the one its meta says, and those its messages show (`protocol.session_eras`)."""
    eras = {cassette.meta["era"]} if isinstance(cassette.meta.get("era"), str) else set()
    eras |= set(protocol.session_eras((item.message, item.response) for item in cassette.interactions))
    return sorted(eras, key=lambda era: (era != protocol.HANDSHAKE, era))


def counts(cassette: Cassette) -> list[_Span]:
    items = cassette.interactions
    replies = [item.response for item in items] + [s.response for item in items for s in item.server]
    results = [r["result"] for r in replies if r is not None and "result" in r]
    faults = sum(len(_client_marks(i)) + len(_reply_marks(i)) + sum(s.kind == RAW for s in i.server) for i in items)
    counts = [
        (sum(i.kind == REQUEST for i in items), "request", ""),
        (sum(i.kind == NOTIFICATION for i in items), "notification", ""),
        (sum(len(i.server) for i in items), "server message", ""),
        (sum(r is not None and "error" in r for r in replies), "error", "error"),
        (sum(isinstance(r, dict) and r.get("isError") is True for r in results), "tool error", "tool"),
        (faults, "fault", "fault"),
    ]
    spans = [(f"{n} {noun}{'' if n == 1 else 's'}", style if n else "") for n, noun, style in counts]
    eras = _eras(cassette)
    translated = translated_eras(cassette)  # a server of both eras: served translated (`engine.eras`)
    said = f"era{'s' if len(eras) > 1 else ''}: {', '.join(eras) or 'unknown'}"
    return spans + [(said + "".join(f" (serves {era} hosts too, translated)" for era in translated), "")]


def _lines(n: int, item: Interaction, symbols: _Symbols, clock: int, tag: int) -> list[_Line]:
    """interactions[n] as show's lines, `clock` and `tag` the widths of the timing and the `[N]` columns."""
    lines = []
    for k, part in enumerate(parts(n, item)):
        at = "" if not clock else ("" if part.at is None else f"+{part.at:.3f}s").rjust(clock) + " "
        index = ("" if k else f"[{n}]").ljust(tag) + " " + "  " * (part.kind == ANSWER)
        arrow = symbols.to_server if part.dir == TO else symbols.to_client
        head = [(at, "dim"), (index, "dim"), (arrow, part.dir), (" ", "")]
        body = [(part.text, part.style)]
        if part.kind in (REQUEST, NOTIFICATION):
            body = [(part.method or "", "bold")] + ([(" " + part.text, "")] if part.text else [])
        tail = [(f"  match: {rules(item)}", "dim")] if k == 0 and item.match else []
        tail += [(f"  ({note})", "dim") for note in part.notes] + ([(f"  ({part.took})", "dim")] if part.took else [])
        lines.append(_Line(head, body, tail + [(f"  {symbols.warn} {mark}", "fault") for mark in part.marks]))
    return lines


def rules(item: Interaction) -> str:
    """A request's match rules, short: `arguments.q regex, arguments.n type integer`."""
    return ", ".join(f"{path} {_matcher(how)}" for path, how in (item.match or {}).items())


def _matcher(how: Any) -> str:
    if isinstance(how, dict):
        ((kind, argument),) = how.items()
        return kind if kind == "regex" else f"{kind} {argument}"
    return str(how)


def header(cassette: Cassette) -> list[list[_Span]]:
    meta = cassette.meta
    server = meta.get("server")
    ignored = (meta.get("match") or {}).get("ignore") or []
    facts = [
        f"{meta['era']} era" if meta.get("era") else "",
        f"protocol {meta['protocol_version']}" if meta.get("protocol_version") else "",
        f"server: {shlex.join(map(str, server)) if isinstance(server, list) else server}" if server else "",
        f"recorded {meta['recorded_at']}" if meta.get("recorded_at") else "",
        f"matching ignores {', '.join(ignored)}" if ignored else "",
        "placeholders " + ", ".join(placeholder(name) for name in meta["substitute"]) if meta.get("substitute") else "",
    ]
    facts = [fact for fact in facts if fact]
    head = [(f"{cassette.path or '<cassette>'}{':' if facts else ''}", "bold")] + [(fact, "") for fact in facts]
    described = [[(str(meta["description"]), "dim")]] if meta.get("description") else []
    return [head] + described


def _printable(text: str) -> str:
    """One line whatever the cassette holds: line breaks become spaces, other control characters escapes."""
    text = re.sub(r"\s*[\r\n]+\s*", " ", text).replace("\t", " ")
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def _cut(spans: list[_Span], room: int, more: str) -> list[_Span]:
    """The spans cut to `room` visible characters, ending with `more` where text was left out."""
    if sum(len(text) for text, _ in spans) <= room:
        return spans
    out: list[_Span] = []
    left = max(room - len(more), 0)
    for text, style in spans:
        if len(text) >= left:
            return out + [(text[:left] + more[: max(room, 0)], style)]
        out.append((text, style))
        left -= len(text)
    return out


def _fit(line: _Line, width: int, more: str) -> list[_Span]:
    """The line within width: the summary gives way first, so timing and fault marks stay whole."""
    head, body, tail = ([(_printable(t), s) for t, s in part] for part in line)
    room = width - sum(len(t) for t, _ in head + tail)
    if room >= 8:
        return head + _cut(body, room, more) + tail
    return _cut(head + body + tail, width, more)


def _wrap(parts: list[_Span], width: int, more: str, first: str = ", ") -> list[list[_Span]]:
    """Parts joined with commas on as few lines as fit: a header or the counts must not lose a fact to the width."""
    lines: list[list[_Span]] = [[]]
    for n, (text, style) in enumerate(parts):
        joint = "" if not n else first if n == 1 else ", "
        if n and sum(len(t) for t, _ in lines[-1]) + len(joint) + len(text) > width:
            lines.append([("  ", ""), (text, style)])
        else:
            lines[-1] += [(joint, ""), (text, style)]
    return [_cut(line, width, more) for line in lines]


def _paint(spans: list[_Span], color: bool) -> str:
    if not color:
        return "".join(text for text, _style in spans)
    return "".join(f"\x1b[{_ANSI[style]}m{text}\x1b[0m" if style and text.strip() else text for text, style in spans)


def render(cassette: Cassette, color: bool, width: int, *, ascii_only: bool = False) -> str:
    """The cassette as a transcript of lines at most `width` characters wide; ANSI colours when `color`."""
    symbols = _ASCII if ascii_only else _UNICODE
    stamps = [i.at for i in cassette.interactions] + [s.at for i in cassette.interactions for s in i.server]
    clock = max((len(f"+{at:.3f}s") for at in stamps if at is not None), default=0)
    tag = len(f"[{max(len(cassette.interactions) - 1, 0)}]")
    top = header(cassette)
    lines = _wrap(top[0], width, symbols.more, first=" ") + [_cut(h, width, symbols.more) for h in top[1:]]
    several = any(item.session for item in cassette.interactions)
    for n, item in enumerate(cassette.interactions):
        if several and (n == 0 or item.session != cassette.interactions[n - 1].session):
            count = sum(one.session == item.session for one in cassette.interactions)
            mark = f"session {item.session}: {count} interaction{'' if count == 1 else 's'}"
            lines.append(_cut([(f"{symbols.rule} {mark} {symbols.rule}", "bold")], width, symbols.more))
        lines += [_fit(line, width, symbols.more) for line in _lines(n, item, symbols, clock, tag)]
    lines += _wrap(counts(cassette), width, symbols.more)
    return "".join(_paint(line, color) + "\n" for line in lines)


def want_color(choice: str, stream: TextIO, environ: Mapping[str, str]) -> bool:
    """`--color`: always, never, or auto (a terminal, and NO_COLOR unset or empty, as no-color.org asks)."""
    if choice == "auto":
        return stream.isatty() and not environ.get("NO_COLOR")
    if choice not in ("always", "never"):
        raise UsageError(f"unknown --color {choice!r}", "use one of: auto, always, never")
    return choice == "always"


def print_show(path: str, color: str = "auto", width: int | None = None) -> None:
    """`mockmcp show`: the transcript on stdout, sized and coloured for it, in symbols its encoding has."""
    out = sys.stdout
    encoding, symbols = out.encoding or "utf-8", "".join(_UNICODE)
    ascii_only = symbols.encode(encoding, "replace").decode(encoding) != symbols
    width = width or shutil.get_terminal_size((100, 24)).columns
    text = render(load(path), want_color(color, out, os.environ), width, ascii_only=ascii_only)
    out.write(text.encode(encoding, "replace").decode(encoding))  # a cassette's text may not fit the encoding either
    out.flush()
