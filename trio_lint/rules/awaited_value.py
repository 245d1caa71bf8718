"""PTR104 awaited-value: a second `await` (or `.result()`) on what is already the value."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, edit, limited, safe_fix
from trio_lint.semantics.receivers import FUTURE_KINDS, Kind

if TYPE_CHECKING:
    import libcst as cst

_AWAITABLE = FUTURE_KINDS | {Kind.COROUTINE}


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


class AwaitedValue(Rule):
    code = "PTR104"
    looks_at = LooksAt(calls=frozenset({"result"}))
    name = "awaited-value"
    message = "`{expr}` is already a `{kind}`, not a future: {fix}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    min_sdk = "0.2"
    fix_safety = Applicability.SAFE
    doc = """
## What it does
On 0.2: flags a second `await` or a `.result()` on a value that one `await` already produced:
the results of `SamplingClient.sample_async`/`compute_logprobs_async`, of every RestClient and
ServiceClient `*_async` method, and of `create_sampling_client_async`. Both the inline
`await (await sampler.sample_async(...))` and `r = await ...` followed by `await r` /
`r.result()` are flagged.

## Why is this bad?
In 0.2.9 these coroutines return the value itself (`return await response`), so the extra `await` raises
`TypeError: object SampleResponse can't be used in 'await' expression`. The habit comes from the
training methods and from 0.1.13, whose `sample_async` returned an `APIFuture`; both need two awaits.

## Fix safety
Removing the extra `await`/`.result()` is safe on 0.2; the rule never runs on 0.1, where the
double await is the correct form.

## References
- pytrio 0.2.9: `pytrio.SamplingClient.sample_async`
- pytrio 0.1.13: `pytrio.SamplingClient.sample_async` (returned an `APIFuture`)
"""
    evidence = """
- (`013:lib/sampling_client.py:55-111`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await sampler.sample_async(prompt=p, sampling_params=sp)\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    return await (await train.forward_backward_async(batch))\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await (await sampler.sample_async(prompt=p, sampling_params=sp))\n",
            config={"target-version": "0.1"},
        ),
        Valid(
            "import pytrio as trio\nimport asyncio\n"
            "async def go(session, url):\n"
            "    resp = await session.get(url)\n"
            "    return await resp.json()\n"
        ),
        # Tinker 0.38.0's `create_lora_training_client` returns a client that is also a future.
        Valid(
            "import tinker\n"
            "async def main():\n"
            "    service = tinker.ServiceClient()\n"
            "    train = await service.create_lora_training_client(base_model='m', rank=16)\n"
            "    return await train.save_weights_and_get_sampling_client()\n",
            config={"sdk-modules": ["tinker"]},
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await (await sampler.sample_async(prompt=p, sampling_params=sp))\n",
            fixed="import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    return await sampler.sample_async(prompt=p, sampling_params=sp)\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    fut = await sampler.sample_async(prompt=p, sampling_params=sp)\n"
            "    result = await fut\n"
            "    return result.sequences[0].text\n",
            fixed="import pytrio as trio\n"
            "async def go(sampler: trio.SamplingClient, p, sp):\n"
            "    fut = await sampler.sample_async(prompt=p, sampling_params=sp)\n"
            "    result = fut\n"
            "    return result.sequences[0].text\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def runs(rest: trio.RestClient):\n"
            "    resp = await rest.list_training_runs_async()\n"
            "    return resp.result().training_runs\n",
            fixed="import pytrio as trio\n"
            "async def runs(rest: trio.RestClient):\n"
            "    resp = await rest.list_training_runs_async()\n"
            "    return resp.training_runs\n",
        ),
    )
    reach = limited(
        "local-name",
        "call-site-parameter",
        "call-site-method-parameter",
        "config-dict",
        "loop-variable",
    )

    def visit_Await(self, node: ast.Await) -> None:
        typ = self.model.type_of(node.value)
        if typ is None or typ.kind in _AWAITABLE:
            return
        self.report(
            node,
            self.message.format(
                expr=ast.unparse(node.value), kind=typ.kind, fix="remove the extra `await`"
            ),
            fix=safe_fix("Remove the extra `await`", edit(node, "Await", _unwrap_await)),
        )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "result") or node.args:
            return
        typ = self.model.type_of(func.value)
        if typ is None or typ.kind in _AWAITABLE or typ.is_client:
            return
        # Only values that came out of an await: a sync call's result is checked elsewhere.
        if not self._from_await(func.value):
            return
        self.report(
            node,
            self.message.format(
                expr=ast.unparse(func.value), kind=typ.kind, fix="drop `.result()`"
            ),
            fix=safe_fix("Drop `.result()`", edit(node, "Call", _drop_result_call)),
        )

    def _from_await(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Await):
            return True
        if not isinstance(expr, ast.Name):
            return False
        return isinstance(self.model.bound_expression(expr), ast.Await)
