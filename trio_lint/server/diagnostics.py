"""Lint a target with trio-lint's library API and turn its findings into LSP diagnostics.

A failure inside trio-lint never escapes: the document gets the PTR903 diagnostic the CLI reports
for an engine bug, and the traceback goes to the client's log (see `LintOutcome.error`)."""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from lsprotocol import types

from trio_lint import lint_source
from trio_lint.lint.engine_codes import UNUSED_NOQA, internal_error
from trio_lint.output.diagnostics import Applicability, Diagnostic, Severity
from trio_lint.server.config_watch import Settings
from trio_lint.server.documents import Target, split_lines, to_range

SOURCE = "trio-lint"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.CONVENTION: types.DiagnosticSeverity.Information,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


@dataclass
class LintOutcome:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None  # a traceback for the client's log


def lint(target: Target, settings: Settings) -> LintOutcome:
    """The target's findings under `settings` (nothing when the config is invalid: the CLI
    refuses to run then, and the server shows the config error instead)."""
    if settings.config is None:
        return LintOutcome()
    try:
        found = lint_source(target.source, target.path, settings.config, root=settings.root)
    except Exception as exc:  # an engine bug: report it on the document, keep serving
        return LintOutcome([internal_error(target.path, exc)], traceback.format_exc())
    return LintOutcome(found)


def to_lsp(diagnostic: Diagnostic, lines: Sequence[str], encoding: str) -> types.Diagnostic:
    data = None
    message = f"{diagnostic.message} ({diagnostic.name})"
    if diagnostic.fix is not None and diagnostic.fix.applicability is not Applicability.NONE:
        data = {"fix": diagnostic.fix.applicability.value, "fix_message": diagnostic.fix.message}
        # Clients that show diagnostics but no code actions (an assistant reading them after an
        # edit) still learn the fix, as the CLI's `help:` line tells it.
        unsafe = " (unsafe fix)" if diagnostic.fix.applicability is Applicability.UNSAFE else ""
        message += f"\nhelp: {diagnostic.fix.message}{unsafe}"
    return types.Diagnostic(
        range=to_range(
            lines,
            (diagnostic.line, diagnostic.column),
            (diagnostic.end_line, diagnostic.end_column),
            encoding,
        ),
        message=message,
        severity=_SEVERITY.get(diagnostic.severity, types.DiagnosticSeverity.Warning),
        code=diagnostic.code,
        source=SOURCE,
        tags=[types.DiagnosticTag.Unnecessary] if diagnostic.code == UNUSED_NOQA else None,
        data=data,
    )


def by_document(
    target: Target, diagnostics: Sequence[Diagnostic], encoding: str
) -> dict[str, list[types.Diagnostic]]:
    """The LSP diagnostics of every document of the target (empty lists clear old ones)."""
    published: dict[str, list[types.Diagnostic]] = {uri: [] for uri in target.uris()}
    lines: dict[str, list[str]] = {}
    for diagnostic in diagnostics:
        located = target.text_of(diagnostic.cell)
        if located is None and target.uris():
            # A notebook finding outside any cell (a file-level error): the first code cell.
            located = target.text_of(target.cell_of(target.uris()[0]))
        if located is None:
            continue
        uri, text = located
        if uri not in lines:
            lines[uri] = split_lines(text)
        published.setdefault(uri, []).append(to_lsp(diagnostic, lines[uri], encoding))
    return published


def overlaps(diagnostic: Diagnostic, line: int, end_line: int) -> bool:
    """Whether the diagnostic touches 1-based lines line..end_line."""
    return diagnostic.line <= end_line and diagnostic.end_line >= line
