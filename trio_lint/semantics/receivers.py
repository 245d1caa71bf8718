"""Receiver typing: which expressions hold a PyTRIO client, future or result object.

Generic method names (`sample`, `forward`, `result`, `list_checkpoints`) appear all over torch,
Hugging Face and vLLM code, so rules match them only where this module shows the receiver is a
PyTRIO object. The inference is light and per scope:

- constructors: ``trio.ServiceClient(...)``;
- factory methods: ``svc.create_lora_training_client(...)``, ``train.create_sampling_client(...)``;
- results: ``fut.result()``, ``await fut``, ``save.path``, ``resp.sequences[0]``;
- annotations on parameters and variables (``train: trio.TrainingClient``, also as strings);
- ``self.x = <typed>`` in any method types ``self.x`` in every method of that class;
- a few method names no other library uses (``forward_backward``, ``optim_step``...) type their
  receiver even when it is unknown (api-diff.md §4.1).

Names are followed flow-sensitively inside a scope (the binding that reaches a read in source
order). A function reading a name of an enclosing scope sees that name there only when all its
bindings agree, because the function may run at any later point. Anything else is unknown, and
unknown never matches.

The model is built by one `ast` pass of its own on first use, so answers do not depend on the
order in which the walker calls rule hooks; reads are keyed by source position, so the walker's
tree and this pass's tree (when the context does not hand its tree over) agree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pytrio_facts.api import API_SURFACE
from trio_lint.semantics.names import bindings_of_import

if TYPE_CHECKING:
    from trio_lint.semantics.context import LintContext

__all__ = [
    "DISTINCTIVE_METHODS",
    "Kind",
    "ReceiverModel",
    "SdkType",
    "infer",
]


class Kind(StrEnum):
    SERVICE_CLIENT = "ServiceClient"
    TRAINING_CLIENT = "TrainingClient"
    SAMPLING_CLIENT = "SamplingClient"
    REST_CLIENT = "RestClient"
    API_FUTURE = "APIFuture"
    CONCURRENT_FUTURE = "concurrent.futures.Future"
    COROUTINE = "coroutine"
    LIST = "list"
    # Result objects (by the SDK's type name) and values read from them.
    FORWARD_BACKWARD_OUTPUT = "ForwardBackwardOutput"
    OPTIM_STEP_RESPONSE = "OptimStepResponse"
    SAVE_WEIGHTS_RESPONSE = "SaveWeightsResponse"
    SAVE_WEIGHTS_FOR_SAMPLER_RESPONSE = "SaveWeightsForSamplerResponse"
    SAMPLE_RESPONSE = "SampleResponse"
    SAMPLE_SEQUENCE = "SampleSequence"
    LOGPROBS = "list[float | None]"
    LOAD_STATE_RESULT = "dict"
    METRICS = "metrics"
    CHECKPOINT = "Checkpoint"
    CHECKPOINTS_LIST_RESPONSE = "CheckpointsListResponse"
    TRAINING_RUNS_RESPONSE = "TrainingRunsResponse"
    REST_RESULT = "RestResult"
    REST_DICT = "dict (0.1 RestClient)"
    CHECKPOINT_PATH = "checkpoint path"
    TOKENIZER = "tokenizer"
    MODEL_LIST = "list[str]"
    SERVER_CAPABILITIES = "GetServerCapabilitiesResponse"
    NONE = "None"


CLIENT_KINDS = frozenset(
    {Kind.SERVICE_CLIENT, Kind.TRAINING_CLIENT, Kind.SAMPLING_CLIENT, Kind.REST_CLIENT}
)
FUTURE_KINDS = frozenset({Kind.API_FUTURE, Kind.CONCURRENT_FUTURE})


@dataclass(frozen=True, slots=True)
class SdkType:
    """A kind plus, for containers (futures, coroutines, lists), what they hold."""

    kind: Kind
    of: SdkType | None = None
    # The client method that produced the value (e.g. "forward_backward"), when known.
    origin: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}[{self.of}]" if self.of is not None else str(self.kind)

    @property
    def is_client(self) -> bool:
        return self.kind in CLIENT_KINDS

    @property
    def is_future(self) -> bool:
        return self.kind in FUTURE_KINDS


_RESULT_NAMES: dict[str, Kind] = {
    "ForwardBackwardOutput": Kind.FORWARD_BACKWARD_OUTPUT,
    "OptimStepResponse": Kind.OPTIM_STEP_RESPONSE,
    "SaveWeightsResponse": Kind.SAVE_WEIGHTS_RESPONSE,
    "SaveWeightsForSamplerResponse": Kind.SAVE_WEIGHTS_FOR_SAMPLER_RESPONSE,
    "SampleResponse": Kind.SAMPLE_RESPONSE,
    "list[float | None]": Kind.LOGPROBS,
    "dict": Kind.LOAD_STATE_RESULT,
    "TrainingClient": Kind.TRAINING_CLIENT,
    "SamplingClient": Kind.SAMPLING_CLIENT,
    "RestClient": Kind.REST_CLIENT,
    "CheckpointsListResponse": Kind.CHECKPOINTS_LIST_RESPONSE,
    "TrainingRunsResponse": Kind.TRAINING_RUNS_RESPONSE,
    "tokenizer": Kind.TOKENIZER,
    "list[str]": Kind.MODEL_LIST,
    "GetServerCapabilitiesResponse": Kind.SERVER_CAPABILITIES,
    "None": Kind.NONE,
}
# SDK class names (the last component of a canonical qualified name) and the kind they annotate.
CLASS_KINDS: dict[str, Kind] = {
    "ServiceClient": Kind.SERVICE_CLIENT,
    "TrainingClient": Kind.TRAINING_CLIENT,
    "SamplingClient": Kind.SAMPLING_CLIENT,
    "RestClient": Kind.REST_CLIENT,
    "APIFuture": Kind.API_FUTURE,
    "SampleSequence": Kind.SAMPLE_SEQUENCE,
    "Checkpoint": Kind.CHECKPOINT,
    **{name: kind for name, kind in _RESULT_NAMES.items() if name[0].isupper()},
}


def method_table(version: str) -> dict[Kind, dict[str, SdkType]]:
    """Client kind -> method -> the type a call returns, on one SDK line ("0.1" or "0.2").

    The 0.2 side is pytrio_facts.api (checked against the installed SDK); 0.1 differs only in
    sampling's async twins (APIFuture, two awaits) and the RestClient (dicts, no async twins).
    """
    table: dict[Kind, dict[str, SdkType]] = {kind: {} for kind in CLIENT_KINDS}
    old = version.startswith("0.1")
    for fact in API_SURFACE:
        owner = CLASS_KINDS[fact.owner]
        base = fact.name.removesuffix("_async")
        value = SdkType(_RESULT_NAMES.get(fact.result, Kind.REST_RESULT), origin=base)
        returns: str = fact.returns
        if old and fact.owner == "SamplingClient" and fact.is_async:
            returns = "api_future"
        if old and fact.owner == "RestClient":
            if fact.is_async:
                continue
            value, returns = SdkType(Kind.REST_DICT, origin=base), "value"
        if returns == "api_future":
            typ = SdkType(Kind.API_FUTURE, value, origin=base)
        elif returns == "concurrent_future":
            typ = SdkType(Kind.CONCURRENT_FUTURE, value, origin=base)
        else:
            typ = value
        if fact.is_async:
            typ = SdkType(Kind.COROUTINE, typ, origin=base)
        table[owner][fact.name] = typ
    return table


# Method names no other popular library uses: a call of one of these types its receiver.
DISTINCTIVE_METHODS: dict[str, Kind] = {
    name: kind
    for kind, names in {
        Kind.TRAINING_CLIENT: (
            "forward_backward",
            "forward_backward_custom",
            "optim_step",
            "save_weights_for_sampler",
            # not `save_state`: Hugging Face accelerate's `Accelerator.save_state(dir)` shares it
            "save_weights_and_get_sampling_client",
            "load_state_with_optimizer",
        ),
        Kind.SERVICE_CLIENT: (
            "create_lora_training_client",
            "create_training_client_from_state",
            "create_training_client_from_state_with_optimizer",
        ),
        Kind.REST_CLIENT: ("get_checkpoint_archive_url", "list_user_checkpoints"),
    }.items()
    for base in names
    for name in (base, f"{base}_async")
}

# Attributes of result objects and what they hold.
ATTRIBUTES: dict[tuple[Kind, str], SdkType] = {
    (Kind.SAVE_WEIGHTS_RESPONSE, "path"): SdkType(Kind.CHECKPOINT_PATH),
    (Kind.SAVE_WEIGHTS_FOR_SAMPLER_RESPONSE, "path"): SdkType(Kind.CHECKPOINT_PATH),
    (Kind.CHECKPOINT, "path"): SdkType(Kind.CHECKPOINT_PATH),
    (Kind.FORWARD_BACKWARD_OUTPUT, "metrics"): SdkType(Kind.METRICS, origin="forward_backward"),
    (Kind.OPTIM_STEP_RESPONSE, "metrics"): SdkType(Kind.METRICS, origin="optim_step"),
    (Kind.SAMPLE_RESPONSE, "sequences"): SdkType(Kind.LIST, SdkType(Kind.SAMPLE_SEQUENCE)),
    (Kind.CHECKPOINTS_LIST_RESPONSE, "checkpoints"): SdkType(Kind.LIST, SdkType(Kind.CHECKPOINT)),
}


# ---------------------------------------------------------------------------------------------
# Bindings and scopes


@dataclass(slots=True)
class _Binding:
    """One way a name got its value: an expression (typed lazily), a fixed type, an SDK import,
    or nothing known."""

    expr: ast.expr | None = None
    fixed: SdkType | None = None
    qualname: str | None = None  # canonical `pytrio.X` for SDK imports
    # An unannotated parameter: (function name, positional index or None, parameter name), typed
    # from the module's call sites of that function when they all pass the same kind.
    param: tuple[str, int | None, str] | None = None


_UNKNOWN = _Binding()


@dataclass(slots=True)
class _Scope:
    kind: str  # "module" | "function" | "class" | "comprehension"
    parent: _Scope | None
    current: dict[str, _Binding] = field(default_factory=dict)
    history: dict[str, list[_Binding]] = field(default_factory=dict)
    attributes: dict[str, list[_Binding]] = field(default_factory=dict)  # class: self.x
    pending: list[tuple[Any, str]] = field(default_factory=list)

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


def _pos(node: ast.AST) -> tuple[Any, ...]:
    return (
        type(node).__name__,
        node.lineno,  # type: ignore[attr-defined]
        node.col_offset,  # type: ignore[attr-defined]
        node.end_lineno,  # type: ignore[attr-defined]
        node.end_col_offset,  # type: ignore[attr-defined]
    )


class Receivers:
    """Inference over one module: ask `type_of(expr)` for any expression of that module."""

    def __init__(self, sdk_modules: Sequence[str], version: str) -> None:
        self.sdk_modules = tuple(sdk_modules)
        self.version = version
        self.methods = method_table(version)
        self._names: dict[tuple[Any, ...], _Binding | _FreeRef] = {}
        self._self_attrs: dict[tuple[Any, ...], _Scope] = {}
        self._cache: dict[int, SdkType | None] = {}
        self._busy: set[int] = set()
        self._defs: dict[str, int] = {}  # plain function name -> how many defs have it
        self._calls: dict[str, list[ast.Call]] = {}  # plain function name -> `name(...)` calls
        self._params: dict[tuple[str, int | None, str], SdkType | None] = {}

    # ---- queries -------------------------------------------------------------------------------

    def type_of(self, expr: ast.AST | None) -> SdkType | None:
        if expr is None:
            return None
        key = id(expr)
        if key in self._cache:
            return self._cache[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            result = self._infer(expr)
        finally:
            self._busy.discard(key)
        self._cache[key] = result
        return result

    def qualname_of(self, expr: ast.AST) -> str | None:
        """Canonical `pytrio.X.y` for an expression naming an SDK symbol, else None."""
        if isinstance(expr, ast.Name):
            binding = self._resolve(expr)
            return binding.qualname if binding is not None else None
        if isinstance(expr, ast.Attribute):
            base = self.qualname_of(expr.value)
            return f"{base}.{expr.attr}" if base is not None else None
        return None

    def sdk_symbol(self, expr: ast.AST) -> str | None:
        """`AdamParams` when `expr` names the SDK's AdamParams however it was imported."""
        qualname = self.qualname_of(expr)
        if qualname is None or "." not in qualname:
            return None
        return qualname.rsplit(".", 1)[-1]

    def bound_expression(self, name: ast.Name) -> ast.expr | None:
        """The expression assigned to `name` by the binding that reaches this read (or None)."""
        binding = self._resolve(name)
        return binding.expr if binding is not None else None

    def client_call(self, call: ast.Call) -> tuple[Kind, str] | None:
        """For `recv.m(...)` on a PyTRIO client: (client kind, method name), else None.
        Unknown receivers count only for the distinctive method names."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        recv = self.type_of(func.value)
        if recv is not None:
            return (recv.kind, func.attr) if recv.is_client else None
        kind = DISTINCTIVE_METHODS.get(func.attr)
        return (kind, func.attr) if kind is not None else None

    # ---- inference -----------------------------------------------------------------------------

    def _infer(self, expr: ast.AST) -> SdkType | None:
        if isinstance(expr, ast.Name):
            binding = self._resolve(expr)
            return self._binding_type(binding) if binding is not None else None
        if isinstance(expr, ast.Await):
            inner = self.type_of(expr.value)
            if inner is not None and inner.kind in (Kind.COROUTINE, Kind.API_FUTURE):
                return inner.of
            return None
        if isinstance(expr, ast.Call):
            return self._call_type(expr)
        if isinstance(expr, ast.Attribute):
            return self._attribute_type(expr)
        if isinstance(expr, ast.Subscript):
            base = self.type_of(expr.value)
            if base is not None and base.kind is Kind.LIST:
                return base if isinstance(expr.slice, ast.Slice) else base.of
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
        return None

    def _binding_type(self, binding: _Binding) -> SdkType | None:
        if binding.fixed is not None:
            return binding.fixed
        if binding.param is not None:
            if binding.param not in self._params:
                self._params[binding.param] = self._param_type(*binding.param)
            return self._params[binding.param]
        return self.type_of(binding.expr) if binding.expr is not None else None

    def _param_type(self, function: str, index: int | None, name: str) -> SdkType | None:
        """`def step(training, batch)` called as `step(train, b)` with `train` a TrainingClient at
        every call site of the module: `training` is a TrainingClient inside `step`."""
        calls = self._calls.get(function)
        if self._defs.get(function) != 1 or not calls:
            return None
        found: SdkType | None = None
        for call in calls:
            arg = next((kw.value for kw in call.keywords if kw.arg == name), None)
            if (
                arg is None
                and index is not None
                and index < len(call.args)
                and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
            ):
                arg = call.args[index]
            typ = self.type_of(arg) if arg is not None else None
            if typ is None or (found is not None and _shape(typ) != _shape(found)):
                return None
            found = typ
        return found

    def _resolve(self, node: ast.Name) -> _Binding | None:
        ref = self._names.get(_pos(node))
        if isinstance(ref, _FreeRef):
            return self._final(ref.scope, ref.name)
        return ref

    def _final(self, scope: _Scope | None, name: str) -> _Binding | None:
        """A name's value seen from a nested function: every binding of it must agree."""
        while scope is not None:
            if scope.kind != "class" and name in scope.history:
                return self._agreeing(scope.history[name])
            scope = scope.parent
        return None

    def _agreeing(self, bindings: Iterable[_Binding]) -> _Binding | None:
        bindings = list(bindings)
        if len(bindings) == 1:
            return bindings[0]
        seen: set[object] = set()
        for binding in bindings:
            typ = self._binding_type(binding)
            seen.add(binding.qualname or (_shape(typ) if typ is not None else None))
        return bindings[-1] if len(seen) == 1 and None not in seen else None

    def _attribute_type(self, node: ast.Attribute) -> SdkType | None:
        owner = self._self_attrs.get(_pos(node))
        if owner is not None:
            binding = self._agreeing(owner.attributes.get(node.attr, []))
            return self._binding_type(binding) if binding is not None else None
        base = self.type_of(node.value)
        return ATTRIBUTES.get((base.kind, node.attr)) if base is not None else None

    def _call_type(self, call: ast.Call) -> SdkType | None:
        func = call.func
        symbol = self.sdk_symbol(func)
        if symbol is not None:
            kind = CLASS_KINDS.get(symbol)
            return SdkType(kind) if kind is not None and kind in CLIENT_KINDS else None
        if not isinstance(func, ast.Attribute):
            return None
        name = func.attr
        recv = self.type_of(func.value)
        if recv is None:
            kind = DISTINCTIVE_METHODS.get(name)
            return self.methods[kind].get(name) if kind is not None else None
        if recv.is_future and name == "result":
            return recv.of
        if recv.kind is Kind.API_FUTURE and name == "map":
            return SdkType(Kind.API_FUTURE)
        if recv.is_client:
            return self.methods[recv.kind].get(name)
        return None

    # ---- annotations ---------------------------------------------------------------------------

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
            head = _dotted(annotation.value)
            if head is not None and head.rsplit(".", 1)[-1] == "Optional":
                return self.annotation_type(annotation.slice, scope)
            symbol = self._symbol_in(annotation.value, scope)
            if symbol == "APIFuture":
                return SdkType(Kind.API_FUTURE, self.annotation_type(annotation.slice, scope))
            return None
        symbol = self._symbol_in(annotation, scope)
        kind = CLASS_KINDS.get(symbol) if symbol is not None else None
        return SdkType(kind) if kind is not None else None

    def _symbol_in(self, expr: ast.expr, scope: _Scope) -> str | None:
        dotted = _dotted(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        binding = scope.lookup_now(head)
        if binding is None or binding.qualname is None:
            return None
        qualname = f"{binding.qualname}.{rest}" if rest else binding.qualname
        return qualname.rsplit(".", 1)[-1] if "." in qualname else None


def _shape(typ: SdkType) -> str:
    """What two types must share to agree: kind and contents, not the method that made them."""
    return str(typ)


def _dotted(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base is not None else None
    return None


def _params(args: ast.arguments) -> Iterator[ast.arg]:
    yield from args.posonlyargs
    yield from args.args
    if args.vararg is not None:
        yield args.vararg
    yield from args.kwonlyargs
    if args.kwarg is not None:
        yield args.kwarg


# ---------------------------------------------------------------------------------------------
# The pass that records bindings and which binding each read sees


class _Pass(ast.NodeVisitor):
    def __init__(self, receivers: Receivers) -> None:
        self.r = receivers
        self.scope = _Scope("module", None)

    # ---- scopes --------------------------------------------------------------------------------

    def _push(self, kind: str) -> None:
        self.scope = _Scope(kind, self.scope)

    def _pop(self) -> None:
        done = self.scope
        parent = done.parent
        assert parent is not None
        for key, name in done.pending:
            if done.kind != "class" and name in done.history:
                self.r._names[key] = _UNKNOWN  # a local read before its first binding
            elif done.kind == "comprehension" and name in parent.current:
                self.r._names[key] = parent.current[name]  # comprehensions run right away
            elif done.kind == "comprehension" and parent.kind != "module":
                parent.pending.append((key, name))
            else:
                self.r._names[key] = _FreeRef(parent, name)
        self.scope = parent

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.visit(default)
        outer = self.scope
        plain = not isinstance(node, ast.Lambda) and outer.kind != "class"
        if not isinstance(node, ast.Lambda):
            outer.bind(node.name, _UNKNOWN)
            if plain:
                self.r._defs[node.name] = self.r._defs.get(node.name, 0) + 1
        positional = [*node.args.posonlyargs, *node.args.args]
        self._push("function")
        for arg in _params(node.args):
            fixed = self.r.annotation_type(arg.annotation, outer)
            if fixed is not None:
                self.scope.bind(arg.arg, _Binding(fixed=fixed))
            elif (
                plain and arg.annotation is None and arg not in (node.args.vararg, node.args.kwarg)
            ):
                index = positional.index(arg) if arg in positional else None
                self.scope.bind(arg.arg, _Binding(param=(node.name, index, arg.arg)))  # type: ignore[union-attr]
            else:
                self.scope.bind(arg.arg, _UNKNOWN)
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
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        self.scope.bind(node.name, _UNKNOWN)
        self._push("class")
        for stmt in node.body:
            self.visit(stmt)
        self._pop()

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        self.visit(node.generators[0].iter)  # evaluated in the enclosing scope
        self._push("comprehension")
        for index, generator in enumerate(node.generators):
            if index:
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
        if isinstance(node.func, ast.Name):
            self.r._calls.setdefault(node.func.id, []).append(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        scope = self.scope
        binding = scope.current.get(node.id)
        if binding is not None:
            self.r._names[_pos(node)] = binding
        elif scope.kind == "module":
            pass  # read before any binding: unknown
        elif scope.kind == "class":
            found = scope.lookup_now(node.id)
            if found is not None:
                self.r._names[_pos(node)] = found
        else:
            scope.pending.append((_pos(node), node.id))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            owner = self._method_class()
            if owner is not None:
                self.r._self_attrs[_pos(node)] = owner
        self.generic_visit(node)

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
        typ = self.r.type_of(iterable)
        if typ is not None and typ.kind is Kind.LIST and typ.of is not None:
            return _Binding(fixed=typ.of)
        return _UNKNOWN

    def _bind(self, target: ast.expr, binding: _Binding) -> None:
        if isinstance(target, ast.Name):
            self.scope.bind(target.id, binding)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._bind(element, _UNKNOWN)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, _UNKNOWN)
        elif isinstance(target, ast.Attribute):
            self.visit(target.value)
            if isinstance(target.value, ast.Name) and target.value.id == "self":
                owner = self._method_class()
                if owner is not None:
                    owner.attributes.setdefault(target.attr, []).append(binding)
        else:  # subscripts: the container is read
            self.visit(target)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        binding = _Binding(expr=node.value)
        for target in node.targets:
            self._bind(target, binding)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        fixed = self.r.annotation_type(node.annotation, self.scope)
        if fixed is not None:
            self._bind(node.target, _Binding(fixed=fixed))
        elif node.value is not None:
            self._bind(node.target, _Binding(expr=node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if not isinstance(node.target, ast.Name):
            self.visit(node.target)
        # `futures += [...]` keeps the name's type; a read of the name is recorded here.
        elif node.target.id in self.scope.current:
            self.r._names[_pos(node.target)] = self.scope.current[node.target.id]

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
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
        sdk = dict(bindings_of_import(node, self.r.sdk_modules))
        for alias in node.names:
            local = alias.asname or alias.name.partition(".")[0]
            if local == "*":
                continue
            found = sdk.get(local)
            self.scope.bind(local, _Binding(qualname=found.qualname) if found else _UNKNOWN)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.scope.bind(name, _UNKNOWN)

    visit_Nonlocal = visit_Global


def infer(
    tree: ast.Module,
    sdk_modules: Sequence[str] = ("pytrio",),
    version: str = "0.2",
    seed: dict[str, str] | None = None,
) -> Receivers:
    """Run the binding pass over `tree`; the result answers `type_of` for its expressions.
    `seed` maps names bound before this code runs (earlier notebook cells) to canonical names."""
    receivers = Receivers(sdk_modules, version)
    inference = _Pass(receivers)
    for name, qualname in (seed or {}).items():
        inference.scope.bind(name, _Binding(qualname=qualname))
    inference.visit(tree)
    return receivers


class ReceiverModel:
    """The receiver model a `LintContext` exposes to rules (`ctx.receivers`).

    Built lazily on the first question from the context's tree (`ctx.tree`) or, when the context
    has none, from its source; the walker's scope hooks are not needed.
    """

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self._model: Receivers | None = None
        self._other_sdk_only = False

    @property
    def model(self) -> Receivers:
        if self._model is None:
            tree = getattr(self.ctx, "tree", None)
            if not isinstance(tree, ast.Module):
                tree = ast.parse(self.ctx.source)
            version = "0.1" if str(self.ctx.sdk_version).startswith("0.1") else "0.2"
            module_scope = self.ctx.scopes[0] if self.ctx.scopes else {}
            seed = {name: b.qualname for name, b in module_scope.items() if b is not None}
            origins = {b.origin for b in module_scope.values() if b is not None}
            # Code that imports another SDK (tinker) and not pytrio is not PyTRIO code; code
            # that imports no SDK at all (a helper handed its clients) counts as PyTRIO code.
            self._other_sdk_only = bool(origins) and "pytrio" not in origins
            self._model = infer(tree, self.ctx.sdk_modules, version, seed)
        return self._model

    @property
    def other_sdk_only(self) -> bool:
        """True for code that imports another SDK module (tinker) and not pytrio."""
        _ = self.model
        return self._other_sdk_only

    def _hidden(self) -> bool:
        """PyTRIO-only rules see no receivers in code written against another SDK (tinker)."""
        return bool(self.ctx.pytrio_only) and self.other_sdk_only

    def type_of(self, node: ast.AST) -> SdkType | None:
        return None if self._hidden() else self.model.type_of(node)

    def kind_of(self, node: ast.AST) -> Kind | None:
        typ = self.type_of(node)
        return typ.kind if typ is not None else None

    def client_call(self, call: ast.Call) -> tuple[Kind, str] | None:
        """(client kind, method) for a call on a PyTRIO client (see `Receivers.client_call`)."""
        return None if self._hidden() else self.model.client_call(call)

    def bound_expression(self, name: ast.Name) -> ast.expr | None:
        return self.model.bound_expression(name)

    def method_returns(self, kind: Kind, name: str) -> SdkType | None:
        return self.model.methods.get(kind, {}).get(name)

    # The walker's hooks: the model builds its own bindings, so these only exist for the walker.
    def observe_assign(self, targets: list[ast.expr], value: ast.expr | None) -> None:
        pass

    def enter_scope(self, node: ast.AST) -> None:
        pass

    def leave_scope(self, node: ast.AST) -> None:
        pass
