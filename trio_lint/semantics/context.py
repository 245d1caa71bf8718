"""What a rule's hooks see besides the node: the unit's semantic model, the config and where the
walk is (enclosing functions).

The model (`semantics/model.py`) is built once per unit before the hooks run; the context only
adds the dispatch's position. Rules ask the model through `Rule.model` (a `ModelView` answering
with the rule's `pytrio_only`); the context forwards no queries.
"""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING

from trio_lint.semantics.model import ModelView, SemanticModel
from trio_lint.semantics.names import Binding

if TYPE_CHECKING:
    from trio_lint.lint.findings import Finding
    from trio_lint.settings.config import LintConfig

SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class LintContext:
    """`model`: the unit's `SemanticModel`; `config`, `source`, `sdk_version`, `tree`;
    `function_stack`: enclosing def/lambda nodes (innermost last); `in_async_function`."""

    def __init__(self, config: LintConfig, source: str, model: SemanticModel) -> None:
        self.config = config
        self.source = source
        self.sdk_version = config.target_version
        self.sdk_modules = tuple(config.sdk_modules)
        self.model = model
        self.function_stack: list[ast.AST] = []
        self.findings: list[Finding] = []
        self.tree: ast.Module | None = None
        # The flag of the rule this context was made for (`for_rule`): its `view` answers with
        # it.
        self.pytrio_only = False
        self._for_flag(False)

    def _for_flag(self, pytrio_only: bool) -> None:
        # The view holds the model and the flag, not this context: a context holding what holds
        # it would keep the unit alive until the garbage collector ran.
        self.pytrio_only = pytrio_only
        self.view = ModelView(self.model, pytrio_only)

    def for_rule(self, pytrio_only: bool) -> LintContext:
        """The context one rule sees: the same model, findings and walk position, with a `view`
        of the model answering with the rule's `pytrio_only`."""
        if pytrio_only == self.pytrio_only:
            return self
        other = copy.copy(self)
        other._for_flag(pytrio_only)
        return other

    def add_finding(self, finding: Finding) -> None:
        self.findings.append(finding)

    @property
    def in_async_function(self) -> bool:
        return bool(self.function_stack) and isinstance(
            self.function_stack[-1], ast.AsyncFunctionDef
        )


__all__ = ["FUNCTION_NODES", "SCOPE_NODES", "Binding", "LintContext"]
