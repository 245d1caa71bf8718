"""Import resolution: every way of reaching an SDK symbol maps to one canonical `pytrio.<Name>`.

`import pytrio as anything`, `from pytrio import Datum as D`, `pytrio.types.Datum` and (with
`sdk-modules = ["pytrio", "tinker"]`) `tinker.Datum` all resolve to `pytrio.Datum`; `origin` keeps
the module the user actually imported so PyTRIO-only rules can ignore Tinker code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

CANONICAL_ROOT = "pytrio"

# Names importable both from `pytrio` and `pytrio.types` (checked against the installed SDK in
# tests/lint/test_semantics.py); `pytrio.types.X` for these canonicalises to `pytrio.X`.
TOP_LEVEL_TYPES = frozenset({"AdamParams", "Datum", "ModelInput", "SamplingParams", "ImageChunk"})


def dotted_name(expr: ast.AST) -> str | None:
    """`a.b.c` for a chain of names and attributes as written (no resolution), else None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = dotted_name(expr.value)
        return f"{base}.{expr.attr}" if base is not None else None
    return None


@dataclass(frozen=True, slots=True)
class Binding:
    """A local name bound to an SDK symbol: canonical `qualname`, `origin` the real root."""

    qualname: str
    origin: str


def canonicalize(dotted: str, sdk_modules: tuple[str, ...]) -> Binding | None:
    """Map a dotted path (`tinker.types.Datum`) to its canonical binding, or None if not SDK."""
    root, _, rest = dotted.partition(".")
    if root not in sdk_modules:
        return None
    return Binding(normalize(f"{CANONICAL_ROOT}.{rest}" if rest else CANONICAL_ROOT), root)


def normalize(qualname: str) -> str:
    """`pytrio.types.Datum` -> `pytrio.Datum` (the same object, exported at the top level)."""
    if qualname.startswith("pytrio.types."):
        name, _, tail = qualname[len("pytrio.types.") :].partition(".")
        if name in TOP_LEVEL_TYPES:
            return f"pytrio.{name}" + (f".{tail}" if tail else "")
    return qualname


def bindings_of_import(node: ast.Import | ast.ImportFrom, sdk_modules: tuple[str, ...]):
    """Yield (local name, Binding) for the SDK names an import statement binds."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                binding = canonicalize(alias.name, sdk_modules)
                if binding:
                    yield alias.asname, binding
            else:
                # `import pytrio.types` binds `pytrio` (the root).
                root = alias.name.partition(".")[0]
                binding = canonicalize(root, sdk_modules)
                if binding:
                    yield root, binding
        return
    if node.level or not node.module:
        return
    for alias in node.names:
        if alias.name == "*":
            continue
        binding = canonicalize(f"{node.module}.{alias.name}", sdk_modules)
        if binding:
            yield alias.asname or alias.name, binding
