"""What people run on cassettes: lint, show, drift (verify and diff), the report's JSON Schema.

The wing's facade: what the rest of mockmcp uses of it; its modules are private."""

from __future__ import annotations

from mockmcp.tools._drift import compare, updated
from mockmcp.tools._lint import failed, lint_paths, summary
from mockmcp.tools._report_schema import report_schema_text
from mockmcp.tools._show import client_marks, counts, duration, header, matcher, print_show, reply, reply_marks
from mockmcp.tools._summary import PARAMS, summarize

__all__ = [
    "PARAMS",
    "client_marks",
    "compare",
    "counts",
    "duration",
    "failed",
    "header",
    "lint_paths",
    "matcher",
    "print_show",
    "reply",
    "reply_marks",
    "report_schema_text",
    "summarize",
    "summary",
    "updated",
]
