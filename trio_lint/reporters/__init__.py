"""Output formats: full (default), concise, json (ruff's schema), github, sarif (2.1.0)."""

from __future__ import annotations

from collections.abc import Callable

from trio_lint.output.diagnostics import Diagnostic

# render(diagnostics) -> text; the full format also takes texts= (the bytes of standard input).
Renderer = Callable[..., str]
FORMATS = ("full", "concise", "json", "github", "sarif")


def get_renderer(name: str) -> Renderer:
    """The `render` function of the module named after the format (only that one is imported)."""
    if name not in FORMATS:
        raise KeyError(name)
    import importlib

    render: Renderer = importlib.import_module(f"trio_lint.reporters.{name}").render
    return render


def location_prefix(diagnostic: Diagnostic) -> str:
    """`path:line:col` or, in a notebook, `path:cell N:line:col` (as ruff prints it)."""
    cell = f"cell {diagnostic.cell}:" if diagnostic.cell is not None else ""
    return f"{diagnostic.path}:{cell}{diagnostic.line}:{diagnostic.column}"


def fixable_mark(diagnostic: Diagnostic, unsafe_fixes: bool = False) -> str:
    if diagnostic.fix is None:
        return ""
    if diagnostic.fix.applicability == "safe" or unsafe_fixes:
        return "[*] "
    return ""
