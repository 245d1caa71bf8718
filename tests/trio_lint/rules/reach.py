"""Reach by construction: variants of every rule's documented examples that carry a value one
name, attribute, parameter or task further than the example does.

A *value route* takes one value of an example -- a name bound once in its scope (`x = E`, read
later), an argument of the call a finding points at, or an SDK-client parameter -- and makes it
arrive through another way of binding it (a module constant, `self.x` set in `__init__`, a
helper's return value, a parameter given at a call site, a config object...). A *placement*
moves the code that consumes it (into a method, a nested function, a coroutine started as a
task). INVALID variants must still be flagged with the rule's code and VALID variants must stay
quiet; a rule names the routes it does not follow in `Rule.reach` (rendered under "Limitations"
in its doc) and the routes that do not apply to it.

Everything here works on `ast` trees and writes variants with `ast.unparse`, so it is fast enough
to run over every example in the test suite (`tests/trio_lint/rules/test_reach.py`) and for
`bench/lint_reach_table.py`, which prints the route x rule table.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from trio_lint import lint_source
from trio_lint.rules.base import REACH_ROUTES, Rule

__all__ = ["Outcome", "Variant", "check_route", "routes", "variants"]

ROUTES = tuple(REACH_ROUTES)
_CLIENT_CONSTRUCTORS = {
    "ServiceClient": "{sdk}.ServiceClient()",
    "TrainingClient": "{sdk}.ServiceClient().create_lora_training_client(base_model='m')",
    "SamplingClient": "{sdk}.ServiceClient().create_sampling_client(base_model='m')",
    "RestClient": "{sdk}.ServiceClient().create_rest_client()",
}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Variant:
    route: str
    code: str
    what: str  # which value or code was moved, for messages


def routes() -> tuple[str, ...]:
    return ROUTES


# --- small ast helpers --------------------------------------------------------------------------


def _parse_stmts(code: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(code)).body


def _expr(code: str) -> ast.expr:
    return ast.parse(code, mode="eval").body


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(nodes: list[ast.stmt]) -> list[str]:
    """Names bound directly in these statements (not inside nested scopes)."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append(child.name)
                continue
            if isinstance(child, (ast.Lambda, *_COMPREHENSIONS)):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                out.append(child.id)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                out.extend((a.asname or a.name).split(".")[0] for a in child.names)
            elif isinstance(child, (ast.Global, ast.Nonlocal)):
                out.extend(child.names)
            visit(child)

    holder = ast.Module(body=list(nodes), type_ignores=[])
    visit(holder)
    return out


def _has(node: ast.AST, *kinds: type) -> bool:
    return any(isinstance(n, kinds) for n in ast.walk(node))


def _awaits(node: ast.AST) -> bool:
    """An `await` (or async comprehension / for / with) outside nested functions."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if isinstance(current, ast.comprehension) and current.is_async:
            return True
        if current is not node and isinstance(current, (*_SCOPES,)):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return False


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    return [
        *a.posonlyargs,
        *a.args,
        *([a.vararg] if a.vararg else []),
        *a.kwonlyargs,
        *([a.kwarg] if a.kwarg else []),
    ]


class _Replace(ast.NodeTransformer):
    """Replace reads of `name` by `make()`, except inside scopes that bind `name` again."""

    def __init__(self, name: str, make: Callable[[], ast.expr]) -> None:
        self.name, self.make = name, make

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(self.make(), node)
        return node

    def _scope(self, node: ast.AST, bound: set[str]) -> ast.AST:
        return node if self.name in bound else self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        for d in node.decorator_list:
            self.visit(d)
        return self._scope(node, {p.arg for p in _params(node)} | set(_stores(node.body)))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return self._scope(node, {p.arg for p in _params(node)})  # type: ignore[arg-type]


def _replace(stmts: list[ast.stmt], name: str, make: Callable[[], ast.expr]) -> list[ast.stmt]:
    replacer = _Replace(name, make)
    return [replacer.visit(copy.deepcopy(s)) for s in stmts]


def _read_in_nested_scope(stmts: list[ast.stmt], name: str) -> bool:
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (*_SCOPES,)) and name in _loads(node):
                return True
    return False


def _fresh(module: ast.Module, base: str) -> str:
    """A name nothing in the module uses yet (names given out are remembered on the module)."""
    used = module.__dict__.get("used_names")
    if used is None:
        used = module.__dict__["used_names"] = (
            {n.id for n in ast.walk(module) if isinstance(n, ast.Name)}
            | {n.name for n in ast.walk(module) if isinstance(n, (*_SCOPES[:2], ast.ClassDef))}
            | {n.arg for n in ast.walk(module) if isinstance(n, ast.arg)}
        )
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base}{n}"
    used.add(name)
    return name


def _parsed(text: str) -> ast.Module:
    """A fresh tree of `text` (re-parsing a small module is several times cheaper than
    `copy.deepcopy` of its tree, and gives the same structure)."""
    module = ast.parse(text)
    module.__dict__["text"] = text
    return module


def _clone(module: ast.Module) -> ast.Module:
    text = module.__dict__.get("text")
    if text is None:
        text = module.__dict__["text"] = ast.unparse(module)
    return _parsed(text)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _immutable_literal(node: ast.expr) -> bool:
    return _literal(node) and not _has(node, ast.List, ast.Dict, ast.Set)


def _imported_names(module: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    return names


def _add_import(module: ast.Module, line: str) -> None:
    """Add `line` at the top when the variant is rendered (not now: routes hold statement
    indices into the module's body)."""
    pending = module.__dict__.setdefault("pending_imports", [])
    if line not in pending:
        pending.append(line)


def _render(module: ast.Module) -> str:
    for line in reversed(module.__dict__.get("pending_imports", [])):
        stmt = ast.parse(line).body[0]
        if not any(ast.dump(s) == ast.dump(stmt) for s in module.body):
            first = module.body[0] if module.body else None
            future = isinstance(first, ast.ImportFrom) and first.module == "__future__"
            module.body.insert(1 if future else 0, stmt)
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"


# --- where a value lives -----------------------------------------------------------------------


@dataclass
class _Scope:
    body: list[ast.stmt]  # the statement list the source is in (the scope's own body)
    function: ast.FunctionDef | ast.AsyncFunctionDef | None
    cls: ast.ClassDef | None  # the class of a method
    top: ast.stmt | None  # the module-level statement holding the function (None: the module)

    @property
    def is_async(self) -> bool:
        return isinstance(self.function, ast.AsyncFunctionDef)

    def locals(self) -> set[str]:
        if self.function is None:
            return set()
        return {p.arg for p in _params(self.function)} | set(_stores(self.function.body))

    def param_names(self) -> list[str]:
        return [p.arg for p in _params(self.function)] if self.function else []

    def param(self, name: str) -> ast.arg | None:
        for p in _params(self.function) if self.function else ():
            if p.arg == name:
                return p
        return None


def _scopes(module: ast.Module) -> Iterator[_Scope]:
    yield _Scope(module.body, None, None, None)
    for top in module.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield _Scope(top.body, top, None, top)
        elif isinstance(top, ast.ClassDef):
            for item in top.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield _Scope(item.body, item, top, top)


@dataclass
class _Source:
    """`name = expr` at `body[index]` of a scope, `name` bound nowhere else there, read later."""

    scope: _Scope
    index: int
    name: str
    expr: ast.expr

    def rest(self) -> list[ast.stmt]:
        return self.scope.body[self.index + 1 :]


def _sources(module: ast.Module) -> Iterator[tuple[int, int]]:
    """(scope number, statement index) of every routable binding."""
    for number, scope in enumerate(_scopes(module)):
        bound = _stores(scope.body)
        params = set(scope.param_names())
        for index, stmt in enumerate(scope.body):
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                continue
            name = stmt.targets[0].id
            if (
                bound.count(name) != 1
                or name in params
                or _has(stmt.value, ast.NamedExpr, ast.Yield)
            ):
                continue
            if any(name in _loads(s) for s in scope.body[index + 1 :]):
                yield number, index


def _source(module: ast.Module, number: int, index: int) -> _Source:
    scope = list(_scopes(module))[number]
    stmt = scope.body[index]
    assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
    return _Source(scope, index, stmt.targets[0].id, stmt.value)


def _insert_before_top(module: ast.Module, src: _Source, stmts: list[ast.stmt]) -> None:
    """Module-level definitions go right before the statement holding the source's scope (at
    the source itself when it is module level)."""
    anchor = src.scope.top if src.scope.top is not None else src.scope.body[src.index]
    at = next(i for i, s in enumerate(module.body) if s is anchor)
    module.body[at:at] = stmts


def _uses_locals(src: _Source, node: ast.AST | list[ast.stmt]) -> set[str]:
    nodes = node if isinstance(node, list) else [node]
    used: set[str] = set()
    for n in nodes:
        used |= _loads(n)
    return used & src.scope.locals()


def _call(func: ast.expr, args: list[ast.expr], awaited: bool) -> ast.expr:
    call: ast.expr = ast.Call(func=func, args=args, keywords=[])
    return ast.Await(value=call) if awaited else call


def _arg(scope: _Scope, name: str) -> ast.arg:
    param = scope.param(name)
    return copy.deepcopy(param) if param is not None else ast.arg(arg=name)


def _class(name: str, body: list[ast.stmt]) -> ast.ClassDef:
    return ast.ClassDef(
        name=name, bases=[], keywords=[], decorator_list=[], type_params=[], body=body
    )


def _function(name: str, params: list[ast.arg], body: list[ast.stmt], is_async: bool) -> ast.stmt:
    kind = ast.AsyncFunctionDef if is_async else ast.FunctionDef
    return kind(
        name=name,
        args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body or [ast.Pass()],
        decorator_list=[],
        returns=None,
        type_params=[],
    )


# --- value routes: each edits `module` in place for the source, or returns False (n/a) -------


def _route_local_name(module: ast.Module, src: _Source) -> bool:
    alias = _fresh(module, f"{src.name}_value")
    src.scope.body[src.index : src.index + 1] = [
        ast.Assign(targets=[ast.Name(alias, ast.Store())], value=src.expr),
        ast.Assign(targets=[ast.Name(src.name, ast.Store())], value=ast.Name(alias, ast.Load())),
    ]
    return True


def _hoistable(src: _Source) -> bool:
    return not _uses_locals(src, src.expr) and not _awaits(src.expr)


def _route_module_constant(module: ast.Module, src: _Source) -> bool:
    if not _hoistable(src):
        return False
    const = _fresh(module, src.name.upper() if src.name.upper() != src.name else f"{src.name}_C")
    rest = src.rest()
    del src.scope.body[src.index :]
    if src.scope.function is None:
        # A constant read at module level is a local name: read it from a function instead.
        if _read_in_nested_scope(rest, src.name) and any(isinstance(s, (*_SCOPES,)) for s in rest):
            pass
        main = _fresh(module, "main")
        body = _replace(rest, src.name, lambda: ast.Name(const, ast.Load()))
        if any(isinstance(s, (ast.Return, ast.Global)) for s in body):
            return False
        module.body.extend(
            [
                ast.Assign(targets=[ast.Name(const, ast.Store())], value=src.expr),
                _function(main, [], body, False),
                ast.Expr(_call(ast.Name(main, ast.Load()), [], False)),
            ]
        )
        return True
    src.scope.body.extend(_replace(rest, src.name, lambda: ast.Name(const, ast.Load())))
    _insert_before_top(
        module, src, [ast.Assign(targets=[ast.Name(const, ast.Store())], value=src.expr)]
    )
    return True


def _route_class_attribute(module: ast.Module, src: _Source) -> bool:
    if not _hoistable(src):
        return False
    cls = _fresh(module, "Settings")
    attr = src.name.upper()
    rest = _replace(src.rest(), src.name, lambda: _expr(f"{cls}.{attr}"))
    del src.scope.body[src.index :]
    src.scope.body.extend(rest)
    holder = _class(
        cls,
        [ast.Assign(targets=[ast.Name(attr, ast.Store())], value=src.expr)],
    )
    _insert_before_top(module, src, [holder])
    return True


def _route_init_attribute(module: ast.Module, src: _Source) -> bool:
    """`self.x = E` in `__init__`, read as `self.x` in another method."""
    rest = src.rest()
    prefix = src.scope.body[: src.index]
    if (
        _awaits(src.expr)
        or any(_awaits(s) for s in prefix)
        or _read_in_nested_scope(rest, src.name)
    ):
        return False
    attr_of = lambda: _expr(f"self.{src.name}")  # noqa: E731
    scope = src.scope
    if scope.cls is not None:
        if _uses_locals(src, src.expr) - {"self"} or prefix:
            return False
        init = next(
            (s for s in scope.cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"),
            None,
        )
        assign = ast.parse(f"self.{src.name} = 0").body[0]
        assign.value = src.expr  # type: ignore[attr-defined]
        if init is None:
            scope.cls.body.insert(0, _function("__init__", [ast.arg("self")], [assign], False))
        else:
            init.body.append(assign)
        del scope.body[src.index :]
        scope.body.extend(_replace(rest, src.name, attr_of) or [ast.Pass()])
        return True
    if scope.function is None:
        # Module level: what comes before stays global; the rest is read in another method.
        if any(isinstance(s, (ast.Return, ast.Global)) for s in rest):
            return False
        cls = _fresh(module, "Holder")
        assign = ast.parse(f"self.{src.name} = 0").body[0]
        assign.value = src.expr  # type: ignore[attr-defined]
        holder = _class(
            cls,
            [
                _function("__init__", [ast.arg("self")], [assign], False),
                _function("run", [ast.arg("self")], _replace(rest, src.name, attr_of), False),
            ],
        )
        module.body[src.index :] = [holder, ast.Expr(_expr(f"{cls}().run()"))]
        return True
    params = scope.param_names()
    prefix_locals = set(_stores(prefix))
    if _uses_locals(src, rest) & (prefix_locals - {src.name}):
        return False
    if any(isinstance(s, (ast.Global, ast.Nonlocal)) for s in prefix + rest):
        return False
    cls = _fresh(module, "Holder")
    init_params = [ast.arg("self"), *(_arg(scope, p) for p in params)]
    run_params = [ast.arg("self"), *(_arg(scope, p) for p in params)]
    assign = ast.parse(f"self.{src.name} = 0").body[0]
    assign.value = src.expr  # type: ignore[attr-defined]
    holder = _class(
        cls,
        [
            _function("__init__", init_params, [*prefix, assign], False),
            _function("run", run_params, _replace(rest, src.name, attr_of), scope.is_async),
        ],
    )
    names = [ast.Name(p, ast.Load()) for p in params]
    instance = ast.Call(func=ast.Name(cls, ast.Load()), args=names, keywords=[])
    run = ast.Attribute(value=instance, attr="run", ctx=ast.Load())
    scope.body[:] = [ast.Return(_call(run, copy.deepcopy(names), scope.is_async))]
    _insert_before_top(module, src, [holder])
    return True


def _route_helper_return(module: ast.Module, src: _Source) -> bool:
    used = _uses_locals(src, src.expr)
    scope = src.scope
    if used - set(scope.param_names()):
        return False
    is_async = _awaits(src.expr)
    if is_async and not scope.is_async:
        return False
    helper = _fresh(module, f"make_{src.name}")
    args = [p for p in scope.param_names() if p in used]
    if scope.cls is not None and "self" in used:
        fn = _function(
            f"_{helper}", [_arg(scope, a) for a in args], [ast.Return(src.expr)], is_async
        )
        scope.cls.body.append(fn)
        call = _call(
            _expr(f"self._{helper}"),
            [ast.Name(a, ast.Load()) for a in args if a != "self"],
            is_async,
        )
    else:
        if "self" in used:
            return False
        fn = _function(helper, [_arg(scope, a) for a in args], [ast.Return(src.expr)], is_async)
        call = _call(
            ast.Name(helper, ast.Load()), [ast.Name(a, ast.Load()) for a in args], is_async
        )
        # The binding first: at module level the helper goes in before it, moving its index.
        scope.body[src.index] = ast.Assign(targets=[ast.Name(src.name, ast.Store())], value=call)
        _insert_before_top(module, src, [fn])
        return True
    scope.body[src.index] = ast.Assign(targets=[ast.Name(src.name, ast.Store())], value=call)
    return True


def _consumer(module: ast.Module, src: _Source, as_method: bool) -> bool:
    """The code after the binding becomes a function taking the value as a parameter, called
    with the expression at the binding's place."""
    scope = src.scope
    rest = src.rest()
    prefix_locals = set(_stores(scope.body[: src.index]))
    used = _uses_locals(src, rest) - {src.name}
    if used & prefix_locals or any(isinstance(s, (ast.Global, ast.Nonlocal)) for s in rest):
        return False
    if scope.function is None and any(isinstance(s, ast.Return) for s in rest):
        return False
    passed = [p for p in scope.param_names() if p in used]
    consume = _fresh(module, "consume")
    params = [ast.arg(src.name), *(_arg(scope, p) for p in passed)]
    args = [src.expr, *(ast.Name(p, ast.Load()) for p in passed)]
    if "self" in used:
        if scope.cls is None or not as_method:
            return False
        params = [
            ast.arg("self"),
            ast.arg(src.name),
            *(_arg(scope, p) for p in passed if p != "self"),
        ]
        args = [src.expr, *(ast.Name(p, ast.Load()) for p in passed if p != "self")]
        scope.cls.body.append(_function(f"_{consume}", params, rest, scope.is_async))
        call = _call(_expr(f"self._{consume}"), args, scope.is_async)
    elif as_method:
        cls = _fresh(module, "Runner")
        holder = _class(
            cls,
            [_function(consume, [ast.arg("self"), *params], rest, scope.is_async)],
        )
        call = _call(_expr(f"{cls}().{consume}"), args, scope.is_async)
        if scope.function is None:
            module.body[src.index :] = [holder]
        else:
            _insert_before_top(module, src, [holder])
    else:
        fn = _function(consume, params, rest, scope.is_async)
        call = _call(ast.Name(consume, ast.Load()), args, scope.is_async)
        if scope.function is None:
            module.body[src.index :] = [fn]
        else:
            _insert_before_top(module, src, [fn])
    if scope.function is None:
        scope.body.append(ast.Expr(call))
        return not isinstance(call, ast.Await)
    del scope.body[src.index :]
    scope.body.append(ast.Return(call))
    return True


def _route_call_site_parameter(module: ast.Module, src: _Source) -> bool:
    return _consumer(module, src, as_method=False)


def _route_call_site_method_parameter(module: ast.Module, src: _Source) -> bool:
    return _consumer(module, src, as_method=True)


def _annotation(expr: ast.expr) -> str:
    value = ast.literal_eval(expr) if _literal(expr) else None
    if isinstance(value, bool) or (value is None and _literal(expr)):
        return "bool" if isinstance(value, bool) else "object"
    if _literal(expr):
        return type(value).__name__
    return "object"


def _config_object(module: ast.Module, src: _Source, pydantic: bool) -> bool:
    if not (_immutable_literal(src.expr) or (pydantic and _literal(src.expr))):
        if not pydantic or _uses_locals(src, src.expr) or _awaits(src.expr):
            return False
        # An SDK object as a pydantic field default: only constructions from module names.
        if any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id not in _imported_names(module)
            for n in ast.walk(src.expr)
        ):
            return False
    cls = _fresh(module, "Config")
    obj = _fresh(module, "config")
    if pydantic:
        _add_import(module, "import pydantic")
        header = f"class {cls}(pydantic.BaseModel):\n    {src.name}: {_annotation(src.expr)} = 0"
        if _annotation(src.expr) == "object":
            _add_import(module, "import typing")
            header = f"class {cls}(pydantic.BaseModel):\n    {src.name}: typing.Any = 0"
    else:
        _add_import(module, "import dataclasses")
        header = (
            f"@dataclasses.dataclass\nclass {cls}:\n    {src.name}: {_annotation(src.expr)} = 0"
        )
    holder = ast.parse(header).body[0]
    holder.body[0].value = src.expr  # type: ignore[attr-defined]
    rest = _replace(src.rest(), src.name, lambda: _expr(f"{obj}.{src.name}"))
    src.scope.body[src.index :] = [
        ast.Assign([ast.Name(obj, ast.Store())], _expr(f"{cls}()")),
        *rest,
    ]
    _insert_before_top(module, src, [holder])
    return True


def _route_dataclass_default(module: ast.Module, src: _Source) -> bool:
    return _config_object(module, src, pydantic=False)


def _route_pydantic_default(module: ast.Module, src: _Source) -> bool:
    return _config_object(module, src, pydantic=True)


def _route_argparse_default(module: ast.Module, src: _Source) -> bool:
    if not _literal(src.expr):
        return False
    _add_import(module, "import argparse")
    parser = _fresh(module, "parser")
    args = _fresh(module, "args")
    flag = src.name.replace("_", "-")
    setup = ast.parse(
        f"{parser} = argparse.ArgumentParser()\n{parser}.add_argument('--{flag}', default=0)"
    ).body
    setup[1].value.keywords[0].value = src.expr  # type: ignore[attr-defined]
    rest = _replace(src.rest(), src.name, lambda: _expr(f"{args}.{src.name}"))
    src.scope.body[src.index :] = [
        ast.Assign([ast.Name(args, ast.Store())], _expr(f"{parser}.parse_args()")),
        *rest,
    ]
    _insert_before_top(module, src, setup)
    return True


def _route_config_dict(module: ast.Module, src: _Source) -> bool:
    key = src.name
    if _hoistable(src):
        name = _fresh(module, "CONFIG")
        rest = _replace(src.rest(), src.name, lambda: _expr(f"{name}[{key!r}]"))
        src.scope.body[src.index :] = rest
        holder = ast.Assign(
            [ast.Name(name, ast.Store())], ast.Dict([ast.Constant(key)], [src.expr])
        )
        _insert_before_top(module, src, [holder])
        return True
    name = _fresh(module, "config")
    rest = _replace(src.rest(), src.name, lambda: _expr(f"{name}[{key!r}]"))
    src.scope.body[src.index :] = [
        ast.Assign([ast.Name(name, ast.Store())], ast.Dict([ast.Constant(key)], [src.expr])),
        *rest,
    ]
    return True


def _route_loop_variable(module: ast.Module, src: _Source) -> bool:
    rest = src.rest()
    if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for s in rest):
        return False
    loop = ast.For(
        target=ast.Name(src.name, ast.Store()),
        iter=ast.List([src.expr], ast.Load()),
        body=rest,
        orelse=[],
    )
    src.scope.body[src.index :] = [loop]
    return True


def _route_dict_entry_get(module: ast.Module, src: _Source) -> bool:
    """`STATE[key] = E` into a module-level dict made empty, read as `STATE.get(key)`."""
    key = src.name
    name = _fresh(module, "STATE")
    rest = _replace(src.rest(), src.name, lambda: _expr(f"{name}.get({key!r})"))
    store = ast.parse(f"{name}[{key!r}] = 0").body[0]
    store.value = src.expr  # type: ignore[attr-defined]
    src.scope.body[src.index :] = [store, *rest]
    holder = ast.Assign([ast.Name(name, ast.Store())], ast.Dict([], []))
    _insert_before_top(module, src, [holder])
    return True


def _route_annotated_parameter(module: ast.Module, src: _Source) -> bool:
    """The call-site parameter route, the parameter annotated with a plain type (`object`)."""
    if not _consumer(module, src, as_method=False):
        return False
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
            "consume"
        ):
            first = node.args.args[0]
            if first.arg == src.name and first.annotation is None:
                first.annotation = _expr(_annotation(src.expr))
                return True
    return False


def _route_nested_coroutine_parameter(module: ast.Module, src: _Source) -> bool:
    """The code after the binding becomes a nested `async def` taking the value as its
    parameter, called with the expression (awaited, or run with `asyncio.run` from sync code)."""
    scope = src.scope
    rest = src.rest()
    if scope.function is None or any(isinstance(s, (ast.Global, ast.Nonlocal)) for s in rest):
        return False
    inner = _fresh(module, "consume")
    fn = _function(inner, [ast.arg(src.name)], rest, True)
    call: ast.expr = ast.Call(func=ast.Name(inner, ast.Load()), args=[src.expr], keywords=[])
    if scope.is_async:
        call = ast.Await(call)
    else:
        _add_import(module, "import asyncio")
        call = ast.Call(func=_expr("asyncio.run"), args=[call], keywords=[])
    del scope.body[src.index :]
    scope.body.extend([fn, ast.Return(call)])
    return True


def _route_gathered_list(module: ast.Module, src: _Source) -> bool:
    """`x = await C` -> `xs = await asyncio.gather(C)`; `x = xs[0]`."""
    if not isinstance(src.expr, ast.Await) or not src.scope.is_async:
        return False
    _add_import(module, "import asyncio")
    items = _fresh(module, f"{src.name}_all")
    gathered = ast.Await(ast.Call(func=_expr("asyncio.gather"), args=[src.expr.value], keywords=[]))
    src.scope.body[src.index : src.index + 1] = [
        ast.Assign([ast.Name(items, ast.Store())], gathered),
        ast.Assign([ast.Name(src.name, ast.Store())], _expr(f"{items}[0]")),
    ]
    return True


def _route_queue_worker(module: ast.Module, src: _Source) -> bool:
    """The value goes into an `asyncio.Queue`; the code after the binding becomes a worker
    coroutine that takes it with `await queue.get()`."""
    scope = src.scope
    rest = src.rest()
    if scope.function is None or any(isinstance(s, (ast.Global, ast.Nonlocal)) for s in rest):
        return False
    _add_import(module, "import asyncio")
    queue = _fresh(module, "queue")
    worker = _fresh(module, "worker")
    take = ast.parse(f"{src.name} = await {queue}.get()").body[0]
    fn = _function(worker, [], [take, *rest], True)
    put = ast.parse(f"{queue}.put_nowait(0)").body[0]
    put.value.args[0] = src.expr  # type: ignore[attr-defined]
    call: ast.expr = ast.Call(func=ast.Name(worker, ast.Load()), args=[], keywords=[])
    if scope.is_async:
        call = ast.Await(call)
    else:
        call = ast.Call(func=_expr("asyncio.run"), args=[call], keywords=[])
    del scope.body[src.index :]
    scope.body.extend([_parse_stmts(f"{queue} = asyncio.Queue()")[0], put, fn, ast.Return(call)])
    return True


_VALUE_ROUTES: dict[str, Callable[[ast.Module, _Source], bool]] = {
    "local-name": _route_local_name,
    "module-constant": _route_module_constant,
    "class-attribute": _route_class_attribute,
    "init-attribute": _route_init_attribute,
    "helper-return": _route_helper_return,
    "call-site-parameter": _route_call_site_parameter,
    "call-site-method-parameter": _route_call_site_method_parameter,
    "dataclass-default": _route_dataclass_default,
    "pydantic-default": _route_pydantic_default,
    "argparse-default": _route_argparse_default,
    "config-dict": _route_config_dict,
    "loop-variable": _route_loop_variable,
    "dict-entry-get": _route_dict_entry_get,
    "annotated-parameter": _route_annotated_parameter,
    "nested-coroutine-parameter": _route_nested_coroutine_parameter,
    "gathered-list": _route_gathered_list,
    "queue-worker": _route_queue_worker,
}


# --- sources that are not bindings yet --------------------------------------------------------


def _bind_arguments(module: ast.Module, lines: set[int]) -> Iterator[ast.Module]:
    """Copies of `module` where one argument of a call on a flagged line is first bound to a
    name in the statement's scope (so the value routes can carry it)."""
    for number, scope in enumerate(_scopes(module)):
        for index, stmt in enumerate(scope.body):
            # Only a simple statement: binding an argument of a call inside a loop, a branch
            # or a `with` before the whole statement would change when it is evaluated.
            if not isinstance(
                stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
            ):
                continue
            for call in [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]:
                if call.lineno not in lines:
                    continue
                values = [*call.args, *(k.value for k in call.keywords if k.arg)]
                for position, value in enumerate(values):
                    if isinstance(value, (ast.Name, ast.Starred, ast.Lambda)) or _has(
                        value, ast.NamedExpr, ast.Yield, ast.Await, *_COMPREHENSIONS
                    ):
                        continue
                    # Comprehension variables and the like would leave the value's scope.
                    if _loads(value) & set(_comprehension_targets(stmt)):
                        continue
                    yield _bound_copy(module, number, index, stmt, call, position)


def _comprehension_targets(stmt: ast.stmt) -> list[str]:
    return [
        n.id
        for c in ast.walk(stmt)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    ] + [
        n.id
        for f in ast.walk(stmt)
        if isinstance(f, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith))
        for n in ast.walk(f)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _bound_copy(
    module: ast.Module, number: int, index: int, stmt: ast.stmt, call: ast.Call, position: int
) -> ast.Module:
    path = _path_to(module, call)
    clone = _clone(module)
    target = _follow(clone, path)
    name = _fresh(clone, "value")
    if position < len(target.args):
        value, target.args[position] = target.args[position], ast.Name(name, ast.Load())
    else:
        keywords = [k for k in target.keywords if k.arg]
        keyword = keywords[position - len(target.args)]
        value, keyword.value = keyword.value, ast.Name(name, ast.Load())
    scope = list(_scopes(clone))[number]
    scope.body.insert(index, ast.Assign([ast.Name(name, ast.Store())], value))
    return _parsed(ast.unparse(ast.fix_missing_locations(clone)))


def _path_to(root: ast.AST, wanted: ast.AST) -> list[tuple[str, int | None]]:
    def search(node: ast.AST, path: list[tuple[str, int | None]]) -> list | None:
        if node is wanted:
            return path
        for fname, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        found = search(item, [*path, (fname, i)])
                        if found is not None:
                            return found
            elif isinstance(value, ast.AST):
                found = search(value, [*path, (fname, None)])
                if found is not None:
                    return found
        return None

    found = search(root, [])
    assert found is not None
    return found


def _follow(root: ast.AST, path: list[tuple[str, int | None]]) -> ast.Call:
    node: ast.AST = root
    for fname, i in path:
        node = getattr(node, fname) if i is None else getattr(node, fname)[i]
    assert isinstance(node, ast.Call)
    return node


def _client_parameters(module: ast.Module) -> Iterator[tuple[int, str, str]]:
    """(statement index, parameter, client class) for top-level functions with a parameter
    annotated as an SDK client and no call of their own in the module."""
    for index, stmt in enumerate(module.body):
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if any(stmt.name in _loads(s) for s in module.body):
            continue
        for param in _params(stmt):
            ann = param.annotation
            name = ann.attr if isinstance(ann, ast.Attribute) else getattr(ann, "id", None)
            if name in _CLIENT_CONSTRUCTORS:
                yield index, param.arg, name


def _pass_client(module: ast.Module, index: int, param: str, kind: str, as_method: bool) -> bool:
    fn = module.body[index]
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    target = next(p for p in _params(fn) if p.arg == param)
    ann = target.annotation
    sdk = (
        ann.value.id if isinstance(ann, ast.Attribute) and isinstance(ann.value, ast.Name) else None
    )
    if sdk is None:
        _add_import(module, "import pytrio")
        sdk = "pytrio"
    target.annotation = None
    value = _expr(_CLIENT_CONSTRUCTORS[kind].format(sdk=sdk))
    others = [
        p.arg for p in _params(fn) if p.arg != param and p not in (fn.args.vararg, fn.args.kwarg)
    ]
    keywords = [ast.keyword(param, value), *(ast.keyword(o, ast.Constant(None)) for o in others)]
    if as_method:
        cls = _fresh(module, "Runner")
        fn.args.args.insert(0, ast.arg("self"))
        if fn.args.posonlyargs:
            return False
        module.body[index] = ast.ClassDef(
            name=cls, bases=[], keywords=[], decorator_list=[], type_params=[], body=[fn]
        )
        func: ast.expr = _expr(f"{cls}().{fn.name}")
    else:
        func = ast.Name(fn.name, ast.Load())
    call: ast.expr = ast.Call(func=func, args=[], keywords=keywords)
    if isinstance(fn, ast.AsyncFunctionDef):
        _add_import(module, "import asyncio")
        call = ast.Call(func=_expr("asyncio.run"), args=[call], keywords=[])
    module.body.append(ast.Expr(call))
    return True


# --- placements ---------------------------------------------------------------------------------


def _split(module: ast.Module) -> tuple[list[ast.stmt], list[ast.stmt]]:
    imports = [s for s in module.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    body = [s for s in module.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    return imports, body


def _defs_read_script_names(body: list[ast.stmt]) -> bool:
    script = [
        s for s in body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    names = set(_stores(script))
    return any(
        names & _loads(s)
        for s in body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    )


def _place_method(module: ast.Module) -> bool:
    imports, body = _split(module)
    if not body:
        return False
    defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        if any(isinstance(s, (ast.Global, ast.Return)) for s in body):
            return False
        cls = ast.parse("class Job:\n    def run(self):\n        pass\nJob().run()").body
        cls[0].body[0].body = body  # type: ignore[attr-defined]
        module.body = [*imports, *cls]
        return True
    names = {d.name for d in defs}
    cls = _fresh(module, "Job")
    methods = []
    for d in defs:
        if d.args.posonlyargs or any(
            isinstance(x, ast.Name) and x.id in ("staticmethod", "classmethod")
            for x in d.decorator_list
        ):
            return False
        d.args.args.insert(0, ast.arg("self"))
        methods.append(d)
    for name in names:
        methods = _replace(methods, name, lambda n=name: _expr(f"self.{n}"))
    holder = ast.ClassDef(
        name=cls, bases=[], keywords=[], decorator_list=[], type_params=[], body=methods
    )
    out: list[ast.stmt] = []
    placed = False
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not placed:
                out.append(holder)
                placed = True
            continue
        moved = stmt
        for name in names:
            moved = _replace([moved], name, lambda n=name: _expr(f"{cls}().{n}"))[0]
        out.append(moved)
    module.body = [*imports, *out]
    return True


def _place_nested(module: ast.Module) -> bool:
    imports, body = _split(module)
    if not body:
        return False
    if any(isinstance(s, (ast.Global, ast.Return)) for s in body):
        return False
    outer = _fresh(module, "outer")
    fn = _function(outer, [], body, False)
    module.body = [*imports, fn, ast.Expr(_expr(f"{outer}()"))]
    return True


_LAUNCHERS = {
    "create-task": "async def {main}():\n    task = asyncio.create_task({job}())\n    await task",
    "gather": "async def {main}():\n    await asyncio.gather({job}())",
    "task-group": (
        "async def {main}():\n    async with asyncio.TaskGroup() as tg:\n"
        "        tg.create_task({job}())"
    ),
    "awaited-helper": (
        "async def {via}():\n    await {job}()\n"
        "async def {main}():\n    task = asyncio.create_task({via}())\n    await task"
    ),
}


def _place_async(module: ast.Module, how: str) -> bool:
    imports, body = _split(module)
    script = [
        s for s in body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    main, via = _fresh(module, "main"), _fresh(module, "run_job")
    if script and not _defs_read_script_names(body):
        if any(isinstance(s, (ast.Global, ast.Return)) for s in script):
            return False
        job = _fresh(module, "job")
        kept = [s for s in body if s not in script]
        launcher = ast.parse(_LAUNCHERS[how].format(main=main, job=job, via=via)).body
        module.body = [
            ast.parse("import asyncio").body[0],
            *imports,
            *kept,
            _function(job, [], script, True),
            *launcher,
            ast.Expr(_expr(f"asyncio.run({main}())")),
        ]
        return True
    # The consuming code is in functions: start each one nobody calls from a coroutine task.
    started = False
    for index, found in enumerate(list(module.body)):
        if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if any(found.name in _loads(s) for s in module.body) or found.decorator_list:
            continue
        stmt = found
        if isinstance(found, ast.FunctionDef):
            if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(found)):
                continue
            stmt = ast.AsyncFunctionDef(**{f: getattr(found, f) for f in found._fields})
            module.body[index] = stmt
        args = ", ".join(
            p.arg for p in _params(stmt) if p not in (stmt.args.vararg, stmt.args.kwarg)
        )
        job = f"{stmt.name}({args})"
        text = _LAUNCHERS[how].format(
            main=_fresh(module, "main"), job="JOB", via=_fresh(module, "run_job")
        )
        launcher = ast.parse(text.replace("JOB()", job)).body
        module.body.extend(launcher)
        module.body.append(ast.Expr(_expr(f"asyncio.run({launcher[-1].name}())")))  # type: ignore[attr-defined]
        started = True
    if started:
        _add_import(module, "import asyncio")
    return started


_PLACEMENTS: dict[str, Callable[[ast.Module], bool]] = {
    "in-method": _place_method,
    "in-nested-function": _place_nested,
    "task-create-task": lambda m: _place_async(m, "create-task"),
    "task-gather": lambda m: _place_async(m, "gather"),
    "task-group": lambda m: _place_async(m, "task-group"),
    "task-via-awaited-helper": lambda m: _place_async(m, "awaited-helper"),
}
_CLIENT_ROUTES = {"call-site-parameter": False, "call-site-method-parameter": True}

assert set(_VALUE_ROUTES) | set(_PLACEMENTS) == set(ROUTES), set(ROUTES) ^ (
    set(_VALUE_ROUTES) | set(_PLACEMENTS)
)


def variants(code: str, route: str, flagged_lines: set[int]) -> Iterator[Variant]:
    """Every variant of `code` along `route` (none when the route does not apply to it).
    `flagged_lines`: lines of the rule's findings in `code`, whose call arguments are routed
    too."""
    module = _parsed(textwrap.dedent(code))
    seen: set[str] = set()

    def emit(tree: ast.Module, what: str) -> Iterator[Variant]:
        text = _render(tree)
        if text not in seen:
            seen.add(text)
            yield Variant(route, text, what)

    if route in _PLACEMENTS:
        clone = _clone(module)
        if _PLACEMENTS[route](clone):
            yield from emit(clone, "the whole example")
        return
    apply = _VALUE_ROUTES[route]
    bases = [(module, "")] + [
        (m, "an argument, bound first") for m in _bind_arguments(module, flagged_lines)
    ]
    for base, how in bases:
        for number, index in _sources(base):
            clone = _clone(base)
            src = _source(clone, number, index)
            name = src.name
            if apply(clone, src):
                yield from emit(clone, how or f"`{name}`")
    if route in _CLIENT_ROUTES:
        for index, param, kind in _client_parameters(module):
            clone = _clone(module)
            if _pass_client(clone, index, param, kind, _CLIENT_ROUTES[route]):
                yield from emit(clone, f"parameter `{param}` ({kind})")


# --- checking -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What the variants of one rule along one route did."""

    route: str
    tried: int
    misses: tuple[Variant, ...]  # INVALID variants not flagged
    false: tuple[Variant, ...]  # VALID variants flagged


def _config(rule: type[Rule], config: dict) -> dict:
    return {"select": [rule.code], "force-sdk": True, **config}


def _lines(rule: type[Rule], code: str, config: dict, path: str) -> list[int]:
    return [d.line for d in lint_source(code, path, _config(rule, config)) if d.code == rule.code]


def check_route(rule: type[Rule], route: str) -> Outcome:
    """Lint every variant of the rule's examples along `route` with the rule alone selected
    (the kinds of example the rule's `reach.not_applicable` skips are left out)."""
    tried = 0
    misses: list[Variant] = []
    false: list[Variant] = []
    for example in rule.INVALID:
        if not example.path.endswith(".py") or rule.reach.skips(route, "invalid"):
            continue
        code = textwrap.dedent(example.code)
        lines = set(_lines(rule, code, example.config, example.path))
        if not lines:
            continue
        for variant in variants(code, route, lines):
            tried += 1
            if not _lines(rule, variant.code, example.config, example.path):
                misses.append(variant)
    for example in rule.VALID:
        if not example.path.endswith(".py") or rule.reach.skips(route, "valid"):
            continue
        code = textwrap.dedent(example.code)
        for variant in variants(code, route, set()):
            tried += 1
            if _lines(rule, variant.code, example.config, example.path):
                false.append(variant)
    return Outcome(route, tried, tuple(misses), tuple(false))
