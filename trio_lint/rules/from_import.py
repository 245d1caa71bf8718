"""PTR001 from-import: `from pytrio import X` instead of the documented `import pytrio as trio`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pytrio_facts.api import public_names
from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import Fix, Invalid, NodeEdit, Rule, Span, Valid, edit

if TYPE_CHECKING:
    import libcst as cst

_FLAGGED_MODULES = ("pytrio", "pytrio.types")
_PREFERRED_ALIAS = "trio"


def _public(module: str | None, name: str, version: str) -> bool:
    """Only names the target release exports there can be rewritten to `trio.<name>`; 0.1
    leftovers such as `SampleInput` are PTR002's (internal-import) to report."""
    return name in public_names("pytrio" if module == "pytrio" else "pytrio.types", version)


class FromImport(Rule):
    code = "PTR001"
    name = "from-import"
    message = "Import the SDK as a module: `import pytrio as trio`, then write `trio.<name>`"
    severity = Severity.CONVENTION
    pytrio_only = True
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Flags `from pytrio import X` and `from pytrio.types import X`. A convention, not a bug: both forms work. It is on by default because mixed import styles are common in generated code and the fix is safe.

## Why is this bad?
PyTRIO's README and examples write `import pytrio as trio` and
`trio.Datum(...)`. One spelling keeps generated code greppable, avoids clashes between SDK names and
local ones (`Datum`, `ModelInput` are common words in training code) and keeps the `trio.` prefix
visible at every SDK call. `from pytrio.errors... import` stays allowed: that is the only home of
the
specific error classes.

## Fix safety
The fix replaces the import and rewrites every use (`MI` -> `trio.ModelInput`). It is safe when
every
use of the imported names resolves to that import; it is unsafe (needs `--unsafe-fixes`) when a name
is also bound elsewhere in the module (rebinding, parameters, `global`), and it is not offered for
star imports, function-level imports, or names listed in `__all__` (a re-export). An existing
`import pytrio as X` is reused; `pytrio` is used as the alias if `trio` already names something else
(such as the `trio` async library).

## References
- pytrio 0.2.9: `pytrio.Datum`, `pytrio.ModelInput` (exported by `pytrio`)
- https://pypi.org/project/pytrio/ (the SDK README writes `import pytrio as trio`)
"""
    evidence = """
- The SDK README writes `import pytrio as trio` and `trio.Datum(...)`,
  `trio.ModelInput.from_ints(...)` (`029:pytrio-0.2.9.dist-info/METADATA:74,89-90`).
- `pytrio` exports the data types the fix rewrites to (`029:__init__.py:11-15`); the rest are
  `pytrio.types` exports, rewritten to `trio.types.X` (`029:types/__init__.py:1-43`).
- The specific error classes have no other home: `pytrio` exports only `PyTrioError`
  (`029:__init__.py:7`), `pytrio/errors/__init__.py` is empty (`029:errors/__init__.py`), the
  classes live in its modules (`029:errors/base.py:8,120`, `029:errors/auth.py:6`).
- 0.1 exports `SampleInput`, which 0.2 does not (`013:__init__.py:7-27`), hence the
  per-release check of the rewritten names.
- The `trio` async library (`trio.sleep`): https://trio.readthedocs.io/en/stable/reference-core.html
"""
    VALID = (
        Valid(
            "import pytrio as trio  # data types\n\n"
            "def build(tokens):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens), loss_fn_inputs={})\n"
        ),
        Valid("import pytrio as trio\nd = trio.Datum\n"),
        Valid("from pytrio.errors.base import ValidationError\n"),
        Valid("from tinker import Datum\n", config={"sdk-modules": ["pytrio", "tinker"]}),
        Valid("from mylib import Datum\n"),
    )
    INVALID = (
        Invalid(
            "from pytrio import Datum, ModelInput as MI  # data types\n"
            "\n"
            "def build(tokens):\n"
            "    return Datum(model_input=MI.from_ints(tokens), loss_fn_inputs={})\n",
            fixed="import pytrio as trio  # data types\n"
            "\n"
            "def build(tokens):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens), loss_fn_inputs={})\n",
            line=1,
            column=1,
        ),
        Invalid(
            "import pytrio as pt\nfrom pytrio.types import SamplingParams\np = SamplingParams(max_tokens=1)\n",
            fixed="import pytrio as pt\np = pt.SamplingParams(max_tokens=1)\n",
            line=2,
        ),
        Invalid(
            "import trio\nfrom pytrio import Datum\nasync def main():\n    await trio.sleep(0)\n    return Datum\n",
            fixed="import trio\nimport pytrio\nasync def main():\n    await trio.sleep(0)\n    return pytrio.Datum\n",
        ),
        Invalid(
            "from pytrio import Datum\nDatum = Datum\n",
            fixed="import pytrio as trio\nDatum = trio.Datum\n",
            unsafe=True,
        ),
        Invalid("from pytrio import *\n", fixed=None),
        Invalid("from pytrio import Datum\n__all__ = ['Datum']\n", fixed=None),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.imports: list[tuple[ast.ImportFrom, bool]] = []  # (statement, at module level)
        self.imported: set[str] = set()  # local names the flagged statements bind
        self.paths: dict[str, str] = {}  # local name -> SDK attribute path (e.g. "ModelInput")
        # Names bound besides the import: `global` ones, names stored or deleted, parameters.
        self.rebound: set[str] = set()
        # Every name and parameter of the unit (the alias must not take one), and the reads
        # (the fix rewrites those the model resolves to the import): the dispatch hands them
        # over as the model's pass met them.
        self.all_names: set[str] = set()
        self.reads: list[ast.Name] = []
        self.exported: set[str] = set()
        self.classes = 0
        # Without a `from pytrio import ...` (the model's pass saw every import) there is
        # nothing to report: the hooks then return at once.
        self.active = not ctx.model.from_modules.isdisjoint(_FLAGGED_MODULES)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes += 1

    def leave_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes -= 1

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not self.active or node.level or node.module not in _FLAGGED_MODULES:
            return
        at_module_level = not self.ctx.function_stack and not self.classes
        self.imports.append((node, at_module_level))
        for alias in node.names:
            if alias.name == "*":
                continue
            path = alias.name if node.module == "pytrio" else _types_path(alias.name)
            local = alias.asname or alias.name
            if local in self.paths and self.paths[local] != path:
                self.rebound.add(local)
            self.imported.add(local)
            self.paths[local] = path

    def visit_Name(self, node: ast.Name) -> None:
        if not self.active:
            return
        self.all_names.add(node.id)
        if node.ctx.__class__ is ast.Load:
            self.reads.append(node)
        else:
            self.rebound.add(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        if self.active:
            self.all_names.add(node.arg)
            self.rebound.add(node.arg)

    def visit_Global(self, node: ast.Global) -> None:
        if self.active:
            self.rebound.update(node.names)

    def visit_Assign(self, node: ast.Assign) -> None:
        if self.active and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            for element in ast.walk(node.value):
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    self.exported.add(element.value)

    def finish(self) -> None:
        if not self.imports:
            return
        # Reads of the imported names the model resolves to an SDK import (the fix rewrites them).
        uses = [
            node
            for node in self.reads
            if node.id in self.paths and self.model.import_binding(node) is not None
        ]
        alias = self._alias(self.all_names)
        release = str(self.ctx.sdk_version)
        fixable = all(
            at_module_level
            and all(a.name != "*" and _public(stmt.module, a.name, release) for a in stmt.names)
            for stmt, at_module_level in self.imports
        ) and not (self.exported & set(self.imported))
        unsafe = bool(self.rebound & set(self.imported))
        for number, (stmt, _) in enumerate(self.imports):
            names = ", ".join(
                f"`{alias}.{self.paths.get(a.asname or a.name, a.name)}`" for a in stmt.names
            )
            statement = "import pytrio" if alias == "pytrio" else f"import pytrio as {alias}"
            message = f"Import the SDK as a module: `{statement}`, then write {names}"
            fix = None
            if fixable:
                edits = [self._import_edit(stmt, alias, first=number == 0)]
                if number == 0:
                    edits += [
                        edit(use, "Name", _attribute(alias, self.paths[use.id])) for use in uses
                    ]
                fix = Fix(
                    f"Use `import pytrio as {alias}`"
                    if alias != "pytrio"
                    else "Use `import pytrio`",
                    Applicability.UNSAFE if unsafe else Applicability.SAFE,
                    tuple(edits),
                )
            self.report(stmt, message, fix=fix)

    def _alias(self, all_names: set[str]) -> str:
        existing = self.model.sdk_alias()
        if existing is not None:
            return existing
        taken = all_names - set(self.imported)
        return _PREFERRED_ALIAS if _PREFERRED_ALIAS not in taken else "pytrio"

    def _import_edit(self, stmt: ast.ImportFrom, alias: str, *, first: bool) -> NodeEdit:
        if not first or self.model.sdk_alias() is not None:
            return NodeEdit(Span.of(stmt), "ImportFrom", _remove)

        def replace(_node: cst.CSTNode) -> cst.CSTNode:
            import libcst as cst

            as_name = None if alias == "pytrio" else cst.AsName(name=cst.Name(alias))
            return cst.Import(names=[cst.ImportAlias(name=cst.Name("pytrio"), asname=as_name)])

        return NodeEdit(Span.of(stmt), "ImportFrom", replace)


def _types_path(name: str) -> str:
    from trio_lint.semantics.names import TOP_LEVEL_TYPES

    return name if name in TOP_LEVEL_TYPES else f"types.{name}"


def _attribute(alias: str, path: str):
    def transform(_node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        return cst.parse_expression(f"{alias}.{path}")

    return transform


def _remove(_node: cst.CSTNode):
    import libcst as cst

    return cst.RemoveFromParent()
