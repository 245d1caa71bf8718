"""Bindings, scopes and references of the semantic model's pass (`binder.py`), and the small
tables the pass and the queries share: one way a name got its value (`NameBinding` and its
kinds), the scopes that hold them (`Scope`), which binding each read sees (`References`)."""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

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
    "AnnotationBinding",
    "AssignmentBinding",
    "FreeRef",
    "FunctionBinding",
    "ImportBinding",
    "LoopBinding",
    "NameBinding",
    "ParameterBinding",
    "References",
    "Scope",
    "TypedBinding",
    "UnknownBinding",
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
# (`put`/`put_nowait`: an `asyncio.Queue` holds what is put in it, `values.queue_items`.)
ITEM_METHODS = frozenset({"append", "insert", "add", "put", "put_nowait"})
ITEMS_METHODS = frozenset({"extend", "update"})
FIELD_CALLS = frozenset({"field", "Field"})
# Annotations of a homogeneous sequence: `list[X]` holds X's (`tuple[X, ...]` does not qualify).
SEQUENCE_ANNOTATIONS = frozenset({"list", "List", "Sequence", "Iterable", "Iterator"})
# What `origins` follows into, by node class: a comprehension's element, a display's elements,
# the value a wrapper holds.
ELEMENT_OF = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp})
ELEMENTS = frozenset({ast.List, ast.Tuple, ast.Set})
WRAPS = frozenset({ast.Starred, ast.NamedExpr, ast.Await})


class NameBinding:
    """One way a name got its value (pyflakes-style: one class per way, each holding only its
    own fields): `AssignmentBinding` (`x = v`, `x: T = v`, `x := v`), `ParameterBinding`,
    `LoopBinding` (a loop or comprehension target), `FunctionBinding` (`def x`),
    `ImportBinding` (an SDK import), `AnnotationBinding` (`x: T` without a value),
    `TypedBinding` (an SDK type known without a value: `x: trio.X`, a name of an earlier block)
    and `UnknownBinding` (`UNKNOWN`: nothing known).

    The class answers None for a field its kind does not carry, so a query reads
    `binding.expr` (the bound value) whatever the kind, at the cost of one attribute lookup
    (`values.origins` does it for every name it meets). `parts`, common to every kind but
    `UNKNOWN`, collects later mutations of the bound object: (how, key, value)."""

    __slots__ = ("parts",)

    # Class attributes here, slots in the kinds that carry them (a slot of a subclass shadows
    # the class attribute). Typed as any kind may hold them: a query reads them unnarrowed.
    expr: ast.expr | None = None
    fixed: SdkType | None = None
    qualname: str | None = None
    origin: str | None = None
    param: tuple[str, int | None, str] | None = None
    annotation: ast.expr | None = None
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    element_of: ast.expr | None = None

    parts: list[tuple[str, Any, ast.expr]] | None

    def __init__(self) -> None:
        self.parts = None  # (each kind sets it itself: one call less per binding)

    def add_part(self, how: str, key: Any, value: ast.expr) -> None:
        """A later mutation of the bound object (`SemanticModel.mutations` lists the kinds)."""
        if self.parts is None:
            self.parts = []
        self.parts.append((how, key, value))

    def __eq__(self, other: object) -> bool:
        # Two bindings made the same way are equal (as when they were one dataclass).
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(
            getattr(self, name) == getattr(other, name)
            for klass in self.__class__.__mro__
            for name in getattr(klass, "__slots__", ())
        )

    # Unhashable, as the dataclasses they were: typeshed declares `object.__hash__` a method.
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for klass in reversed(self.__class__.__mro__)
            for name in getattr(klass, "__slots__", ())
            if getattr(self, name) is not None
        )
        return f"{self.__class__.__name__}({fields})"


class UnknownBinding(NameBinding):
    """Nothing known about the value (`UNKNOWN`): a starred target, an unpacked element."""

    __slots__ = ()


class AssignmentBinding(NameBinding):
    """`x = v`, `x: T = v`, `x := v`: the value `expr` (typed lazily); `fixed`, the SDK type an
    annotation gives; `annotation`, any other annotation (`cfg: Cfg = make()`)."""

    __slots__ = ("annotation", "expr", "fixed")

    def __init__(
        self,
        expr: ast.expr,
        fixed: SdkType | None = None,
        annotation: ast.expr | None = None,
    ) -> None:
        self.parts = None
        self.expr = expr
        self.fixed = fixed
        self.annotation = annotation


class ParameterBinding(NameBinding):
    """A function parameter: `fixed`, the SDK type of its annotation; or `param`, an
    unannotated parameter (function name, positional index or None, parameter name) typed from
    the module's call sites of that function when they all pass the same kind (a call site
    forwarding a parameter of a function nothing in the module calls or reads is skipped); or
    `annotation`, any other annotation (None: none)."""

    __slots__ = ("annotation", "fixed", "param")

    def __init__(
        self,
        *,
        fixed: SdkType | None = None,
        param: tuple[str, int | None, str] | None = None,
        annotation: ast.expr | None = None,
    ) -> None:
        self.parts = None
        self.fixed = fixed
        self.param = param
        self.annotation = annotation


class LoopBinding(NameBinding):
    """A loop or comprehension target: `element_of`, the iterable it walks, typed lazily like a
    value (the pass must not infer: reads of enclosing names are only resolved when their
    function ends, and an early answer would be cached)."""

    __slots__ = ("element_of",)

    def __init__(self, element_of: ast.expr) -> None:
        self.parts = None
        self.element_of = element_of


class FunctionBinding(NameBinding):
    """`def name(...)`."""

    __slots__ = ("function",)

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.parts = None
        self.function = function


class ImportBinding(NameBinding):
    """A name an SDK import binds: canonical `qualname` (`pytrio.X`), and `origin`, the SDK
    root module actually imported (pytrio, tinker)."""

    __slots__ = ("origin", "qualname")

    def __init__(self, qualname: str, origin: str | None) -> None:
        self.parts = None
        self.qualname = qualname
        self.origin = origin


class AnnotationBinding(NameBinding):
    """`x: T` without a value (outside a class body), `T` not an SDK type."""

    __slots__ = ("annotation",)

    def __init__(self, annotation: ast.expr) -> None:
        self.parts = None
        self.annotation = annotation


class TypedBinding(NameBinding):
    """A name whose SDK type is known without a value: `x: trio.TrainingClient`, or a name an
    earlier block of the document left typed."""

    __slots__ = ("fixed",)

    def __init__(self, fixed: SdkType) -> None:
        self.parts = None
        self.fixed = fixed


UNKNOWN = UnknownBinding()


class _Missing(enum.Enum):
    NOT_YET = enum.auto()


# A cache miss (None is a cached answer). An enum member, so that `found is NOT_YET` narrows
# `memo.get(key, NOT_YET)` to the memo's values for a type checker.
NOT_YET: Final = _Missing.NOT_YET


@dataclass(slots=True)
class Scope:
    """A module, function, class or comprehension scope, filled by the pass: `current`, each
    name's binding at the pass's position (at the end, once the scope is done); `history`, all
    of a name's bindings in order; for a class, its methods and the `self.x` its methods bind;
    `pending`, reads not resolved yet (`defer`)."""

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

    def defer(self, read: int, name: str) -> None:
        """A read (by `id`) of a name not bound here yet: resolved when the scope ends (a later
        binding in this function makes it local, else it is the enclosing scope's)."""
        self.pending.append((read, name))

    def add_method(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A `def` in this class's body."""
        self.methods[node.name] = node

    def add_attribute(self, name: str, binding: NameBinding) -> None:
        """`self.<name> = ...` in a method of this class."""
        self.attributes.setdefault(name, []).append(binding)

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


class References:
    """Which binding each name read sees (ruff's resolved references), keyed by the read's
    `id`: the binding itself when the pass knew it at the read, or a `FreeRef` for a read of an
    enclosing scope's name (resolved on demand: later bindings of that name count too).
    Filled by the pass (`record`); the model resolves through it (`SemanticModel.resolve`)."""

    __slots__ = ("_reads",)

    def __init__(self) -> None:
        self._reads: dict[int, NameBinding | FreeRef] = {}

    def record(self, read: int, found: NameBinding | FreeRef) -> None:
        """`read`: the `id` of the `ast.Name` (a pending read of a scope is kept by id)."""
        self._reads[read] = found

    def get(self, read: ast.AST | None) -> NameBinding | FreeRef | None:
        return self._reads.get(id(read))

    def refers_to(self, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
        """Some read of the unit may be `function` (a read of its binding, or of a free `name`)."""
        return any(
            (ref.name == name) if isinstance(ref, FreeRef) else (ref.function is function)
            for ref in self._reads.values()
        )


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
