"""Runtime data checks: `trio-local run --check` and `serve --check`.

The service sees the data a script really sends, which no static linter can. Small hooks in the
request paths (`service/events.py`, `service/sampling.py`) hand each trainer event and sample
request, with its outcome, to a `Checker`; a background thread runs every check on it, so a run
is never slowed or failed by a check (a check that raises is logged and skipped).

One check per module; `CHECKS` lists them in report order. A check names the trio-lint rule
that catches the same mistake in source code (`rule`, a rule name resolved through trio-lint's
registry), or None when the mistake only shows in the data.
"""

from __future__ import annotations

from trio_local.checks.report import CheckReport, Finding
from trio_local.checks.runtime import Checker

__all__ = ["CheckReport", "Checker", "Finding"]
