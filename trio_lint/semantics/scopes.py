"""Bindings and scopes of the semantic model's pass (`binder.py`), and the small tables the
pass and the queries share: one way a name got its value, the scopes that hold them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from trio_lint.semantics.receivers import (
    SdkType,
)

__all__ = [
    "CONVERSION_ATTRS",
    "CONVERSION_FUNCS",
    "ELEMENTS",
    "ELEMENT_OF",
    "FIELD_CALLS",
    "ITEMS_METHODS",
    "ITEM_METHODS",
    "NOT_YET",
    "SELF_CONVERSIONS",
    "SEQUENCE_ANNOTATIONS",
    "UNKNOWN",
    "WRAPS",
    "FreeRef",
    "NameBinding",
    "Scope",
    "function_params",
    "keyword_value",
    "type_shape",
]

# Calls that convert a container without changing its items (origins look through them).
CONVERSION_FUNCS = frozenset({"list", "tuple", "sorted", "reversed"})
CONVERSION_ATTRS = frozenset(
    {"asarray", "array", "tensor", "as_tensor", "LongTensor", "IntTensor", "copy", "deepcopy"}
)
SELF_CONVERSIONS = frozenset({"copy", "tolist", "clone", "long", "int", "float", "to", "detach"})
# Mutating methods: (how the argument joins the container).
ITEM_METHODS = frozenset({"append", "insert", "add"})
ITEMS_METHODS = frozenset({"extend", "update"})
FIELD_CALLS = frozenset({"field", "Field"})
# Annotations of a homogeneous sequence: `list[X]` holds X's (`tuple[X, ...]` does not qualify).
SEQUENCE_ANNOTATIONS = frozenset({"list", "List", "Sequence", "Iterable", "Iterator"})
# What `origins` follows into, by node class: a comprehension's element, a display's elements,
# the value a wrapper holds.
ELEMENT_OF = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp})
ELEMENTS = frozenset({ast.List, ast.Tuple, ast.Set})
WRAPS = frozenset({ast.Starred, ast.NamedExpr, ast.Await})


@dataclass(slots=True)
class NameBinding:
    """One way a name got its value: an expression (typed lazily), a fixed type, an SDK import,
    a parameter, or nothing known. `parts` collects later mutations of the bound object."""

    expr: ast.expr | None = None
    fixed: SdkType | None = None
    qualname: str | None = None  # canonical `pytrio.X` for SDK imports
    origin: str | None = None  # the SDK root module actually imported (pytrio, tinker)
    # An unannotated parameter: (function name, positional index or None, parameter name), typed
    # from the module's call sites of that function when they all pass the same kind (a call
    # site forwarding a parameter of a function nothing in the module calls or reads is skipped).
    param: tuple[str, int | None, str] | None = None
    annotation: ast.expr | None = None
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # `def name(...)`
    # A loop or comprehension target: the iterable it walks, typed lazily like `expr` (the pass
    # must not infer: reads of enclosing names are only resolved when their function ends, and
    # an early answer would be cached).
    element_of: ast.expr | None = None
    parts: list[tuple[str, Any, ast.expr]] | None = None  # (how, key, value)


UNKNOWN = NameBinding()
NOT_YET = object()  # a cache miss (None is a cached answer)


@dataclass(slots=True)
class Scope:
    kind: str  # "module" | "function" | "class" | "comprehension"
    parent: Scope | None
    node: ast.AST | None = None
    current: dict[str, NameBinding] = field(default_factory=dict)
    history: dict[str, list[NameBinding]] = field(default_factory=dict)
    attributes: dict[str, list[NameBinding]] = field(default_factory=dict)  # class: self.x
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    pending: list[tuple[int, str]] = field(default_factory=list)

    def bind(self, name: str, binding: NameBinding) -> None:
        self.current[name] = binding
        self.history.setdefault(name, []).append(binding)

    def lookup_now(self, name: str) -> NameBinding | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.current:
                return scope.current[name]
            scope = scope.parent
        return None


@dataclass(frozen=True, slots=True)
class FreeRef:
    """A name read in a function but bound in an enclosing scope (resolved on demand)."""

    scope: Scope
    name: str


def type_shape(typ: SdkType) -> str:
    """What two types must share to agree: kind and contents, not the method that made them."""
    return str(typ)


def function_params(args: ast.arguments) -> Iterator[ast.arg]:
    yield from args.posonlyargs
    yield from args.args
    if args.vararg is not None:
        yield args.vararg
    yield from args.kwonlyargs
    if args.kwarg is not None:
        yield args.kwarg


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None
