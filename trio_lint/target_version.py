"""Moved to `trio_lint.settings.target_version`. Kept only for `trio_lint/semantics/`, which another
change rewrites at the same time; remove once semantics imports the new path."""

from trio_lint.settings.target_version import default_version

__all__ = ["default_version"]
