"""Value flow of the semantic model: where the value of a name, attribute, item or call was
bound (`value_of`, `sources`, `literal`), what a container is built from (`origins`), a dict's
entries, the arguments a parameter gets at its call sites.

Functions of the model, as `inference.py`'s: `ModelQueries`'s value queries call them (`model.py`
lists every query); they read the model's parts (`Definitions`, resolved reads) and their own
memo (`queries.ValueMemo`, owned by the model)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, TypeVar

from trio_lint.semantics.queries import ModelQueries
from trio_lint.semantics.scopes import (
    CONVERSION_ATTRS,
    CONVERSION_FUNCS,
    ELEMENT_OF,
    ELEMENTS,
    FIELD_CALLS,
    SELF_CONVERSIONS,
    WRAPS,
    Scope,
    keyword_value,
)

if TYPE_CHECKING:
    from trio_lint.semantics.definitions import FunctionNode

__all__ = [
    "attribute_sources",
    "bound_expression",
    "call_sources",
    "converted_argument",
    "dict_entries",
    "function_of",
    "functions_called",
    "keyed_entry",
    "literal",
    "mutations",
    "origins",
    "queue_items",
    "sources",
    "value_of",
]


_T = TypeVar("_T")


def bound_expression(model: ModelQueries, name: ast.Name) -> ast.expr | None:
    """The expression assigned to `name` by the binding that reaches this read (or None)."""
    binding = model.resolve(name)
    return binding.expr if binding is not None else None


def value_of(model: ModelQueries, expr: ast.AST | None) -> ast.expr | None:
    """The one expression `expr` evaluates to (see the module docstring), else None."""
    found = sources(model, expr)
    return found[0] if len(found) == 1 else None


def sources(model: ModelQueries, expr: ast.AST | None) -> list[ast.expr]:
    """Every expression a name, attribute or call may evaluate to, one step back."""
    if isinstance(expr, ast.Name):
        return _name_sources(model, expr, 8)
    if (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.slice, ast.Constant)
        and isinstance(expr.slice.value, str)
    ):
        entries = dict_entries(model, expr.value)  # `CONFIG["key"]`
        entry = entries.get(expr.slice.value) if entries else None
        return [entry] if entry is not None else []
    if isinstance(expr, ast.Attribute):
        return attribute_sources(model, expr)
    if isinstance(expr, ast.Call):
        return (
            keyed_entry(model, expr)
            or queue_items(model, expr, awaited=False)
            or call_sources(model, expr)
        )
    if isinstance(expr, ast.Await) and isinstance(expr.value, ast.Call):
        return queue_items(model, expr.value, awaited=True)  # `await queue.get()`
    if isinstance(expr, ast.NamedExpr):
        return [expr.value]
    return []


def keyed_entry(model: ModelQueries, call: ast.Call) -> list[ast.expr]:
    """`STATE.get("key")` (no default, or None): the entry the module set under that key."""
    func, args = call.func, call.args
    if not (isinstance(func, ast.Attribute) and func.attr == "get") or call.keywords:
        return []
    if not 1 <= len(args) <= 2 or not (
        isinstance(args[0], ast.Constant) and isinstance(args[0].value, str)
    ):
        return []
    if len(args) == 2 and not (isinstance(args[1], ast.Constant) and args[1].value is None):
        return []
    entries = dict_entries(model, func.value)
    entry = entries.get(args[0].value) if entries else None
    return [entry] if entry is not None else []


def queue_items(model: ModelQueries, call: ast.Call, *, awaited: bool) -> list[ast.expr]:
    """`await queue.get()` (`awaited`) / `queue.get_nowait()` of an `asyncio.Queue()` bound to
    a name: what the module puts in it (`queue.put_nowait(e)`, `await queue.put(e)`)."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == ("get" if awaited else "get_nowait")
        and not call.args
        and isinstance(func.value, ast.Name)
    ):
        return []
    found: list[ast.expr] = []
    todo: list[Any] = list(model.name_bindings(func.value))
    made_queue = False
    for _ in range(16):  # along aliases and call sites, a few steps back
        if not todo:
            break
        item = todo.pop()
        if isinstance(item, ast.expr):
            made = item  # an argument a call site passes
        else:
            found += [value for how, _, value in item.parts or () if how == "item"]
            made = item.expr
            if item.param is not None:
                # `async def worker(queue)`: the queue every call site passes
                given = _arguments_given(model, *item.param)
                if not given:
                    return []
                todo += given
                continue
        if isinstance(made, ast.Name):
            todo += model.name_bindings(made)  # `worker(queue)`, `queue = queue_value`
            continue
        head = made.func if isinstance(made, ast.Call) else None
        name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", None)
        if name not in ("Queue", "LifoQueue", "PriorityQueue"):
            return []
        made_queue = True
    return found if made_queue and not todo else []


def _name_sources(model: ModelQueries, name: ast.Name, depth: int) -> list[ast.expr]:
    found: list[ast.expr] = []
    for binding in model.name_bindings(name):
        expr = binding.expr
        if expr is not None:
            # `b = a`: an alias has the value of the name it copies (when that is known).
            further = (
                _name_sources(model, expr, depth - 1)
                if isinstance(expr, ast.Name) and depth > 0 and not binding.parts
                else []
            )
            found += further or [expr]
        elif binding.param is not None:
            found += _arguments_given(model, *binding.param)
        elif isinstance(binding.element_of, ast.List | ast.Tuple) and not any(
            isinstance(e, ast.Starred) for e in binding.element_of.elts
        ):
            found += binding.element_of.elts  # `for x in [a, b]`
    return found


def literal(model: ModelQueries, expr: ast.AST | None) -> ast.expr | None:
    """The constant (`ast.Constant`, or `-N`) that `expr` is or evaluates to through
    `value_of` (a name, `Settings.X`, `cfg.x`, `args.x`, `CONFIG["k"]`, a parameter with one
    call site...), else None."""
    for _ in range(8):
        if isinstance(expr, ast.Constant) or (
            isinstance(expr, ast.UnaryOp)
            and isinstance(expr.op, ast.USub)
            and isinstance(expr.operand, ast.Constant)
        ):
            return expr
        if not isinstance(expr, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
            return None
        expr = value_of(model, expr)
    return None


def mutations(model: ModelQueries, name: ast.Name) -> list[tuple[str, Any, ast.expr]]:
    """What was done to the object a name holds after it was bound, as (how, key, value):
    ("item", None, e) for `x.append(e)`, ("items", None, e) for `x.extend(e)` / `x += e` /
    `x.update(e)`, ("set", index or slice, e) for `x[k] = e`, ("attr", name, e) for
    `x.name = e`."""
    found: list[tuple[str, Any, ast.expr]] = []
    for binding in model.name_bindings(name):
        found += binding.parts or ()
    return found


def function_of(
    model: ModelQueries, name: ast.Name
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `def` a name read refers to (the binding that reaches the read), else None."""
    binding = model.resolve(name)
    return binding.function if binding is not None else None


def origins(model: ModelQueries, expr: ast.AST | None, limit: int = 200) -> list[ast.expr]:
    """Every expression the value of `expr` is built from (see the module docstring)."""
    if expr is None:
        return []
    key = (id(expr), limit)
    built_from = model.value_memo.built_from
    found = built_from.get(key)
    if found is None:  # several rules ask about the same expressions
        found = built_from[key] = _origins_of(model, expr, limit)
    return list(found)  # the caller's own list


def _origins_of(model: ModelQueries, expr: ast.AST, limit: int) -> list[ast.expr]:
    out: list[ast.expr] = []
    seen: set[int] = set()
    # `Any`: the nodes are told apart by class tests (this runs for every node of every origin,
    # and `isinstance` costs a call per test), on which a type checker does not narrow.
    stack: list[Any] = [expr]
    while stack and len(out) < limit:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        node_class = node.__class__
        if node_class is ast.Name:
            for binding in model.name_bindings(node):
                if binding.expr is not None:
                    stack.append(binding.expr)
                for how, _key, part in binding.parts or ():
                    if how != "attr":
                        stack.append(part)
        elif node_class is ast.Constant:
            pass
        elif node_class is ast.BinOp:
            if node.op.__class__ in (ast.Add, ast.Mult):
                stack += (node.right, node.left)
        elif node_class is ast.IfExp:
            stack += (node.orelse, node.body)
        elif node_class in ELEMENT_OF:
            stack.append(node.elt)
        elif node_class in ELEMENTS:
            stack.extend(reversed(node.elts))
        elif node_class in WRAPS:
            stack.append(node.value)
        elif node_class is ast.Subscript:
            if node.slice.__class__ is ast.Slice:
                stack.append(node.value)
        elif node_class is ast.Attribute:
            stack.extend(reversed(attribute_sources(model, node)))
        elif node_class is ast.Call:
            converted = converted_argument(node)
            if converted is not None:
                stack.append(converted)
            else:
                stack.extend(reversed(call_sources(model, node)))
    return out


def dict_entries(model: ModelQueries, expr: ast.AST | None) -> dict[str, ast.expr] | None:
    """String-keyed entries of a dict value, or None when `expr` is not known to be a dict."""
    busy = model.value_memo.resolving_dicts
    if expr is None or id(expr) in busy or len(busy) > 32:
        return None  # a cycle back to a dict being resolved, or a chain too long to follow
    busy.add(id(expr))
    try:
        return _dict_entries(model, expr, set())
    finally:
        busy.discard(id(expr))


def _dict_entries(
    model: ModelQueries, expr: ast.AST | None, seen: set[int]
) -> dict[str, ast.expr] | None:
    if expr is None or id(expr) in seen or len(seen) > 64:
        return None
    seen.add(id(expr))
    entries: dict[str, ast.expr] = {}
    if isinstance(expr, ast.Dict):
        for key, value in zip(expr.keys, expr.values, strict=True):
            if key is None:
                entries.update(_dict_entries(model, value, seen) or {})
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries[key.value] = value
        return entries
    func = expr.func if isinstance(expr, ast.Call) else None
    if isinstance(expr, ast.Call) and isinstance(func, ast.Name) and func.id == "dict":
        if model.resolve(func) is not None:
            return None  # a local `dict` is not the builtin
        if expr.args:
            entries.update(_dict_entries(model, expr.args[0], seen) or {})
        for kw in expr.keywords:
            if kw.arg is None:
                entries.update(_dict_entries(model, kw.value, seen) or {})
            else:
                entries[kw.arg] = kw.value
        return entries
    if isinstance(expr, ast.Name):
        bindings = model.name_bindings(expr)
        if len(bindings) != 1:
            return None
        if bindings[0].expr is None:  # a parameter (its call site) or a loop variable
            one = value_of(model, expr)
            return _dict_entries(model, one, seen) if one is not None else None
        found = _dict_entries(model, bindings[0].expr, seen)
        if found is None:
            return None
        found = dict(found)
        for how, key, part in bindings[0].parts or ():
            if how == "set" and isinstance(key, ast.Constant) and isinstance(key.value, str):
                found[key.value] = part
            elif how == "items":
                found.update(_dict_entries(model, part, seen) or {})
        return found
    one = (
        value_of(model, expr)
        if isinstance(expr, ast.Attribute | ast.Call | ast.Subscript)
        else None
    )
    return _dict_entries(model, one, seen) if one is not None else None


def _arguments_given(
    model: ModelQueries, function: str, index: int | None, name: str
) -> list[ast.expr]:
    """The expressions the module's calls pass for one parameter (empty when any call site
    passes it by `*args`/`**kwargs` or not at all: its value there is unknown)."""
    calls = model.definitions.calls(function)
    if len(model.definitions.functions(function)) != 1 or not calls:
        return []
    found: list[ast.expr] = []
    for call in calls:
        arg = keyword_value(call, name)
        if arg is None and index is not None:
            if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
                return []
            if index < len(call.args):
                arg = call.args[index]
        if arg is None:
            return []
        found.append(arg)
    return found


def call_sources(model: ModelQueries, call: ast.Call) -> list[ast.expr]:
    functions = functions_called(model, call)
    if functions:
        (function,) = functions
        if isinstance(function, ast.AsyncFunctionDef):
            return []  # calling it makes a coroutine, not the returned value
        return list(model.definitions.returns(function))
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name in FIELD_CALLS:  # `field(default=x)`, pydantic `Field(x)`
        default = keyword_value(call, "default")
        if default is None and name == "Field" and call.args:
            default = call.args[0]
        if default is not None:
            return [default]
        factory = keyword_value(call, "default_factory")
        if isinstance(factory, ast.Lambda):
            return [factory.body]
    if isinstance(func, ast.Attribute):
        # `config.sampling()` / `self.config.sampling()` with `config: Config` (or
        # `Config(...)`): what the method of that class of the module returns.
        for scope in _instance_classes(model, func.value, 3):
            method = scope.methods.get(func.attr)
            if method is not None and not isinstance(method, ast.AsyncFunctionDef):
                return list(model.definitions.returns(method))
    return []


def _instance_classes(model: ModelQueries, expr: ast.AST, depth: int) -> list[Scope]:
    """The class of this module an instance expression is of: a name annotated with it or
    bound to `Cls(...)`, or `self.x` bound to such a name in another method."""
    if depth <= 0:
        return []
    if isinstance(expr, ast.Call):
        return _class_scopes(model, expr.func)
    if isinstance(expr, ast.Name):
        bindings = model.name_bindings(expr)
        if len(bindings) != 1:
            return []
        binding = bindings[0]
        if binding.annotation is not None:
            return _class_scopes(model, binding.annotation)
        return _instance_classes(model, binding.expr, depth - 1) if binding.expr else []
    if isinstance(expr, ast.Attribute) and model.definitions.owner(expr) is not None:
        found = attribute_sources(model, expr)
        return _instance_classes(model, found[0], depth - 1) if len(found) == 1 else []
    return []


def _class_scopes(model: ModelQueries, expr: ast.AST | None) -> list[Scope]:
    """The class(es) of this module an expression names (`Cfg` -> Cfg's scope)."""
    if isinstance(expr, ast.Name):
        return _one_definition(model, expr, model.definitions.classes(expr.id))
    return []


def _class_attr(model: ModelQueries, scopes: list[Scope], attr: str) -> list[ast.expr]:
    for scope in scopes:
        bindings = scope.history.get(attr)
        if bindings:
            return [b.expr for b in bindings if b.expr is not None]
    return []


def attribute_sources(model: ModelQueries, node: ast.Attribute) -> list[ast.expr]:
    attr = node.attr
    owner = model.definitions.owner(node)
    if owner is not None:  # `self.x`: bound in any method, else a class-level value
        bound = [b.expr for b in owner.attributes.get(attr, []) if b.expr is not None]
        if bound or owner.attributes.get(attr):
            return bound
        return [_field_default(model, e) for e in _class_attr(model, [owner], attr)]
    classes = _class_scopes(model, node.value)
    if classes:  # `Cfg.x`
        return [_field_default(model, e) for e in _class_attr(model, classes, attr)]
    if isinstance(node.value, ast.Name):
        bindings = model.name_bindings(node.value)
        if len(bindings) == 1:
            binding = bindings[0]
            if binding.annotation is not None:  # `cfg: Cfg`
                classes = _class_scopes(model, binding.annotation)
                if classes:
                    return [_field_default(model, e) for e in _class_attr(model, classes, attr)]
            value = binding.expr
            if isinstance(value, ast.Call):
                found = _instance_attribute(model, value, attr)
                if found is not None:
                    return found
    return []


def _instance_attribute(model: ModelQueries, call: ast.Call, attr: str) -> list[ast.expr] | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in ("parse_args", "parse_known_args"):
        if func.attr == "parse_args":
            return list(model.definitions.argparse_defaults(attr))
        return None
    classes = _class_scopes(model, func)
    if not classes:
        return None
    given = keyword_value(call, attr)
    if given is not None:
        return [given]
    if call.args or any(kw.arg is None for kw in call.keywords):
        return []  # positional fields or **kwargs: which field got which value is unknown
    return [_field_default(model, e) for e in _class_attr(model, classes, attr)]


def _field_default(model: ModelQueries, expr: ast.expr) -> ast.expr:
    if isinstance(expr, ast.Call):
        found = call_sources(model, expr) if _is_field_call(expr) else []
        if len(found) == 1:
            return found[0]
    return expr


def functions_called(model: ModelQueries, call: ast.Call) -> list[FunctionNode]:
    """The function of the unit a call calls: `f(...)` of its one plain `def f` (when `f` is not
    rebound to a value), `self.m(...)` of a method of the enclosing class; else empty."""
    func = call.func
    if isinstance(func, ast.Name):
        return _one_definition(model, func, model.definitions.functions(func.id))
    if isinstance(func, ast.Attribute):
        owner = model.definitions.owner(func)
        if owner is not None and func.attr in owner.methods:
            return [owner.methods[func.attr]]
    return []


def _one_definition(model: ModelQueries, name: ast.Name, found: list[_T]) -> list[_T]:
    """`found` (the unit's definitions of `name`'s id) when there is one and the read does not
    see the name bound to a value instead; else empty."""
    binding = model.resolve(name)
    return found if len(found) == 1 and (binding is None or binding.expr is None) else []


def _is_field_call(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name in FIELD_CALLS


def converted_argument(call: ast.Call) -> ast.expr | None:
    """The container a conversion call copies (`list(x)`, `np.asarray(x)`, `x.tolist()`)."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in CONVERSION_FUNCS and len(call.args) == 1:
            return call.args[0]
        return None
    if isinstance(func, ast.Attribute):
        if func.attr in CONVERSION_ATTRS and call.args:
            return call.args[0]
        if func.attr in SELF_CONVERSIONS and not call.args:
            return func.value
        if func.attr in SELF_CONVERSIONS and func.attr == "to":
            return func.value
    return None
