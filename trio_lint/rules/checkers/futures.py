"""The futures checker: one walk for the codes about PyTRIO futures and what waiting gives.

PTR101 missing-result (a future read as if it were the response), PTR102 dropped-future (a
future thrown away) and PTR104 awaited-value (a second wait on what one wait already gave) ask
the model the same question of the same nodes (what a call, name or `await` holds: a future, a
coroutine or the value) and are reported by `FuturesChecker`; each code's rule module keeps its
metadata (doc, examples, message, reach). Not a rule module (the registry skips `checkers/`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from trio_lint.rules import _futures as futures
from trio_lint.rules._common import append_result_call
from trio_lint.rules._supersedes import supersession
from trio_lint.rules.base import (
    FUTURE_API_ISSUE,
    RESPONSE_ON_FUTURE,
    Checker,
    LooksAt,
    SdkValues,
    edit,
    safe_fix,
    unsafe_fix,
)
from trio_lint.rules.checkers import conformance
from trio_lint.semantics.receivers import FUTURE_KINDS, Kind

if TYPE_CHECKING:
    import libcst as cst

    from trio_lint.rules.base import Rule
    from trio_lint.semantics.context import LintContext

MISSING_RESULT, DROPPED_FUTURE, AWAITED_VALUE = "PTR101", "PTR102", "PTR104"


@functools.cache
def _tinker_future_api() -> frozenset[str]:
    """The members of Tinker's `APIFuture` (read from its wheel: `pytrio_facts/tinker_api.json`),
    where the code is only Tinker's: `result_async()`, `coroutine()`, `future()` (pytrio's future
    has none of them: PTR213 reports them there)."""
    from pytrio_facts.porting import tinker_data, tinker_release

    found = tinker_data().symbol("tinker.APIFuture", tinker_release())
    return frozenset(getattr(found, "methods", {})) - {"result"}


# Builtins that consume an iterable: a future given to one of them is not its result.
_CONSUMERS = frozenset({"sum", "len", "list", "tuple", "sorted", "max", "min", "enumerate", "zip"})
# asyncio's functions that wait for awaitables (PTR104: given values an await already gave).
_GATHERERS = frozenset({"gather", "wait", "as_completed"})


def _reading(use: str | None, member: ast.Attribute | None) -> str | None:
    """What a finding says is read: `use`, or the attribute `member` (`.metrics`)."""
    return use if use is not None or member is None else f"`.{member.attr}`"


def _await_again(node: cst.CSTNode) -> cst.CSTNode:
    """`(await x.m_async(...))` -> `(await (await x.m_async(...)))`: the second await waits."""
    import libcst as cst

    assert isinstance(node, cst.Await)
    inner = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Await(expression=inner, lpar=node.lpar, rpar=node.rpar)


def _double_await(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Await)
    inner = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Await(expression=inner)


_AWAITABLE = FUTURE_KINDS | {Kind.COROUTINE, Kind.TASK}


def _unwrap_await(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Await)
    inner = node.expression
    if isinstance(node.expression, cst.Await):
        inner = node.expression.with_changes(lpar=node.lpar, rpar=node.rpar)
    elif isinstance(inner, cst.Name | cst.Attribute | cst.Call | cst.Subscript):
        inner = inner.with_changes(lpar=node.lpar, rpar=node.rpar)
    return inner


def _drop_result_call(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    return node.func.value


class FuturesChecker(Checker):
    """Reports PTR101, PTR102 and PTR104 (see the module docstring), each only when selected."""

    codes = (MISSING_RESULT, DROPPED_FUTURE, AWAITED_VALUE)
    # Calls: a builtin consuming a future (PTR101), `.result()` on a value (PTR104); attributes
    # and items of a plain name only when the model types it as a future (PTR101).
    looks_at = LooksAt(
        calls=_CONSUMERS | _GATHERERS | {"result"},
        receivers=SdkValues(symbols=False, kinds=FUTURE_KINDS),
    )

    def __init__(self, ctx: LintContext, rules: Sequence[type[Rule]] = ()) -> None:
        super().__init__(ctx, rules)
        self.missing_result = MISSING_RESULT in self.rules
        self.dropped_future = DROPPED_FUTURE in self.rules
        self.awaited_value = AWAITED_VALUE in self.rules
        # PTR104 is about PyTRIO's futures alone (`AwaitedValue.pytrio_only`): it asks the
        # model for PyTRIO's names.
        self.pytrio_model = ctx.for_rule(not ctx.model.other_sdk_only).view

    # ---- PTR101 missing-result: a future read as if it were the response ----------------------

    def visit_For(self, node: ast.For) -> None:
        if self.missing_result:
            self._check(node.iter, node.iter, "its items (iterating)")

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if self.missing_result:
            self._check(node.iter, node.iter, "its items (iterating)")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.awaited_value and _gatherer(func):
            self._check_gathered(node, func)
        if func.__class__ is ast.Attribute:
            if self.awaited_value:
                self._check_result_call(node, func)
        elif (
            self.missing_result
            and isinstance(func, ast.Name)
            and func.id in _CONSUMERS
            and len(node.args) == 1
            and self.model.bound_expression(func) is None
            and self.model.qualified_name(func) is None
        ):
            self._check(node.args[0], node.args[0], f"its items (`{func.id}(...)`)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.missing_result and node.attr not in futures.FUTURE_API:
            self._check(node, node.value, None, member=node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self.missing_result:
            self._check(node, node.value, "an item")

    def _check(
        self, node: ast.expr, value: ast.expr, use: str | None, member: ast.Attribute | None = None
    ) -> None:
        """`member`: the attribute read on `value` (None for items and iteration); `use` (None:
        reading `member`) is only spelled out for a finding: most reads are of no future."""
        if isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            # One await of a two-await method gives the future, not the result.
            func = value.value.func
            if isinstance(func, ast.Attribute) and self._reads_response(value, member):
                fix = safe_fix("Await the future too", edit(value, "Await", _await_again))
                self.report(
                    node,
                    f"`await {func.attr}(...)` gives a future (the first await only enqueues): "
                    f"await it again before reading {_reading(use, member)}",
                    fix=fix,
                    code=MISSING_RESULT,
                )
            return
        if isinstance(value, ast.Call):
            func = value.func
            if not (isinstance(func, ast.Attribute) and func.attr in futures.FUTURE_METHODS):
                return
            kind = self._future_kind(value, member)
            if kind is None:
                return
            fix = safe_fix("Insert `.result()`", edit(value, "Call", append_result_call))
            message = self.rules[MISSING_RESULT].message.format(
                method=func.attr,
                future=futures.noun(kind),
                wait=futures.wait_advice(kind, None, in_async=self.ctx.in_async_function),
                use=_reading(use, member),
            )
            self.report(node, message, fix=fix, code=MISSING_RESULT)
        elif futures.is_reference(value):
            kind = self._future_kind(value, member)
            if kind is None:
                return
            name = ast.unparse(value)
            wait = futures.wait_advice(kind, name, in_async=self.ctx.in_async_function)
            self.report(
                node,
                f"`{name}` holds {futures.noun(kind)}: {wait} before reading {_reading(use, member)}",
                code=MISSING_RESULT,
            )

    def _future_kind(self, future: ast.expr, member: ast.Attribute | None) -> Kind | None:
        """The kind of future `future` holds when `member` is read as its response's."""
        typ = self.model.type_of(future)
        if typ is None or not typ.is_future:
            return None  # most reads: tested here before `_reads_response` asks the same
        return typ.kind if self._reads_response(future, member) else None

    def _reads_response(self, future: ast.expr, member: ast.Attribute | None) -> bool:
        """`future` holds a future, and `member` (when given) is read as the response's.

        A member of the response (`fb.metrics`) is (PTR101's `supersedes`: RESPONSE_ON_FUTURE).
        A name that neither the future nor its response has is a misnamed future method when the
        conformance rules report it on the future (their `supersedes`: FUTURE_API_ISSUE;
        `fut.result_async()`: PTR213 alone names the mistake) or when another SDK's future has
        it; anything else (`runs.get(...)`, `fb.loss`) is still read as the response. Whether
        `member` is called is the model's (`calls_of`), not a walk of the unit.
        """
        typ = self.model.type_of(future)
        if typ is None or not typ.is_future:
            return False
        if member is None:
            return True
        precedence = supersession()
        if precedence.future_member(RESPONSE_ON_FUTURE) and conformance.response_has(
            typ, member.attr, conformance.target(self.ctx)
        ):
            return True
        if self.model.other_sdk_only and member.attr in _tinker_future_api():
            return False
        if not precedence.future_member(FUTURE_API_ISSUE):
            return True
        called = any(call.func is member for call in self.model.calls_of("." + member.attr))
        return conformance.attribute_issue(self.ctx, member, called=called) is None

    # ---- PTR102 dropped-future: a future thrown away ------------------------------------------

    def visit_Expr(self, node: ast.Expr) -> None:
        if not self.dropped_future:
            return
        value = node.value
        if self.model.listed(value):
            return  # a catalogue of calls in a document: nothing is run, nothing dropped
        if isinstance(value, ast.Call):
            # client_call first: it answers None at once for `print(...)` and the like.
            typ = self.model.type_of(value) if self.model.client_call(value) else None
            if typ is not None and typ.is_future:
                name = value.func.attr  # type: ignore[attr-defined]  # client_call: `x.method(...)`
                self.report(
                    value,
                    self.rules[DROPPED_FUTURE].message.format(call=name),
                    fix=unsafe_fix("Append `.result()`", edit(value, "Call", append_result_call)),
                    code=DROPPED_FUTURE,
                )
        elif isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            typ = self.model.type_of(value) if self.model.client_call(value.value) else None
            if typ is not None and typ.is_future:
                name = value.value.func.attr  # type: ignore[attr-defined]  # as above
                self.report(
                    value,
                    f"Future of `await {name}(...)` is dropped: the first await only enqueues; "
                    "add a second `await` to see the result and its errors",
                    fix=unsafe_fix("Await the future", edit(value, "Await", _double_await)),
                    code=DROPPED_FUTURE,
                )

    # ---- PTR104 awaited-value: a second wait on what is already the value --------------------

    def visit_Await(self, node: ast.Await) -> None:
        if not self.awaited_value:
            return
        typ = self.pytrio_model.type_of(node.value)
        if typ is None or typ.kind in _AWAITABLE:
            return
        self.report(
            node,
            self.rules[AWAITED_VALUE].message.format(
                expr=ast.unparse(node.value), kind=typ.kind, fix="remove the extra `await`"
            ),
            fix=safe_fix("Remove the extra `await`", edit(node, "Await", _unwrap_await)),
            code=AWAITED_VALUE,
        )

    def _check_gathered(self, node: ast.Call, func: ast.expr) -> None:
        """`asyncio.gather(*results)` where `results` came out of an earlier `gather` (or each
        argument out of an `await`): the values are no awaitables, and gathering them raises
        `TypeError` (0.2.9's `SampleResponse` is not even hashable)."""
        runner = func.attr if isinstance(func, ast.Attribute) else func.id  # type: ignore[attr-defined]  # the hook's callers pass a Name or an Attribute
        for arg in node.args:
            starred = isinstance(arg, ast.Starred)
            value = arg.value if starred else arg  # type: ignore[attr-defined]  # a Starred when `starred`
            typ = self.pytrio_model.type_of(value)
            if starred or runner != "gather":
                typ = typ.of if typ is not None and typ.kind is Kind.LIST else None
            if typ is None or typ.kind in _AWAITABLE or typ.is_client or typ.kind is Kind.LIST:
                continue
            if not self._from_await(value):
                continue  # a value a sync call gave: not a second wait
            name = ast.unparse(value)
            self.report(
                arg,
                f"`{name}` holds `{typ.kind}` values that an earlier `await` already gave, not "
                f"awaitables: `{runner}` raises `TypeError` on them; use the values themselves",
                code=AWAITED_VALUE,
            )

    def _check_result_call(self, node: ast.Call, func: ast.Attribute) -> None:
        if func.attr != "result" or node.args:
            return
        typ = self.pytrio_model.type_of(func.value)
        if typ is None or typ.kind in _AWAITABLE or typ.is_client:
            return
        # Only values that came out of an await: a sync call's result is checked elsewhere.
        if not self._from_await(func.value):
            return
        self.report(
            node,
            self.rules[AWAITED_VALUE].message.format(
                expr=ast.unparse(func.value), kind=typ.kind, fix="drop `.result()`"
            ),
            fix=safe_fix("Drop `.result()`", edit(node, "Call", _drop_result_call)),
            code=AWAITED_VALUE,
        )

    def _from_await(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Await):
            return True
        if isinstance(expr, ast.Subscript):
            return self._from_await(expr.value)  # `results[0]` of `results = await gather(...)`
        if not isinstance(expr, ast.Name):
            return False
        return isinstance(self.pytrio_model.bound_expression(expr), ast.Await)


def _gatherer(func: ast.expr) -> bool:
    """`asyncio.gather` / `asyncio.wait` / `asyncio.as_completed`, or the bare names."""
    if isinstance(func, ast.Attribute):
        return (
            func.attr in _GATHERERS
            and isinstance(func.value, ast.Name)
            and func.value.id == "asyncio"
        )
    return isinstance(func, ast.Name) and func.id in _GATHERERS
