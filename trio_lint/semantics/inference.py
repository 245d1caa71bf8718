"""Type inference of the semantic model: which SDK type (client, future, result) an expression
holds, from bindings, annotations, call sites and the SDK's method tables.

Functions of the model (as ruff's `analyze::typing` takes the semantic model): `infer` answers
`ModelQueries.type_of` (which memoizes it), `annotation_type` types an annotation for the pass,
`binding_type` and `agreeing` type and join bindings; `model.py` lists every query. They read the
model's parts, its queries, and their own memo (`queries.TypeMemo`, owned by the model)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

from trio_lint.lint.parse import parse_ast
from trio_lint.semantics import values
from trio_lint.semantics.names import (
    dotted_name,
)
from trio_lint.semantics.queries import ModelQueries
from trio_lint.semantics.receivers import (
    CLASS_KINDS,
    CONSTRUCTED_KINDS,
    DISTINCTIVE_METHODS,
    Kind,
    SdkType,
    keyword_match,
)
from trio_lint.semantics.scopes import (
    SEQUENCE_ANNOTATIONS,
    NameBinding,
    ParameterBinding,
    Scope,
    keyword_value,
    type_shape,
)

__all__ = ["agreeing", "annotation_type", "binding_type", "infer", "matched_kind"]


def agreeing(model: ModelQueries, bindings: Iterable[NameBinding]) -> NameBinding | None:
    """The last of several bindings of a name when they all give one SDK name or type (what a
    read from a nested function, or `self.x` bound in several methods, holds), else None."""
    bindings = list(bindings)
    if len(bindings) == 1:
        return bindings[0]
    seen: set[object] = set()
    for binding in bindings:
        typ = binding_type(model, binding)
        seen.add(binding.qualname or (type_shape(typ) if typ is not None else None))
    return bindings[-1] if len(seen) == 1 and None not in seen else None


def infer(model: ModelQueries, expr: ast.AST) -> SdkType | None:
    """The SDK type `expr` holds (`ModelQueries.type_of`, which keeps the answer), else None."""
    # Class tests, commonest first: every first query runs this, and `isinstance` costs a call
    # per test. A type checker does not narrow on them: `node` is `expr` typed `Any`.
    node: Any = expr
    expr_class = node.__class__
    if expr_class is ast.Name:
        binding = model.resolve(node)
        return binding_type(model, binding) if binding is not None else None
    if expr_class is ast.Constant:
        return None
    if expr_class is ast.Call:
        return _call_type(model, node)
    if expr_class is ast.Attribute:
        return _attribute_type(model, node)
    if isinstance(expr, ast.Await):
        value = expr.value
        if isinstance(value, ast.Call):
            runner = _asyncio_call(value)
            if runner == "gather":
                return _gathered_type(model, value)
            if runner == "wait" and isinstance(value.func, ast.Attribute):
                return _waited_type(model, value)
            # `await queue.get()`: what was put
            items = values.queue_items(model, value, awaited=True)
            if items:
                return _agreeing_type(model, items)
        return _awaited(model.type_of(value))
    if isinstance(expr, ast.Subscript):
        base = model.type_of(expr.value)
        if base is not None and base.kind is Kind.LIST:
            return base if isinstance(expr.slice, ast.Slice) else base.of
        if base is not None and base.kind is Kind.TENSOR_DICT:
            return None if isinstance(expr.slice, ast.Slice) else SdkType(Kind.TENSOR_DATA)
        key = expr.slice
        if base is None and isinstance(key, ast.Constant) and isinstance(key.value, str):
            entries = values.dict_entries(model, expr.value)  # `CONFIG["client"]`
            entry = entries.get(key.value) if entries else None
            return model.type_of(entry) if entry is not None else None
        return None
    if isinstance(expr, ast.List | ast.ListComp):
        elements = [expr.elt] if isinstance(expr, ast.ListComp) else expr.elts
        types = {model.type_of(e) for e in elements}
        if len(types) == 1:
            (only,) = types
            if only is not None:
                return SdkType(Kind.LIST, only)
        return None
    if isinstance(expr, ast.NamedExpr):
        return model.type_of(expr.value)
    if (
        isinstance(expr, ast.BoolOp)
        and isinstance(expr.op, ast.Or)
        and all(_empty_literal(value) for value in expr.values[1:])
    ):
        # `fb.metrics or {}`: the fallbacks are empty, so the value is the first operand's
        return model.type_of(expr.values[0])
    return None


def _gathered_type(model: ModelQueries, call: ast.Call) -> SdkType | None:
    """`await asyncio.gather(*xs)`, `await gather(a, b)`: a list of what awaiting each
    argument gives, when they all agree (`return_exceptions=True` mixes in exceptions)."""
    if any(k.arg == "return_exceptions" for k in call.keywords):
        return None
    found: SdkType | None = None
    for arg in call.args:
        typ = _awaited_items(model, arg.value) if isinstance(arg, ast.Starred) else None
        if not isinstance(arg, ast.Starred):
            typ = _awaited(model.type_of(arg))
        if typ is None or (found is not None and type_shape(typ) != type_shape(found)):
            return None
        found = typ
    return SdkType(Kind.LIST, found) if found is not None else None


def _waited_type(model: ModelQueries, call: ast.Call) -> SdkType | None:
    """`await asyncio.wait(tasks)`: the pair (done, pending) of sets of those tasks, typed as
    a list of two lists (only unpacking, items and iteration are asked of them)."""
    if len(call.args) != 1:
        return None
    items = call.args[0]
    typ = model.type_of(items.elt if isinstance(items, ast.GeneratorExp) else items)
    if not isinstance(items, ast.GeneratorExp):
        typ = typ.of if typ is not None and typ.kind is Kind.LIST else None
    task = _task_of(typ)
    return SdkType(Kind.LIST, SdkType(Kind.LIST, task)) if task is not None else None


def _awaited_items(model: ModelQueries, items: ast.expr) -> SdkType | None:
    """What awaiting each item of `*items` gives (a list, a comprehension, a generator)."""
    if isinstance(items, ast.GeneratorExp):
        return _awaited(model.type_of(items.elt))
    typ = model.type_of(items)
    return _awaited(typ.of) if typ is not None and typ.kind is Kind.LIST else None


def binding_type(model: ModelQueries, binding: NameBinding) -> SdkType | None:
    if binding.fixed is not None:
        return binding.fixed
    if binding.param is not None:
        if binding.param not in model.type_memo.params:
            model.type_memo.params[binding.param] = _param_type(model, *binding.param)
        return model.type_memo.params[binding.param]
    if binding.element_of is not None:
        typ = model.type_of(binding.element_of)
        return typ.of if typ is not None and typ.kind is Kind.LIST else None
    if binding.expr is None:
        return None
    typ = model.type_of(binding.expr)
    expr = binding.expr
    if typ is None and binding.parts and isinstance(expr, ast.List) and not expr.elts:
        return _filled_list_type(model, binding.parts)
    return typ


def _filled_list_type(
    model: ModelQueries, parts: list[tuple[str, Any, ast.expr]]
) -> SdkType | None:
    """`data = []` filled by `data.append(d)` / `data.extend(ds)` / `data += ds`: a list of
    what every addition agrees on (any other mutation, or a disagreement: unknown)."""
    found: SdkType | None = None
    for how, _key, value in parts:
        typ = model.type_of(value)
        if how == "items":
            typ = typ.of if typ is not None and typ.kind is Kind.LIST else None
        elif how != "item":
            return None
        if typ is None or (found is not None and type_shape(typ) != type_shape(found)):
            return None
        found = typ
    return SdkType(Kind.LIST, found) if found is not None else None


def _param_type(model: ModelQueries, function: str, index: int | None, name: str) -> SdkType | None:
    """`def step(training, batch)` called as `step(train, b)` with `train` a TrainingClient at
    every call site of the module: `training` is a TrainingClient inside `step`."""
    calls = model.definitions.calls(function)
    if len(model.definitions.functions(function)) != 1 or not calls:
        return None
    found: SdkType | None = None
    for call in calls:
        arg = keyword_value(call, name)
        if (
            arg is None
            and index is not None
            and index < len(call.args)
            and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1])
        ):
            arg = call.args[index]
        if _uncalled_parameter(model, arg):
            continue
        typ = model.type_of(arg) if arg is not None else None
        if typ is None or (found is not None and type_shape(typ) != type_shape(found)):
            return None
        found = typ
    return found


def _uncalled_parameter(model: ModelQueries, arg: ast.expr | None) -> bool:
    """`loss_totals(result, batch)` inside `def batch_loss(result, batch)` that nothing in the
    module calls, decorates or refers to: that call site says nothing either way."""
    # The read's own binding, not `model.resolve`: that may infer, and inference comes back here.
    binding = model.references.get(arg) if isinstance(arg, ast.Name) else None
    if not isinstance(binding, ParameterBinding) or binding.param is None:
        return False
    function = binding.param[0]
    defs = model.definitions.functions(function)
    if model.definitions.calls(function) or len(defs) != 1 or defs[0].decorator_list:
        return False
    unreferenced = model.type_memo.unreferenced
    key = id(defs[0])
    if key not in unreferenced:
        unreferenced[key] = not model.references.refers_to(defs[0], function)
    return unreferenced[key]


def _attribute_type(model: ModelQueries, node: ast.Attribute) -> SdkType | None:
    owner = model.definitions.owner(node)
    if owner is not None:
        binding = agreeing(model, owner.attributes.get(node.attr, []))
        return binding_type(model, binding) if binding is not None else None
    base = model.type_of(node.value)
    if base is not None:
        return model.attributes.get((base.kind, node.attr))
    # `Settings.X`, `cfg.x` (dataclass / pydantic default), `args.x`: what it was bound to.
    return _agreeing_type(model, values.attribute_sources(model, node))


def _agreeing_type(model: ModelQueries, exprs: list[ast.expr]) -> SdkType | None:
    found: SdkType | None = None
    for expr in exprs:
        typ = model.type_of(expr)
        if typ is None or (found is not None and type_shape(typ) != type_shape(found)):
            return None
        found = typ
    return found


def _call_type(model: ModelQueries, call: ast.Call) -> SdkType | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "getattr" and model.resolve(func) is None:
        # `getattr(fb, "metrics", {})` reads the attribute `fb.metrics`
        if 2 <= len(call.args) <= 3 and not call.keywords:
            attr = call.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                base = model.type_of(call.args[0])
                return model.attributes.get((base.kind, attr.value)) if base is not None else None
        return None
    symbol = model.sdk_symbol(func)
    if symbol is not None:
        kind = CLASS_KINDS.get(symbol)
        return SdkType(kind) if kind is not None and kind in CONSTRUCTED_KINDS else None
    if not isinstance(func, ast.Attribute):
        return _returned_type(model, call)
    name = func.attr
    if name == "as_completed" and _asyncio_call(call) == name and len(call.args) == 1:
        # `for fut in asyncio.as_completed(xs)`: each `await fut` gives what an item of xs
        # gives (only iteration is asked of it)
        items = call.args[0]
        typ = model.type_of(items.elt if isinstance(items, ast.GeneratorExp) else items)
        if isinstance(items, ast.GeneratorExp):
            return SdkType(Kind.LIST, typ) if _awaited(typ) is not None else None
        return typ if typ is not None and typ.kind is Kind.LIST and _awaited(typ.of) else None
    if (
        name in _TASK_MAKERS
        and len(call.args) == 1
        and (name == "create_task" or _asyncio_call(call) == name)
    ):
        # `asyncio.create_task(c)`, `tg.create_task(c)` (a TaskGroup), `loop.create_task(c)`,
        # `asyncio.ensure_future(c)` of a coroutine of a known result: a task of it
        task = _task_of(model.type_of(call.args[0]))
        if task is not None:
            return task
    recv = model.type_of(func.value)
    if recv is None and name in ("get", "get_nowait"):
        held = _agreeing_type(
            model, values.keyed_entry(model, call) or values.queue_items(model, call, awaited=False)
        )
        if held is not None:
            return held
    if recv is None:
        kind = DISTINCTIVE_METHODS.get(name) or matched_kind(model, call)
        if kind is not None:
            return model.methods[kind].get(name)
        return _returned_type(model, call)
    if (recv.is_future or recv.kind is Kind.TASK) and name == "result":
        return recv.of
    if recv.kind is Kind.API_FUTURE and name == "map":
        return SdkType(Kind.API_FUTURE)
    if recv.is_client:
        return model.methods[recv.kind].get(name)
    if recv.kind is Kind.TENSOR_DICT:
        return _tensor_dict_call(call, name)
    return None


def _returned_type(model: ModelQueries, call: ast.Call) -> SdkType | None:
    """A call of a function (or `self.method`) of this module: the type all its `return`s
    agree on."""
    found: SdkType | None = None
    functions = values.functions_called(model, call)
    if functions and isinstance(functions[0], ast.AsyncFunctionDef):
        # `await make_fb(tc, b)`: calling an `async def` makes a coroutine of what it returns
        returned = list(model.definitions.returns(functions[0]))
        inner = _agreeing_type(model, returned) if returned else None
        return SdkType(Kind.COROUTINE, inner) if inner is not None else None
    returned = values.call_sources(model, call)
    if not returned:
        return None
    for expr in returned:
        typ = model.type_of(expr)
        if typ is None or (found is not None and type_shape(typ) != type_shape(found)):
            return None
        found = typ
    return found


def matched_kind(model: ModelQueries, call: ast.Call) -> Kind | None:
    """Evidence from the call's shape: in a unit that imports the SDK, `x.m(...)` whose
    name and keywords fit exactly one client method of the release (`keyword_match`)."""
    func = call.func
    if not call.keywords or not model.imports.imports_sdk or not isinstance(func, ast.Attribute):
        return None
    keywords = frozenset(k.arg for k in call.keywords if k.arg is not None)
    if len(keywords) != len(call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return keyword_match(model.version, func.attr, len(call.args), keywords)


# ---- annotations ---------------------------------------------------------------------------


def annotation_type(annotation: ast.expr | None, scope: Scope) -> SdkType | None:
    """`trio.TrainingClient`, `"trio.TrainingClient"`, `X | None`, `Optional[X]`,
    `APIFuture[X]`, resolved against the names bound in `scope` at this point."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            expression = parse_ast(annotation.value.strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # not an annotation Python can read: no type from it
        assert isinstance(expression, ast.Expression)
        return annotation_type(expression.body, scope)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        for side in (annotation.left, annotation.right):
            if not (isinstance(side, ast.Constant) and side.value is None):
                typ = annotation_type(side, scope)
                if typ is not None:
                    return typ
        return None
    if isinstance(annotation, ast.Subscript):
        head = dotted_name(annotation.value)
        if head is not None and head.rsplit(".", 1)[-1] == "Optional":
            return annotation_type(annotation.slice, scope)
        if head is not None and head.rsplit(".", 1)[-1] in SEQUENCE_ANNOTATIONS:
            item = annotation_type(annotation.slice, scope)  # `list[trio.Datum]`
            return SdkType(Kind.LIST, item) if item is not None else None
        symbol = _symbol_in(annotation.value, scope)
        if symbol == "APIFuture":
            return SdkType(Kind.API_FUTURE, annotation_type(annotation.slice, scope))
        return None
    symbol = _symbol_in(annotation, scope)
    kind = CLASS_KINDS.get(symbol) if symbol is not None else None
    return SdkType(kind) if kind is not None else None


def _symbol_in(expr: ast.expr, scope: Scope) -> str | None:
    dotted = dotted_name(expr)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    binding = scope.lookup_now(head)
    if binding is None or binding.qualname is None:
        return None
    qualname = f"{binding.qualname}.{rest}" if rest else binding.qualname
    return qualname.rsplit(".", 1)[-1] if "." in qualname else None


def _awaited(typ: SdkType | None) -> SdkType | None:
    """What `await` of a value of this type gives (None: not known to be awaitable)."""
    if typ is not None and typ.kind in (Kind.COROUTINE, Kind.API_FUTURE, Kind.TASK):
        return typ.of
    return None


# Calls that wrap a coroutine in an asyncio task (`create_task` on any receiver: asyncio, a
# `TaskGroup`, an event loop; `ensure_future` of asyncio only).
_TASK_MAKERS = frozenset({"create_task", "ensure_future"})


def _task_of(typ: SdkType | None) -> SdkType | None:
    """The task that runs a coroutine (or is a task) of a known result; None otherwise (an
    `APIFuture` is not an asyncio awaitable `create_task` or `wait` takes)."""
    if typ is None or typ.of is None:
        return None
    if typ.kind is Kind.TASK:
        return typ
    return SdkType(Kind.TASK, typ.of) if typ.kind is Kind.COROUTINE else None


def _asyncio_call(call: ast.Call) -> str | None:
    """`gather` for `asyncio.gather(...)` and a bare `gather(...)`, likewise `as_completed`."""
    func = call.func
    if isinstance(func, ast.Attribute):
        base = func.value
        return func.attr if isinstance(base, ast.Name) and base.id == "asyncio" else None
    return func.id if isinstance(func, ast.Name) else None


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
