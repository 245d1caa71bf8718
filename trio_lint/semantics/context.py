"""The per-module semantic state shared by all rules during the single walk."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.semantics.names import CANONICAL_ROOT, Binding, bindings_of_import, normalize
from trio_lint.semantics.receivers import ReceiverModel

if TYPE_CHECKING:
    from trio_lint.config import LintConfig
    from trio_lint.rules.base import Finding

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class LintContext:
    """Answers the questions rules ask. Scopes are pushed/popped by the walker in source order.

    - `qualified_name(expr)`: canonical `pytrio.X.y` for SDK names and attribute chains, else None.
    - `receiver_kind(expr)`: "ServiceClient" | "TrainingClient" | "SamplingClient" | "RestClient" |
      "APIFuture" | None, from `semantics/receivers.py`.
    - `sdk_alias()`: the local name bound to the SDK module itself (for fixes that write `trio.X`).
    - `function_stack`: enclosing def/lambda nodes (innermost last); `in_async_function`.
    """

    def __init__(
        self,
        config: LintConfig,
        source: str,
        module_bindings: dict[str, Binding],
    ) -> None:
        self.config = config
        self.source = source
        self.sdk_version = config.target_version
        self.sdk_modules = tuple(config.sdk_modules)
        self.scopes: list[dict[str, Binding | None]] = [dict(module_bindings)]
        self.function_stack: list[ast.AST] = []
        self.findings: list[Finding] = []
        self.tree: ast.Module | None = None  # set by the walker; receivers may build on it
        # Set by the walker before each rule hook: PyTRIO-only rules do not see other SDK modules.
        self.pytrio_only = False
        self.receivers = ReceiverModel(self)

    # --- reporting ---------------------------------------------------------------------------
    def add_finding(self, finding: Finding) -> None:
        self.findings.append(finding)

    # --- names -------------------------------------------------------------------------------
    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.scopes):
            if name in scope:
                binding = scope[name]
                if binding is not None and self.pytrio_only and binding.origin != CANONICAL_ROOT:
                    return None
                return binding
        return None

    def qualified_name(self, node: ast.AST) -> str | None:
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        binding = self.lookup(node.id)
        if binding is None:
            return None
        if not attrs:
            return binding.qualname
        return normalize(".".join([binding.qualname, *reversed(attrs)]))

    def is_sdk(self, node: ast.AST, *names: str) -> bool:
        """True if `node` resolves to `pytrio.<name>` for one of `names` (e.g. "SamplingParams")."""
        qualname = self.qualified_name(node)
        return qualname is not None and qualname.removeprefix(CANONICAL_ROOT + ".") in names

    def sdk_alias(self) -> str | None:
        for scope in reversed(self.scopes):
            for local, binding in scope.items():
                if binding is not None and binding.qualname == CANONICAL_ROOT:
                    return local
        return None

    @property
    def imports_sdk(self) -> bool:
        return any(binding is not None for binding in self.scopes[0].values())

    # --- receivers ---------------------------------------------------------------------------
    def receiver_kind(self, node: ast.AST) -> str | None:
        return self.receivers.kind_of(node)

    @property
    def in_async_function(self) -> bool:
        return bool(self.function_stack) and isinstance(
            self.function_stack[-1], ast.AsyncFunctionDef
        )

    # --- called by the walker ----------------------------------------------------------------
    def bind_import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.scopes[-1].update(bindings_of_import(node, self.sdk_modules))

    def shadow(self, name: str) -> None:
        """A local assignment hides an SDK import of the same name from here on."""
        if self.lookup(name) is not None:
            self.scopes[-1][name] = None

    def observe_assign(self, targets: list[ast.expr], value: ast.expr | None) -> None:
        for target in targets:
            if isinstance(target, ast.Name):
                qualname = self.qualified_name(value) if value is not None else None
                if qualname is not None:
                    self.scopes[-1][target.id] = Binding(qualname, self._origin_of(value))
                else:
                    self.shadow(target.id)
        self.receivers.observe_assign(targets, value)

    def _origin_of(self, node: ast.AST | None) -> str:
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            for scope in reversed(self.scopes):
                binding = scope.get(node.id)
                if binding is not None:
                    return binding.origin
        return CANONICAL_ROOT

    def enter_scope(self, node: ast.AST) -> None:
        scope: dict[str, Binding | None] = {}
        self.scopes.append(scope)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.function_stack.append(node)
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if arg is not None and self.lookup(arg.arg) is not None:
                    scope[arg.arg] = None
        self.receivers.enter_scope(node)

    def leave_scope(self, node: ast.AST) -> None:
        self.receivers.leave_scope(node)
        self.scopes.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self.function_stack.pop()


SCOPE_NODES = _SCOPE_NODES
