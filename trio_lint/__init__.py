"""trio-lint: a linter with autofix for the PyTRIO pitfall catalogue (library API).

from trio_lint import lint_source, fix_source
diagnostics = lint_source(code, path="train.py")
result = fix_source(code, path="train.py", unsafe=False)  # result.source, .fixed, .remaining
"""

from __future__ import annotations

from pathlib import Path

from trio_lint.config import ConfigError, LintConfig, config_from_mapping
from trio_lint.diagnostics import Applicability, Diagnostic, FixResult, Severity

__version__ = "0.1.0"
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


def _config(config: LintConfig | dict | None) -> LintConfig:
    if config is None:
        return LintConfig()
    if isinstance(config, dict):
        return config_from_mapping(config, origin="config")
    return config


def lint_source(
    source: str, path: str | Path = "<stdin>.py", config: LintConfig | dict | None = None
) -> list[Diagnostic]:
    """Lint one source text. `path` decides the kind (.py, .pyi, .ipynb JSON, .md) and is reported.
    `config` is a LintConfig or a [tool.trio-lint]-style dict; None uses the defaults. Never raises
    for bad input: unparsable code yields a PTR900 diagnostic."""
    from trio_lint.engine import lint_document
    from trio_lint.rules import select_rules

    settings = _config(config)
    outcome = lint_document(str(path), source.encode("utf-8"), settings, select_rules(settings))
    return outcome.diagnostics


def fix_source(
    source: str,
    path: str | Path = "<stdin>.py",
    config: LintConfig | dict | None = None,
    *,
    unsafe: bool = False,
) -> FixResult:
    """Apply safe fixes (and unsafe ones with `unsafe=True`) until they converge."""
    from trio_lint.engine import lint_document
    from trio_lint.rules import select_rules

    settings = _config(config)
    outcome = lint_document(
        str(path),
        source.encode("utf-8"),
        settings,
        select_rules(settings),
        fix="unsafe" if unsafe else "safe",
    )
    new_source = outcome.new_bytes.decode("utf-8-sig") if outcome.new_bytes is not None else source
    return FixResult(
        source=new_source, fixed=tuple(outcome.fixed), remaining=tuple(outcome.diagnostics)
    )
