"""The one `ast` pass that builds a unit's semantic model: it records bindings, which binding
each read sees, and the nodes the selected rules hook (`build_model`)."""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

from trio_lint.semantics.documents import catalogue
from trio_lint.semantics.inference import annotation_type
from trio_lint.semantics.model import SemanticModel
from trio_lint.semantics.names import (
    Binding,
    bindings_of_import,
)
from trio_lint.semantics.scopes import (
    ITEM_METHODS,
    ITEMS_METHODS,
    UNKNOWN,
    AnnotationBinding,
    AssignmentBinding,
    FreeRef,
    FunctionBinding,
    ImportBinding,
    LoopBinding,
    NameBinding,
    ParameterBinding,
    Scope,
    TypedBinding,
    function_params,
    keyword_value,
)
from trio_lint.settings.target_version import default_version

__all__ = [
    "ENTER",
    "ENTER_AND_LEAVE",
    "PASSED_BY",
    "UNRECORDED",
    "Leave",
    "build_model",
]

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
        # The parts of the model the pass fills (the pass holds them, never the reverse).
        self.references = model.references
        self.definitions = model.definitions
        self.imports = model.imports
        self.sdk_modules = model.sdk_modules
        self.scope = model.module_scope
        # The nodes of `marks`' classes in visiting order, so that the rules' dispatch needs no
        # second walk of the tree. Every node is recorded once: the parts of the tree the pass
        # does not visit (parameters, annotations, binding targets) are recorded where it passes
        # them by (`_record` / `_mark`).
        self.marks = marks
        self.events: list[Any] = []  # nodes and `Leave`s (`SemanticModel.events`)

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
        self.scope = Scope(kind, self.scope, node)

    def _pop(self) -> None:
        done = self.scope
        parent = done.parent
        assert parent is not None
        for key, name in done.pending:
            if done.kind != "class" and name in done.history:
                self.references.record(key, UNKNOWN)  # a local read before its first binding
            elif done.kind == "comprehension" and name in parent.current:
                self.references.record(key, parent.current[name])  # comprehensions run now
            elif done.kind == "comprehension" and parent.kind != "module":
                parent.defer(key, name)
            else:
                self.references.record(key, FreeRef(parent, name))
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
            outer.bind(node.name, FunctionBinding(node))
            if plain:
                self.definitions.add_function(node)
            elif outer.kind == "class":
                outer.add_method(node)
                self.definitions.add_method(node)
        positional = [*node.args.posonlyargs, *node.args.args]
        if method:
            positional = positional[1:]
        # The key of the calls that type its parameters (`Definitions.calls`): "name" for a
        # plain function, ".name" for a method.
        calls_key: str | None = None
        if not isinstance(node, ast.Lambda):
            calls_key = node.name if plain else "." + node.name
            self._record(node.returns)
        self._push("function", node)
        for arg in function_params(node.args):
            self._record(arg)  # with its annotation; the defaults were visited above
            fixed = annotation_type(arg.annotation, outer)
            if fixed is not None:
                self.scope.bind(arg.arg, ParameterBinding(fixed=fixed))
            elif (
                calls_key is not None
                and (plain or (method and arg is not node.args.args[0]))
                and (arg.annotation is None or _generic(arg.annotation))
                and arg not in (node.args.vararg, node.args.kwarg)
            ):
                # Unannotated, or annotated with a plain container (`metrics: dict[str, float]`):
                # typed by what every call site of the module passes.
                index = positional.index(arg) if arg in positional else None
                binding = ParameterBinding(
                    param=(calls_key, index, arg.arg), annotation=arg.annotation
                )
                self.scope.bind(arg.arg, binding)
            else:
                self.scope.bind(arg.arg, ParameterBinding(annotation=arg.annotation))
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
        self.scope.bind(node.name, UNKNOWN)
        self._push("class", node)
        self.definitions.add_class(node.name, self.scope)
        for stmt in node.body:
            self.visit(stmt)
        self._pop()

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
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
            self.definitions.add_call(func.id, node)
        elif isinstance(func, ast.Attribute):
            self.definitions.add_call("." + func.attr, node)
            if func.attr == "add_argument":
                self._add_argument(node)
            elif func.attr in ITEM_METHODS or func.attr in ITEMS_METHODS:
                self._mutation(func, node)
        self.generic_visit(node)

    def _mutation(self, func: ast.Attribute, call: ast.Call) -> None:
        if not isinstance(func.value, ast.Name) or not call.args:
            return
        binding = self.scope.lookup_now(func.value.id)
        if binding is None or binding is UNKNOWN:
            return
        if binding.expr is None and not (
            binding.param is not None and func.attr in ("put", "put_nowait")
        ):
            return  # (a queue parameter: what is put in it is what its workers get)
        how = "items" if func.attr in ITEMS_METHODS else "item"
        value = call.args[-1]
        binding.add_part(how, None, value)

    def _add_argument(self, call: ast.Call) -> None:
        default = keyword_value(call, "default")
        if default is None:
            return
        dest_expr = keyword_value(call, "dest")
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
            self.definitions.add_argparse_default(dest, default)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.visit(node.value)
            scope: Scope | None = self.scope
            while scope is not None and scope.kind == "comprehension":
                scope = scope.parent
            if scope is not None and isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.definitions.add_return(scope.node, node.value)

    def visit_Name(self, node: ast.Name) -> None:
        if node.ctx.__class__ is not ast.Load:
            return
        scope = self.scope
        binding = scope.current.get(node.id)
        if binding is not None:
            self.references.record(id(node), binding)
        elif scope.kind == "module":
            pass  # read before any binding: unknown
        elif scope.kind == "class":
            found = scope.lookup_now(node.id)
            if found is not None:
                self.references.record(id(node), found)
        else:
            scope.defer(id(node), node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            owner = self._method_class()
            if owner is not None:
                self.definitions.add_self_attribute(node, owner)
        self.visit(node.value)  # its one child

    def _method_class(self) -> Scope | None:
        scope: Scope | None = self.scope
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

    def _element_binding(self, iterable: ast.expr) -> NameBinding:
        # Typed when a rule asks (`inference.binding_type`), not now: see `LoopBinding`.
        return LoopBinding(iterable)

    def _unpacked(self, binding: NameBinding, count: int) -> list[NameBinding]:
        """`for d, out in zip(batch, fb.loss_fn_outputs)` / `for i, out in enumerate(...)`: each
        target walks one of the iterables (typed lazily, like any loop target)."""
        walked, value = binding.element_of, binding.expr
        if count == 2 and value is not None and _waited_pair(value):
            # `done, pending = await asyncio.wait(tasks)`: each is one of the pair of sets
            # (`inference._waited_type` types the pair, each set typed as a list of tasks).
            return [LoopBinding(value), LoopBinding(value)]
        if (
            isinstance(walked, ast.Call)
            and isinstance(walked.func, ast.Name)
            and walked.func.id in ("zip", "enumerate")
            and self.scope.lookup_now(walked.func.id) is None  # the builtin
            and not any(isinstance(a, ast.Starred) for a in walked.args)
            and all(kw.arg in ("strict", "start") for kw in walked.keywords)
        ):
            if walked.func.id == "zip" and len(walked.args) == count:
                return [LoopBinding(arg) for arg in walked.args]
            if walked.func.id == "enumerate" and walked.args and count == 2:
                return [UNKNOWN, LoopBinding(walked.args[0])]
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
            return [UNKNOWN, LoopBinding(values)]
        return [UNKNOWN] * count

    def _bind(self, target: ast.expr, binding: NameBinding, value: ast.expr | None = None) -> None:
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
            self._bind(target.value, UNKNOWN)
        elif isinstance(target, ast.Attribute):
            self._mark(target)
            self.visit(target.value)
            if isinstance(target.value, ast.Name) and target.value.id == "self":
                owner = self._method_class()
                if owner is not None:
                    owner.add_attribute(target.attr, binding)
            elif isinstance(target.value, ast.Name) and value is not None:
                held = self.scope.lookup_now(target.value.id)  # `params.max_tokens = 64`
                if held is not None and held is not UNKNOWN:
                    held.add_part("attr", target.attr, value)
        else:  # subscripts: the container is read, and (for a name) mutated
            self.visit(target)
            if (
                value is not None
                and isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
            ):
                held = self.scope.lookup_now(target.value.id)
                if held is not None and held is not UNKNOWN:
                    held.add_part("set", target.slice, value)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        binding = AssignmentBinding(node.value)
        for target in node.targets:
            self._bind(target, binding, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self._record(node.annotation)
        fixed = annotation_type(node.annotation, self.scope)
        if fixed is not None:
            self._bind(
                node.target,
                AssignmentBinding(node.value, fixed=fixed)
                if node.value is not None
                else TypedBinding(fixed),
            )
        elif node.value is not None:
            self._bind(
                node.target, AssignmentBinding(node.value, annotation=node.annotation), node.value
            )
        elif self.scope.kind != "class":
            self._bind(node.target, AnnotationBinding(node.annotation))
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
            self.references.record(id(node.target), held)
            if held is not UNKNOWN and isinstance(node.op, ast.Add):
                held.add_part("items", None, node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._leaf(node.target)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent  # the walrus binds in the enclosing function
        scope.bind(node.target.id, AssignmentBinding(node.value))

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
                self._bind(item.optional_vars, UNKNOWN)
        for stmt in node.body:
            self.visit(stmt)

    visit_With = _with
    visit_AsyncWith = _with

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.scope.bind(node.name, UNKNOWN)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        self._import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._import(node)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            self.imports.add_from_module(node.module)
        sdk = dict(bindings_of_import(node, self.sdk_modules))
        for alias in node.names:
            self._record(alias)
            local = alias.asname or alias.name.partition(".")[0]
            if local == "*":
                continue
            found = sdk.get(local)
            if found is not None:
                self.scope.bind(local, ImportBinding(found.qualname, found.origin))
                self.imports.add_sdk(found.origin, module_level=self.scope.kind == "module")
            else:
                self.scope.bind(local, UNKNOWN)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self.scope.bind(name, UNKNOWN)

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


def _node_fields(node_class: type) -> tuple[str, ...]:
    """The fields of a node class that may hold nodes the pass has a use for (operators and
    expression contexts have no `visit_X` here and no children)."""
    if node_class is ast.Constant or not issubclass(node_class, ast.AST):
        return ()
    return tuple(f for f in node_class._fields if f not in _SCALAR_FIELDS)


# Asked for every node the pass visits: once per class. (Typed as taking any class: the cache
# takes hashables, and mypy does not count `type[ast.AST]` as one.)
_fields: Callable[[type], tuple[str, ...]] = functools.cache(_node_fields)


_PASS_RECURSION_LIMIT = 20_000


# Annotations that say a parameter is a plain container (or anything): what the call sites pass
# says more (`def log(metrics: dict[str, float])` called with `fb.metrics`).
_GENERIC_ANNOTATIONS = frozenset(
    {"dict", "Dict", "Mapping", "MutableMapping", "list", "List", "Sequence", "Any", "object"}
    | {"int", "float", "str", "bool", "bytes", "tuple", "Tuple"}
    # `async def worker(queue: asyncio.Queue)`: the queue passed holds what the module put in it
    | {"Queue", "LifoQueue", "PriorityQueue"}
)


def _generic(annotation: ast.expr) -> bool:
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", None)
    return name in _GENERIC_ANNOTATIONS


def build_model(
    tree: ast.Module,
    sdk_modules: Sequence[str] = ("pytrio",),
    version: str | None = None,
    seed: dict[str, Binding] | dict[str, str] | None = None,
    *,
    events_for: dict[type, int] | None = None,
) -> SemanticModel:
    """Run the one pass over `tree`; the result answers queries about its expressions.
    `version` is the target pytrio release ("0.2.8"; its wheel's data gives the method table;
    None: the installed pytrio, else the newest release).
    `seed` maps names bound before this code runs (earlier blocks of a Markdown document) to
    their SDK binding (or to a canonical name); a seed with `typed()` (`ModuleNames`, what the
    model of the block before leaves) also gives the names whose SDK type that model knew."""
    model = SemanticModel(sdk_modules, str(version or default_version()))
    visitor = _Pass(model, events_for or _NOTHING)
    for name, given in (seed or {}).items():
        bound = Binding(given, given.partition(".")[0]) if isinstance(given, str) else given
        model.module_scope.bind(name, ImportBinding(bound.qualname, bound.origin))
        model.imports.add_sdk(bound.origin, module_level=True)
    if seed is not None:
        # A block of a document: a block that lists one object's members is no program.
        model.catalogue = catalogue(tree)
    typed = getattr(seed, "typed", None)
    if typed is not None:
        for name, typ in typed().items():
            if name == model.catalogue.receiver:
                # The type the block's heading names, not the last one: untyped here, and
                # handed on to the next block as it came.
                model.carried[name] = typ
            else:
                model.module_scope.bind(name, TypedBinding(typ))
    # The pass recurses once or twice per AST level, and generated tables nest deeper than the
    # default 1,000 frames allow (sympy's resolvent_lookup.py: 568 levels). Python-to-Python
    # calls do not grow the C stack on 3.11+, so a higher limit is safe; it is only ever raised,
    # never put back, because other threads may be deep in a pass of their own.
    if sys.getrecursionlimit() < _PASS_RECURSION_LIMIT:
        sys.setrecursionlimit(_PASS_RECURSION_LIMIT)
    visitor.visit(tree)
    model.events = visitor.events
    model.imports.finish()
    return model


def _waited_pair(expr: ast.expr | None) -> bool:
    """`await asyncio.wait(...)` (the pair of sets `done, pending`)."""
    if not (isinstance(expr, ast.Await) and isinstance(expr.value, ast.Call)):
        return False
    func = expr.value.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "wait"
        and isinstance(func.value, ast.Name)
        and func.value.id == "asyncio"
    )
