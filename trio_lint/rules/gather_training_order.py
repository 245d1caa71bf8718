"""PTR107 gather-training-order: forward-backward and optim_step submitted through `gather`."""

from __future__ import annotations

import ast

from trio_lint.output.diagnostics import Severity
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


def _unlocked_pair(function: ast.AsyncFunctionDef) -> tuple[ast.Call, ast.expr] | None:
    """The `optim_step` call (and its receiver) of a coroutine that also submits a
    forward-backward on the same receiver, outside any `async with` (a lock orders the pairs):
    None when there is no such pair. Nested functions are not looked into."""
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
    if not found:
        return None
    step = min(found, key=lambda c: (c.lineno, c.col_offset))
    return step, step.func.value  # type: ignore[attr-defined]  # steps are `x.method(...)` calls


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _client_parameters(function: ast.AsyncFunctionDef, receiver: ast.expr) -> set[str] | None:
    """The parameters that choose the client a task drives (`train(client, batch)`: `client`;
    `clients[name]` or `client = pool[name]` in the body: `name`); None when each task makes
    its own (`client = await service.create_lora_training_client_async(...)` in the body) or
    the receiver depends on no parameter (one client for every task: an empty set)."""
    args = function.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    chosen = _names(receiver) & params
    roots = _names(receiver) - params
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in roots for t in node.targets
        ):
            used = _names(node.value) & params
            if not used and isinstance(node.value, ast.Call | ast.Await):
                return None  # a client made by the task itself
            chosen |= used
    return chosen


def _argument(function: ast.AsyncFunctionDef, call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if isinstance(call.func, ast.Attribute) and positional[:1] in (["self"], ["cls"]):
        positional = positional[1:]  # `self.train(client, ...)`: bound to the instance
    index = positional.index(name) if name in positional else None
    if index is None or index >= len(call.args):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return None
    return call.args[index]


def _one_client_each(
    function: ast.AsyncFunctionDef, receiver: ast.expr, starts: list[tuple[list[ast.Call], set]]
) -> bool:
    """Every concurrent start of `function` hands its task a client of its own: different
    arguments (`gather(train(a, xs), train(b, ys))`), or one that changes with the loop or
    comprehension starting the tasks (`for name, client in clients.items()`, `clients[name]`)."""
    chosen = _client_parameters(function, receiver)
    if chosen is None:
        return True
    if not chosen or not starts:
        return False
    for calls, loop_targets in starts:
        given = []
        for call in calls:
            args = [_argument(function, call, name) for name in sorted(chosen)]
            if any(a is None for a in args):
                return False
            given.append(tuple(ast.unparse(a) for a in args))  # type: ignore[arg-type]  # no None: returned above
            if loop_targets and not any(_names(a) & loop_targets for a in args):  # type: ignore[arg-type]  # no None: returned above
                return False  # the same client for every round of the loop
        if not loop_targets and len(set(given)) != len(given):
            return False
    return True


# A coroutine that trains one client on its batches (the examples of several such tasks).
_TRAIN = (
    "import asyncio\nimport pytrio as trio\n"
    "async def train(client: trio.TrainingClient, batches, adam):\n"
    "    for batch in batches:\n"
    "        await (await client.forward_backward_async(batch, 'cross_entropy'))\n"
    "        await (await client.optim_step_async(adam))\n"
)


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
around the pair. Tasks that each drive a client of their own are not reported: different
arguments (`gather(train(a_client, a_data), train(b_client, b_data))`), a client that changes
with the loop or comprehension starting them (`for client in clients`, `clients[name]`), or one
the task creates; one client handed to every task through its parameters still is.

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
        # Two LoRA adapters trained at once: each task drives a client of its own.
        Valid(
            _TRAIN
            + "async def main(a_client: trio.TrainingClient, b_client: trio.TrainingClient,\n"
            "               a_data, b_data, adam):\n"
            "    await asyncio.gather(train(a_client, a_data, adam), train(b_client, b_data, adam))\n"
        ),
        Valid(
            _TRAIN + "async def main(clients: dict[str, trio.TrainingClient], data, adam):\n"
            "    await asyncio.gather(*(train(clients[name], data[name], adam) for name in clients))\n"
        ),
        Valid(
            _TRAIN + "async def main(clients: list[trio.TrainingClient], data, adam):\n"
            "    tasks = []\n"
            "    for client, batches in zip(clients, data):\n"
            "        tasks.append(asyncio.create_task(train(client, batches, adam)))\n"
            "    await asyncio.gather(*tasks)\n"
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
        # One client handed to both tasks through their parameters.
        Invalid(
            _TRAIN + "async def main(client: trio.TrainingClient, a_data, b_data, adam):\n"
            "    await asyncio.gather(train(client, a_data, adam), train(client, b_data, adam))\n",
            line=6,
            message_contains="several concurrent tasks",
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
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Coroutine functions started as several concurrent tasks: name -> how they were started.
        self._many: dict[str, str] = {}
        # name -> its concurrent starts: (the calls started together, the names the loops or
        # comprehensions starting them bind: a task's arguments may differ by them).
        self._starts: dict[str, list[tuple[list[ast.Call], set[str]]]] = {}
        self._single: dict[str, list[ast.Call]] = {}  # starts outside loops, one task each
        self._loop_targets: list[set[str]] = []
        self._started: dict[str, int] = {}  # name -> how many single starts were seen
        self._defs: dict[str, list[ast.AsyncFunctionDef]] = {}
        self._loops = 0  # loops and comprehensions the walk is inside

    def _note_tasks(self, runner: str, node: ast.Call) -> None:
        """`gather(f(a), f(b))`, `gather(*(f(x) for x in xs))`, `create_task(f(x))` in a
        comprehension or loop: `f` runs as several tasks at once."""
        label = f"asyncio.{runner}"
        if runner == "gather":
            counted: dict[str, list[ast.Call]] = {}
            for arg in node.args:
                value = arg.value if isinstance(arg, ast.Starred) else arg
                if isinstance(value, ast.GeneratorExp | ast.ListComp) and isinstance(
                    value.elt, ast.Call
                ):
                    name = _called_name(value.elt)
                    if name:
                        self._many.setdefault(name, label)
                        targets = set().union(*(_names(g.target) for g in value.generators))
                        self._starts.setdefault(name, []).append(([value.elt], targets))
                elif isinstance(value, ast.Call):
                    name = _called_name(value)
                    if name:
                        counted.setdefault(name, []).append(value)
            for name, calls in counted.items():
                if len(calls) > 1:
                    self._many.setdefault(name, label)
                    self._starts.setdefault(name, []).append((calls, set()))
            return
        if node.args and isinstance(node.args[0], ast.Call):
            name = _called_name(node.args[0])
            if name:
                self._started[name] = self._started.get(name, 0) + 1
                if self._in_loop:
                    self._many.setdefault(name, label)
                    targets = set().union(*self._loop_targets)
                    self._starts.setdefault(name, []).append(([node.args[0]], targets))
                else:
                    self._single.setdefault(name, []).append(node.args[0])

    def visit_For(self, node: ast.AST) -> None:
        self._loops += 1
        if isinstance(node, ast.For | ast.AsyncFor):
            self._loop_targets.append(_names(node.target))
        elif isinstance(node, ast.ListComp | ast.GeneratorExp):
            self._loop_targets.append(set().union(*(_names(g.target) for g in node.generators)))
        else:
            self._loop_targets.append(set())

    def leave_For(self, node: ast.AST) -> None:
        self._loops -= 1
        self._loop_targets.pop()

    visit_AsyncFor = visit_While = visit_ListComp = visit_GeneratorExp = visit_For
    leave_AsyncFor = leave_While = leave_ListComp = leave_GeneratorExp = leave_For

    @property
    def _in_loop(self) -> bool:
        return self._loops > 0

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._defs.setdefault(node.name, []).append(node)

    def finish(self) -> None:
        for name, started in self._started.items():
            if started > 1:
                self._many.setdefault(name, "asyncio.create_task")
                if len(self._single.get(name, ())) > 1:
                    self._starts.setdefault(name, []).append((self._single[name], set()))
        for name, runner in self._many.items():
            defs = self._defs.get(name, [])
            if len(defs) != 1:
                continue
            pair = _unlocked_pair(defs[0])
            if pair is None or _one_client_each(defs[0], pair[1], self._starts.get(name, [])):
                continue
            step = pair[0]
            if step is not None:
                self.report(
                    step,
                    f"`{name}` submits a forward-backward and `{step.func.attr}` (of one client)"  # type: ignore[attr-defined]  # steps are `x.method(...)` calls
                    f" and runs as several concurrent tasks (`{runner}`): the SDK may queue every"
                    " task's forward-backward before the first optim_step, so one step applies"
                    " all the gradients and the others none: run the steps in order, or hold an"
                    " `asyncio.Lock` around each pair",
                )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        runner = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if runner in _STARTERS or runner == "gather":
            self._note_tasks(runner, node)
        if runner != "gather":
            return
        calls: list[str] = []
        for arg in node.args:
            calls += _training_calls(arg)
            if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
                # `gather(*coros)`: what the model says the list was built from.
                for origin in self.model.origins(arg.value)[1:]:
                    called = origin.func if isinstance(origin, ast.Call) else None
                    if isinstance(called, ast.Attribute) and (
                        called.attr in _FB or called.attr == "optim_step_async"
                    ):
                        calls.append(called.attr)
        if "optim_step_async" in calls and any(c in _FB for c in calls):
            self.report(node, self.message.format(runner="asyncio.gather"))
