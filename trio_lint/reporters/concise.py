"""`path:line:col: CODE [*] message`, one line per finding."""

from __future__ import annotations

from collections.abc import Sequence

from trio_lint.output.diagnostics import Diagnostic
from trio_lint.reporters import fixable_mark, location_prefix


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(
        f"{location_prefix(d)}: {d.code} {fixable_mark(d)}{d.message}\n" for d in diagnostics
    )
