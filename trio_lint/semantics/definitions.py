"""What a unit defines and calls, as the semantic model's pass (`binder.py`) meets it: its
functions and methods, classes, calls, `return`s, `argparse` defaults and `self.x` reads. The
value and type queries (`values.py`, `inference.py`) follow values through these tables: a call
of a function of the unit to its `return`s, a parameter to what the call sites pass."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from trio_lint.semantics.scopes import Scope

__all__ = ["Definitions", "FunctionNode"]

FunctionNode: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


class Definitions:
    """The unit's definitions and call sites. Functions and calls are keyed by name: a plain
    function `f` (not in a class) and a call `f(...)` by "f", a method `m` and a call `x.m(...)`
    by ".m" (the keys a `ParameterBinding.param` names)."""

    __slots__ = (
        "_argparse_defaults",
        "_calls",
        "_classes",
        "_functions",
        "_method_names",
        "_returns",
        "_self_attributes",
    )

    def __init__(self) -> None:
        self._functions: dict[str, list[FunctionNode]] = {}
        self._method_names: set[str] = set()
        self._calls: dict[str, list[ast.Call]] = {}
        self._returns: dict[int, list[ast.expr]] = {}  # id(def) -> returned expressions
        self._classes: dict[str, list[Scope]] = {}  # class name -> its scopes
        self._argparse_defaults: dict[str, list[ast.expr]] = {}  # argparse dest -> defaults
        self._self_attributes: dict[int, Scope] = {}  # id(`self.x` Attribute) -> class scope

    # ---- filled by the pass ----------------------------------------------------------------

    def add_function(self, node: FunctionNode) -> None:
        self._functions.setdefault(node.name, []).append(node)

    def add_method(self, node: FunctionNode) -> None:
        self._method_names.add(node.name)
        self._functions.setdefault("." + node.name, []).append(node)

    def add_call(self, key: str, call: ast.Call) -> None:
        """`key`: "f" for `f(...)`, ".m" for `x.m(...)`."""
        self._calls.setdefault(key, []).append(call)

    def add_return(self, function: FunctionNode, value: ast.expr) -> None:
        self._returns.setdefault(id(function), []).append(value)

    def add_class(self, name: str, scope: Scope) -> None:
        self._classes.setdefault(name, []).append(scope)

    def add_argparse_default(self, dest: str, default: ast.expr) -> None:
        self._argparse_defaults.setdefault(dest, []).append(default)

    def add_self_attribute(self, node: ast.Attribute, owner: Scope) -> None:
        """`self.x` read or called in a method of the class whose scope is `owner`."""
        self._self_attributes[id(node)] = owner

    # ---- asked by the queries --------------------------------------------------------------

    def functions(self, key: str) -> list[FunctionNode]:
        """The functions ("f") or methods (".m") of that name, in source order."""
        return self._functions.get(key, [])

    def defines(self, name: str) -> bool:
        """The unit defines a function or a method called `name`."""
        return name in self._functions or name in self._method_names

    def calls(self, key: str) -> list[ast.Call]:
        """Every call `f(...)` ("f") or `x.m(...)` (".m") of the unit, in source order."""
        return self._calls.get(key, [])

    def returns(self, function: ast.AST) -> list[ast.expr]:
        """The expressions `function`'s `return` statements give (not its nested functions')."""
        return self._returns.get(id(function), [])

    def classes(self, name: str) -> list[Scope]:
        """The scopes of the unit's classes of that name (at any depth)."""
        return self._classes.get(name, [])

    def argparse_defaults(self, dest: str) -> list[ast.expr]:
        """The `default=` of every `add_argument` call of the unit whose dest is `dest`."""
        return self._argparse_defaults.get(dest, [])

    def owner(self, node: ast.Attribute) -> Scope | None:
        """The class scope a `self.x` of one of its methods belongs to (None: not such a read)."""
        return self._self_attributes.get(id(node))
