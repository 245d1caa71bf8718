"""The semantic model of one unit (a module, a notebook's cells, a Markdown block): built by one
`ast` pass before any rule runs, then queried by every rule.

Rules reach it as `self.model` (a view that passes the rule's `pytrio_only` to every query) or as
`self.ctx.model` (the model itself; pass `pytrio_only=` where it matters). Queries:

Names and imports
- `qualified_name(expr)` -> canonical `"pytrio.ModelInput.from_ints"` for an SDK name or attribute
  chain however it was imported (`import pytrio as t`, `from pytrio.types import X as Y`,
  `tinker.X` with `sdk-modules = ["pytrio", "tinker"]`, `MI = trio.ModelInput`), else None.
- `is_sdk(expr, "Datum", ...)`, `sdk_symbol(expr)` (-> "Datum"), `import_binding(name_node)`.
- `sdk_alias()`: the module-level name bound to the SDK module itself (for fixes writing `trio.X`).
- `imports_sdk`, `other_sdk_only` (imports tinker and not pytrio), `module_imports()`.

Receivers (what an expression holds: clients, futures, SDK results; see `receivers.py` for kinds)
- `type_of(expr)` -> `SdkType | None`, `kind_of(expr)` -> `Kind | None`. A list started empty
  and filled by `.append`/`.extend`/`+=` holds what every addition agrees on; a
  `dict[str, TensorData]` gives TensorData through `[key]`, `.get(key)`, `.values()`, `.items()`.
- `client_call(call)` -> (client kind, method) for `recv.m(...)` on a PyTRIO client.
- `method_returns(kind, name)` -> what a client method returns on the target SDK line.

Values (where the value of an expression was bound; all flow-sensitive inside a scope)
- `bound_expression(name)`: the expression the binding that reaches this read assigned.
- `value_of(expr)`: one step back to the expression a name, attribute or call evaluates to, when
  there is exactly one: local and module names, module/class constants (`IGNORE = -100`),
  `self.x` bound in another method, dataclass/pydantic field defaults (`cfg.x` where
  `cfg = Cfg(...)` or `cfg: Cfg`; a keyword given at construction wins), `argparse` defaults
  (`args.lr` where `args = parser.parse_args()`), and the return value of a function or method of
  the same module (`make_params()`, `self.params()`).
- `sources(expr)`: the same, all candidates (several bindings, several `return`s).
- `origins(expr)`: every expression the value is built from, the expression first: follows
  `sources` and containers (`a + b`, `[x] * n`, comprehensions, list/tuple displays, slices
  `x[1:]`, conditionals), conversions (`list(x)`, `np.asarray(x)`, `torch.tensor(x)`,
  `x.copy()`, `x.tolist()`), and later mutations of a name (`x.append(e)`, `x.extend(e)`,
  `x += e`, `x[:n] = e`). Rules test the items (`any(is_minus_100(o) for o in origins(e))`).
- `literal(expr)`: the constant an expression is or evaluates to through `value_of`, else None.
- `dict_entries(expr)` -> `{key: value expr}` for a dict value: `{...}` (with `**a` merged),
  `dict(a, k=v)`, names/attributes/calls bound to one, and `d["k"] = v` / `d.update(...)` later;
  None when the value is not known to be a dict.
- `mutations(name)`: what was done to the object after binding (`append`, `extend`, `+=`,
  `x[k] = e`, `x.attr = e`).
- `function_of(name)`: the `def` a name refers to; `returns(function_node)`: the expressions its
  `return` statements give (not those of nested functions).

Unknown never matches: every query answers None / empty rather than guess.

Shared derived state: `memo` holds what several rules derive from the model for this unit (one
entry per deriving module, e.g. `rules/_conformance.py`'s per-node issues), so it is computed once
per unit whichever rule asks first.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trio_lint.semantics.names import (
    CANONICAL_ROOT,
    Binding,
    bindings_of_import,
    dotted_name,
    normalize,
)
from trio_lint.semantics.receivers import (
    ATTRIBUTES,
    CLASS_KINDS,
    CONSTRUCTED_KINDS,
    DISTINCTIVE_METHODS,
    Kind,
    SdkType,
    method_table,
)

__all__ = [
    "ENTER",
    "ENTER_AND_LEAVE",
    "PASSED_BY",
    "UNRECORDED",
    "Leave",
    "ModelView",
    "SemanticModel",
    "build_model",
    "converted_argument",
]

# Calls that convert a container without changing its items (origins look through them).
_CONVERSION_FUNCS = frozenset({"list", "tuple", "sorted", "reversed"})
_CONVERSION_ATTRS = frozenset(
    {"asarray", "array", "tensor", "as_tensor", "LongTensor", "IntTensor", "copy", "deepcopy"}
)
_SELF_CONVERSIONS = frozenset({"copy", "tolist", "clone", "long", "int", "float", "to", "detach"})
# Mutating methods: (how the argument joins the container).
_ITEM_METHODS = frozenset({"append", "insert", "add"})
_ITEMS_METHODS = frozenset({"extend", "update"})
_FIELD_CALLS = frozenset({"field", "Field"})
# Annotations of a homogeneous sequence: `list[X]` holds X's (`tuple[X, ...]` does not qualify).
_SEQUENCE_ANNOTATIONS = frozenset({"list", "List", "Sequence", "Iterable", "Iterator"})
# What `origins` follows into, by node class: a comprehension's element, a display's elements,
# the value a wrapper holds.
_ELEMENT_OF = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp})
_ELEMENTS = frozenset({ast.List, ast.Tuple, ast.Set})
_WRAPS = frozenset({ast.Starred, ast.NamedExpr, ast.Await})


# ---------------------------------------------------------------------------------------------
# Bindings and scopes


@dataclass(slots=True)
class _Binding:
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


_UNKNOWN = _Binding()
_NOT_YET = object()  # a cache miss (None is a cached answer)


@dataclass(slots=True)
class _Scope:
    kind: str  # "module" | "function" | "class" | "comprehension"
    parent: _Scope | None
    node: ast.AST | None = None
    current: dict[str, _Binding] = field(default_factory=dict)
    history: dict[str, list[_Binding]] = field(default_factory=dict)
    attributes: dict[str, list[_Binding]] = field(default_factory=dict)  # class: self.x
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    pending: list[tuple[int, str]] = field(default_factory=list)

    def bind(self, name: str, binding: _Binding) -> None:
        self.current[name] = binding
        self.history.setdefault(name, []).append(binding)

    def lookup_now(self, name: str) -> _Binding | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.current:
                return scope.current[name]
            scope = scope.parent
        return None


@dataclass(frozen=True, slots=True)
class _FreeRef:
    """A name read in a function but bound in an enclosing scope (resolved on demand)."""

    scope: _Scope
    name: str


def _shape(typ: SdkType) -> str:
    """What two types must share to agree: kind and contents, not the method that made them."""
    return str(typ)


def _params(args: ast.arguments) -> Iterator[ast.arg]:
    yield from args.posonlyargs
    yield from args.args
    if args.vararg is not None:
        yield args.vararg
    yield from args.kwonlyargs
    if args.kwarg is not None:
        yield args.kwarg


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


# ---------------------------------------------------------------------------------------------
# The model


class SemanticModel:
    """Everything rules ask about one unit. Build it with `build_model(tree, ...)`."""

    def __init__(self, sdk_modules: Sequence[str], version: str) -> None:
        self.sdk_modules = tuple(sdk_modules)
        self.version = version
        self.methods = method_table(version)
        self.module_scope = _Scope("module", None)
        self._names: dict[int, _Binding | _FreeRef] = {}  # id(Name load) -> binding
        self._self_attrs: dict[int, _Scope] = {}  # id(`self.x` Attribute) -> class scope
        self._cache: dict[int, SdkType | None] = {}
        self._busy: set[int] = set()
        self._defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}  # plain defs
        self._method_names: set[str] = set()
        self._calls: dict[str, list[ast.Call]] = {}  # plain function name -> `name(...)` calls
        self._params: dict[tuple[str, int | None, str], SdkType | None] = {}
        self._unreferenced: dict[int, bool] = {}  # id(def) -> never called nor read
        self._returns: dict[int, list[ast.expr]] = {}  # id(def) -> returned expressions
        self._classes: dict[str, list[_Scope]] = {}  # class name -> its scopes
        self._arg_defaults: dict[str, list[ast.expr]] = {}  # argparse dest -> defaults
        self._method_of: dict[int, _Scope] = {}  # id(`self.m` Attribute) -> class scope
        self._origins: set[str] = set()  # SDK roots imported at module level (and by the seed)
        self._other_only = False
        self._qualnames: dict[int, tuple[str, str] | None] = {}  # normalized
        # Modules named by `from X import ...` statements anywhere in the unit (`wanted` tests).
        self.from_modules: set[str] = set()
        self._client_calls: dict[int, tuple[Kind, str] | None] = {}
        self._finals: dict[tuple[int, str], _Binding | None] = {}  # (id(scope), name)
        self._built_from: dict[tuple[int, int], list[ast.expr]] = {}  # origins: (id(expr), limit)
        # Analyses derived from the model that several rules share, keyed by the module that
        # derives them (the conformance rules' issues): per unit, like the model.
        self.memo: dict[str, Any] = {}
        # `build_model(events_for=...)`: the nodes of those classes, and `Leave`s, in the order
        # the pass met them (the rules' dispatch order).
        self.events: list[Any] = []

    # ---- names and imports -----------------------------------------------------------------

    @property
    def imports_sdk(self) -> bool:
        return bool(self._origins)

    @property
    def other_sdk_only(self) -> bool:
        """Code that imports another SDK module (tinker) and not pytrio is not PyTRIO code; code
        that imports no SDK at all (a helper handed its clients) counts as PyTRIO code."""
        return self._other_only

    def _finish(self) -> None:
        self._other_only = bool(self._origins) and CANONICAL_ROOT not in self._origins

    def module_imports(self) -> dict[str, Binding]:
        """Module-level SDK names at the end of the unit (seed for the next notebook cell)."""
        return {
            name: Binding(b.qualname, b.origin or CANONICAL_ROOT)
            for name, b in self.module_scope.current.items()
            if b.qualname is not None
        }

    def sdk_alias(self) -> str | None:
        for name, binding in reversed(self.module_scope.current.items()):
            if binding.qualname == CANONICAL_ROOT:
                return name
        return None

    def import_binding(self, name: ast.Name, *, pytrio_only: bool = False) -> Binding | None:
        """The SDK import a name read resolves to (None for anything else)."""
        binding = self._resolve(name)
        if binding is None or binding.qualname is None:
            return None
        if pytrio_only and binding.origin not in (None, CANONICAL_ROOT):
            return None
        return Binding(binding.qualname, binding.origin or CANONICAL_ROOT)

    def qualified_name(self, expr: ast.AST | None, *, pytrio_only: bool = False) -> str | None:
        """Canonical `pytrio.X.y` for an expression naming an SDK symbol, else None."""
        key = id(expr)
        found = self._qualnames.get(key, _NOT_YET)
        if found is _NOT_YET:
            found = self._qualified(expr, 0)
            if found is not None:
                found = (normalize(found[0]), found[1])
            self._qualnames[key] = found
        if found is None:
            return None
        if pytrio_only and found[1] != CANONICAL_ROOT:
            return None
        return found[0]

    def _qualified(self, expr: ast.AST | None, depth: int) -> tuple[str, str] | None:
        expr_class = expr.__class__  # class tests: this runs for most names and attributes
        if expr_class is ast.Name:
            binding = self._resolve(expr)
            if binding is None:
                return None
            if binding.qualname is not None:
                return binding.qualname, binding.origin or CANONICAL_ROOT
            value = binding.expr
            if depth < 8 and isinstance(value, ast.Name | ast.Attribute):
                return self._qualified(value, depth + 1)  # `MI = trio.ModelInput`
            return None
        if expr_class is ast.Attribute:
            base = self._qualified(expr.value, depth)  # type: ignore[union-attr]
            return (f"{base[0]}.{expr.attr}", base[1]) if base is not None else None
        return None

    def is_sdk(self, expr: ast.AST, *names: str, pytrio_only: bool = False) -> bool:
        """True if `expr` resolves to `pytrio.<name>` for one of `names` (e.g. "SamplingParams")."""
        qualname = self.qualified_name(expr, pytrio_only=pytrio_only)
        return qualname is not None and qualname.removeprefix(CANONICAL_ROOT + ".") in names

    def call_symbol(self, func: ast.expr) -> str | None:
        """`Datum` / `ModelInput.from_ints` when a callee names that SDK symbol (the key of
        `Rule.call_symbols`; `is_sdk(func, key)` holds for it whatever the rule's view)."""
        qualname = self.qualified_name(func)
        if qualname is None:
            return None
        return qualname.removeprefix(CANONICAL_ROOT + ".")

    def calls_of(self, name: str) -> list[ast.Call]:
        """Every call `name(...)` in the unit, in source order."""
        return self._calls.get(name, [])

    def sdk_symbol(self, expr: ast.AST, *, pytrio_only: bool = False) -> str | None:
        """`AdamParams` when `expr` names the SDK's AdamParams however it was imported."""
        qualname = self.qualified_name(expr, pytrio_only=pytrio_only)
        if qualname is None or "." not in qualname:
            return None
        return qualname.rsplit(".", 1)[-1]

    # ---- receivers -------------------------------------------------------------------------

    def _hidden(self, pytrio_only: bool) -> bool:
        return pytrio_only and self._other_only

    def type_of(self, expr: ast.AST | None, *, pytrio_only: bool = False) -> SdkType | None:
        if expr is None or (pytrio_only and self._other_only):  # `_hidden`, inlined: hot
            return None
        key = id(expr)
        found = self._cache.get(key, _NOT_YET)
        if found is not _NOT_YET:
            return found  # type: ignore[return-value]
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            result = self._infer(expr)
        finally:
            self._busy.discard(key)
        self._cache[key] = result
        return result

    def kind_of(self, expr: ast.AST | None, *, pytrio_only: bool = False) -> Kind | None:
        typ = self.type_of(expr, pytrio_only=pytrio_only)
        return typ.kind if typ is not None else None

    def client_call(
        self,
        call: ast.Call,
        *,
        pytrio_only: bool = False,
        methods: Container[str] | None = None,
    ) -> tuple[Kind, str] | None:
        """For `recv.m(...)` on a PyTRIO client: (client kind, method name), else None.
        Unknown receivers count only for the distinctive method names. `methods`: the names the
        caller cares about (any other call answers None before any inference: most calls of a
        unit are `print`, `len`, `range`...)."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        if methods is not None and func.attr not in methods:
            return None
        if self._hidden(pytrio_only):
            return None
        key = id(call)
        if key in self._client_calls:
            return self._client_calls[key]
        recv = self.type_of(func.value)
        if recv is not None:
            found = (recv.kind, func.attr) if recv.is_client else None
        else:
            kind = DISTINCTIVE_METHODS.get(func.attr)
            found = (kind, func.attr) if kind is not None else None
        self._client_calls[key] = found
        return found

    def method_returns(self, kind: Kind, name: str) -> SdkType | None:
        return self.methods.get(kind, {}).get(name)

    # ---- values ----------------------------------------------------------------------------

    def bound_expression(self, name: ast.Name) -> ast.expr | None:
        """The expression assigned to `name` by the binding that reaches this read (or None)."""
        binding = self._resolve(name)
        return binding.expr if binding is not None else None

    def value_of(self, expr: ast.AST | None) -> ast.expr | None:
        """The one expression `expr` evaluates to (see the module docstring), else None."""
        found = self.sources(expr)
        return found[0] if len(found) == 1 else None

    def sources(self, expr: ast.AST | None) -> list[ast.expr]:
        """Every expression a name, attribute or call may evaluate to, one step back."""
        if isinstance(expr, ast.Name):
            return self._name_sources(expr, 8)
        if (
            isinstance(expr, ast.Subscript)
            and isinstance(expr.slice, ast.Constant)
            and isinstance(expr.slice.value, str)
        ):
            entries = self.dict_entries(expr.value)  # `CONFIG["key"]`
            entry = entries.get(expr.slice.value) if entries else None
            return [entry] if entry is not None else []
        if isinstance(expr, ast.Attribute):
            return self._attribute_sources(expr)
        if isinstance(expr, ast.Call):
            return self._call_sources(expr)
        if isinstance(expr, ast.NamedExpr):
            return [expr.value]
        return []

    def _name_sources(self, name: ast.Name, depth: int) -> list[ast.expr]:
        found: list[ast.expr] = []
        for binding in self._name_bindings(name):
            expr = binding.expr
            if expr is not None:
                # `b = a`: an alias has the value of the name it copies (when that is known).
                further = (
                    self._name_sources(expr, depth - 1)
                    if isinstance(expr, ast.Name) and depth > 0 and not binding.parts
                    else []
                )
                found += further or [expr]
            elif binding.param is not None:
                found += self._arguments_given(*binding.param)
            elif isinstance(binding.element_of, ast.List | ast.Tuple) and not any(
                isinstance(e, ast.Starred) for e in binding.element_of.elts
            ):
                found += binding.element_of.elts  # `for x in [a, b]`
        return found

    def literal(self, expr: ast.AST | None) -> ast.expr | None:
        """The constant (`ast.Constant`, or `-N`) that `expr` is or evaluates to through
        `value_of` (a name, `Settings.X`, `cfg.x`, `args.x`, `CONFIG["k"]`, a parameter with one
        call site...), else None."""
        for _ in range(8):
            if isinstance(expr, ast.Constant) or (
                isinstance(expr, ast.UnaryOp)
                and isinstance(expr.op, ast.USub)
                and isinstance(expr.operand, ast.Constant)
            ):
                return expr  # type: ignore[return-value]
            if not isinstance(expr, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
                return None
            expr = self.value_of(expr)
        return None

    def mutations(self, name: ast.Name) -> list[tuple[str, Any, ast.expr]]:
        """What was done to the object a name holds after it was bound, as (how, key, value):
        ("item", None, e) for `x.append(e)`, ("items", None, e) for `x.extend(e)` / `x += e` /
        `x.update(e)`, ("set", index or slice, e) for `x[k] = e`, ("attr", name, e) for
        `x.name = e`."""
        found: list[tuple[str, Any, ast.expr]] = []
        for binding in self._name_bindings(name):
            found += binding.parts or ()
        return found

    def function_of(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The `def` a name read refers to (the binding that reaches the read), else None."""
        binding = self._resolve(name)
        return binding.function if binding is not None else None

    def returns(self, function: ast.AST) -> list[ast.expr]:
        return self._returns.get(id(function), [])

    def defines(self, name: str) -> bool:
        """True when the module defines a function or a method called `name` (a call of it may
        return anything its body says)."""
        return name in self._defs or name in self._method_names

    def origins(self, expr: ast.AST | None, limit: int = 200) -> list[ast.expr]:
        """Every expression the value of `expr` is built from (see the module docstring)."""
        if expr is None:
            return []
        key = (id(expr), limit)
        found = self._built_from.get(key)
        if found is None:  # several rules ask about the same expressions
            found = self._built_from[key] = self._origins_of(expr, limit)
        return list(found)  # the caller's own list

    def _origins_of(self, expr: ast.AST, limit: int) -> list[ast.expr]:
        out: list[ast.expr] = []
        seen: set[int] = set()
        stack: list[ast.AST] = [expr]
        while stack and len(out) < limit:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            out.append(node)  # type: ignore[arg-type]
            node_class = node.__class__  # class tests: this runs for every node of every origin
            if node_class is ast.Name:
                for binding in self._name_bindings(node):  # type: ignore[arg-type]
                    if binding.expr is not None:
                        stack.append(binding.expr)
                    for how, _key, part in binding.parts or ():
                        if how != "attr":
                            stack.append(part)
            elif node_class is ast.Constant:
                pass
            elif node_class is ast.BinOp:
                if node.op.__class__ in (ast.Add, ast.Mult):  # type: ignore[attr-defined]
                    stack += (node.right, node.left)  # type: ignore[attr-defined]
            elif node_class is ast.IfExp:
                stack += (node.orelse, node.body)  # type: ignore[attr-defined]
            elif node_class in _ELEMENT_OF:
                stack.append(node.elt)  # type: ignore[attr-defined]
            elif node_class in _ELEMENTS:
                stack.extend(reversed(node.elts))  # type: ignore[attr-defined]
            elif node_class in _WRAPS:
                stack.append(node.value)  # type: ignore[attr-defined]
            elif node_class is ast.Subscript:
                if node.slice.__class__ is ast.Slice:  # type: ignore[attr-defined]
                    stack.append(node.value)  # type: ignore[attr-defined]
            elif node_class is ast.Attribute:
                stack.extend(reversed(self._attribute_sources(node)))  # type: ignore[arg-type]
            elif node_class is ast.Call:
                converted = converted_argument(node)
                if converted is not None:
                    stack.append(converted)
                else:
                    stack.extend(reversed(self._call_sources(node)))
        return out

    def dict_entries(self, expr: ast.AST | None) -> dict[str, ast.expr] | None:
        """String-keyed entries of a dict value, or None when `expr` is not known to be a dict."""
        return self._dict_entries(expr, set())

    def _dict_entries(self, expr: ast.AST | None, seen: set[int]) -> dict[str, ast.expr] | None:
        if expr is None or id(expr) in seen or len(seen) > 64:
            return None
        seen.add(id(expr))
        entries: dict[str, ast.expr] = {}
        if isinstance(expr, ast.Dict):
            for key, value in zip(expr.keys, expr.values, strict=True):
                if key is None:
                    entries.update(self._dict_entries(value, seen) or {})
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    entries[key.value] = value
            return entries
        func = expr.func if isinstance(expr, ast.Call) else None
        if isinstance(expr, ast.Call) and isinstance(func, ast.Name) and func.id == "dict":
            if self._resolve(func) is not None:
                return None  # a local `dict` is not the builtin
            if expr.args:
                entries.update(self._dict_entries(expr.args[0], seen) or {})
            for kw in expr.keywords:
                if kw.arg is None:
                    entries.update(self._dict_entries(kw.value, seen) or {})
                else:
                    entries[kw.arg] = kw.value
            return entries
        if isinstance(expr, ast.Name):
            bindings = self._name_bindings(expr)
            if len(bindings) != 1 or bindings[0].expr is None:
                return None
            found = self._dict_entries(bindings[0].expr, seen)
            if found is None:
                return None
            found = dict(found)
            for how, key, part in bindings[0].parts or ():
                if how == "set" and isinstance(key, ast.Constant) and isinstance(key.value, str):
                    found[key.value] = part
                elif how == "items":
                    found.update(self._dict_entries(part, seen) or {})
            return found
        one = self.value_of(expr) if isinstance(expr, ast.Attribute | ast.Call) else None
        return self._dict_entries(one, seen) if one is not None else None

    # ---- inference internals ---------------------------------------------------------------

    def _resolve(self, node: ast.Name) -> _Binding | None:
        ref = self._names.get(id(node))
        if ref.__class__ is _FreeRef:
            return self._final(ref.scope, ref.name)  # type: ignore[union-attr]
        return ref  # type: ignore[return-value]

    def _name_bindings(self, node: ast.Name) -> list[_Binding]:
        """The binding reaching a read; for a name of an enclosing scope, all of its bindings."""
        ref = self._names.get(id(node))
        if isinstance(ref, _FreeRef):
            scope: _Scope | None = ref.scope
            while scope is not None:
                if scope.kind != "class" and ref.name in scope.history:
                    return scope.history[ref.name]
                scope = scope.parent
            return []
        return [ref] if ref is not None else []

    def _final(self, scope: _Scope | None, name: str) -> _Binding | None:
        """A name's value seen from a nested function: every binding of it must agree."""
        key = (id(scope), name)
        if key in self._finals:
            return self._finals[key]
        found: _Binding | None = None
        while scope is not None:
            if scope.kind != "class" and name in scope.history:
                found = self._agreeing(scope.history[name])
                break
            scope = scope.parent
        if not self._busy:
            # Every read of a module name in every function asks this; an answer given while an
            # inference is in progress may have met a busy (unknown) type, so is not kept.
            self._finals[key] = found
        return found

    def _agreeing(self, bindings: Iterable[_Binding]) -> _Binding | None:
        bindings = list(bindings)
        if len(bindings) == 1:
            return bindings[0]
        seen: set[object] = set()
        for binding in bindings:
            typ = self._binding_type(binding)
            seen.add(binding.qualname or (_shape(typ) if typ is not None else None))
        return bindings[-1] if len(seen) == 1 and None not in seen else None

    def _infer(self, expr: ast.AST) -> SdkType | None:
        expr_class = expr.__class__  # class tests, commonest first: every first query runs this
        if expr_class is ast.Name:
            binding = self._resolve(expr)  # type: ignore[arg-type]
            return self._binding_type(binding) if binding is not None else None
        if expr_class is ast.Constant:
            return None
        if expr_class is ast.Call:
            return self._call_type(expr)  # type: ignore[arg-type]
        if expr_class is ast.Attribute:
            return self._attribute_type(expr)  # type: ignore[arg-type]
        if expr_class is ast.Await:
            inner = self.type_of(expr.value)  # type: ignore[attr-defined]
            if inner is not None and inner.kind in (Kind.COROUTINE, Kind.API_FUTURE):
                return inner.of
            return None
        if isinstance(expr, ast.Subscript):
            base = self.type_of(expr.value)
            if base is not None and base.kind is Kind.LIST:
                return base if isinstance(expr.slice, ast.Slice) else base.of
            if base is not None and base.kind is Kind.TENSOR_DICT:
                return None if isinstance(expr.slice, ast.Slice) else SdkType(Kind.TENSOR_DATA)
            key = expr.slice
            if base is None and isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries = self.dict_entries(expr.value)  # `CONFIG["client"]`
                entry = entries.get(key.value) if entries else None
                return self.type_of(entry) if entry is not None else None
            return None
        if isinstance(expr, ast.List | ast.ListComp):
            elements = [expr.elt] if isinstance(expr, ast.ListComp) else expr.elts
            types = {self.type_of(e) for e in elements}
            if len(types) == 1:
                (only,) = types
                if only is not None:
                    return SdkType(Kind.LIST, only)
            return None
        if isinstance(expr, ast.NamedExpr):
            return self.type_of(expr.value)
        if (
            isinstance(expr, ast.BoolOp)
            and isinstance(expr.op, ast.Or)
            and all(_empty_literal(value) for value in expr.values[1:])
        ):
            # `fb.metrics or {}`: the fallbacks are empty, so the value is the first operand's
            return self.type_of(expr.values[0])
        return None

    def _binding_type(self, binding: _Binding) -> SdkType | None:
        if binding.fixed is not None:
            return binding.fixed
        if binding.param is not None:
            if binding.param not in self._params:
                self._params[binding.param] = self._param_type(*binding.param)
            return self._params[binding.param]
        if binding.element_of is not None:
            typ = self.type_of(binding.element_of)
            return typ.of if typ is not None and typ.kind is Kind.LIST else None
        if binding.expr is None:
            return None
        typ = self.type_of(binding.expr)
        expr = binding.expr
        if typ is None and binding.parts and isinstance(expr, ast.List) and not expr.elts:
            return self._filled_list_type(binding.parts)
        return typ

    def _filled_list_type(self, parts: list[tuple[str, Any, ast.expr]]) -> SdkType | None:
        """`data = []` filled by `data.append(d)` / `data.extend(ds)` / `data += ds`: a list of
        what every addition agrees on (any other mutation, or a disagreement: unknown)."""
        found: SdkType | None = None
        for how, _key, value in parts:
            typ = self.type_of(value)
            if how == "items":
                typ = typ.of if typ is not None and typ.kind is Kind.LIST else None
            elif how != "item":
                return None
            if typ is None or (found is not None and _shape(typ) != _shape(found)):
                return None
            found = typ
        return SdkType(Kind.LIST, found) if found is not None else None

    def _param_type(self, function: str, index: int | None, name: str) -> SdkType | None:
        """`def step(training, batch)` called as `step(train, b)` with `train` a TrainingClient at
        every call site of the module: `training` is a TrainingClient inside `step`."""
        calls = self._calls.get(function)
        if len(self._defs.get(function, ())) != 1 or not calls:
            return None
        found: SdkType | None = None
        for call in calls:
            arg = _keyword(call, name)
            if (
                arg is None
                and index is not None
                and index < len(call.args)
                and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
            ):
                arg = call.args[index]
            if self._uncalled_parameter(arg):
                continue
            typ = self.type_of(arg) if arg is not None else None
            if typ is None or (found is not None and _shape(typ) != _shape(found)):
                return None
            found = typ
        return found

    def _arguments_given(self, function: str, index: int | None, name: str) -> list[ast.expr]:
        """The expressions the module's calls pass for one parameter (empty when any call site
        passes it by `*args`/`**kwargs` or not at all: its value there is unknown)."""
        calls = self._calls.get(function)
        if len(self._defs.get(function, ())) != 1 or not calls:
            return []
        found: list[ast.expr] = []
        for call in calls:
            arg = _keyword(call, name)
            if arg is None and index is not None:
                if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
                    return []
                if index < len(call.args):
                    arg = call.args[index]
            if arg is None:
                return []
            found.append(arg)
        return found

    def _uncalled_parameter(self, arg: ast.expr | None) -> bool:
        """`loss_totals(result, batch)` inside `def batch_loss(result, batch)` that nothing in the
        module calls, decorates or refers to: that call site says nothing either way."""
        # The read's own binding, not `_resolve`: that may infer, and inference comes back here.
        binding = self._names.get(id(arg)) if isinstance(arg, ast.Name) else None
        if not isinstance(binding, _Binding) or binding.param is None:
            return False
        function = binding.param[0]
        defs = self._defs.get(function, ())
        if self._calls.get(function) or len(defs) != 1 or defs[0].decorator_list:
            return False
        key = id(defs[0])
        if key not in self._unreferenced:
            self._unreferenced[key] = not any(
                (ref.name == function) if isinstance(ref, _FreeRef) else (ref.function is defs[0])
                for ref in self._names.values()
            )
        return self._unreferenced[key]

    def _attribute_type(self, node: ast.Attribute) -> SdkType | None:
        owner = self._self_attrs.get(id(node))
        if owner is not None:
            binding = self._agreeing(owner.attributes.get(node.attr, []))
            return self._binding_type(binding) if binding is not None else None
        base = self.type_of(node.value)
        if base is not None:
            return ATTRIBUTES.get((base.kind, node.attr))
        # `Settings.X`, `cfg.x` (dataclass / pydantic default), `args.x`: what it was bound to.
        return self._agreeing_type(self._attribute_sources(node))

    def _agreeing_type(self, exprs: list[ast.expr]) -> SdkType | None:
        found: SdkType | None = None
        for expr in exprs:
            typ = self.type_of(expr)
            if typ is None or (found is not None and _shape(typ) != _shape(found)):
                return None
            found = typ
        return found

    def _call_type(self, call: ast.Call) -> SdkType | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "getattr" and self._resolve(func) is None:
            # `getattr(fb, "metrics", {})` reads the attribute `fb.metrics`
            if 2 <= len(call.args) <= 3 and not call.keywords:
                name = call.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    base = self.type_of(call.args[0])
                    return ATTRIBUTES.get((base.kind, name.value)) if base is not None else None
            return None
        symbol = self.sdk_symbol(func)
        if symbol is not None:
            kind = CLASS_KINDS.get(symbol)
            return SdkType(kind) if kind is not None and kind in CONSTRUCTED_KINDS else None
        if not isinstance(func, ast.Attribute):
            return self._returned_type(call)
        name = func.attr
        recv = self.type_of(func.value)
        if recv is None:
            kind = DISTINCTIVE_METHODS.get(name)
            if kind is not None:
                return self.methods[kind].get(name)
            return self._returned_type(call)
        if recv.is_future and name == "result":
            return recv.of
        if recv.kind is Kind.API_FUTURE and name == "map":
            return SdkType(Kind.API_FUTURE)
        if recv.is_client:
            return self.methods[recv.kind].get(name)
        if recv.kind is Kind.TENSOR_DICT:
            return _tensor_dict_call(call, name)
        return None

    def _returned_type(self, call: ast.Call) -> SdkType | None:
        """A call of a function (or `self.method`) of this module: the type all its `return`s
        agree on."""
        found: SdkType | None = None
        returned = self._call_sources(call)
        if not returned:
            return None
        for expr in returned:
            typ = self.type_of(expr)
            if typ is None or (found is not None and _shape(typ) != _shape(found)):
                return None
            found = typ
        return found

    def _functions_called(self, call: ast.Call) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        func = call.func
        if isinstance(func, ast.Name):
            defs = self._defs.get(func.id, [])
            binding = self._resolve(func)
            if len(defs) == 1 and (binding is None or binding.expr is None):
                return defs
            return []
        if isinstance(func, ast.Attribute):
            owner = self._method_of.get(id(func))
            if owner is not None and func.attr in owner.methods:
                return [owner.methods[func.attr]]
        return []

    def _call_sources(self, call: ast.Call) -> list[ast.expr]:
        functions = self._functions_called(call)
        if functions:
            (function,) = functions
            if isinstance(function, ast.AsyncFunctionDef):
                return []  # calling it makes a coroutine, not the returned value
            return list(self._returns.get(id(function), []))
        func = call.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in _FIELD_CALLS:  # `field(default=x)`, pydantic `Field(x)`
            default = _keyword(call, "default")
            if default is None and name == "Field" and call.args:
                default = call.args[0]
            if default is not None:
                return [default]
            factory = _keyword(call, "default_factory")
            if isinstance(factory, ast.Lambda):
                return [factory.body]
        return []

    def _class_scopes(self, expr: ast.AST | None) -> list[_Scope]:
        """The class(es) of this module an expression names (`Cfg` -> Cfg's scope)."""
        if isinstance(expr, ast.Name):
            scopes = self._classes.get(expr.id, [])
            binding = self._resolve(expr)
            if len(scopes) == 1 and (binding is None or binding.expr is None):
                return scopes
        return []

    def _class_attr(self, scopes: list[_Scope], attr: str) -> list[ast.expr]:
        for scope in scopes:
            bindings = scope.history.get(attr)
            if bindings:
                return [b.expr for b in bindings if b.expr is not None]
        return []

    def _attribute_sources(self, node: ast.Attribute) -> list[ast.expr]:
        attr = node.attr
        owner = self._self_attrs.get(id(node))
        if owner is not None:  # `self.x`: bound in any method, else a class-level value
            bound = [b.expr for b in owner.attributes.get(attr, []) if b.expr is not None]
            if bound or owner.attributes.get(attr):
                return bound
            return [self._field_default(e) for e in self._class_attr([owner], attr)]
        classes = self._class_scopes(node.value)
        if classes:  # `Cfg.x`
            return [self._field_default(e) for e in self._class_attr(classes, attr)]
        if isinstance(node.value, ast.Name):
            bindings = self._name_bindings(node.value)
            if len(bindings) == 1:
                binding = bindings[0]
                if binding.annotation is not None:  # `cfg: Cfg`
                    classes = self._class_scopes(binding.annotation)
                    if classes:
                        return [self._field_default(e) for e in self._class_attr(classes, attr)]
                value = binding.expr
                if isinstance(value, ast.Call):
                    found = self._instance_attribute(value, attr)
                    if found is not None:
                        return found
        return []

    def _instance_attribute(self, call: ast.Call, attr: str) -> list[ast.expr] | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("parse_args", "parse_known_args"):
            if func.attr == "parse_args":
                return list(self._arg_defaults.get(attr, []))
            return None
        classes = self._class_scopes(func)
        if not classes:
            return None
        given = _keyword(call, attr)
        if given is not None:
            return [given]
        if call.args or any(kw.arg is None for kw in call.keywords):
            return []  # positional fields or **kwargs: which field got which value is unknown
        return [self._field_default(e) for e in self._class_attr(classes, attr)]

    def _field_default(self, expr: ast.expr) -> ast.expr:
        if isinstance(expr, ast.Call):
            found = self._call_sources(expr) if _is_field_call(expr) else []
            if len(found) == 1:
                return found[0]
        return expr

    # ---- annotations -----------------------------------------------------------------------

    def annotation_type(self, annotation: ast.expr | None, scope: _Scope) -> SdkType | None:
        """`trio.TrainingClient`, `"trio.TrainingClient"`, `X | None`, `Optional[X]`,
        `APIFuture[X]`, resolved against the names bound in `scope` at this point."""
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                parsed = ast.parse(annotation.value.strip(), mode="eval").body
            except SyntaxError:
                return None
            return self.annotation_type(parsed, scope)
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            for side in (annotation.left, annotation.right):
                if not (isinstance(side, ast.Constant) and side.value is None):
                    typ = self.annotation_type(side, scope)
                    if typ is not None:
                        return typ
            return None
        if isinstance(annotation, ast.Subscript):
            head = dotted_name(annotation.value)
            if head is not None and head.rsplit(".", 1)[-1] == "Optional":
                return self.annotation_type(annotation.slice, scope)
            if head is not None and head.rsplit(".", 1)[-1] in _SEQUENCE_ANNOTATIONS:
                item = self.annotation_type(annotation.slice, scope)  # `list[trio.Datum]`
                return SdkType(Kind.LIST, item) if item is not None else None
            symbol = self._symbol_in(annotation.value, scope)
            if symbol == "APIFuture":
                return SdkType(Kind.API_FUTURE, self.annotation_type(annotation.slice, scope))
            return None
        symbol = self._symbol_in(annotation, scope)
        kind = CLASS_KINDS.get(symbol) if symbol is not None else None
        return SdkType(kind) if kind is not None else None

    def _symbol_in(self, expr: ast.expr, scope: _Scope) -> str | None:
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        binding = scope.lookup_now(head)
        if binding is None or binding.qualname is None:
            return None
        qualname = f"{binding.qualname}.{rest}" if rest else binding.qualname
        return qualname.rsplit(".", 1)[-1] if "." in qualname else None


def _empty_literal(expr: ast.expr) -> bool:
    """`{}`, `[]`, `()`, `None`, `dict()`, `list()`: a fallback that carries no SDK value."""
    if isinstance(expr, ast.Dict):
        return not expr.keys
    if isinstance(expr, ast.List | ast.Tuple):
        return not expr.elts
    if isinstance(expr, ast.Constant):
        return expr.value is None
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id in ("dict", "list")
        and not expr.args
        and not expr.keywords
    )


def _tensor_dict_call(call: ast.Call, name: str) -> SdkType | None:
    """On a `dict[str, TensorData]`: `d.get(key)` (no default, or `None`) gives a TensorData and
    `d.values()` iterates TensorData (typed as a list of them: only iteration is asked)."""
    if call.keywords:
        return None
    if name == "get" and (
        len(call.args) == 1
        or (
            len(call.args) == 2
            and isinstance(call.args[1], ast.Constant)
            and call.args[1].value is None
        )
    ):
        return SdkType(Kind.TENSOR_DATA)
    if name == "values" and not call.args:
        return SdkType(Kind.LIST, SdkType(Kind.TENSOR_DATA))
    return None


def _is_field_call(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name in _FIELD_CALLS


def converted_argument(call: ast.Call) -> ast.expr | None:
    """The container a conversion call copies (`list(x)`, `np.asarray(x)`, `x.tolist()`)."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in _CONVERSION_FUNCS and len(call.args) == 1:
            return call.args[0]
        return None
    if isinstance(func, ast.Attribute):
        if func.attr in _CONVERSION_ATTRS and call.args:
            return call.args[0]
        if func.attr in _SELF_CONVERSIONS and not call.args:
            return func.value
        if func.attr in _SELF_CONVERSIONS and func.attr == "to":
            return func.value
    return None


class ModelView:
    """The model as one rule sees it: every query gets the rule's `pytrio_only`; the rest of the
    model's attributes pass through. (The queries are bound once, as partials: rules ask a lot.)"""

    def __init__(self, model: SemanticModel, pytrio_only: bool) -> None:
        self.model = model
        self.pytrio_only = pytrio_only
        for name in _FILTERED_QUERIES:
            query = getattr(model, name)
            setattr(
                self, name, functools.partial(query, pytrio_only=True) if pytrio_only else query
            )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    if TYPE_CHECKING:  # what the partials above look like to a type checker

        def qualified_name(self, expr: ast.AST | None) -> str | None: ...
        def is_sdk(self, expr: ast.AST, *names: str) -> bool: ...
        def sdk_symbol(self, expr: ast.AST) -> str | None: ...
        def import_binding(self, name: ast.Name) -> Binding | None: ...
        def type_of(self, expr: ast.AST | None) -> SdkType | None: ...
        def kind_of(self, expr: ast.AST | None) -> Kind | None: ...
        def client_call(
            self, call: ast.Call, *, methods: Container[str] | None = None
        ) -> tuple[Kind, str] | None: ...


_FILTERED_QUERIES = (
    "qualified_name",
    "is_sdk",
    "sdk_symbol",
    "import_binding",
    "type_of",
    "kind_of",
    "client_call",
)


# ---------------------------------------------------------------------------------------------
# The pass that records bindings and which binding each read sees


# Fields that never hold a node, and node classes without children: `ast.NodeVisitor` looks at
# each of them for every node; the pass below skips them (same visiting order otherwise).
_SCALAR_FIELDS = frozenset(
    {"ctx", "id", "attr", "arg", "type_comment", "kind", "level", "module", "conversion"}
    | {"is_async", "simple", "tag", "op", "ops"}
)


class Leave:
    """The end of a recorded node's subtree in `SemanticModel.events`."""

    __slots__ = ("node",)

    def __init__(self, node: ast.AST) -> None:
        self.node = node


# What `build_model(events_for=...)` records of a node class: the node, or the node and its Leave.
ENTER, ENTER_AND_LEAVE = 1, 2
# Nodes the pass passes by, visiting their children itself: recorded on entry only (a Leave would
# need each passing place to add one), so `leave_X` hooks are refused for these classes.
PASSED_BY = frozenset(
    {ast.arguments, ast.keyword, ast.comprehension, ast.withitem}
    | {ast.Attribute, ast.Tuple, ast.List, ast.Starred}
)
# Operators and expression contexts (`Add`, `Load`): fields the pass never looks at, so never
# recorded; a rule reads them on the node that holds them (`node.op`, `node.ctx`).
UNRECORDED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
_NOTHING: dict[type, int] = {}


class _Pass(ast.NodeVisitor):
    def __init__(self, model: SemanticModel, marks: dict[type, int]) -> None:
        self.m = model
        self.scope = model.module_scope
        # The nodes of `marks`' classes in visiting order, so that the rules' dispatch needs no
        # second walk of the tree. Every node is recorded once: the parts of the tree the pass
        # does not visit (parameters, annotations, binding targets) are recorded where it passes
        # them by (`_record` / `_mark`).
        self.marks = marks
        self.events: list[Any] = []

    def visit(self, node: ast.AST) -> None:
        node_class = node.__class__
        mark = self.marks.get(node_class)
        if mark:
            self.events.append(node)
        (_HOOKS.get(node_class) or _hook(node_class))(self, node)
        if mark == ENTER_AND_LEAVE:
            self.events.append(Leave(node))

    def _mark(self, node: ast.AST) -> None:
        """Record a node the pass passes by without visiting (its children are seen to)."""
        if self.marks.get(node.__class__):
            self.events.append(node)

    def _leaf(self, name: ast.Name) -> None:
        """Record a name the pass binds (no recorded children: its context is not recorded)."""
        mark = self.marks.get(ast.Name)
        if mark:
            self.events.append(name)
            if mark == ENTER_AND_LEAVE:
                self.events.append(Leave(name))

    def _record(self, node: ast.AST | None) -> None:
        """Record a subtree the pass does not visit (an annotation, a parameter, a name bound)."""
        if node is None or not self.marks:
            return
        node_class = node.__class__
        mark = self.marks.get(node_class)
        if mark:
            self.events.append(node)
        for name in _fields(node_class):
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self._record(item)
            elif isinstance(value, ast.AST):
                self._record(value)
        if mark == ENTER_AND_LEAVE:
            self.events.append(Leave(node))

    def visit_Constant(self, node: ast.Constant) -> None:
        """No children. (Without this, `ast.NodeVisitor.visit_Constant`, a shim looking for
        the deprecated `visit_Num`/`visit_Str` hooks, would run for every constant.)"""

    def generic_visit(self, node: ast.AST) -> None:
        # `visit` inlined: this runs for most nodes of every unit.
        hooks, marks, events = _HOOKS, self.marks, self.events
        for name in _fields(node.__class__):
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    item_class = item.__class__
                    mark = marks.get(item_class)
                    if mark:
                        events.append(item)
                    (hooks.get(item_class) or _hook(item_class))(self, item)
                    if mark == ENTER_AND_LEAVE:
                        events.append(Leave(item))
            elif value is not None:
                value_class = value.__class__
                mark = marks.get(value_class)
                if mark:
                    events.append(value)
                (hooks.get(value_class) or _hook(value_class))(self, value)
                if mark == ENTER_AND_LEAVE:
                    events.append(Leave(value))

    # ---- scopes --------------------------------------------------------------------------------

    def _push(self, kind: str, node: ast.AST | None = None) -> None:
        self.scope = _Scope(kind, self.scope, node)

    def _pop(self) -> None:
        done = self.scope
        parent = done.parent
        assert parent is not None
        for key, name in done.pending:
            if done.kind != "class" and name in done.history:
                self.m._names[key] = _UNKNOWN  # a local read before its first binding
            elif done.kind == "comprehension" and name in parent.current:
                self.m._names[key] = parent.current[name]  # comprehensions run right away
            elif done.kind == "comprehension" and parent.kind != "module":
                parent.pending.append((key, name))
            else:
                self.m._names[key] = _FreeRef(parent, name)
        self.scope = parent

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
        self._mark(node.args)  # before the defaults, which it holds
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)
        outer = self.scope
        plain = not isinstance(node, ast.Lambda) and outer.kind != "class"
        # A method without decorators: its parameters after `self` are typed from the calls
        # `x.name(...)` of the module, keyed ".name" (when one method has that name).
        method = (
            not isinstance(node, ast.Lambda)
            and outer.kind == "class"
            and not node.decorator_list
            and bool(node.args.args)
        )
        if not isinstance(node, ast.Lambda):
            outer.bind(node.name, _Binding(function=node))
            if plain:
                self.m._defs.setdefault(node.name, []).append(node)
            elif outer.kind == "class":
                outer.methods[node.name] = node
                self.m._method_names.add(node.name)
                self.m._defs.setdefault("." + node.name, []).append(node)
        positional = [*node.args.posonlyargs, *node.args.args]
        if method:
            positional = positional[1:]
        if not isinstance(node, ast.Lambda):
            self._record(node.returns)
        self._push("function", node)
        for arg in _params(node.args):
            self._record(arg)  # with its annotation; the defaults were visited above
            fixed = self.m.annotation_type(arg.annotation, outer)
            if fixed is not None:
                self.scope.bind(arg.arg, _Binding(fixed=fixed))
            elif (
                (plain or (method and arg is not node.args.args[0]))
                and arg.annotation is None
                and arg not in (node.args.vararg, node.args.kwarg)
            ):
                index = positional.index(arg) if arg in positional else None
                key = node.name if plain else "." + node.name  # type: ignore[union-attr]
                self.scope.bind(arg.arg, _Binding(param=(key, index, arg.arg)))
            else:
                self.scope.bind(arg.arg, _Binding(annotation=arg.annotation))
        if isinstance(node, ast.Lambda):
            self.visit(node.body)
        else:
            for stmt in node.body:
                self.visit(stmt)
        self._pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases):
            self.visit(expr)
        for keyword in node.keywords:
            self._mark(keyword)
            self.visit(keyword.value)
        self.scope.bind(node.name, _UNKNOWN)
        self._push("class", node)
        self.m._classes.setdefault(node.name, []).append(self.scope)
        for stmt in node.body:
            self.visit(stmt)
        self._pop()

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        self._mark(node.generators[0])
        self.visit(node.generators[0].iter)  # evaluated in the enclosing scope
        self._push("comprehension", node)
        for index, generator in enumerate(node.generators):
            if index:
                self._mark(generator)
                self.visit(generator.iter)
            self._bind(generator.target, self._element_binding(generator.iter))
            for condition in generator.ifs:
                self.visit(condition)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self._pop()

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_GeneratorExp = _comprehension
    visit_DictComp = _comprehension

    # ---- reads ---------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            self.m._calls.setdefault(func.id, []).append(node)
        elif isinstance(func, ast.Attribute):
            self.m._calls.setdefault("." + func.attr, []).append(node)
            if func.attr == "add_argument":
                self._add_argument(node)
            elif func.attr in _ITEM_METHODS or func.attr in _ITEMS_METHODS:
                self._mutation(func, node)
        self.generic_visit(node)

    def _mutation(self, func: ast.Attribute, call: ast.Call) -> None:
        if not isinstance(func.value, ast.Name) or not call.args:
            return
        binding = self.scope.lookup_now(func.value.id)
        if binding is None or binding is _UNKNOWN or binding.expr is None:
            return
        how = "items" if func.attr in _ITEMS_METHODS else "item"
        value = call.args[-1]
        if binding.parts is None:
            binding.parts = []
        binding.parts.append((how, None, value))

    def _add_argument(self, call: ast.Call) -> None:
        default = _keyword(call, "default")
        if default is None:
            return
        dest_expr = _keyword(call, "dest")
        dest: str | None = None
        if isinstance(dest_expr, ast.Constant) and isinstance(dest_expr.value, str):
            dest = dest_expr.value
        else:
            flags = [
                arg.value
                for arg in call.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
            longs = [f for f in flags if f.startswith("--")]
            chosen = longs[0] if longs else (flags[0] if flags else None)
            if chosen is not None:
                dest = chosen.lstrip("-").replace("-", "_")
        if dest:
            self.m._arg_defaults.setdefault(dest, []).append(default)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.visit(node.value)
            scope: _Scope | None = self.scope
            while scope is not None and scope.kind == "comprehension":
                scope = scope.parent
            if scope is not None and isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.m._returns.setdefault(id(scope.node), []).append(node.value)

    def visit_Name(self, node: ast.Name) -> None:
        if node.ctx.__class__ is not ast.Load:
            return
        scope = self.scope
        binding = scope.current.get(node.id)
        if binding is not None:
            self.m._names[id(node)] = binding
        elif scope.kind == "module":
            pass  # read before any binding: unknown
        elif scope.kind == "class":
            found = scope.lookup_now(node.id)
            if found is not None:
                self.m._names[id(node)] = found
        else:
            scope.pending.append((id(node), node.id))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            owner = self._method_class()
            if owner is not None:
                self.m._self_attrs[id(node)] = owner
                self.m._method_of[id(node)] = owner
        self.visit(node.value)  # its one child

    def _method_class(self) -> _Scope | None:
        scope: _Scope | None = self.scope
        while scope is not None and scope.kind in ("function", "comprehension"):
            if (
                scope.kind == "function"
                and scope.parent is not None
                and scope.parent.kind == "class"
            ):
                return scope.parent
            scope = scope.parent
        return None

    # ---- bindings ------------------------------------------------------------------------------

    def _element_binding(self, iterable: ast.expr) -> _Binding:
        # Typed when a rule asks (`_binding_type`), not now: see `_Binding.element_of`.
        return _Binding(element_of=iterable)

    def _unpacked(self, binding: _Binding, count: int) -> list[_Binding]:
        """`for d, out in zip(batch, fb.loss_fn_outputs)` / `for i, out in enumerate(...)`: each
        target walks one of the iterables (typed lazily, like any loop target)."""
        walked = binding.element_of
        if (
            isinstance(walked, ast.Call)
            and isinstance(walked.func, ast.Name)
            and walked.func.id in ("zip", "enumerate")
            and self.scope.lookup_now(walked.func.id) is None  # the builtin
            and not any(isinstance(a, ast.Starred) for a in walked.args)
            and all(kw.arg in ("strict", "start") for kw in walked.keywords)
        ):
            if walked.func.id == "zip" and len(walked.args) == count:
                return [_Binding(element_of=arg) for arg in walked.args]
            if walked.func.id == "enumerate" and walked.args and count == 2:
                return [_UNKNOWN, _Binding(element_of=walked.args[0])]
        if (
            count == 2
            and isinstance(walked, ast.Call)
            and isinstance(walked.func, ast.Attribute)
            and walked.func.attr == "items"
            and not walked.args
            and not walked.keywords
        ):
            # `for key, value in d.items()`: the value walks `d.values()` (a node made here for
            # the lazy typing only; rules never see it).
            values = ast.Call(
                func=ast.Attribute(value=walked.func.value, attr="values", ctx=ast.Load()),
                args=[],
                keywords=[],
            )
            return [_UNKNOWN, _Binding(element_of=values)]
        return [_UNKNOWN] * count

    def _bind(self, target: ast.expr, binding: _Binding, value: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            self._leaf(target)
            self.scope.bind(target.id, binding)
        elif isinstance(target, ast.Tuple | ast.List):
            self._mark(target)
            parts = self._unpacked(binding, len(target.elts))
            for element, part in zip(target.elts, parts, strict=True):
                self._bind(element, part)
        elif isinstance(target, ast.Starred):
            self._mark(target)
            self._bind(target.value, _UNKNOWN)
        elif isinstance(target, ast.Attribute):
            self._mark(target)
            self.visit(target.value)
            if isinstance(target.value, ast.Name) and target.value.id == "self":
                owner = self._method_class()
                if owner is not None:
                    owner.attributes.setdefault(target.attr, []).append(binding)
            elif isinstance(target.value, ast.Name) and value is not None:
                held = self.scope.lookup_now(target.value.id)  # `params.max_tokens = 64`
                if held is not None and held is not _UNKNOWN:
                    if held.parts is None:
                        held.parts = []
                    held.parts.append(("attr", target.attr, value))
        else:  # subscripts: the container is read, and (for a name) mutated
            self.visit(target)
            if (
                value is not None
                and isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
            ):
                held = self.scope.lookup_now(target.value.id)
                if held is not None and held is not _UNKNOWN:
                    if held.parts is None:
                        held.parts = []
                    held.parts.append(("set", target.slice, value))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        binding = _Binding(expr=node.value)
        for target in node.targets:
            self._bind(target, binding, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self._record(node.annotation)
        fixed = self.m.annotation_type(node.annotation, self.scope)
        if fixed is not None:
            self._bind(node.target, _Binding(expr=node.value, fixed=fixed))
        elif node.value is not None:
            self._bind(
                node.target, _Binding(expr=node.value, annotation=node.annotation), node.value
            )
        elif self.scope.kind != "class":
            self._bind(node.target, _Binding(annotation=node.annotation))
        else:
            self._record(node.target)  # a class field declared, not bound

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if not isinstance(node.target, ast.Name):
            self.visit(node.target)
            return
        self._leaf(node.target)
        # `futures += [...]` keeps the name's type; a read of the name is recorded here.
        held = self.scope.current.get(node.target.id)
        if held is not None:
            self.m._names[id(node.target)] = held
            if held is not _UNKNOWN and isinstance(node.op, ast.Add):
                if held.parts is None:
                    held.parts = []
                held.parts.append(("items", None, node.value))

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._leaf(node.target)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent  # the walrus binds in the enclosing function
        scope.bind(node.target.id, _Binding(expr=node.value))

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._bind(node.target, self._element_binding(node.iter))
        for stmt in (*node.body, *node.orelse):
            self.visit(stmt)

    visit_For = _for
    visit_AsyncFor = _for

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self._mark(item)
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind(item.optional_vars, _UNKNOWN)
        for stmt in node.body:
            self.visit(stmt)

    visit_With = _with
    visit_AsyncWith = _with

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.scope.bind(node.name, _UNKNOWN)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        self._import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._import(node)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            self.m.from_modules.add(node.module)
        sdk = dict(bindings_of_import(node, self.m.sdk_modules))
        for alias in node.names:
            self._record(alias)
            local = alias.asname or alias.name.partition(".")[0]
            if local == "*":
                continue
            found = sdk.get(local)
            if found is not None:
                self.scope.bind(local, _Binding(qualname=found.qualname, origin=found.origin))
                if self.scope.kind == "module":
                    self.m._origins.add(found.origin)
            else:
                self.scope.bind(local, _UNKNOWN)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.scope.bind(name, _UNKNOWN)

    visit_Nonlocal = visit_Global


# Node class -> the `_Pass` method that visits it (`visit_X`, or generic_visit), found once per
# class. Plain functions, not the pass's bound methods: a table of those on the pass would tie
# the pass, and through it the unit's tree and model, into a reference cycle that only the
# garbage collector frees.
_HOOKS: dict[type, Callable[[_Pass, Any], None]] = {}


def _hook(node_class: type) -> Callable[[_Pass, Any], None]:
    if issubclass(node_class, ast.AST):
        hook = getattr(_Pass, "visit_" + node_class.__name__, _Pass.generic_visit)
    else:
        hook = _no_children  # names in `global a, b` and the like
    _HOOKS[node_class] = hook
    return hook


def _no_children(visitor: _Pass, value: object) -> None:
    pass


@functools.cache
def _fields(node_class: type) -> tuple[str, ...]:
    """The fields of a node class that may hold nodes the pass has a use for (operators and
    expression contexts have no `visit_X` here and no children)."""
    if node_class is ast.Constant:
        return ()
    return tuple(f for f in node_class._fields if f not in _SCALAR_FIELDS)


_PASS_RECURSION_LIMIT = 20_000


def build_model(
    tree: ast.Module,
    sdk_modules: Sequence[str] = ("pytrio",),
    version: str = "0.2",
    seed: dict[str, Binding] | dict[str, str] | None = None,
    *,
    events_for: dict[type, int] | None = None,
) -> SemanticModel:
    """Run the one pass over `tree`; the result answers queries about its expressions.
    `version` is the target SDK version (its line, "0.1" or "0.2", picks the method table).
    `seed` maps names bound before this code runs (earlier notebook cells) to their SDK binding
    (or to a canonical name)."""
    line = "0.1" if str(version).startswith("0.1") else "0.2"
    model = SemanticModel(sdk_modules, line)
    inference = _Pass(model, events_for or _NOTHING)
    for name, given in (seed or {}).items():
        bound = Binding(given, given.partition(".")[0]) if isinstance(given, str) else given
        model.module_scope.bind(name, _Binding(qualname=bound.qualname, origin=bound.origin))
        model._origins.add(bound.origin)
    # The pass recurses once or twice per AST level, and generated tables nest deeper than the
    # default 1,000 frames allow (sympy's resolvent_lookup.py: 568 levels). Python-to-Python
    # calls do not grow the C stack on 3.11+, so a higher limit is safe; it is only ever raised,
    # never put back, because other threads may be deep in a pass of their own.
    if sys.getrecursionlimit() < _PASS_RECURSION_LIMIT:
        sys.setrecursionlimit(_PASS_RECURSION_LIMIT)
    inference.visit(tree)
    model.events = inference.events
    model._finish()
    return model
