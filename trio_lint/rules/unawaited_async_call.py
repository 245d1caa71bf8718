"""PTR103 unawaited-async-call: a PyTRIO `*_async` method called without `await`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import walk
from trio_lint.rules.base import Invalid, LooksAt, Rule, SdkValues, Valid, edit, limited, unsafe_fix
from trio_lint.semantics.receivers import Kind

if TYPE_CHECKING:
    import libcst as cst

# What may be done with a coroutine object itself.
_COROUTINE_API = frozenset({"close", "send", "throw", "cr_await", "cr_code", "cr_frame"})


def _await(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.BaseExpression)
    return cst.Await(expression=node)


class UnawaitedAsyncCall(Rule):
    code = "PTR103"
    name = "unawaited-async-call"
    message = "`{call}` is a coroutine: without `await` it never runs and nothing is submitted"
    severity = Severity.ERROR
    looks_at = LooksAt(receivers=SdkValues(symbols=False, kinds=frozenset({Kind.COROUTINE})))
    fix_safety = Applicability.UNSAFE
    doc = """
## What it does
Flags a call of a PyTRIO `*_async` method (`forward_backward_async`, `sample_async`,
`create_lora_training_client_async`, ...) that is neither awaited nor handed to an asyncio runner
(`asyncio.gather`, `create_task`, `ensure_future`, `wait_for`, `run`): used as a bare statement or
read as if it were the result (`train.forward_backward_async(b).result()`).

## Why is this bad?
The `*_async` methods are coroutine functions: calling one only creates a coroutine object. Without `await` it
never runs, so no request is submitted, the training step silently does nothing, and Python only
warns "coroutine ... was never awaited" at garbage collection.

## Fix safety
Inside `async def` the fix inserts `await`; it is unsafe because the call then really runs (and,
for the training methods, returns a future that still needs its own await). Outside `async def`
there is no fix: use the sync method (`forward_backward`) instead.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward_async`
- https://docs.python.org/3/library/asyncio-task.html#coroutines
"""
    evidence = """
- (`029:client/training.py:544-573`, `029:client/sampling.py:92-128`)
"""
    VALID = (
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    pending = train.forward_backward_async(batch, 'cross_entropy')\n"
            "    other_work()\n"
            "    fb = await pending\n"
            "    coros = [train.optim_step_async(trio.AdamParams()) for _ in range(2)]\n"
            "    done = await asyncio.gather(*coros)\n"
            "    return (await fb).metrics, done[0]\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fut = await train.forward_backward_async(batch)\n"
            "    return await fut\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def many(sampler: trio.SamplingClient, prompts, params):\n"
            "    return await asyncio.gather(\n"
            "        *[sampler.sample_async(prompt=p, sampling_params=params) for p in prompts]\n"
            "    )\n"
        ),
        Valid(
            "import pytrio as trio\nimport httpx\n"
            "async def fetch(client: httpx.AsyncClient, engine):\n"
            "    engine.generate_async(prompt)\n"
            "    client.get_async('x')\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    coro = svc.create_lora_training_client_async(base_model='m')\n"
            "    task = asyncio.create_task(coro)\n"
            "    return await task\n"
        ),
        # A task runs its coroutine: its `.result()` is the response, nothing is left unawaited.
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, prompts, sp):\n"
            "    async with asyncio.TaskGroup() as tg:\n"
            "        task = tg.create_task(sampler.sample_async(prompts[0], sampling_params=sp))\n"
            "    pending = [asyncio.create_task(sampler.sample_async(p, sampling_params=sp))\n"
            "               for p in prompts]\n"
            "    done, _ = await asyncio.wait(pending)\n"
            "    return task.result().sequences, [t.result().sequences for t in done]\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    train.forward_backward_async(batch, 'cross_entropy')\n",
            fixed="import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    await train.forward_backward_async(batch, 'cross_entropy')\n",
            line=3,
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(train, batch):\n"
            "    return train.forward_backward_async(batch).result()\n",
            message_contains="never runs",
        ),
        Invalid(
            "import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "async def main():\n"
            "    sampler = await svc.create_sampling_client_async(base_model='m')\n"
            "    sampler.sample_async(prompt=p, sampling_params=sp)\n",
            fixed="import pytrio as trio\n"
            "svc = trio.ServiceClient()\n"
            "async def main():\n"
            "    sampler = await svc.create_sampling_client_async(base_model='m')\n"
            "    await sampler.sample_async(prompt=p, sampling_params=sp)\n",
            line=5,
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    pending = train.forward_backward_async(batch, 'cross_entropy')\n"
            "    other_work()\n"
            "    return pending.result().metrics\n",
            line=5,
            message_contains="`pending` holds the coroutine",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def texts(sampler: trio.SamplingClient, p, sp):\n"
            "    response = sampler.sample_async(p, 2, sp)\n"
            "    return [s.text for s in response.sequences]\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    pending = train.forward_backward_async(batch, 'cross_entropy')\n"
            "    return 'submitted'\n",
            line=3,
            message_contains="never awaited",
        ),
    )
    reach = limited(
        "init-attribute",
        "config-dict",
        "dict-entry-get",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # `name = x.m_async(...)`: (name, the function it is bound in (None: the module), the
        # call, the method)
        self._held: list[tuple[str, ast.AST | None, ast.Call, str]] = []
        # The names read anywhere in the unit, from the Name events the dispatch hands over: a
        # coroutine bound at module level is read if its name is (no walk of the module).
        self._read: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if node.ctx.__class__ is ast.Load:
            self._read.add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        if not (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr.endswith("_async")
        ):
            return
        found = self.model.client_call(value)
        if found is not None:
            scope = self.ctx.function_stack[-1] if self.ctx.function_stack else None
            self._held.append((node.targets[0].id, scope, value, found[1]))

    def finish(self) -> None:
        """A coroutine bound to a name that nothing reads afterwards is never awaited (read in
        its function, or anywhere in the unit for a module-level name)."""
        for name, scope, call, method in self._held:
            if scope is None:
                if name in self._read:
                    continue
            elif any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                for n in walk(scope)
            ):
                continue
            self.report(
                call,
                f"`{name}` holds the coroutine of `{method}(...)` and is never awaited: it never"
                " runs and nothing is submitted",
            )

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            self._check(node.value)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Call):
            self._check(node.value, fixable=False)
        elif node.attr not in _COROUTINE_API:
            self._check_held(node.value, f"`.{node.attr}`")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._check_held(node.value, "an item")

    def visit_For(self, node: ast.For) -> None:
        self._check_held(node.iter, "its items")

    def _check_held(self, value: ast.expr, use: str) -> None:
        """`coro = x.m_async(...)` read later as if it were the result."""
        if not isinstance(value, ast.Name):
            return
        typ = self.model.type_of(value)
        if typ is None or typ.kind is not Kind.COROUTINE or typ.origin is None:
            return
        self.report(
            value,
            f"`{value.id}` holds the coroutine of `{typ.origin}_async(...)`: `await {value.id}` "
            f"before reading {use} (without `await` it never runs)",
        )

    def _check(self, call: ast.Call, *, fixable: bool = True) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr.endswith("_async")):
            return  # the method name first: most calls are no `*_async` one
        found = self.model.client_call(call)
        if found is None:
            return
        fix = None
        if fixable and self.ctx.in_async_function:
            fix = unsafe_fix("Insert `await`", edit(call, "Call", _await))
        self.report(call, self.message.format(call=found[1]), fix=fix)
