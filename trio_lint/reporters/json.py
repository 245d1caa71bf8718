"""A JSON array with the same record shape as `ruff check --output-format json`."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from trio_lint.output.diagnostics import Diagnostic


def record(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability.value,
            "edits": [
                {
                    "content": e.content,
                    "location": {"row": e.location.row, "column": e.location.column},
                    "end_location": {"row": e.end_location.row, "column": e.end_location.column},
                }
                for e in d.fix.edits
            ],
            "message": d.fix.message,
        }
    return {
        "cell": d.cell,
        "code": d.code,
        "end_location": {"column": d.end_column, "row": d.end_line},
        # os.path.realpath, not Path.resolve: that raises on a symlink loop (a looping link
        # named on the command line, a --stdin-filename under one), which is a PTR901 to print.
        "filename": os.path.realpath(d.path) if d.path != "-" else d.path,
        "fix": fix,
        "location": {"column": d.column, "row": d.line},
        "message": d.message,
        "name": d.name,
        "noqa_row": d.noqa_row,
        "severity": d.severity.value,
        "url": None,  # the rule's documentation is `trio-lint rule CODE`
    }


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([record(d) for d in diagnostics], indent=2) + "\n"
