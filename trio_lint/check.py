"""Checking one parsed unit: build its semantic model (one pass), then one iterative walk over the
`ast` tree dispatching to every selected rule's hooks."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from trio_lint.config import LintConfig
from trio_lint.diagnostics import Severity
from trio_lint.findings import Finding, Span
from trio_lint.semantics.context import FUNCTION_NODES, LintContext
from trio_lint.semantics.model import SemanticModel, build_model
from trio_lint.semantics.names import Binding

if TYPE_CHECKING:
    from trio_lint.rules.base import Rule

INTERNAL_ERROR = "PTR903"


@cache
def _node_classes() -> dict[str, type[ast.AST]]:
    return {
        name: value
        for name, value in vars(ast).items()
        if isinstance(value, type) and issubclass(value, ast.AST)
    }


@cache
def rule_hooks(rule: type[Rule]) -> tuple[tuple[type[ast.AST], str, bool], ...]:
    """(ast class, method name, is_leave) for every `visit_X`/`leave_X` the rule defines."""
    hooks = []
    classes = _node_classes()
    for attr in dir(rule):
        for prefix, leaving in (("visit_", False), ("leave_", True)):
            if attr.startswith(prefix):
                node_class = classes.get(attr[len(prefix) :])
                if node_class is None:
                    raise TypeError(
                        f"{rule.__name__}.{attr}: `{attr[len(prefix) :]}` is no ast node class"
                    )
                hooks.append((node_class, attr, leaving))
    return tuple(hooks)


@cache
def _child_fields(node_class: type[ast.AST]) -> tuple[str, ...]:
    # Reversed, so children popped from the stack come out in source order; `ctx` is Load/Store.
    return tuple(reversed([f for f in node_class._fields if f != "ctx"]))


class _Leave:
    __slots__ = ("node",)

    def __init__(self, node: ast.AST) -> None:
        self.node = node


Handler = tuple[Callable[[ast.AST], None], str]


def run_rules(
    tree: ast.Module,
    source: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed_bindings: dict[str, Binding] | None = None,
) -> list[Finding]:
    return check_tree(tree, source, config, rules, seed_bindings)[0]


def check_tree(
    tree: ast.Module,
    source: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed_bindings: dict[str, Binding] | None = None,
    *,
    model: SemanticModel | None = None,
) -> tuple[list[Finding], SemanticModel]:
    """The findings of `rules` on one unit and the unit's model (whose imports seed the next
    notebook cell)."""
    if model is None:
        model = build_model(tree, config.sdk_modules, config.target_version, seed_bindings)
    ctx = LintContext(config, source, model)
    ctx.tree = tree
    visit: dict[type[ast.AST], list[Handler]] = {}
    leave: dict[type[ast.AST], list[Handler]] = {}
    instances = []
    contexts = {flag: ctx.for_rule(flag) for flag in (False, True)}
    for rule in rules:
        instance = rule(contexts[rule.pytrio_only])
        instances.append(instance)
        for node_class, attr, leaving in rule_hooks(rule):
            table = leave if leaving else visit
            table.setdefault(node_class, []).append((getattr(instance, attr), rule.code))
    crashed: set[str] = set()

    def call(handlers: list[Handler], node: ast.AST) -> None:
        for handler, code in handlers:
            if code in crashed:
                continue
            try:
                handler(node)
            except Exception as exc:  # a rule bug must not cost the other rules or the file
                crashed.add(code)
                ctx.add_finding(_internal_error(code, node, exc))

    function_stack = ctx.function_stack
    stack: list[ast.AST | _Leave] = [tree]
    while stack:
        item = stack.pop()
        if type(item) is _Leave:
            node = item.node
            if isinstance(node, FUNCTION_NODES):
                function_stack.pop()
            handlers = leave.get(type(node))
            if handlers:
                call(handlers, node)
            continue
        node = item
        node_class = type(node)
        handlers = visit.get(node_class)
        if handlers:
            call(handlers, node)
        if node_class in leave or isinstance(node, FUNCTION_NODES):
            stack.append(_Leave(node))
        if isinstance(node, FUNCTION_NODES):
            function_stack.append(node)
        for field in _child_fields(node_class):
            value = getattr(node, field, None)
            if type(value) is list:
                for child in reversed(value):
                    if isinstance(child, ast.AST):
                        stack.append(child)
            elif isinstance(value, ast.AST):
                stack.append(value)
    for instance in instances:
        if instance.code in crashed:
            continue
        try:
            instance.finish()
        except Exception as exc:
            ctx.add_finding(_internal_error(instance.code, tree, exc))
    return ctx.findings, model


def _internal_error(code: str, node: ast.AST, exc: Exception) -> Finding:
    span = Span.of(node) if hasattr(node, "lineno") else Span(1, 0, 1, 0)
    return Finding(
        INTERNAL_ERROR,
        span,
        f"internal error in rule {code}: {type(exc).__name__}: {exc} (please report)",
        Severity.ERROR,
    )
