"""What inference and value flow read of the semantic model (`ModelQueries`), and the memos
they keep in it. Typed as a protocol here, below `model.py`: `SemanticModel` owns and calls
`inference` and `values`, which only see the model through this interface (no import circle,
not even a type-only one)."""

from __future__ import annotations

import ast
from typing import Protocol

from trio_lint.semantics.definitions import Definitions
from trio_lint.semantics.names import Imports
from trio_lint.semantics.receivers import Kind, SdkType
from trio_lint.semantics.scopes import NameBinding, References

__all__ = ["ModelQueries", "TypeMemo", "ValueMemo"]


class TypeMemo:
    """What inference keeps between queries of one unit (`SemanticModel.type_of` keeps the
    types of expressions itself)."""

    __slots__ = ("params", "unreferenced")

    def __init__(self) -> None:
        # (function key, positional index, name) of a parameter typed by its call sites
        self.params: dict[tuple[str, int | None, str], SdkType | None] = {}
        self.unreferenced: dict[int, bool] = {}  # id(def) -> never called nor read


class ValueMemo:
    """What the value queries keep between queries of one unit."""

    __slots__ = ("built_from", "resolving_dicts")

    def __init__(self) -> None:
        # `origins`: (id(expr), limit) -> what the value is built from
        self.built_from: dict[tuple[int, int], list[ast.expr]] = {}
        # id(expr) of the dict values being resolved: value flow can lead a dict's entries back
        # to the same dict (a parameter read by key whose call site passes one of its entries).
        self.resolving_dicts: set[int] = set()


class ModelQueries(Protocol):
    """The part of `SemanticModel` that `inference` and `values` use."""

    version: str
    methods: dict[Kind, dict[str, SdkType]]
    attributes: dict[tuple[Kind, str], SdkType]
    references: References
    definitions: Definitions
    imports: Imports
    type_memo: TypeMemo
    value_memo: ValueMemo

    def sdk_symbol(self, expr: ast.AST, *, pytrio_only: bool = False) -> str | None: ...

    def resolve(self, node: ast.Name) -> NameBinding | None: ...

    def name_bindings(self, node: ast.Name) -> list[NameBinding]: ...

    def type_of(self, expr: ast.AST | None, *, pytrio_only: bool = False) -> SdkType | None: ...
