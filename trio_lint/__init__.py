"""trio-lint: a linter with autofix for the PyTRIO pitfall catalogue (library API).

from trio_lint import lint_source, fix_source
diagnostics = lint_source(code, path="train.py")
result = fix_source(code, path="train.py", unsafe=False)  # result.source, .fixed, .remaining
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trio_lint.output.diagnostics import Applicability, Diagnostic, FixResult, Severity
from trio_lint.output.version import __version__
from trio_lint.settings.config import ConfigError, LintConfig, config_from_mapping

__all__ = [
    "Applicability",
    "ConfigError",
    "Diagnostic",
    "FixResult",
    "LintConfig",
    "Severity",
    "__version__",
    "fix_source",
    "lint_source",
]

if TYPE_CHECKING:
    from trio_lint.rules.base import Rule


def _config(config: LintConfig | dict[str, Any] | None) -> LintConfig:
    if config is None:
        return LintConfig()
    if isinstance(config, dict):
        from trio_lint.settings.selectors import validate_codes

        settings = config_from_mapping(config, origin="config")
        validate_codes(settings, origin="config")
        return settings
    return config


def _rules(
    settings: LintConfig, path: str | Path, root: str | Path | None
) -> tuple[type[Rule], ...]:
    """The selected rules; with a project `root`, minus the `per-file-ignores` matching `path`
    (patterns are relative to the root, as on the command line)."""
    if root is None or not settings.per_file_ignores:
        from trio_lint.rules import select_rules

        return select_rules(settings)
    from trio_lint.run.invocation import RuleSets

    return RuleSets(settings, Path(root)).for_path(str(path))


def lint_source(
    source: str,
    path: str | Path = "<stdin>.py",
    config: LintConfig | dict[str, Any] | None = None,
    *,
    root: str | Path | None = None,
    edits: bool = False,
) -> list[Diagnostic]:
    """Lint one source text. `path` decides the kind (.py, .pyi, .ipynb JSON, .md) and is reported.
    `config` is a LintConfig or a [tool.trio-lint]-style dict; None uses the defaults. `root` (the
    project directory) makes `per-file-ignores` apply to `path`; `edits=True` fills each fix's
    text edits (one libcst pass over the document, and libcst's import when a finding has a fix;
    without it linting never imports libcst). Never raises for bad input: unparsable code yields
    a PTR900 diagnostic."""
    from trio_lint.lint.linter import lint_document

    settings = _config(config)
    outcome = lint_document(
        str(path),
        source.encode("utf-8"),
        settings,
        _rules(settings, path, root),
        want_edits=edits,
    )
    return outcome.diagnostics


def fix_source(
    source: str,
    path: str | Path = "<stdin>.py",
    config: LintConfig | dict[str, Any] | None = None,
    *,
    unsafe: bool = False,
    root: str | Path | None = None,
) -> FixResult:
    """Apply safe fixes (and unsafe ones with `unsafe=True`) until they converge (`root`: as in
    `lint_source`)."""
    from trio_lint.lint.linter import lint_document

    settings = _config(config)
    outcome = lint_document(
        str(path),
        source.encode("utf-8"),
        settings,
        _rules(settings, path, root),
        fix="unsafe" if unsafe else "safe",
    )
    new_source = outcome.new_bytes.decode("utf-8-sig") if outcome.new_bytes is not None else source
    return FixResult(
        source=new_source, fixed=tuple(outcome.fixed), remaining=tuple(outcome.diagnostics)
    )
