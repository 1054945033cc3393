"""verify's and diff's report as JSON, or as Markdown for a pull-request comment. Pure.

The text for a terminal is `Drift.render`; these say the same facts: the contract's changes by tier and rule,
then every interaction's verdict.
"""

from __future__ import annotations

import json
from typing import Any

from mockmcp.tools._contract import BREAKING, RULES
from mockmcp.tools._drift import Drift

__all__ = ["MARKER", "as_json", "as_markdown"]

# The first line of a Markdown report: how a CI step finds its own earlier comment to update it.
MARKER = "<!-- mockmcp drift -->"


def as_json(drift: Drift, title: str, fail_on: str) -> str:
    """The report as one JSON document (`fails`: whether it fails `--fail-on fail_on`)."""
    document: dict[str, Any] = {
        "title": title,
        "drifted": drift.drifted,
        "fail_on": fail_on,
        "fails": drift.fails(fail_on),
        "tiers": drift.counts(),
        "changes": [{"tier": c.tier, "rule": c.rule, "subject": c.subject, "detail": c.detail} for c in drift.changes],
        "interactions": [
            {"status": e.status, "recorded": e.recorded, "other": e.other, "label": e.label, "details": list(e.details)}
            for e in drift.entries
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def as_markdown(drift: Drift, title: str, fail_on: str) -> str:
    """The report as Markdown: a heading, the verdict, the contract's changes as a table, the interactions folded."""
    counts = drift.counts()
    said = ", ".join(f"**{n} {tier}**" if n and tier == BREAKING else f"{n} {tier}" for tier, n in counts.items())
    verdict = "fails" if drift.fails(fail_on) else "passes"
    lines = [
        MARKER,
        f"### {_cell(title)}",
        "",
        f"Contract: {said}. {drift.tally()}. `--fail-on {fail_on}` {verdict}.",
    ]
    if drift.changes:
        lines += ["", "| tier | rule | what | change |", "|---|---|---|---|"]
        lines += [f"| {c.tier} | `{c.rule}` | {_cell(c.subject)} | {_cell(c.detail)} |" for c in drift.changes]
        rules = sorted({c.rule for c in drift.changes})
        lines += ["", *(f"- `{rule}`: {RULES[rule][1]}" for rule in rules)]
    changed = [e for e in drift.entries if e.status != "same"]
    if changed:
        lines += ["", f"<details><summary>{len(changed)} interactions differ</summary>", "", "```text"]
        for entry in changed:
            lines.append(f"{entry.status:<8} {drift.where(entry)} {entry.label}")
            lines.extend(f"  - {detail}" for detail in entry.details)
        lines += ["```", "", "</details>"]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text that stays in its table cell and prints as written: pipes escaped, no line breaks, no HTML."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")
