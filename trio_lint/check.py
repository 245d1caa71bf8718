"""The single walk: one iterative pass over the `ast` tree dispatching to every selected rule."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from functools import cache

from trio_lint.config import LintConfig
from trio_lint.diagnostics import Severity
from trio_lint.rules.base import Finding, Rule, Span
from trio_lint.semantics.context import SCOPE_NODES, LintContext
from trio_lint.semantics.names import Binding, prescan_module_imports

INTERNAL_ERROR = "PTR903"
_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.NamedExpr)
_ALWAYS_LEAVE = SCOPE_NODES + _ASSIGNS


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


Handler = tuple[Callable[[ast.AST], None], bool, str]


def run_rules(
    tree: ast.Module,
    source: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed_bindings: dict[str, Binding] | None = None,
) -> list[Finding]:
    bindings = dict(seed_bindings or {})
    bindings.update(prescan_module_imports(tree, tuple(config.sdk_modules)))
    ctx = LintContext(config, source, bindings)
    ctx.tree = tree
    visit: dict[type[ast.AST], list[Handler]] = {}
    leave: dict[type[ast.AST], list[Handler]] = {}
    instances = []
    for rule in rules:
        instance = rule(ctx)
        instances.append(instance)
        for node_class, attr, leaving in rule_hooks(rule):
            table = leave if leaving else visit
            table.setdefault(node_class, []).append(
                (getattr(instance, attr), rule.pytrio_only, rule.code)
            )
    crashed: set[str] = set()

    def call(handlers: list[Handler], node: ast.AST) -> None:
        for handler, pytrio_only, code in handlers:
            if code in crashed:
                continue
            ctx.pytrio_only = pytrio_only
            try:
                handler(node)
            except Exception as exc:  # a rule bug must not cost the other rules or the file
                crashed.add(code)
                ctx.add_finding(_internal_error(code, node, exc))
        ctx.pytrio_only = False

    stack: list[ast.AST | _Leave] = [tree]
    while stack:
        item = stack.pop()
        if type(item) is _Leave:
            node = item.node
            if isinstance(node, SCOPE_NODES):
                ctx.leave_scope(node)
            elif isinstance(node, _ASSIGNS):
                _observe_assign(ctx, node)
            handlers = leave.get(type(node))
            if handlers:
                call(handlers, node)
            continue
        node = item
        node_class = type(node)
        if node_class is ast.Import or node_class is ast.ImportFrom:
            ctx.bind_import(node)  # type: ignore[arg-type]
        handlers = visit.get(node_class)
        if handlers:
            call(handlers, node)
        if node_class in leave or isinstance(node, _ALWAYS_LEAVE):
            stack.append(_Leave(node))
        if isinstance(node, SCOPE_NODES):
            ctx.enter_scope(node)
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
        ctx.pytrio_only = instance.pytrio_only
        try:
            instance.finish()
        except Exception as exc:
            ctx.add_finding(_internal_error(instance.code, tree, exc))
    return ctx.findings


def _observe_assign(ctx: LintContext, node: ast.AST) -> None:
    if isinstance(node, ast.Assign):
        ctx.observe_assign(node.targets, node.value)
    elif isinstance(node, ast.AnnAssign | ast.NamedExpr):
        ctx.observe_assign([node.target], node.value)


def _internal_error(code: str, node: ast.AST, exc: Exception) -> Finding:
    span = Span.of(node) if hasattr(node, "lineno") else Span(1, 0, 1, 0)
    return Finding(
        INTERNAL_ERROR,
        span,
        f"internal error in rule {code}: {type(exc).__name__}: {exc} (please report)",
        Severity.ERROR,
    )
