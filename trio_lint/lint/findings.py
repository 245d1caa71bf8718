"""What a rule reports: positions, findings and the libcst edits of their fixes.

These live apart from the rule API (`rules/base.py`) and the semantic model so that the checker,
the fixer, noqa handling and the model can all import them without importing each other.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity

if TYPE_CHECKING:
    import libcst as cst

# A fix step: receives the (already updated) libcst node at the reported position, returns its
# replacement. Strings in the annotation: libcst is imported only where fixes run.
CstTransform = Callable[["cst.CSTNode"], "cst.CSTNode"]


@dataclass(frozen=True, slots=True)
class Span:
    """Where an ast node sits: 1-based lines, 0-based columns in UTF-8 bytes (as `ast` reports)."""

    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def of(cls, node: ast.AST) -> Span:
        # ast.AST declares no positions; the nodes a finding points at (expressions, statements,
        # arguments, keywords) all have them.
        return cls(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]  # see above


@dataclass(frozen=True, slots=True)
class NodeEdit:
    """Replace the libcst node of type `kind` whose position equals `span` with `transform(node)`.

    `kind` is the libcst class *name* ("Arg", "Call"), resolved by the fixer: no trio_lint module
    imports libcst (~0.25 s) to detect or describe a finding, only to apply or show a fix."""

    span: Span
    kind: str
    transform: CstTransform


@dataclass(frozen=True, slots=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[NodeEdit, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule's raw report, before positions are mapped for display and noqa is applied.

    `name` is the reporting rule's kebab-case name, carried so that nothing downstream has to look
    the rule up by code again."""

    code: str
    span: Span
    message: str
    severity: Severity
    fix: Fix | None = None
    name: str = ""
