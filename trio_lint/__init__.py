"""trio-lint: a linter with autofix for the PyTRIO pitfall catalogue (library API).

from trio_lint import lint_source, fix_source
diagnostics = lint_source(code, path="train.py")
result = fix_source(code, path="train.py", unsafe=False)  # result.source, .fixed, .remaining
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path


class _LazyModule(types.ModuleType):
    """A package whose `__init__` runs on first attribute use. Unlike importlib's LazyLoader (which
    loads on *any* access, including the `__spec__` check every `import` statement makes), a
    plain `import libcst as cst` stays cheap; submodule imports work through `__path__`."""

    def __getattr__(self, name: str):
        loader = self.__dict__.pop("_trio_lint_loader", None)
        if loader is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        loader.exec_module(self)
        return getattr(self, name)


def _import_libcst_lazily() -> None:
    """libcst takes ~0.25 s to import and is needed only to apply fixes, so rule modules can
    `import libcst as cst` at the top while `trio-lint one_file.py` stays fast."""
    if "libcst" in sys.modules:
        return
    spec = importlib.util.find_spec("libcst")
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = _LazyModule("libcst")
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    module.__path__ = list(spec.submodule_search_locations)
    module.__package__ = "libcst"
    module._trio_lint_loader = spec.loader  # type: ignore[attr-defined]
    sys.modules["libcst"] = module


_import_libcst_lazily()

from trio_lint.config import ConfigError, LintConfig, config_from_mapping  # noqa: E402
from trio_lint.diagnostics import Applicability, Diagnostic, FixResult, Severity  # noqa: E402

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
