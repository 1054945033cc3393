"""What the HTML timeline shows, as plain data for the page: a lane per server, its cassette's interactions as
rows, and what live replays of it did (their reports), a miss a row of its own after the recording closest to it.
Beside a test's servers, its model's exchanges (a VCR cassette's): a lane of their own, each placed among the
MCP messages by the wall clock, as the replays' reports and the plugin noted it (`Model`, `in_time`). Pure.
Every word shown of a message is `show`'s and every live fact its report's, so they cannot disagree; nothing of
this machine enters (placeholders stay).
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
from mockmcp.tools import FROM, PARAMS, TO, Part, counts, header, parts, rules, summarize

__all__ = ["Lane", "Model", "in_time", "lane_view", "page_view"]

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


class Model(NamedTuple):
    """The model's side of a test beside a VCR cassette: the cassette as the page names it, its exchanges as the
    plugin noted them (`method`, `url`, `request`, `answer`, `status`, `how`, and `at`: seconds since the epoch),
    and the file as a URL."""

    cassette: str
    exchanges: tuple[dict[str, Any], ...]
    href: str = ""


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


def _plays(lanes: list[Lane]) -> list[tuple[float, int, int]]:
    """When each lane's interactions were first played by the wall clock, from its timed reports: (seconds since
    the epoch, lane, interaction), the earliest of its sessions'."""
    first: dict[tuple[int, int], float] = {}
    for i, lane in enumerate(lanes):
        for report in lane.reports:
            started, played = report.get("started"), report.get("played_at")
            if not isinstance(started, (int, float)) or not isinstance(played, list):
                continue  # a report written before times, or a session no shell timed
            for n, at in enumerate(played[: len(lane.cassette.interactions)]):
                if isinstance(at, (int, float)):
                    first[(i, n)] = min(started + at, first.get((i, n), started + at))
    return [(at, i, n) for (i, n), at in first.items()]


def in_time(plays: list[tuple[float, int, int]], exchanges: list[float]) -> list[tuple[int, int]]:
    """The MCP plays (time, lane, interaction) and the model's exchanges (their times, in the order they came) as
    one sequence in time: (lane, interaction), the model's as (-1, its index). At the same instant an MCP play comes
    first (its request came before anything could follow from it), then the lanes in order."""
    events = [(at, 0, i, n) for at, i, n in plays] + [(at, 1, -1, k) for k, at in enumerate(exchanges)]
    return [(lane, n) for _at, _side, lane, n in sorted(events)]


def _exchange_row(k: int, said: dict[str, Any], zero: float) -> dict[str, Any]:
    """A model's exchange as a row the page draws as it draws an interaction: the request, then the answer."""
    method, status = str(said.get("method", "")), said.get("status")
    asked = {"dir": TO, "kind": REQUEST, "method": method, "name": "", "marks": [], "at": said["at"] - zero}
    asked |= {"text": _cut(f"{said.get('url', '')} {said.get('request', '')}".strip()), "json": said.get("request")}
    answer = {"dir": FROM, "kind": "response", "method": method, "name": "", "marks": [], "json": said.get("answer")}
    failed = isinstance(status, int) and status >= 400
    answer |= {"text": _cut(f"{status or ''} {said.get('answer', '')}".strip()), "error": failed}
    answer["style"] = "error" if failed else ""
    row = {"n": k, "session": 0, "line": None, "match": "", "cancelled": None, "msgs": [asked, answer]}
    return {**row, "how": said.get("how", ""), "at": said["at"] - zero}


def _model_view(model: Model, views: list[dict[str, Any]], lanes: list[Lane]) -> tuple[dict[str, Any], list[Any]]:
    """The model's lane, each exchange after the MCP message played last before it, and the page's order in time;
    each MCP row played on the clock gets its time (seconds after the first thing that happened)."""
    plays, times = _plays(lanes), [float(said["at"]) for said in model.exchanges]
    zero = min([at for at, _i, _n in plays] + times, default=0.0)
    rows = {(i, row["n"]): row for i, view in enumerate(views) for row in view["rows"] if "n" in row}
    for at, i, n in plays:
        rows[(i, n)].setdefault("live", {})["at"] = at - zero
    model_rows = [_exchange_row(k, said, zero) for k, said in enumerate(model.exchanges)]
    here, order = len(views), []
    after: dict[str, Any] | None = None
    for lane, n in in_time(plays, times):
        if lane < 0:
            model_rows[n]["after"] = after
            order.append({"lane": here, "n": n})
            continue
        message = rows[(lane, n)]["msgs"][0] if rows[(lane, n)]["msgs"] else {}
        after = {"lane": lane, "n": n, "server": views[lane]["name"], "method": message.get("method", "")}
        order.append({"lane": lane, "n": n})
    how = [said.get("how") for said in model.exchanges]
    counts = [f"{len(how)} exchanges", f"{how.count('played')} played", f"{how.count('recorded')} recorded"]
    view = {"name": "model", "kind": "model", "cassette": model.cassette, "href": model.href, "several": False}
    view |= {"facts": ["its VCR cassette (vcrpy)"], "description": "", "counts": counts, "rows": model_rows}
    return view, order


def page_view(lanes: list[Lane], title: str, runner: str, model: Model | None = None) -> dict[str, Any]:
    """The whole page's data: a title, how the user ran it (`cli` or `pytest`: the form of the fixes), the lanes;
    with a `model`, its lane after the servers' and `order`: every row played, in time, as {lane, n}."""
    views = [lane_view(lane) for lane in lanes]
    if model is None:
        return {"title": title, "runner": runner, "lanes": views}
    view, order = _model_view(model, views, lanes)
    return {"title": title, "runner": runner, "lanes": [*views, view], "order": order}
