"""flake8 plugin (entry point `PTR`): the same findings on flake8's own `ast` tree.

flake8 handles `# noqa` and selection itself; trio-lint's `[tool.trio-lint]` still decides which
rules run and which modules count as the SDK."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trio_lint import __version__


class Flake8Checker:
    name = "trio-lint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        from trio_lint.lint.dispatch import run_rules
        from trio_lint.lint.parse import LineIndex
        from trio_lint.lint.prefilter import mentions_sdk
        from trio_lint.rules import select_rules
        from trio_lint.settings.config import ConfigError, LintConfig, load_config
        from trio_lint.settings.selectors import validate_codes

        source = "".join(self.lines)
        try:
            config, _ = load_config(None, search_from=Path(self.filename).resolve().parent)
            validate_codes(config, origin="pyproject.toml")
        except (ConfigError, OSError):
            config = LintConfig()
        if not mentions_sdk(source.encode("utf-8", "replace"), config):
            return
        if not isinstance(self.tree, ast.Module):
            return
        index = LineIndex(source)
        for finding in run_rules(self.tree, source, config, select_rules(config)):
            column = index.char_column(finding.span.line, finding.span.col)
            yield finding.span.line, column, f"{finding.code} {finding.message}", type(self)
