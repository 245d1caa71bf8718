"""PTR105 blocking-call-in-async: a blocking PyTRIO call inside `async def`."""

from __future__ import annotations

import ast

import libcst as cst

from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules._common import sdk_line
from trio_lint.rules.base import Fix, Invalid, Rule, Valid, edit, safe_fix
from trio_lint.semantics.receivers import Kind

# Sync methods whose `_async` twin returns the same thing (an APIFuture or a client), so
# `x.m(...)` -> `await x.m_async(...)` means the same without blocking the event loop.
_SAME_SHAPE = frozenset({Kind.TRAINING_CLIENT, Kind.SERVICE_CLIENT})


def _to_async(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    name = node.func.attr.value + "_async"
    call = node.with_changes(func=node.func.with_changes(attr=cst.Name(name)))
    return cst.Await(expression=call)


def _result_to_double_await(node: cst.CSTNode) -> cst.CSTNode:
    """`x.m(...).result()` -> `await (await x.m_async(...))`."""
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    inner = node.func.value
    assert isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
    call = inner.with_changes(
        func=inner.func.with_changes(attr=cst.Name(inner.func.attr.value + "_async"))
    )
    first = cst.Await(expression=call, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Await(expression=first)


def _result_to_single_await(node: cst.CSTNode) -> cst.CSTNode:
    """`sc.sample(...).result()` -> `await sc.sample_async(...)` (0.2: the value, one await)."""
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    inner = node.func.value
    assert isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
    call = inner.with_changes(
        func=inner.func.with_changes(attr=cst.Name(inner.func.attr.value + "_async"))
    )
    return cst.Await(expression=call)


def _await_name(node: cst.CSTNode) -> cst.CSTNode:
    """`fut.result()` -> `await fut`."""
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    return cst.Await(expression=node.func.value)


class BlockingCallInAsync(Rule):
    code = "PTR105"
    name = "blocking-call-in-async"
    message = "`{call}` blocks the event loop inside `async def`: {fix}"
    severity = Severity.WARNING
    fix_safety = Applicability.SAFE
    doc = """
## What it does
Inside `async def`, flags a sync PyTRIO method that has an `_async` twin
(`train.forward_backward(...)`, `svc.create_lora_training_client(...)`, `sampler.sample(...)`,
RestClient calls) and `.result()` on an `APIFuture`.

## Why is this bad?
The sync methods hop to the SDK's own loop thread and wait there; `.result()` blocks until the server answers. Inside a
coroutine that freezes every other task of the event loop (other samplers, heartbeats, the web
server of an agent) for the whole round-trip.

## Fix safety
Safe where the awaited form returns the same thing: TrainingClient methods and ServiceClient
factories (`x.m(...)` -> `await x.m_async(...)`), `fut.result()` -> `await fut` on an APIFuture,
`x.m(...).result()` -> `await (await x.m_async(...))`, and on 0.2
`sampler.sample(...).result()` -> `await sampler.sample_async(...)`. A bare `sampler.sample(...)`
and RestClient calls have no fix (their async twins return the value, not a future).

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward_async`, `pytrio.types.APIFuture`
- https://docs.python.org/3/library/asyncio-dev.html#running-blocking-code
"""
    evidence = """
- api-diff.md §2, §3.2, TRIO021; `029:runtime/event_loop.py:226-249`
- (`029:runtime/event_loop.py:226-249`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = await train.forward_backward_async(batch)\n"
            "    return await fb\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch).result()\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\n"
            "async def infer(model, x, executor):\n"
            "    out = model.forward(x)\n"
            "    return executor.submit(f).result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    def work():\n"
            "        return svc.create_lora_training_client(base_model='m')\n"
            "    return await asyncio.to_thread(work)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = train.forward_backward(batch, 'cross_entropy')\n"
            "    return await fb\n",
            fixed="import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = await train.forward_backward_async(batch, 'cross_entropy')\n"
            "    return await fb\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, adam):\n"
            "    return train.optim_step(adam).result()\n",
            fixed="import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, adam):\n"
            "    return await (await train.optim_step_async(adam))\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    out = sampler.sample(p, sampling_params=sp).result()\n"
            "    return out.sequences[0].text\n",
            fixed="import pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    out = await sampler.sample_async(p, sampling_params=sp)\n"
            "    return out.sequences[0].text\n",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fut = await train.forward_backward_async(batch)\n"
            "    return fut.result()\n",
            fixed="import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fut = await train.forward_backward_async(batch)\n"
            "    return await fut\n",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._no_fix: set[int] = set()  # calls used as `.attr` receivers (await needs parens)
        self._handled: set[int] = set()  # inner calls already reported with their `.result()`

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Call):
            self._no_fix.add(id(node.value))

    visit_Subscript = visit_Attribute  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        if not self.ctx.in_async_function or id(node) in self._handled:
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "result" and not node.args:
            self._check_result(node, func.value)
            return
        found = self.ctx.receivers.client_call(node)
        if found is None:
            return
        kind, method = found
        if (
            method.endswith("_async")
            or self.ctx.receivers.method_returns(kind, f"{method}_async") is None
        ):
            return
        fix: Fix | None = None
        if kind in _SAME_SHAPE and id(node) not in self._no_fix:
            fix = safe_fix(f"Use `await ...{method}_async(...)`", edit(node, cst.Call, _to_async))
        self.report(
            node,
            self.message.format(call=f"{method}(...)", fix=f"use `await {method}_async(...)`"),
            fix=fix,
        )

    def _check_result(self, node: ast.Call, value: ast.expr) -> None:
        typ = self.ctx.receivers.type_of(value)
        if typ is None or typ.kind is not Kind.API_FUTURE:
            return
        fix: Fix | None = None
        found = self.ctx.receivers.client_call(value) if isinstance(value, ast.Call) else None
        if found is not None:
            self._handled.add(id(value))
            kind, method = found
            if kind is Kind.TRAINING_CLIENT:
                fix = safe_fix(
                    "Await the async twin twice", edit(node, cst.Call, _result_to_double_await)
                )
            elif kind is Kind.SAMPLING_CLIENT and sdk_line(self.ctx) == "0.2":
                fix = safe_fix(
                    f"Use `await ...{method}_async(...)`",
                    edit(node, cst.Call, _result_to_single_await),
                )
            what = f"{method}(...).result()"
        elif isinstance(value, ast.Name):
            fix = safe_fix(f"Use `await {value.id}`", edit(node, cst.Call, _await_name))
            what = f"{value.id}.result()"
        else:
            what = f"{ast.unparse(value)}.result()"
        self.report(node, self.message.format(call=what, fix="await the future instead"), fix=fix)
