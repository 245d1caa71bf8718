"""Checking one parsed unit: build its semantic model in one pass over the `ast` tree, which also
records the nodes the selected rules have hooks for, then dispatch those nodes to the hooks."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from typing import TYPE_CHECKING, Any

from trio_lint.lint.engine_codes import INTERNAL_ERROR, NAMES, internal_error_message
from trio_lint.lint.findings import Finding, Span
from trio_lint.output.diagnostics import Severity
from trio_lint.rules.base import ALL_SDKS, SDK_NAMES, AnyStringKey, SdkValues
from trio_lint.semantics.binder import (
    ENTER,
    ENTER_AND_LEAVE,
    PASSED_BY,
    UNRECORDED,
    Leave,
    build_model,
)
from trio_lint.semantics.context import LintContext
from trio_lint.semantics.model import SemanticModel
from trio_lint.semantics.names import Binding
from trio_lint.semantics.receivers import Kind
from trio_lint.settings.config import LintConfig

if TYPE_CHECKING:
    from trio_lint.rules.base import Checker, Rule


@cache
def _node_classes() -> dict[str, type[ast.AST]]:
    return {
        name: value
        for name, value in vars(ast).items()
        if isinstance(value, type) and issubclass(value, ast.AST)
    }


@cache
def rule_hooks(rule: type[Checker]) -> tuple[tuple[type[ast.AST], str, bool], ...]:
    """(ast class, method name, is_leave) for every `visit_X`/`leave_X` the checker defines."""
    hooks = []
    classes = _node_classes()
    for attr in dir(rule):
        for prefix, leaving in (("visit_", False), ("leave_", True)):
            if attr.startswith(prefix):
                node_class = classes.get(attr[len(prefix) :])
                if node_class is None:
                    raise TypeError(
                        f"{rule.__name__}.{attr}: `{attr[len(prefix) :]}` is no ast node class"
                    )
                # The model's pass records what the dispatch serves; a hook it cannot serve
                # would never run, so it is refused like a misspelt one.
                if issubclass(node_class, UNRECORDED):
                    raise TypeError(
                        f"{rule.__name__}.{attr}: operators and contexts are not dispatched;"
                        " hook the node that holds them"
                    )
                if leaving and node_class in PASSED_BY:
                    raise TypeError(
                        f"{rule.__name__}.{attr}: the model's pass records no end for this node"
                        " class; use visit_ and finish"
                    )
                hooks.append((node_class, attr, leaving))
    return tuple(hooks)


_FUNCTION_CLASSES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})


class _Memo(dict):
    """A per-unit table filled on first lookup: `table[key]` is a C-level dict hit afterwards,
    cheaper in the dispatch's inner loop than `.get` plus a None test."""

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.compute(key)
        return value


# How the dispatch finds the hooks of a node beyond its class's (`Rule.looks_at`: its
# `attributes`, `keys`, `calls` / `sdk_calls`).
_BY_ATTRIBUTE, _BY_KEY, _BY_CALLEE = 1, 2, 3


Handler = tuple[Callable[[ast.AST], None], int]  # (bound hook, the checker's place)
# (hooks of the class, `_BY_*` dispatch or 0, is a function)
_Plan = tuple[list[Handler] | None, int, bool]


# A hook of a unit's checkers: (the checker's place in the unit's checkers, method name).
_Slot = tuple[int, str]


@dataclass(frozen=True)
class _Layout:
    """Which hooks serve which nodes, for one sequence of checkers: the same for every unit that
    wants those checkers, so worked out once (a unit then binds the methods of its own checker
    instances)."""

    visit: dict[type[ast.AST], tuple[_Slot, ...]]
    leave: dict[type[ast.AST], tuple[_Slot, ...]]
    by_method: dict[str, tuple[_Slot, ...]]  # `LooksAt.calls`: callee name -> visit_Call
    by_symbol: dict[str, tuple[_Slot, ...]]  # `LooksAt.sdk_calls`: SDK symbol -> visit_Call
    # `LooksAt.attributes`: `.attr` -> the class's hooks and that name's, in rule order
    by_attribute: dict[str, tuple[_Slot, ...]]
    # `LooksAt.keys`: key -> the class's hooks, the every-string-key ones and the key's
    by_key: dict[str, tuple[_Slot, ...]]
    string_key: tuple[_Slot, ...]  # for any other string key
    keyed_items: bool  # some rule looks at string keys alone
    receivers: dict[int, SdkValues]  # checker place -> its `LooksAt.receivers`
    valued: frozenset[type[ast.AST]]  # Attribute / Subscript, when a hook of it declares receivers
    dispatch: dict[type[ast.AST], int]  # node class -> `_BY_*`
    # The last names of the `sdk_calls`: `x.m(...)` can only name one of them when `m` is one
    # (a qualified name ends with the attribute), so other method calls skip the symbol lookup.
    symbol_tails: frozenset[str]


@lru_cache(maxsize=64)
def _layout(rules: tuple[type[Checker], ...]) -> _Layout:
    visit: dict[type[ast.AST], list[_Slot]] = {}
    leave: dict[type[ast.AST], list[_Slot]] = {}
    by_method: dict[str, list[_Slot]] = {}
    by_symbol: dict[str, list[_Slot]] = {}
    by_attribute: dict[str, list[_Slot]] = {}
    by_key: dict[str, list[_Slot]] = {}
    string_key: list[_Slot] = []
    receivers: dict[int, SdkValues] = {}
    for index, rule in enumerate(rules):
        # mypy checks `Hashable` against the instances' `__hash__`.
        for node_class, attr, leaving in rule_hooks(rule):  # type: ignore[arg-type]  # a class is hashable
            slot = (index, attr)
            looks = rule.looks_at
            if looks.receivers is not None:
                receivers[index] = looks.receivers
            if leaving:
                leave.setdefault(node_class, []).append(slot)
            elif node_class is ast.Call and (
                looks.calls is not None or looks.sdk_calls is not None
            ):
                for method in looks.calls or ():
                    by_method.setdefault(method, []).append(slot)
                for symbol in looks.sdk_calls or ():
                    by_symbol.setdefault(symbol, []).append(slot)
            elif node_class is ast.Attribute and looks.attributes is not None:
                for name in looks.attributes:
                    by_attribute.setdefault(name, []).append(slot)
            elif node_class is ast.Subscript and looks.keys is not None:
                if isinstance(looks.keys, AnyStringKey):  # STRING_KEYS
                    string_key.append(slot)
                else:
                    for text in looks.keys:
                        by_key.setdefault(text, []).append(slot)
            else:
                visit.setdefault(node_class, []).append(slot)
    # Filtered hooks join the node class's other hooks in rule order, one list per name/key, so
    # an attribute or item costs one dict lookup whatever it is.
    attributes = visit.get(ast.Attribute, [])
    items = visit.get(ast.Subscript, [])
    keyed_items = bool(by_key or string_key)
    valued = frozenset(
        node_class
        for node_class, slots in ((ast.Attribute, attributes), (ast.Subscript, items))
        if any(index in receivers for index, _ in slots)
    )
    dispatch: dict[type[ast.AST], int] = {
        node_class: kind
        for node_class, kind, used in (
            (ast.Attribute, _BY_ATTRIBUTE, by_attribute or ast.Attribute in valued),
            (ast.Subscript, _BY_KEY, keyed_items or ast.Subscript in valued),
            (ast.Call, _BY_CALLEE, by_method or by_symbol),
        )
        if used
    }
    return _Layout(
        visit=_frozen(visit),
        leave=_frozen(leave),
        by_method=_frozen(by_method),
        by_symbol=_frozen(by_symbol),
        by_attribute={name: _sorted([*attributes, *s]) for name, s in by_attribute.items()},
        by_key={text: _sorted([*items, *string_key, *s]) for text, s in by_key.items()},
        string_key=_sorted([*items, *string_key]) if keyed_items else (),
        keyed_items=keyed_items,
        receivers=receivers,
        valued=valued,
        dispatch=dispatch,
        symbol_tails=frozenset(symbol.rpartition(".")[2] for symbol in by_symbol),
    )


@lru_cache(maxsize=64)
def _events_for(rules: tuple[type[Checker], ...]) -> dict[type, int]:
    """The node classes the model's pass records for `rules` (`build_model(events_for=...)`):
    every class a checker hooks, with its end for `leave_X` hooks and for functions (which the
    function stack follows)."""
    marks = dict.fromkeys(_FUNCTION_CLASSES, ENTER_AND_LEAVE)
    for rule in rules:
        for node_class, _attr, leaving in rule_hooks(rule):  # type: ignore[arg-type]  # as above
            if leaving:
                marks[node_class] = ENTER_AND_LEAVE
            else:
                marks.setdefault(node_class, ENTER)
    return marks


def _frozen(table: dict[Any, list[_Slot]]) -> dict[Any, tuple[_Slot, ...]]:
    return {key: tuple(slots) for key, slots in table.items()}


def _sorted(slots: list[_Slot]) -> tuple[_Slot, ...]:
    return tuple(sorted(slots))  # by the checker's place: the order hooks run in


def run_rules(
    tree: ast.Module,
    source: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed_bindings: dict[str, Binding] | None = None,
) -> list[Finding]:
    return check_tree(tree, source, config, rules, seed_bindings)[0]


def check_tree(
    tree: ast.Module,
    source: str,
    config: LintConfig,
    rules: Sequence[type[Rule]],
    seed_bindings: dict[str, Binding] | None = None,
) -> tuple[list[Finding], SemanticModel]:
    """The findings of `rules` on one unit and the unit's model (whose imports seed the next
    notebook cell)."""
    model = build_model(
        tree,
        config.sdk_modules,
        config.target_version,
        seed_bindings,
        events_for=_events_for(tuple(dict.fromkeys(rule.checker for rule in rules))),
    )
    events, model.events = model.events, []  # dispatched once; the model outlives the check
    ctx = LintContext(config, source, model)
    ctx.tree = tree
    dispatcher = Dispatcher(ctx, _selected(model, rules))
    dispatcher.dispatch(events)
    dispatcher.finish(tree)
    return ctx.findings, model


def _selected(
    model: SemanticModel, rules: Sequence[type[Rule]]
) -> dict[type[Checker], list[type[Rule]]]:
    """The unit's checkers, each with its selected codes' rules, in the order of its first
    selected code (`Rule.checker`). Tinker code meets only the rules whose premise holds for
    Tinker; a module of another configured SDK only those that hold for every SDK."""
    sdk = model.sdk
    known = sdk in SDK_NAMES
    selected: dict[type[Checker], list[type[Rule]]] = {}
    for rule in rules:
        if sdk in rule.sdks if known else rule.sdks == ALL_SDKS:
            selected.setdefault(rule.checker, []).append(rule)
    return selected


class Dispatcher:
    """One unit's checkers and the hooks that serve each recorded node: `dispatch` runs the
    hooks of the model's events in order, `finish` the checkers' `finish`. A checker that raises
    is reported (PTR903, under its first selected code) and dropped; the others go on.

    The hook tables are filled on first lookup (`_Memo`): a unit meets a fraction of the
    classes, names and keys the rules declare, and binding them all cost a small unit more than
    walking it. A crash empties them, so they are bound again without the dropped checker. They
    never refer back to the dispatcher: a unit is freed without the cycle collector."""

    def __init__(self, ctx: LintContext, selected: dict[type[Checker], list[type[Rule]]]) -> None:
        self.ctx = ctx
        self.layout = layout = _layout(tuple(selected))
        contexts = {flag: ctx.for_rule(flag) for flag in (False, True)}
        tinker_unit = ctx.model.other_sdk_only
        # A rule that is its own checker is made with the context alone (`Rule.__init__(ctx)`).
        self.instances = [
            checker(context) if codes == [checker] else checker(context, codes)
            for checker, codes in selected.items()
            for context in (contexts[checker.pytrio_only and not tinker_unit],)
        ]
        # The code an internal error of a checker is reported under: its first selected one.
        self.names = [codes[0].code for codes in selected.values()]
        self.crashed: set[int] = set()
        bind = partial(_bind, self.instances, self.crashed)
        # node class -> (its hooks, `_BY_*` dispatch or 0, is a function): one lookup per node
        self.plans = _Memo(partial(_plan, bind, layout))
        self.leave = _Memo(lambda node_class: bind(layout.leave.get(node_class, ())))
        self.by_attribute = _Memo(lambda name: bind(layout.by_attribute[name]))
        self.by_key = _Memo(lambda text: bind(layout.by_key[text] if text else layout.string_key))
        self.by_method = _Memo(lambda name: bind(layout.by_method.get(name, ())))
        self.by_symbol = _Memo(lambda symbol: bind(layout.by_symbol.get(symbol, ())))
        # `x.a` / `x[k]` for a plain name `x`: per unit a handful of keys (most names are typed
        # alike).
        self.by_value = _Memo(
            partial(_for_value, self.plans, self.by_attribute, self.by_key, layout.receivers)
        )

    def _crash(self, index: int, node: ast.AST, exc: Exception) -> None:
        """A checker bug must not cost the others or the file: report it, drop the checker."""
        self.crashed.add(index)
        self.ctx.add_finding(_internal_error(self.names[index], node, exc))
        for table in (
            self.leave,
            self.by_attribute,
            self.by_key,
            self.by_method,
            self.by_symbol,
            self.plans,
            self.by_value,
        ):
            table.clear()  # they hold hook lists: rebound without the checker on next use

    def dispatch(self, events: Sequence[ast.AST | Leave]) -> None:
        """Run the hooks of every event, in the order the model's pass met the nodes."""
        layout, model = self.layout, self.ctx.model
        # Everything the loop reads, as locals: it runs once per recorded node.
        plans, leave, by_value = self.plans, self.leave, self.by_value
        by_attribute, by_key, by_method = self.by_attribute, self.by_key, self.by_method
        sdk_call_hooks = self.by_symbol if layout.by_symbol else None  # None: no rule declares one
        hooked_attributes, item_keys = layout.by_attribute, layout.by_key
        keyed_items, symbol_tails = layout.keyed_items, layout.symbol_tails
        attributes_valued = ast.Attribute in layout.valued
        items_valued = ast.Subscript in layout.valued
        function_stack = self.ctx.function_stack
        sdk_symbol = model.call_symbol
        qualified_name, type_of = model.qualified_name, model.type_of
        crash, leave_marker = self._crash, Leave
        # Any: node classes are tested with `__class__ is` (cheaper than isinstance once per
        # node), which mypy does not narrow on.
        event: Any
        node: Any
        for event in events:
            node_class = event.__class__
            if node_class is leave_marker:
                node = event.node
                node_class = node.__class__
                if node_class in _FUNCTION_CLASSES:
                    function_stack.pop()
                for handler, index in leave[node_class]:
                    try:
                        handler(node)
                    except Exception as exc:
                        crash(index, node, exc)
                continue
            node = event
            handlers, kind, is_function = plans[node_class]
            if kind:
                if kind == _BY_ATTRIBUTE:
                    name = node.attr
                    if name not in hooked_attributes:
                        name = None
                    value = node.value
                    if attributes_valued and value.__class__ is ast.Name:
                        typ = type_of(value)
                        handlers = by_value[
                            ast.Attribute,
                            name,
                            qualified_name(value) is not None,
                            typ.kind if typ is not None else None,
                        ]
                    elif name is not None:
                        handlers = by_attribute[name]
                elif kind == _BY_KEY:
                    key = node.slice
                    text = None
                    if keyed_items and key.__class__ is ast.Constant and key.value.__class__ is str:
                        text = key.value if key.value in item_keys else ""
                    value = node.value
                    if items_valued and value.__class__ is ast.Name:
                        typ = type_of(value)
                        handlers = by_value[
                            ast.Subscript,
                            text,
                            qualified_name(value) is not None,
                            typ.kind if typ is not None else None,
                        ]
                    elif text is not None:
                        handlers = by_key[text]
                else:
                    more = _filtered_call_handlers(
                        node.func,
                        by_method,
                        sdk_call_hooks,
                        symbol_tails,
                        sdk_symbol,
                    )
                    if more:
                        handlers = [*handlers, *more] if handlers else more
            if handlers:
                for handler, index in handlers:
                    try:
                        handler(node)
                    except Exception as exc:
                        crash(index, node, exc)
            if is_function:
                function_stack.append(node)

    def finish(self, tree: ast.Module) -> None:
        """Every checker's `finish`, once the walk is done (a crash there is reported on the
        module)."""
        for index, instance in enumerate(self.instances):
            if index in self.crashed:
                continue
            try:
                instance.finish()
            except Exception as exc:
                self.ctx.add_finding(_internal_error(self.names[index], tree, exc))


def _bind(instances: list[Checker], crashed: set[int], slots: Sequence[_Slot]) -> list[Handler]:
    """The hooks of `slots`, bound to the unit's checker instances that did not crash."""
    return [(getattr(instances[i], attr), i) for i, attr in slots if i not in crashed]


def _plan(
    bind: Callable[[Sequence[_Slot]], list[Handler]], layout: _Layout, node_class: type[ast.AST]
) -> _Plan:
    """Everything the dispatch does at a node of `node_class`."""
    return (
        bind(layout.visit.get(node_class, ())) or None,
        layout.dispatch.get(node_class, 0),
        node_class in _FUNCTION_CLASSES,
    )


def _for_value(
    plans: dict[type[ast.AST], _Plan],
    by_attribute: dict[str, list[Handler]],
    by_key: dict[str, list[Handler]],
    receivers: dict[int, SdkValues],
    key: tuple[type[ast.AST], str | None, bool, Kind | None],
) -> list[Handler]:
    """The hooks of `x.a` / `x[k]` for a plain name `x`: `key` is (node class, the attribute
    name or key with hooks of its own (None: the class's, "": any other string key), whether `x`
    names an SDK symbol, the kind the model gives it)."""
    node_class, name, symbol, kind = key
    if name is None:
        handlers = plans[node_class][0] or []
    elif node_class is ast.Attribute:
        handlers = by_attribute[name]
    else:
        handlers = by_key[name]
    return [h for h in handlers if _admits(receivers.get(h[1]), symbol, kind)]


def _admits(values: SdkValues | None, symbol: bool, kind: Kind | None) -> bool:
    """Whether a rule with these `LooksAt.receivers` may report on a name that names an SDK
    symbol (`symbol`) or that the model types as `kind`."""
    if values is None:
        return True
    if symbol and values.symbols:
        return True
    return kind is not None and (values.kinds is None or kind in values.kinds)


def _filtered_call_handlers(
    func: ast.expr,
    by_method: dict[str, list[Handler]],
    by_symbol: dict[str, list[Handler]] | None,
    symbol_tails: frozenset[str],
    sdk_symbol: Callable[[ast.expr], str | None],
) -> list[Handler] | None:
    """The rules whose `LooksAt.calls` / `sdk_calls` take a call of `func`, each once."""
    func_class = func.__class__
    # `__class__ is` (cheaper than isinstance here, once per call node) narrows nothing for mypy.
    if func_class is ast.Attribute:
        name = func.attr  # type: ignore[attr-defined]  # func_class is ast.Attribute
        named = name in symbol_tails
    elif func_class is ast.Name:
        name = func.id  # type: ignore[attr-defined]  # func_class is ast.Name
        named = True  # an alias (`D = trio.Datum`, `from pytrio import Datum as D`)
    else:
        return None
    found = by_method[name]
    if named and by_symbol is not None:
        symbol = sdk_symbol(func)
        more = by_symbol[symbol] if symbol is not None else None
        if more:
            found = [*found, *(h for h in more if h not in found)] if found else more
    return found


def _internal_error(code: str, node: ast.AST, exc: Exception) -> Finding:
    span = Span.of(node) if hasattr(node, "lineno") else Span(1, 0, 1, 0)
    return Finding(
        INTERNAL_ERROR,
        span,
        internal_error_message(exc, rule=code),
        Severity.ERROR,
        name=NAMES[INTERNAL_ERROR],
    )
