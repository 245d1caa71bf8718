"""Moved to `trio_lint.settings.config`. Kept only for `trio_lint/semantics/`, which another change
rewrites at the same time; remove once semantics imports the new path."""

from trio_lint.settings.config import LintConfig

__all__ = ["LintConfig"]
