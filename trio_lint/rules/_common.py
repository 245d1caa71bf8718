"""Small helpers the catalogue's rules share: argument lookup, literals, SDK lines, fix builders.

Not a rule module (the registry skips names that start with `_`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from trio_lint.semantics.names import dotted_name
from trio_lint.settings.target_version import release_line

if TYPE_CHECKING:
    import libcst as cst

    from trio_lint.semantics.context import LintContext


def sdk_line(ctx: LintContext) -> str:
    """The SDK line the code targets: "0.1" or "0.2" (from `target-version`)."""
    return release_line(str(ctx.sdk_version))


def source_text(expr: ast.AST) -> str:
    """`expr` as written, e.g. a receiver compared by text (`ast.unparse`, cheap for the usual
    chain of names: hooks call this for every matching call of a unit)."""
    return dotted_name(expr) or ast.unparse(expr)


def same_tree(a: object, b: object) -> bool:
    """Whether two expressions are written alike: `ast.dump(a) == ast.dump(b)` (positions
    aside), without building the two strings; most pairs differ near the root."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, ast.AST):
        return all(same_tree(getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
    if isinstance(a, list) and isinstance(b, list):  # b's class is a's
        return len(a) == len(b) and all(map(same_tree, a, b))
    return a == b or repr(a) == repr(b)  # repr: NaN constants dump alike


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` and itself, as `ast.walk` gives them, in source order (depth
    first) rather than breadth first, for a third of the cost: callers that only collect or
    test nodes walk whole functions and statements on hot paths."""
    stack = [node]
    pop, push, fields_of = stack.pop, stack.append, _CHILD_FIELDS
    while stack:
        node = pop()
        yield node
        fields = fields_of.get(node.__class__)
        if fields is None:
            fields = fields_of[node.__class__] = tuple(reversed(node._fields))
        for field in fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for child in reversed(value):
                    if isinstance(child, ast.AST):
                        push(child)
            elif isinstance(value, ast.AST):
                push(value)


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw
    return None


def argument(call: ast.Call, position: int | None, name: str) -> ast.expr | None:
    """The expression passed for parameter `name` (positionally at `position`, or by keyword)."""
    kw = keyword(call, name)
    if kw is not None:
        return kw.value
    if position is not None and position < len(call.args):
        arg = call.args[position]
        if not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
            return arg
    return None


def has_splat(call: ast.Call) -> bool:
    """`**kwargs` or `*args`: the call may pass anything, so absence checks must stay quiet."""
    return any(kw.arg is None for kw in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    )


def int_literal(expr: ast.expr | None) -> int | None:
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if (
        isinstance(expr, ast.UnaryOp)
        and isinstance(expr.op, ast.USub)
        and isinstance(expr.operand, ast.Constant)
        and type(expr.operand.value) is int
    ):
        return -expr.operand.value
    return None


# ---- libcst fix builders -------------------------------------------------------------------


def append_result_call(node: cst.CSTNode) -> cst.CSTNode:
    """`x.m(...)` -> `x.m(...).result()`."""
    import libcst as cst

    assert isinstance(node, cst.BaseExpression)
    return cst.Call(func=cst.Attribute(value=node, attr=cst.Name("result")))


def wrap_in_call(callee: str):
    """`E` -> `callee(E)`, keeping E's own text."""

    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.BaseExpression)
        return cst.Call(func=cst.parse_expression(callee), args=[cst.Arg(value=node)])

    return transform


def replace_string_value(new_text: str):
    """A string literal -> the same quote style with new contents (no escapes needed)."""

    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.SimpleString)
        prefix = node.prefix
        quote = node.quote
        return node.with_changes(value=f"{prefix}{quote}{new_text}{quote}")

    return transform


def drop_keyword(name: str):
    """For a `Call` edit: remove the keyword argument `name`, keeping the other commas intact."""

    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.Call)
        args = list(node.args)
        index = next(
            i for i, arg in enumerate(args) if arg.keyword is not None and arg.keyword.value == name
        )
        removed = args.pop(index)
        if index == len(args) and args:  # it was the last one: the new last takes its comma
            args[-1] = args[-1].with_changes(
                comma=removed.comma, whitespace_after_arg=removed.whitespace_after_arg
            )
        return node.with_changes(args=args)

    return transform


def drop_positional(index: int):
    """For a `Call` edit: remove the positional argument at `index`."""

    def transform(node: cst.CSTNode) -> cst.CSTNode:
        import libcst as cst

        assert isinstance(node, cst.Call)
        args = list(node.args)
        removed = args.pop(index)
        if index == len(args) and args:
            args[-1] = args[-1].with_changes(
                comma=removed.comma, whitespace_after_arg=removed.whitespace_after_arg
            )
        return node.with_changes(args=args)

    return transform
