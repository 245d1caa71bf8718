"""GitHub Actions workflow commands: one `::error ...::` annotation per finding."""

from __future__ import annotations

from collections.abc import Sequence

from trio_lint.output.diagnostics import Diagnostic, Severity
from trio_lint.reporters import location_prefix

_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.CONVENTION: "notice",
    Severity.INFO: "notice",
}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics: Sequence[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        properties = ",".join(
            [
                f"title={_escape_property(f'trio-lint ({d.code})')}",
                f"file={_escape_property(d.path)}",
                f"line={d.line}",
                f"col={d.column}",
                f"endLine={d.end_line}",
                f"endColumn={d.end_column}",
            ]
        )
        message = _escape_data(f"{location_prefix(d)}: {d.code} {d.message}")
        lines.append(f"::{_LEVEL[d.severity]} {properties}::{message}\n")
    return "".join(lines)
