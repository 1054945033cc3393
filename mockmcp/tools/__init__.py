"""What people run on cassettes: lint, show, drift, and the report's JSON Schema.

Attaches at the command line (`lint`, `show`, `verify`, `diff`, `schema`), the HTML timeline and the plugin.

  _lint           findings: structure, message shapes, layer confusion, stand-ins, match rules, credentials; the
                  eras whose hosts a cassette serves
  _summary        one line for a message
  _show           the transcript built from those lines, each message of an interaction as a `Part`
  _drift          how two sessions differ (verify, diff), and live answers written into a cassette
  _report_schema  the --report JSON as a JSON Schema, each key described once; a report read back held to it
"""

from __future__ import annotations

from mockmcp.tools._drift import compare, updated
from mockmcp.tools._lint import failed, lint_paths, serves, summary
from mockmcp.tools._report_schema import report_problem, report_schema_text
from mockmcp.tools._show import FROM, TO, Part, counts, header, parts, print_show, rules
from mockmcp.tools._summary import PARAMS, summarize

__all__ = [
    "FROM",
    "PARAMS",
    "Part",
    "TO",
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
    "summarize",
    "summary",
    "updated",
]
