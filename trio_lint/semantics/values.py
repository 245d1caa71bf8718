"""Value flow of the semantic model: where the value of a name, attribute, item or call was
bound (`value_of`, `sources`, `literal`), what a container is built from (`origins`), a dict's
entries, the arguments a parameter gets at its call sites. `SemanticModel` mixes this in;
`model.py` lists every query."""

from __future__ import annotations

import ast
from typing import Any

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


class ValueQueries:
    """The value queries of `SemanticModel` (state: the binding pass's records)."""

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
            return (
                self._keyed_entry(expr)
                or self.queue_items(expr, awaited=False)
                or self._call_sources(expr)
            )
        if isinstance(expr, ast.Await) and isinstance(expr.value, ast.Call):
            return self.queue_items(expr.value, awaited=True)  # `await queue.get()`
        if isinstance(expr, ast.NamedExpr):
            return [expr.value]
        return []

    def _keyed_entry(self, call: ast.Call) -> list[ast.expr]:
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
        entries = self.dict_entries(func.value)
        entry = entries.get(args[0].value) if entries else None
        return [entry] if entry is not None else []

    def queue_items(self, call: ast.Call, *, awaited: bool) -> list[ast.expr]:
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
        todo: list[Any] = list(self._name_bindings(func.value))
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
                    given = self._arguments_given(*item.param)
                    if not given:
                        return []
                    todo += given
                    continue
            if isinstance(made, ast.Name):
                todo += self._name_bindings(made)  # `worker(queue)`, `queue = queue_value`
                continue
            head = made.func if isinstance(made, ast.Call) else None
            name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", None)
            if name not in ("Queue", "LifoQueue", "PriorityQueue"):
                return []
            made_queue = True
        return found if made_queue and not todo else []

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
            elif node_class in ELEMENT_OF:
                stack.append(node.elt)  # type: ignore[attr-defined]
            elif node_class in ELEMENTS:
                stack.extend(reversed(node.elts))  # type: ignore[attr-defined]
            elif node_class in WRAPS:
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
        busy: set[int] = self._dict_busy  # type: ignore[attr-defined]  # SemanticModel's field
        if expr is None or id(expr) in busy or len(busy) > 32:
            return None  # a cycle back to a dict being resolved, or a chain too long to follow
        busy.add(id(expr))
        try:
            return self._dict_entries(expr, set())
        finally:
            busy.discard(id(expr))

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
            if len(bindings) != 1:
                return None
            if bindings[0].expr is None:  # a parameter (its call site) or a loop variable
                one = self.value_of(expr)
                return self._dict_entries(one, seen) if one is not None else None
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
        one = (
            self.value_of(expr)
            if isinstance(expr, ast.Attribute | ast.Call | ast.Subscript)
            else None
        )
        return self._dict_entries(one, seen) if one is not None else None

    def _arguments_given(self, function: str, index: int | None, name: str) -> list[ast.expr]:
        """The expressions the module's calls pass for one parameter (empty when any call site
        passes it by `*args`/`**kwargs` or not at all: its value there is unknown)."""
        calls = self._calls.get(function)
        if len(self._defs.get(function, ())) != 1 or not calls:
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

    def _call_sources(self, call: ast.Call) -> list[ast.expr]:
        functions = self._functions_called(call)
        if functions:
            (function,) = functions
            if isinstance(function, ast.AsyncFunctionDef):
                return []  # calling it makes a coroutine, not the returned value
            return list(self._returns.get(id(function), []))
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
            for scope in self._instance_classes(func.value, 3):
                method = scope.methods.get(func.attr)
                if method is not None and not isinstance(method, ast.AsyncFunctionDef):
                    return list(self._returns.get(id(method), []))
        return []

    def _instance_classes(self, expr: ast.AST, depth: int) -> list[Scope]:
        """The class of this module an instance expression is of: a name annotated with it or
        bound to `Cls(...)`, or `self.x` bound to such a name in another method."""
        if depth <= 0:
            return []
        if isinstance(expr, ast.Call):
            return self._class_scopes(expr.func)
        if isinstance(expr, ast.Name):
            bindings = self._name_bindings(expr)
            if len(bindings) != 1:
                return []
            binding = bindings[0]
            if binding.annotation is not None:
                return self._class_scopes(binding.annotation)
            return self._instance_classes(binding.expr, depth - 1) if binding.expr else []
        if isinstance(expr, ast.Attribute) and id(expr) in self._self_attrs:
            found = self._attribute_sources(expr)
            return self._instance_classes(found[0], depth - 1) if len(found) == 1 else []
        return []

    def _class_scopes(self, expr: ast.AST | None) -> list[Scope]:
        """The class(es) of this module an expression names (`Cfg` -> Cfg's scope)."""
        if isinstance(expr, ast.Name):
            scopes = self._classes.get(expr.id, [])
            binding = self._resolve(expr)
            if len(scopes) == 1 and (binding is None or binding.expr is None):
                return scopes
        return []

    def _class_attr(self, scopes: list[Scope], attr: str) -> list[ast.expr]:
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
        given = keyword_value(call, attr)
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
