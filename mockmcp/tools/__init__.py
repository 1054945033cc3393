"""What people run on cassettes: lint, show, drift, and the report's JSON Schema.

Attaches at the command line (`lint`, `show`, `verify`, `diff`, `schema`), the HTML timeline and the plugin.

  _lint           findings: structure, message shapes, layer confusion, stand-ins, match rules, credentials; the
                  eras whose hosts a cassette serves
  _summary        one line for a message
  _show           the transcript built from those lines, each message of an interaction as a `Part`
  _drift          how two sessions differ (verify, diff), and live answers written into a cassette
  _contract       a server's contract (what its listings offer) and its changes, each a rule of a tier
  _drift_report   verify's and diff's report as JSON, or Markdown for a pull-request comment
  _stub           `stub`: a cassette from a server's contract, a placeholder answer per tool, shaped by its outputSchema
  _report_schema  the --report JSON as a JSON Schema, each key described once; a report read back held to it
"""

from __future__ import annotations

from mockmcp.tools._contract import RULES, TIERS
from mockmcp.tools._drift import ANY, Drift, compare, updated
from mockmcp.tools._drift_report import MARKER, as_json, as_markdown
from mockmcp.tools._lint import failed, lint_paths, serves, summary
from mockmcp.tools._report_schema import report_problem, report_schema_text
from mockmcp.tools._show import FROM, TO, Part, counts, header, parts, print_show, rules
from mockmcp.tools._stub import stub_cassette, stub_text
from mockmcp.tools._summary import PARAMS, summarize

__all__ = [
    "ANY",
    "Drift",
    "FROM",
    "MARKER",
    "PARAMS",
    "Part",
    "RULES",
    "TIERS",
    "TO",
    "as_json",
    "as_markdown",
    "compare",
    "counts",
    "failed",
    "header",
    "lint_paths",
    "parts",
    "print_show",
    "report_problem",
    "report_schema_text",
    "rules",
    "serves",
    "stub_cassette",
    "stub_text",
    "summarize",
    "summary",
    "updated",
]
