"""The HTML timeline as one self-contained file: a template (`page/`: its style and script inlined) and the
view's data as JSON in a `<script type="application/json">`. The data is untrusted, so it is only ever JSON
there, every `<` as `\u003c`, and the script puts it on the page as text nodes, never markup; a
Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import html
import json
import os
import pathlib
import re
from typing import Any

from mockmcp.cassette import store
from mockmcp.cassette.files import atomic_write
from mockmcp.cassette.model import Cassette
from mockmcp.cassette.yamlfile import shallow_lines
from mockmcp.engine.report import Report
from mockmcp.errors import UsageError
from mockmcp.html._view import Lane, Model, page_view
from mockmcp.tools import report_problem

__all__ = ["lane_for", "read_report", "render_page", "write_page", "write_replay_page", "write_show_page"]

_PAGE = pathlib.Path(__file__).with_name("page")
_DEEPEST = 5  # the deepest place a page links to: interactions[n].server[k].response


def read_report(path: str, interactions: int, cassette: str | None = None) -> dict[str, Any]:
    """A replay report (`mockmcp replay --report FILE`) of a cassette of `interactions` interactions (the file
    `cassette`, when given); raises UsageError naming the file and what is wrong with it."""
    fix = "give the file `mockmcp replay --report FILE` wrote while replaying this very cassette"
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the report: {exc.strerror or exc}", fix) from None
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
        raise UsageError(f"{path}: not a replay report: its JSON does not parse ({exc})", fix) from None
    problem = report_problem(report)  # `mockmcp schema --for report`: what the page reads may be trusted
    if problem is not None:
        raise UsageError(f"{path}: not a replay report: {problem} (`mockmcp schema --for report`)", fix)
    plays = report["plays"]
    if len(plays) != interactions:
        counts = f"the report counts {len(plays)} interactions, the cassette has {interactions}"
        raise UsageError(f"{path}: {counts}: it was written for another version of the cassette", fix)
    named = report.get("cassette")
    if cassette and isinstance(named, str) and os.path.isfile(named) and not os.path.samefile(named, cassette):
        raise UsageError(f"{path}: the report is of the cassette {named}, not of {cassette}", fix)
    return dict(report)


def lane_for(
    cassette: str | Cassette, reports: list[dict[str, Any]] | None = None, name: str = "", shown: str | None = None
) -> Lane:
    """A lane of the page: the cassette (a path is loaded, raising CassetteError), its live sessions' reports, and
    where each interaction starts in its file; `shown`: the cassette's path as the page names it."""
    loaded = store.load(cassette) if isinstance(cassette, str) else cassette
    path = loaded.path or ""
    try:
        with open(path, encoding="utf-8") as handle:
            where = shallow_lines(handle.read(), _DEEPEST)
    except (OSError, UnicodeDecodeError):  # a cassette built in memory, or its file gone: no links to lines
        where = {}
    href = pathlib.Path(os.path.abspath(path)).as_uri() if where else ""
    if shown is not None:
        loaded = loaded._replace(path=shown)
    return Lane(name, loaded, tuple(reports or ()), where, href)


def _script_json(data: Any) -> str:
    """data as JSON a `<script type="application/json">` holds safely: no `<`, and a lone surrogate escaped."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode()
    except UnicodeEncodeError:
        text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_page(view: dict[str, Any]) -> str:
    """The page's HTML text for `html_view.page_view`'s data."""
    parts = {
        # A title from a test's name or a path may hold a lone surrogate, which UTF-8 cannot: kept escaped.
        "title": html.escape(str(view["title"]).encode("utf-8", "backslashreplace").decode()),
        "style": (_PAGE / "timeline.css").read_text(encoding="utf-8"),
        "script": (_PAGE / "timeline.js").read_text(encoding="utf-8"),
        "data": _script_json(view),
    }
    template = (_PAGE / "timeline.html").read_text(encoding="utf-8")
    # One pass over the template: what is put in a slot is never read for slots again.
    return re.sub(r"\{\{(\w+)\}\}", lambda slot: parts[slot.group(1)], template)


def write_page(output: str, lanes: list[Lane], title: str, runner: str = "cli", model: Model | None = None) -> str:
    """Write the page for lanes to output, atomically; returns output. `runner`: how the user ran what the page
    explains (`cli` or `pytest`), the form its fix commands take; `model`: a test's model beside its servers."""
    atomic_write(output, render_page(page_view(lanes, title, runner, model)))
    return output


def write_show_page(cassette: str, report_paths: tuple[str, ...], output: str) -> str:
    """`mockmcp show --html`: the cassette, and what the replays whose reports are given did; returns output."""
    lane = lane_for(cassette)
    reports = [read_report(path, len(lane.cassette.interactions), cassette) for path in report_paths]
    title = f"mockmcp: {cassette}" + (" replayed" if reports else "")
    return write_page(output, [lane._replace(reports=tuple(reports))], title)


def write_replay_page(report: Report, output: str) -> str:
    """`mockmcp replay --html`: the session that just ended, beside its cassette; returns output."""
    title = f"mockmcp replay: {report.cassette.path or 'cassette'}"
    return write_page(output, [lane_for(report.cassette, [report.to_json()])], title)
