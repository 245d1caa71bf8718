"""PTR107 gather-training-order: forward-backward and optim_step submitted through `gather`."""

from __future__ import annotations

import ast

from trio_lint.diagnostics import Severity
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited

_FB = ("forward_backward_async", "forward_backward_custom_async", "forward_async")
# The training requests whose order matters when each of several tasks submits both.
_TASK_FB = frozenset({"forward_backward", "forward_backward_custom", *_FB[:2]})
_TASK_STEP = frozenset({"optim_step", "optim_step_async"})
_STARTERS = frozenset({"create_task", "ensure_future", "start_soon"})


def _training_calls(node: ast.AST) -> list[str]:
    return [
        n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and (n.func.attr in _FB or n.func.attr == "optim_step_async")
    ]


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _unlocked_pair(function: ast.AsyncFunctionDef) -> ast.Call | None:
    """The `optim_step` call of a coroutine that also submits a forward-backward on the same
    receiver, outside any `async with` (a lock orders the pairs): None when there is no such
    pair. Nested functions are not looked into."""
    fb: set[str] = set()
    steps: list[tuple[str, ast.Call]] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.AsyncWith | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = ast.unparse(node.func.value)
            if node.func.attr in _TASK_FB:
                fb.add(receiver)
            elif node.func.attr in _TASK_STEP:
                steps.append((receiver, node))
        stack.extend(ast.iter_child_nodes(node))
    found = [call for receiver, call in steps if receiver in fb]
    return min(found, key=lambda c: (c.lineno, c.col_offset)) if found else None


class GatherTrainingOrder(Rule):
    code = "PTR107"
    name = "gather-training-order"
    message = (
        "`{runner}` does not guarantee that the forward-backward is submitted before "
        "`optim_step_async`: submit them with sequential `await`s"
    )
    severity = Severity.WARNING
    looks_at = LooksAt(calls=frozenset({"gather", *_STARTERS}))
    doc = """
## What it does
Flags `asyncio.gather(...)` whose arguments include both a forward-backward submission
(`forward_backward_async`, `forward_backward_custom_async`, `forward_async`) and
`optim_step_async`, such as `asyncio.gather(train.forward_backward_async(b),
train.optim_step_async(adam))`; and an `async def` that submits both a forward-backward and an
`optim_step` on its client while several copies of it run as concurrent tasks
(`asyncio.gather(*(train_one(b) for b in batches))`, `create_task(...)` in a loop) with no lock
around the pair.

## Why is this bad?
The optimizer step applies the gradients accumulated *before* it is queued. Under `gather` the
coroutines start as tasks, and which one reaches the SDK's queue first depends on task start
order: each call hops to the SDK loop with `run_coroutine_threadsafe`. No API contract fixes the order, so the step may apply
the previous batch's gradients, or none. With several tasks each running forward-backward then
`optim_step` on one client, the SDK may queue every task's forward-backward before the first
`optim_step`: that step applies all the batches' gradients at once and the later steps apply
none. Run the steps one after another, or hold an `asyncio.Lock` around each pair.

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
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def train_one(train: trio.TrainingClient, batch, adam, lock: asyncio.Lock):\n"
            "    async with lock:\n"
            "        await (await train.forward_backward_async(batch, 'cross_entropy'))\n"
            "        await (await train.optim_step_async(adam))\n"
            "async def main(train: trio.TrainingClient, batches, adam):\n"
            "    lock = asyncio.Lock()\n"
            "    await asyncio.gather(*(train_one(train, b, adam, lock) for b in batches))\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def train_one(train: trio.TrainingClient, batch, adam):\n"
            "    await (await train.forward_backward_async(batch, 'cross_entropy'))\n"
            "    await (await train.optim_step_async(adam))\n"
            "async def main(train: trio.TrainingClient, batches, adam):\n"
            "    for b in batches:\n"
            "        await train_one(train, b, adam)\n"
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
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def train_one(train: trio.TrainingClient, batch, adam):\n"
            "    fb = await train.forward_backward_async(batch, 'cross_entropy')\n"
            "    opt = await train.optim_step_async(adam)\n"
            "    return await fb, await opt\n"
            "async def main(train: trio.TrainingClient, batches, adam):\n"
            "    await asyncio.gather(*(train_one(train, b, adam) for b in batches))\n",
            line=5,
            message_contains="several concurrent tasks",
        ),
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def worker(train: trio.TrainingClient, batch, adam):\n"
            "    train.forward_backward(batch, 'cross_entropy')\n"
            "    train.optim_step(adam).result()\n"
            "async def main(train: trio.TrainingClient, batches, adam):\n"
            "    tasks = [asyncio.create_task(worker(train, b, adam)) for b in batches]\n"
            "    await asyncio.wait(tasks)\n",
            line=5,
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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Coroutine functions started as several concurrent tasks: name -> how they were started.
        self._many: dict[str, str] = {}
        self._started: dict[str, int] = {}  # name -> how many single starts were seen
        self._defs: dict[str, list[ast.AsyncFunctionDef]] = {}
        self._loops = 0  # loops and comprehensions the walk is inside

    def _note_tasks(self, runner: str, node: ast.Call) -> None:
        """`gather(f(a), f(b))`, `gather(*(f(x) for x in xs))`, `create_task(f(x))` in a
        comprehension or loop: `f` runs as several tasks at once."""
        label = f"asyncio.{runner}"
        if runner == "gather":
            counted: dict[str, int] = {}
            for arg in node.args:
                value = arg.value if isinstance(arg, ast.Starred) else arg
                if isinstance(value, ast.GeneratorExp | ast.ListComp) and isinstance(
                    value.elt, ast.Call
                ):
                    name = _called_name(value.elt)
                    if name:
                        self._many.setdefault(name, label)
                elif isinstance(value, ast.Call):
                    name = _called_name(value)
                    if name:
                        counted[name] = counted.get(name, 0) + 1
            for name, count in counted.items():
                if count > 1:
                    self._many.setdefault(name, label)
            return
        if node.args and isinstance(node.args[0], ast.Call):
            name = _called_name(node.args[0])
            if name:
                self._started[name] = self._started.get(name, 0) + 1
                if self._in_loop:
                    self._many.setdefault(name, label)

    def visit_For(self, node: ast.AST) -> None:
        self._loops += 1

    def leave_For(self, node: ast.AST) -> None:
        self._loops -= 1

    visit_AsyncFor = visit_While = visit_ListComp = visit_GeneratorExp = visit_For  # type: ignore[assignment]
    leave_AsyncFor = leave_While = leave_ListComp = leave_GeneratorExp = leave_For  # type: ignore[assignment]

    @property
    def _in_loop(self) -> bool:
        return self._loops > 0

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._defs.setdefault(node.name, []).append(node)

    def finish(self) -> None:
        for name, started in self._started.items():
            if started > 1:
                self._many.setdefault(name, "asyncio.create_task")
        for name, runner in self._many.items():
            defs = self._defs.get(name, [])
            if len(defs) != 1:
                continue
            step = _unlocked_pair(defs[0])
            if step is not None:
                self.report(
                    step,
                    f"`{name}` submits a forward-backward and `{step.func.attr}` (of one client)"  # type: ignore[attr-defined]
                    f" and runs as several concurrent tasks (`{runner}`): the SDK may queue every"
                    " task's forward-backward before the first optim_step, so one step applies"
                    " all the gradients and the others none: run the steps in order, or hold an"
                    " `asyncio.Lock` around each pair",
                )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        runner = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if runner in _STARTERS or runner == "gather":
            self._note_tasks(runner, node)  # type: ignore[arg-type]
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
