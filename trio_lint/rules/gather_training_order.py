"""PTR107 gather-training-order: forward-backward and optim_step submitted through `gather`."""

from __future__ import annotations

import ast

from trio_lint.diagnostics import Severity
from trio_lint.rules.base import Invalid, Rule, Valid, limited

_FB = ("forward_backward_async", "forward_backward_custom_async", "forward_async")


def _training_calls(node: ast.AST) -> list[str]:
    return [
        n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and (n.func.attr in _FB or n.func.attr == "optim_step_async")
    ]


class GatherTrainingOrder(Rule):
    code = "PTR107"
    name = "gather-training-order"
    message = (
        "`{runner}` does not guarantee that the forward-backward is submitted before "
        "`optim_step_async`: submit them with sequential `await`s"
    )
    severity = Severity.WARNING
    call_methods = frozenset({"gather"})  # its visit_Call looks at nothing else
    doc = """
## What it does
Flags `asyncio.gather(...)` whose arguments include both a forward-backward submission
(`forward_backward_async`, `forward_backward_custom_async`, `forward_async`) and
`optim_step_async`, such as `asyncio.gather(train.forward_backward_async(b),
train.optim_step_async(adam))`.

## Why is this bad?
The optimizer step applies the gradients accumulated *before* it is queued. Under `gather` the
coroutines start as tasks, and which one reaches the SDK's queue first depends on task start
order: each call hops to the SDK loop with `run_coroutine_threadsafe`. No API contract fixes the order, so the step may apply
the previous batch's gradients, or none.

## Fix safety
No fix.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.optim_step_async`
- https://docs.python.org/3/library/asyncio-task.html#asyncio.gather
"""
    evidence = """
- (`029:runtime/event_loop.py:240-249`)
"""
    VALID = (
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    fb = await train.forward_backward_async(batch)\n"
            "    opt = await train.optim_step_async(adam)\n"
            "    return await asyncio.gather(fb, opt)\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def many(sampler: trio.SamplingClient, prompts, sp):\n"
            "    return await asyncio.gather(*[sampler.sample_async(p, sampling_params=sp)\n"
            "                                  for p in prompts])\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def evals(a: trio.TrainingClient, b: trio.TrainingClient, batch):\n"
            "    return await asyncio.gather(a.forward_async(batch), b.forward_async(batch))\n"
        ),
    )
    INVALID = (
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    fb, opt = await asyncio.gather(\n"
            "        train.forward_backward_async(batch, 'cross_entropy'),\n"
            "        train.optim_step_async(adam),\n"
            "    )\n",
            line=4,
        ),
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batches, adam):\n"
            "    jobs = [train.forward_backward_async(b) for b in batches]\n"
            "    return await asyncio.gather(*jobs, train.optim_step_async(adam))\n",
            message_contains="gather",
        ),
        Invalid(
            "from asyncio import gather\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    await gather(train.optim_step_async(adam), train.forward_backward_async(batch))\n",
        ),
    )
    reach = limited(
        "local-name",
        "init-attribute",
        "helper-return",
        "call-site-parameter",
        "call-site-method-parameter",
        "config-dict",
        "loop-variable",
    )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        runner = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if runner != "gather":
            return
        calls: list[str] = []
        for arg in node.args:
            calls += _training_calls(arg)
            if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
                # `gather(*coros)`: what the model says the list was built from.
                for origin in self.model.origins(arg.value)[1:]:
                    func = origin.func if isinstance(origin, ast.Call) else None
                    if isinstance(func, ast.Attribute) and (
                        func.attr in _FB or func.attr == "optim_step_async"
                    ):
                        calls.append(func.attr)
        if "optim_step_async" in calls and any(c in _FB for c in calls):
            self.report(node, self.message.format(runner="asyncio.gather"))
