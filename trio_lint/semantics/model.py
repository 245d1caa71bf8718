"""The semantic model of one unit (a module, a notebook's cells, a Markdown block): built by one
`ast` pass before any rule runs, then queried by every rule.

Where it lives (ruff's model: parts the model owns, filled by one pass, read by queries):
- `binder.py`: the pass (`build_model`), which fills the parts below through their methods;
- the parts, each a class with its own declared state: `Scope`s of `NameBinding`s and the
  `References` of each read (`scopes.py`), `Definitions` (`definitions.py`: functions, classes,
  calls, returns), `Imports` (`names.py`), the `Catalogue` of a document block (`documents.py`);
- the queries: this module (names and imports, receivers, resolving a read to its binding) and
  the analyses it calls, functions of the model: `inference.py` (types) and `values.py` (value
  flow), each with its own memo (`TypeMemo`, `ValueMemo`) that the model owns.

Rules reach it as `self.model` (a view that passes the rule's `pytrio_only` to every query) or as
`self.ctx.model` (the model itself; pass `pytrio_only=` where it matters). Queries:

Names and imports
- `qualified_name(expr)` -> canonical `"pytrio.ModelInput.from_ints"` for an SDK name or attribute
  chain however it was imported (`import pytrio as t`, `from pytrio.types import X as Y`,
  `tinker.X` with `sdk-modules = ["pytrio", "tinker"]`, `MI = trio.ModelInput`), else None.
- `is_sdk(expr, "Datum", ...)`, `sdk_symbol(expr)` (-> "Datum"), `import_binding(name_node)`.
- `sdk_alias()`: the module-level name bound to the SDK module itself (for fixes writing `trio.X`).
- `imports_sdk`, `other_sdk_only` (imports tinker and not pytrio, at any depth), `sdk` (the
  SDK the unit is written for: "pytrio", "tinker"), `module_imports()`.

Receivers (what an expression holds: clients, futures, SDK results; see `receivers.py` for kinds)
- `type_of(expr)` -> `SdkType | None`, `kind_of(expr)` -> `Kind | None`. A list started empty
  and filled by `.append`/`.extend`/`+=` holds what every addition agrees on; a
  `dict[str, TensorData]` gives TensorData through `[key]`, `.get(key)`, `.values()`, `.items()`.
- `client_call(call)` -> (client kind, method) for `recv.m(...)` on a PyTRIO client.
- `method_returns(kind, name)` -> what a client method returns on the target SDK line.
- `listed(expr)`: a line of a Markdown block that lists one object's members, one per line
  (`documents.py`): no program runs it, and its receiver keeps no type from earlier blocks.

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
  `return` statements give (not those of nested functions); `calls_of(name)`: every `name(...)`
  call of the unit; `defines(name)`: the unit defines a function or method of that name.

Unknown never matches: every query answers None / empty rather than guess.

The model keeps no rule's state: an analysis several codes share is one checker
(`rules/base.py` `Checker`) reporting each code.
"""

from __future__ import annotations

import ast
from collections.abc import Container, Sequence
from typing import Any

from trio_lint.semantics import inference, values
from trio_lint.semantics.definitions import Definitions, FunctionNode
from trio_lint.semantics.documents import NOT_A_CATALOGUE, Catalogue
from trio_lint.semantics.names import (
    CANONICAL_ROOT,
    Binding,
    Imports,
    normalize,
)
from trio_lint.semantics.queries import TypeMemo, ValueMemo
from trio_lint.semantics.receivers import (
    DISTINCTIVE_METHODS,
    Kind,
    SdkType,
    attribute_table,
    method_table,
)
from trio_lint.semantics.scopes import (
    NOT_YET,
    FreeRef,
    FunctionBinding,
    ImportBinding,
    NameBinding,
    References,
    Scope,
)

__all__ = ["ModelView", "ModuleNames", "SemanticModel"]


# ---------------------------------------------------------------------------------------------
# The model


class SemanticModel:
    """Everything rules ask about one unit. Build it with `binder.build_model(tree, ...)`."""

    def __init__(self, sdk_modules: Sequence[str], version: str) -> None:
        # What the unit is checked against: the SDK's module names and release, and that
        # release's tables (shared by every unit: read them, never change them).
        self.sdk_modules: tuple[str, ...] = tuple(sdk_modules)
        self.version = version
        self.methods: dict[Kind, dict[str, SdkType]] = method_table(version)
        self.attributes: dict[tuple[Kind, str], SdkType] = attribute_table(version)
        # The parts the pass fills (`binder.py`).
        self.module_scope = Scope("module", None)
        self.references = References()
        self.definitions = Definitions()
        self.imports = Imports()
        # A block of a document that lists one object's members (`documents.py`).
        self.catalogue: Catalogue = NOT_A_CATALOGUE
        self.carried: dict[str, SdkType] = {}  # its receiver's type from earlier blocks
        # `build_model(events_for=...)`: the nodes of those classes, and `Leave`s, in the order
        # the pass met them (the rules' dispatch order). `Any`: the dispatch reads each node as
        # the class it tests it for (`node.func` after `node_class is ast.Call`).
        self.events: list[Any] = []
        # The queries' memos (unknown is an answer too: None is cached, `NOT_YET` is a miss).
        self.type_memo = TypeMemo()
        self.value_memo = ValueMemo()
        self._types: dict[int, SdkType | None] = {}  # id(expr) -> `type_of`
        self._inferring: set[int] = set()  # id(expr) of the `type_of`s under way
        self._finals: dict[tuple[int, str], NameBinding | None] = {}  # (id(scope), name)
        self._qualnames: dict[int, tuple[str, str] | None] = {}  # normalized
        self._client_calls: dict[int, tuple[Kind, str] | None] = {}

    # ---- names and imports -----------------------------------------------------------------

    @property
    def imports_sdk(self) -> bool:
        return self.imports.imports_sdk

    @property
    def other_sdk_only(self) -> bool:
        """Code that imports another SDK module (tinker) and not pytrio is not PyTRIO code; code
        that imports no SDK at all (a helper handed its clients) counts as PyTRIO code."""
        return self.imports.other_only

    @property
    def sdk(self) -> str:
        """The SDK the unit is written for: "pytrio", or the one other SDK module it imports
        (anywhere) without importing pytrio ("tinker"); "other" for several such modules."""
        return self.imports.sdk

    @property
    def from_modules(self) -> set[str]:
        """Modules named by `from X import ...` statements anywhere in the unit."""
        return self.imports.from_modules

    def module_imports(self) -> ModuleNames:
        """Module-level SDK names at the end of the unit (seed for the next block of a Markdown
        document); `.typed()` adds, on demand, the module-level names the model types."""
        return ModuleNames(
            {
                name: Binding(b.qualname, b.origin or CANONICAL_ROOT)
                for name, b in self.module_scope.current.items()
                if b.qualname is not None
            },
            self,
        )

    def module_types(self) -> dict[str, SdkType]:
        """Module-level names whose SDK type is known at the end of the unit (a client, a result,
        its metrics), however bound: by this unit or by the seed of an earlier one."""
        typed: dict[str, SdkType] = {}
        for name, binding in self.module_scope.current.items():
            if isinstance(binding, ImportBinding | FunctionBinding):
                continue
            typ = inference.binding_type(self, binding)
            if typ is not None:
                typed[name] = typ
        for name, typ in self.carried.items():
            typed.setdefault(name, typ)
        return typed

    def sdk_alias(self) -> str | None:
        for name, binding in reversed(self.module_scope.current.items()):
            if binding.qualname == CANONICAL_ROOT:
                return name
        return None

    def import_binding(self, name: ast.Name, *, pytrio_only: bool = False) -> Binding | None:
        """The SDK import a name read resolves to (None for anything else)."""
        binding = self.resolve(name)
        if binding is None or binding.qualname is None:
            return None
        if pytrio_only and binding.origin not in (None, CANONICAL_ROOT):
            return None
        return Binding(binding.qualname, binding.origin or CANONICAL_ROOT)

    def qualified_name(self, expr: ast.AST | None, *, pytrio_only: bool = False) -> str | None:
        """Canonical `pytrio.X.y` for an expression naming an SDK symbol, else None."""
        key = id(expr)
        found = self._qualnames.get(key, NOT_YET)
        if found is NOT_YET:
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
        # Class tests: this runs for most names and attributes, and `isinstance` costs a call
        # per test. A type checker does not narrow on them: `node` is `expr` typed `Any`.
        node: Any = expr
        expr_class = node.__class__
        if expr_class is ast.Name:
            binding = self.resolve(node)
            if binding is None:
                return None
            if binding.qualname is not None:
                return binding.qualname, binding.origin or CANONICAL_ROOT
            value = binding.expr
            if depth < 8 and isinstance(value, ast.Name | ast.Attribute):
                return self._qualified(value, depth + 1)  # `MI = trio.ModelInput`
            return None
        if expr_class is ast.Attribute:
            base = self._qualified(node.value, depth)
            return (f"{base[0]}.{node.attr}", base[1]) if base is not None else None
        return None

    def is_sdk(self, expr: ast.AST, *names: str, pytrio_only: bool = False) -> bool:
        """True if `expr` resolves to `pytrio.<name>` for one of `names` (e.g. "SamplingParams")."""
        qualname = self.qualified_name(expr, pytrio_only=pytrio_only)
        return qualname is not None and qualname.removeprefix(CANONICAL_ROOT + ".") in names

    def call_symbol(self, func: ast.expr) -> str | None:
        """`Datum` / `ModelInput.from_ints` when a callee names that SDK symbol (the key of
        `LooksAt.sdk_calls`; `is_sdk(func, key)` holds for it whatever the rule's view)."""
        qualname = self.qualified_name(func)
        if qualname is None:
            return None
        return qualname.removeprefix(CANONICAL_ROOT + ".")

    def calls_of(self, name: str) -> list[ast.Call]:
        """Every call `name(...)` in the unit, in source order."""
        return self.definitions.calls(name)

    def sdk_symbol(self, expr: ast.AST, *, pytrio_only: bool = False) -> str | None:
        """`AdamParams` when `expr` names the SDK's AdamParams however it was imported."""
        qualname = self.qualified_name(expr, pytrio_only=pytrio_only)
        if qualname is None or "." not in qualname:
            return None
        return qualname.rsplit(".", 1)[-1]

    # ---- resolving a read ------------------------------------------------------------------

    def resolve(self, node: ast.Name) -> NameBinding | None:
        """The binding a name read sees; for a name of an enclosing scope, the one binding all
        of its bindings agree on (None: unknown, or not bound in the unit)."""
        ref = self.references.get(node)
        if isinstance(ref, FreeRef):
            return self._final(ref.scope, ref.name)
        return ref

    def name_bindings(self, node: ast.Name) -> list[NameBinding]:
        """The binding reaching a read; for a name of an enclosing scope, all of its bindings."""
        ref = self.references.get(node)
        if isinstance(ref, FreeRef):
            scope: Scope | None = ref.scope
            while scope is not None:
                if scope.kind != "class" and ref.name in scope.history:
                    return scope.history[ref.name]
                scope = scope.parent
            return []
        return [ref] if ref is not None else []

    def _final(self, scope: Scope | None, name: str) -> NameBinding | None:
        """A name's value seen from a nested function: every binding of it must agree."""
        key = (id(scope), name)
        if key in self._finals:
            return self._finals[key]
        found: NameBinding | None = None
        while scope is not None:
            if scope.kind != "class" and name in scope.history:
                found = inference.agreeing(self, scope.history[name])
                break
            scope = scope.parent
        if not self._inferring:
            # Every read of a module name in every function asks this; an answer given while an
            # inference is in progress may have met a busy (unknown) type, so is not kept.
            self._finals[key] = found
        return found

    # ---- receivers -------------------------------------------------------------------------

    def _hidden(self, pytrio_only: bool) -> bool:
        return pytrio_only and self.imports.other_only

    def type_of(self, expr: ast.AST | None, *, pytrio_only: bool = False) -> SdkType | None:
        if expr is None or (pytrio_only and self.imports.other_only):  # `_hidden`, inlined: hot
            return None
        key = id(expr)
        found = self._types.get(key, NOT_YET)
        if found is not NOT_YET:
            return found
        if key in self._inferring:
            return None
        self._inferring.add(key)
        try:
            result = inference.infer(self, expr)
        finally:
            self._inferring.discard(key)
        self._types[key] = result
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
        found: tuple[Kind, str] | None
        if recv is not None:
            found = (recv.kind, func.attr) if recv.is_client else None
        else:
            kind = DISTINCTIVE_METHODS.get(func.attr) or inference.matched_kind(self, call)
            found = (kind, func.attr) if kind is not None else None
        self._client_calls[key] = found
        return found

    def method_returns(self, kind: Kind, name: str) -> SdkType | None:
        return self.methods.get(kind, {}).get(name)

    def listed(self, expr: ast.AST) -> bool:
        """`expr` is a line of a catalogue block (`rest.list_training_runs()  # runs` among
        other members of `rest`, nothing run): documentation of an API, not a program."""
        return id(expr) in self.catalogue.lines

    # ---- values (`values.py`) --------------------------------------------------------------

    def bound_expression(self, name: ast.Name) -> ast.expr | None:
        return values.bound_expression(self, name)

    def value_of(self, expr: ast.AST | None) -> ast.expr | None:
        return values.value_of(self, expr)

    def sources(self, expr: ast.AST | None) -> list[ast.expr]:
        return values.sources(self, expr)

    def literal(self, expr: ast.AST | None) -> ast.expr | None:
        return values.literal(self, expr)

    def mutations(self, name: ast.Name) -> list[tuple[str, Any, ast.expr]]:
        return values.mutations(self, name)

    def function_of(self, name: ast.Name) -> FunctionNode | None:
        return values.function_of(self, name)

    def returns(self, function: ast.AST) -> list[ast.expr]:
        """The expressions `function`'s `return` statements give (not its nested functions')."""
        return self.definitions.returns(function)

    def defines(self, name: str) -> bool:
        """True when the module defines a function or a method called `name` (a call of it may
        return anything its body says)."""
        return self.definitions.defines(name)

    def origins(self, expr: ast.AST | None, limit: int = 200) -> list[ast.expr]:
        return values.origins(self, expr, limit)

    def dict_entries(self, expr: ast.AST | None) -> dict[str, ast.expr] | None:
        return values.dict_entries(self, expr)


class ModuleNames(dict[str, Binding]):
    """What a unit leaves to the next one: its SDK imports (name -> `Binding`), and the names its
    model types, asked only when a document continues (`typed()`): a Markdown block is checked
    with the names earlier blocks bound, as doctest continues a session."""

    def __init__(self, imports: dict[str, Binding], model: SemanticModel) -> None:
        super().__init__(imports)
        self._model = model

    def typed(self) -> dict[str, SdkType]:
        return self._model.module_types()


class ModelView:
    """The model as one rule sees it: the queries that hide another SDK's names answer with the
    rule's `pytrio_only` unless the call gives its own (`_FILTERED_QUERIES`), the value queries
    pass through (`_VALUE_QUERIES`), and nothing else of the model is reachable from a rule.
    Each query is a method, so a type checker sees every one; a method costs a rule's query
    no more than the partial it replaces."""

    __slots__ = ("model", "pytrio_only")

    def __init__(self, model: SemanticModel, pytrio_only: bool) -> None:
        self.model = model
        self.pytrio_only = pytrio_only

    @property
    def other_sdk_only(self) -> bool:
        return self.model.other_sdk_only

    # ---- answering with the rule's `pytrio_only` (or the one a call gives) -------------------

    def qualified_name(
        self, expr: ast.AST | None, *, pytrio_only: bool | None = None
    ) -> str | None:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.qualified_name(expr, pytrio_only=flag)

    def is_sdk(self, expr: ast.AST, *names: str, pytrio_only: bool | None = None) -> bool:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.is_sdk(expr, *names, pytrio_only=flag)

    def sdk_symbol(self, expr: ast.AST, *, pytrio_only: bool | None = None) -> str | None:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.sdk_symbol(expr, pytrio_only=flag)

    def import_binding(self, name: ast.Name, *, pytrio_only: bool | None = None) -> Binding | None:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.import_binding(name, pytrio_only=flag)

    def type_of(self, expr: ast.AST | None, *, pytrio_only: bool | None = None) -> SdkType | None:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.type_of(expr, pytrio_only=flag)

    def kind_of(self, expr: ast.AST | None, *, pytrio_only: bool | None = None) -> Kind | None:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.kind_of(expr, pytrio_only=flag)

    def client_call(
        self,
        call: ast.Call,
        *,
        pytrio_only: bool | None = None,
        methods: Container[str] | None = None,
    ) -> tuple[Kind, str] | None:
        flag = self.pytrio_only if pytrio_only is None else pytrio_only
        return self.model.client_call(call, pytrio_only=flag, methods=methods)

    # ---- the same for every rule -----------------------------------------------------------

    def sdk_alias(self) -> str | None:
        return self.model.sdk_alias()

    def calls_of(self, name: str) -> list[ast.Call]:
        return self.model.calls_of(name)

    def method_returns(self, kind: Kind, name: str) -> SdkType | None:
        return self.model.method_returns(kind, name)

    def listed(self, expr: ast.AST) -> bool:
        return self.model.listed(expr)

    def bound_expression(self, name: ast.Name) -> ast.expr | None:
        return values.bound_expression(self.model, name)

    def value_of(self, expr: ast.AST | None) -> ast.expr | None:
        return values.value_of(self.model, expr)

    def sources(self, expr: ast.AST | None) -> list[ast.expr]:
        return values.sources(self.model, expr)

    def literal(self, expr: ast.AST | None) -> ast.expr | None:
        return values.literal(self.model, expr)

    def mutations(self, name: ast.Name) -> list[tuple[str, Any, ast.expr]]:
        return values.mutations(self.model, name)

    def function_of(self, name: ast.Name) -> FunctionNode | None:
        return values.function_of(self.model, name)

    def returns(self, function: ast.AST) -> list[ast.expr]:
        return self.model.definitions.returns(function)

    def defines(self, name: str) -> bool:
        return self.model.definitions.defines(name)

    def origins(self, expr: ast.AST | None, limit: int = 200) -> list[ast.expr]:
        return values.origins(self.model, expr, limit)

    def dict_entries(self, expr: ast.AST | None) -> dict[str, ast.expr] | None:
        return values.dict_entries(self.model, expr)


# What `ModelView` answers, by kind (tests/lint_rules/test_receivers.py checks the view has
# each, and none of the model's state).
_FILTERED_QUERIES = (
    "qualified_name",
    "is_sdk",
    "sdk_symbol",
    "import_binding",
    "type_of",
    "kind_of",
    "client_call",
)
# Queries that do not depend on `pytrio_only`: names, values and the SDK's method table.
_VALUE_QUERIES = (
    "sdk_alias",
    "calls_of",
    "method_returns",
    "listed",
    "bound_expression",
    "value_of",
    "sources",
    "literal",
    "mutations",
    "function_of",
    "returns",
    "defines",
    "origins",
    "dict_entries",
)
