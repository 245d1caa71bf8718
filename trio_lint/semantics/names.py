"""Import resolution: every way of reaching an SDK symbol maps to one canonical `pytrio.<Name>`.

`import pytrio as anything`, `from pytrio import Datum as D`, `pytrio.types.Datum` and (with
`sdk-modules = ["pytrio", "tinker"]`) `tinker.Datum` all resolve to `pytrio.Datum`; `origin` keeps
the module the user actually imported so PyTRIO-only rules can ignore Tinker code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

CANONICAL_ROOT = "pytrio"

# Names importable both from `pytrio` and `pytrio.types` (checked against the installed SDK in
# tests/lint_rules/test_bindings.py); `pytrio.types.X` for these canonicalises to `pytrio.X`.
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


class Imports:
    """Which SDK modules a unit imports, and from which modules it imports names: what says the
    SDK the unit is written for (`SemanticModel.sdk`). Filled by the pass (`add_sdk`,
    `add_from_module`; `finish` once the pass is done)."""

    __slots__ = ("_anywhere", "_module_level", "from_modules", "other_only")

    def __init__(self) -> None:
        self._module_level: set[str] = set()  # SDK roots imported at module level (and seeded)
        self._anywhere: set[str] = set()  # SDK roots imported anywhere in the unit
        # Modules named by `from X import ...` statements anywhere in the unit (`wanted` tests).
        self.from_modules: set[str] = set()
        # Imports another SDK module (tinker) and not pytrio, at any depth (set by `finish`).
        self.other_only = False

    def add_sdk(self, origin: str, *, module_level: bool) -> None:
        """An import (or a seeded name) of the SDK root module `origin` (pytrio, tinker)."""
        if module_level:
            self._module_level.add(origin)
        # Which SDK the code is written for counts every import: a notebook exported as a
        # module (marimo) imports inside its cell functions.
        self._anywhere.add(origin)

    def add_from_module(self, module: str) -> None:
        self.from_modules.add(module)

    def finish(self) -> None:
        origins = self._anywhere | self._module_level
        self.other_only = bool(origins) and CANONICAL_ROOT not in origins

    @property
    def imports_sdk(self) -> bool:
        """Some SDK module is imported at module level (or seeded by an earlier block)."""
        return bool(self._module_level)

    @property
    def sdk(self) -> str:
        """ "pytrio", or the one other SDK module imported (anywhere) without pytrio ("tinker");
        "other" for several such modules."""
        if not self.other_only:
            return CANONICAL_ROOT
        others = self._anywhere | self._module_level
        return next(iter(others)) if len(others) == 1 else "other"


def bindings_of_import(
    node: ast.Import | ast.ImportFrom, sdk_modules: tuple[str, ...]
) -> Iterator[tuple[str, Binding]]:
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
