"""Moved to `trio_lint.lint.findings`. Kept only for `trio_lint/semantics/`, which another change
rewrites at the same time; remove once semantics imports the new path."""

from trio_lint.lint.findings import Finding

__all__ = ["Finding"]
