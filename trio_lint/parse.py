"""Moved to `trio_lint.lint.parse`. Kept only for `trio_lint/semantics/`, which another change
rewrites at the same time; remove once semantics imports the new path."""

from trio_lint.lint.parse import parse_ast

__all__ = ["parse_ast"]
