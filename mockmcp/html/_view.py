"""What the HTML timeline shows, as plain data for the page: a lane per server, its cassette's interactions as
rows, and what live replays of it did (their reports), a miss a row of its own after the recording closest to it.
Pure. Every word shown of a message is `show`'s and every live fact its report's, so they cannot disagree; nothing
of this machine enters (placeholders stay).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from mockmcp._wire import protocol
from mockmcp._wire.words import Place, parse_path
from mockmcp.cassette.model import REQUEST, SERVER, Cassette, Interaction
from mockmcp.engine.eras import rounds
from mockmcp.engine.timeline import message_times
from mockmcp.errors import UsageError
from mockmcp.tools import FROM, PARAMS, Part, counts, header, parts, rules, summarize

__all__ = ["Lane", "lane_view", "page_view"]

_SHOWN = 400  # characters of a summary on its row; the whole message is in its JSON, unfolded


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


class Lane(NamedTuple):
    """One server's cassette, the reports of its live sessions (none: the cassette alone), and its lines."""

    name: str  # the server's name in a test of several servers, else ""
    cassette: Cassette
    reports: tuple[dict[str, Any], ...] = ()
    lines: Mapping[Place, int] = MappingProxyType({})  # place -> its line in the file (`yamlfile.lines`)
    href: str = ""  # the cassette file as a URL, for links to its lines


def _named(message: Any) -> str:
    """The tool, prompt or resource a message names: what a person filters by beside the method."""
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return ""
    keys = [protocol.NAMED_BY[message.get("method")]] if message.get("method") in protocol.NAMED_BY else ["name", "uri"]
    return next((params[key] for key in keys if isinstance(params.get(key), str)), "")


def _row(part: Part, lane: Lane) -> dict[str, Any]:
    """A message as the page draws it; a response or an answer that is a protocol or a tool error is an error."""
    json = part.json if isinstance(part.json, dict) else {}
    result = json.get("result")
    failed = "error" in json or (isinstance(result, dict) and result.get("isError") is True)
    row = part._asdict() | {"method": part.method or "", "name": _named(json), "text": _cut(part.text)}
    row |= {"line": lane.lines.get(row.pop("place")), "marks": list(part.marks)}
    return {**row, "error": failed and part.kind in ("response", "answer")}


def _cancels(items: tuple[Interaction, ...]) -> dict[int, int]:
    """Each request the recorded host cancelled -> the interaction of its `notifications/cancelled`."""
    in_flight: dict[tuple[int, Any], int] = {}
    found: dict[int, int] = {}
    for n, item in enumerate(items):
        message, params = item.message, item.params
        if item.kind == REQUEST and message is not None:
            in_flight[(item.session, message.get("id"))] = n
        elif item.method == protocol.CANCELLED:  # a requestId no request can have finds none (None is no id)
            cancelled = in_flight.pop((item.session, protocol.cancelled_request(params)), None)
            if cancelled is not None:
                found[cancelled] = n
    return found


def _interaction(n: int, item: Interaction, lane: Lane, cancelled_by: int | None) -> dict[str, Any]:
    msgs = [_row(part, lane) for part in parts(n, item)]
    if cancelled_by is not None:
        _mark_late(item, msgs, lane.cassette.interactions[cancelled_by])
    row = {"n": n, "session": item.session, "line": lane.lines.get(("interactions", n)), "match": rules(item)}
    return {**row, "cancelled": cancelled_by, "msgs": msgs}


def _mark_late(item: Interaction, msgs: list[dict[str, Any]], cancel: Interaction) -> None:
    """What the server sent for a request after the host cancelled it: progress, and a late answer."""
    times = message_times(item)  # the server's messages: its items, then the response
    sent = [m for m in msgs if m["dir"] == FROM]
    for message, at in zip(sent, times, strict=False):
        if at is not None and cancel.at is not None and at >= cancel.at:
            message["late"] = "late answer, after the cancel" if message["kind"] == "response" else "after the cancel"


def _live(lane: Lane, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the lane's live sessions did to each row, from their reports."""
    reports = lane.reports
    plays = [sum(report["plays"][n] for report in reports) for n in range(len(rows))]
    unplayed = {u["interaction"] for report in reports for u in report.get("unplayed", [])}
    repeats = [(r["interaction"], r["extra"]) for report in reports for r in report.get("repeats", [])]
    for n, row in enumerate(rows):
        if lane.cassette.interactions[n].kind == SERVER:
            row["live"] = {"state": "sent" if plays[n] else "idle"}
        elif plays[n]:
            row["live"] = {"state": "played", "plays": plays[n], "extra": sum(e for i, e in repeats if i == n)}
        else:
            row["live"] = {"state": "unplayed" if n in unplayed else "idle"}
    played, total, missed = (
        sum(report.get(key, 0) for report in reports) for key in ("played", "interactions", "missed")
    )
    unplayed_rows = sum(row["live"]["state"] == "unplayed" for row in rows)
    differed = sum(len(report.get("mismatches", [])) for report in reports)
    row = {"sessions": len(reports), "played": played, "total": total, "missed": missed, "unplayed": unplayed_rows}
    return {**row, "differed": differed, "notes": _findings(lane, rows)}


def _findings(lane: Lane, rows: list[dict[str, Any]]) -> list[str]:
    """Answers that differed and withheld requests, marked on their messages; what belongs to no row, as notes."""
    notes: list[str] = []
    for report in lane.reports:
        marked = [(m, "differed") for m in report.get("mismatches", [])]
        for found, key in marked + [(w, "withheld") for w in report.get("withheld", [])]:
            n = found.get("interaction")
            if not isinstance(n, int) or not 0 <= n < len(rows) or not rows[n]["msgs"]:
                notes.append(found.get("explanation", ""))
                continue
            row = rows[n]
            asked = (m for m in row["msgs"] if (m["dir"], m["kind"], m["method"]) == (FROM, REQUEST, found["method"]))
            target = next(asked, row["msgs"][0])
            detail = found.get("differences") or [found.get("explanation", "")]
            target.setdefault(key, []).extend(detail)
            row["live"][key] = True
        notes += [f"fault: {text}" for text in report.get("faults", [])]
        notes += report.get("unanswered", []) + [f"capabilities: {text}" for text in report.get("capabilities", [])]
        kept = len(report.get("misses", []))
        if report.get("missed", 0) > kept:
            notes.append(f"{report['missed'] - kept} more misses, not kept in the report")
    return notes


def _miss(miss: dict[str, Any], lane: Lane) -> dict[str, Any]:
    closest = [  # a report's were held to its schema: each an object with its `interaction`
        {**c, "line": lane.lines.get(("interactions", c["interaction"]))}
        for c in miss["closest"]
        if c["interaction"] < len(lane.cassette.interactions)
    ]
    incoming = {"method": miss["method"], "params": miss.get("params")}
    first = closest[0].get("first_path", "") if closest else ""
    try:
        hit = list(parse_path(first)) if first else []  # where the closest recording differs, in the incoming params
    except UsageError:
        hit = []
    text = _cut(summarize(PARAMS, miss["method"], miss.get("params")))
    row = {"hit": hit, "miss": True, "id": miss.get("id"), "method": miss["method"], "name": _named(incoming)}
    row |= {"text": text, "reason": miss.get("reason", ""), "closest": closest, "fixes": list(miss.get("fixes", []))}
    return {**row, "json": miss.get("params")}


def lane_view(lane: Lane) -> dict[str, Any]:
    """One lane as the page's data: the cassette's facts and rows, and with reports what the live sessions did."""
    cassette = lane.cassette
    cancels = _cancels(cassette.interactions)
    rows = [_interaction(n, item, lane, cancels.get(n)) for n, item in enumerate(cassette.interactions)]
    for cancelled, cancel in cancels.items():
        rows[cancel]["cancels"] = cancelled
    for first, chain in rounds(cassette.interactions).items():
        for k, n in enumerate(chain, 1):
            rows[n]["round"] = {"first": first, "k": k, "of": len(chain)}
    head = header(cassette)
    facts = [text for text, _style in head[0][1:]]
    description = "".join(text for text, _style in head[1]) if len(head) > 1 else ""
    several = any(item.session for item in cassette.interactions)
    view: dict[str, Any] = {"name": lane.name, "cassette": cassette.path or "", "href": lane.href, "facts": facts}
    view |= {"description": description, "counts": [text for text, _style in counts(cassette)], "several": several}
    if lane.reports:
        view["live"] = _live(lane, rows)
        misses = [_miss(miss, lane) for report in lane.reports for miss in report.get("misses", [])]
        rows = _placed(rows, misses)
    view["rows"] = rows
    return view


def _placed(rows: list[dict[str, Any]], misses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with each miss after the recording closest to it (at the end when none came close)."""
    after: dict[int, list[dict[str, Any]]] = {}
    for miss in misses:
        at = miss["closest"][0]["interaction"] if miss["closest"] else len(rows) - 1
        after.setdefault(at, []).append(miss)
    placed = [*after.pop(-1, [])]
    for row in rows:
        placed += [row, *after.get(row["n"], [])]
    return placed


def page_view(lanes: list[Lane], title: str, runner: str) -> dict[str, Any]:
    """The whole page's data: a title, how the user ran it (`cli` or `pytest`: the form of the fixes), the lanes."""
    return {"title": title, "runner": runner, "lanes": [lane_view(lane) for lane in lanes]}
