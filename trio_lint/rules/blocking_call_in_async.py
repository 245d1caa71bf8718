"""PTR105 blocking-call-in-async: a blocking PyTRIO call inside `async def`."""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules._common import sdk_line, walk
from trio_lint.rules.base import Fix, Invalid, LooksAt, Rule, Valid, edit, limited, safe_fix
from trio_lint.semantics.receivers import TWINNED_METHODS, Kind

if TYPE_CHECKING:
    import libcst as cst

# Sync methods whose `_async` twin returns the same thing (an APIFuture or a client), so
# `x.m(...)` -> `await x.m_async(...)` means the same without blocking the event loop.
_SAME_SHAPE = frozenset({Kind.TRAINING_CLIENT, Kind.SERVICE_CLIENT})


# Calls that run coroutines as tasks next to others (asyncio, anyio, trio-style nurseries).
_SPAWNERS = frozenset(
    {"gather", "create_task", "ensure_future", "wait", "as_completed", "start_soon", "TaskGroup"}
)
# Of those, the ones that leave tasks running after the call returns (gather/wait are awaited
# in place: once they return, nothing they started is left on the loop).
_DETACHED = frozenset({"create_task", "ensure_future", "start_soon"})
# Decorators of handlers a framework runs concurrently (web routes, MCP/agent tools).
_HANDLER_DECORATORS = frozenset(
    {"get", "post", "put", "patch", "delete", "route", "websocket", "tool", "task", "on_event"}
)


def _is_handler(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in _HANDLER_DECORATORS


def _to_async(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    name = node.func.attr.value + "_async"
    call = node.with_changes(func=node.func.with_changes(attr=cst.Name(name)))
    return cst.Await(expression=call)


def _result_to_double_await(node: cst.CSTNode) -> cst.CSTNode:
    """`x.m(...).result()` -> `await (await x.m_async(...))`."""
    import libcst as cst

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
    import libcst as cst

    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    inner = node.func.value
    assert isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
    call = inner.with_changes(
        func=inner.func.with_changes(attr=cst.Name(inner.func.attr.value + "_async"))
    )
    return cst.Await(expression=call)


def _await_name(node: cst.CSTNode) -> cst.CSTNode:
    """`fut.result()` -> `await fut`."""
    import libcst as cst

    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    return cst.Await(expression=node.func.value)


class BlockingCallInAsync(Rule):
    code = "PTR105"
    name = "blocking-call-in-async"
    message = "`{call}` blocks the event loop inside `async def`: {fix}"
    severity = Severity.WARNING
    fix_safety = Applicability.SAFE
    # Its visit_Call looks at task spawners, `.result()` and client methods with an async twin.
    looks_at = LooksAt(calls=_SPAWNERS | TWINNED_METHODS | {"result"})
    doc = """
## What it does
Inside `async def`, flags a sync PyTRIO method that has an `_async` twin
(`train.forward_backward(...)`, `svc.create_lora_training_client(...)`, `sampler.sample(...)`,
RestClient calls) and `.result()` on an `APIFuture`, where blocking matters: the coroutine runs
next to others (it is passed to `asyncio.gather`, `create_task`, `TaskGroup.create_task`, or is a
web route or tool handler, or is awaited by such a coroutine, also when it was handed over through
an `asyncio.Queue` held in a name or passed as an argument: `job = await queue.get(); await job`), it started tasks of its own (`create_task`, `ensure_future`) before
the call, or the call sits in an `async for` loop that also awaits (async iteration fed by other
work). A sync call in an `async def main()` that nothing else shares the event loop with is left
alone, also in a loop that awaits `asyncio.gather(...)` between steps: once gather returns,
nothing else is running.

In Tinker code (tinker 0.38.0) the sync client methods only submit and return an `APIFuture`
(a client-creating call returns a future of the client), so the rule flags only the wait:
`x.m(...).result()` and `fut.result()` on a Tinker future.

## Why is this bad?
The sync methods hand the request to the SDK's own loop thread and wait there; `.result()` blocks
until the server answers. Inside a coroutine that freezes every other task of the event loop
(other samplers, heartbeats, the web server of an agent) for the whole round-trip.

## Fix safety
Safe where the awaited form returns the same thing: TrainingClient methods and ServiceClient
factories (`x.m(...)` -> `await x.m_async(...)`), `fut.result()` -> `await fut` on an APIFuture,
`x.m(...).result()` -> `await (await x.m_async(...))`, and on 0.2
`sampler.sample(...).result()` -> `await sampler.sample_async(...)`; in Tinker code
`x.m(...).result()` -> `await x.m(...)` (Tinker's futures are awaitable). A bare `sampler.sample(...)`
and RestClient calls have no fix (their async twins return the value, not a future).

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward_async`, `pytrio.types.APIFuture`
- tinker 0.38.0: `tinker.APIFuture`, `tinker.ServiceClient.create_sampling_client`
- https://docs.python.org/3/library/asyncio-dev.html#running-blocking-code
"""
    evidence = """
- Measured on public code: 9 of 9 findings were one-shot sync calls in `async def main()` run by
  `asyncio.run` with nothing else on the loop, so the rule now needs concurrency. A `for` loop
  that awaits `gather(...)` and then calls `fwd.result()` (awesome-pytrio-train grpo/train.py)
  blocks when no task is left, so plain loops do not count; `async for` does.
- (`029:runtime/event_loop.py:226-249`)
"""
    VALID = (
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = await train.forward_backward_async(batch, 'cross_entropy')\n"
            "    return await fb\n"
            "async def main(trains, batch):\n"
            "    await asyncio.gather(*(step(t, batch) for t in trains))\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def main(batch):\n"
            "    svc = trio.ServiceClient()\n"
            "    train = svc.create_lora_training_client(base_model='Qwen/Qwen3-8B')\n"
            "    out = train.forward_backward(batch, 'cross_entropy').result()\n"
            "    print(out.metrics)\n"
            "asyncio.run(main([]))\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch).result()\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def main(svc: trio.ServiceClient, prompts):\n"
            "    sampler = svc.create_sampling_client(base_model='Qwen/Qwen3-8B')\n"
            "    await asyncio.gather(*(sampler.sample_async(p, sampling_params=sp) for p in prompts))\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\n"
            "async def infer(model, x, executor):\n"
            "    for f in fs:\n"
            "        out = model.forward(x)\n"
            "        await executor.submit(f).result()\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def main(svc: trio.ServiceClient):\n"
            "    def work():\n"
            "        return svc.create_lora_training_client(base_model='m')\n"
            "    return await asyncio.gather(asyncio.to_thread(work), other())\n"
        ),
        Valid(
            "import asyncio\nimport pytrio as trio\n"
            "async def main(train: trio.TrainingClient, prompts, adam, steps):\n"
            "    for step in range(steps):\n"
            "        sampler = await train.save_weights_and_get_sampling_client_async()\n"
            "        groups = await asyncio.gather(*(rollout(sampler, p) for p in prompts))\n"
            "        fwd = train.forward_backward(build(groups), loss_fn='importance_sampling')\n"
            "        opt = train.optim_step(adam)\n"
            "        print(fwd.result().metrics)\n"
            "        opt.result()\n"
            "asyncio.run(main(train, prompts, adam, 10))\n"
        ),
        Valid(
            "import asyncio\n"
            "import pytrio as trio\n"
            "async def run_job(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result()\n"
            "async def main(train, batch):\n"
            "    return await run_job(train, batch)\n"
            "asyncio.run(main(None, []))\n",
        ),
        # Tinker's sync methods submit and return an `APIFuture`; awaiting it does not block.
        Valid(
            "import asyncio\nimport tinker\n"
            "async def step(train: tinker.TrainingClient, batch):\n"
            "    fb = train.forward_backward(batch, 'cross_entropy')\n"
            "    opt = train.optim_step(tinker.AdamParams(learning_rate=1e-4))\n"
            "    return await fb, await opt\n"
            "async def main(trains, batch):\n"
            "    await asyncio.gather(*(step(t, batch) for t in trains))\n",
            config={"sdk-modules": ["tinker"]},
        ),
    )
    INVALID = (
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = train.forward_backward(batch, 'cross_entropy')\n"
            "    return await fb\n"
            "async def main(trains, batch):\n"
            "    await asyncio.gather(*(step(t, batch) for t in trains))\n",
            fixed="import asyncio\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = await train.forward_backward_async(batch, 'cross_entropy')\n"
            "    return await fb\n"
            "async def main(trains, batch):\n"
            "    await asyncio.gather(*(step(t, batch) for t in trains))\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def train_loop(train: trio.TrainingClient, batches, adam):\n"
            "    async for batch in batches:\n"
            "        fb = await train.forward_backward_async(batch)\n"
            "        train.optim_step(adam).result()\n"
            "        await fb\n",
            fixed="import pytrio as trio\n"
            "async def train_loop(train: trio.TrainingClient, batches, adam):\n"
            "    async for batch in batches:\n"
            "        fb = await train.forward_backward_async(batch)\n"
            "        await (await train.optim_step_async(adam))\n"
            "        await fb\n",
            line=5,
        ),
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    out = sampler.sample(p, sampling_params=sp).result()\n"
            "    return out.sequences[0].text\n"
            "async def main(sampler, prompts, sp):\n"
            "    async with asyncio.TaskGroup() as tg:\n"
            "        for p in prompts:\n"
            "            tg.create_task(gen(sampler, p, sp))\n",
            fixed="import asyncio\nimport pytrio as trio\n"
            "async def gen(sampler: trio.SamplingClient, p, sp):\n"
            "    out = await sampler.sample_async(p, sampling_params=sp)\n"
            "    return out.sequences[0].text\n"
            "async def main(sampler, prompts, sp):\n"
            "    async with asyncio.TaskGroup() as tg:\n"
            "        for p in prompts:\n"
            "            tg.create_task(gen(sampler, p, sp))\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "@app.post('/step')\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fut = await train.forward_backward_async(batch)\n"
            "    return fut.result()\n",
            fixed="import pytrio as trio\n"
            "@app.post('/step')\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fut = await train.forward_backward_async(batch)\n"
            "    return await fut\n",
        ),
        Invalid(
            "import asyncio\nimport pytrio as trio\n"
            "async def main(svc: trio.ServiceClient, prompts):\n"
            "    tasks = [asyncio.create_task(work(p)) for p in prompts]\n"
            "    train = svc.create_lora_training_client(base_model='m')\n"
            "    await asyncio.gather(*tasks)\n",
            line=5,
            fixed="import asyncio\nimport pytrio as trio\n"
            "async def main(svc: trio.ServiceClient, prompts):\n"
            "    tasks = [asyncio.create_task(work(p)) for p in prompts]\n"
            "    train = await svc.create_lora_training_client_async(base_model='m')\n"
            "    await asyncio.gather(*tasks)\n",
        ),
        Invalid(
            "import asyncio\n"
            "import pytrio as trio\n"
            "async def run_job(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result()\n"
            "async def worker(train, batch):\n"
            "    return await run_job(train, batch)\n"
            "async def main(train, batches):\n"
            "    tasks = [asyncio.create_task(worker(train, b)) for b in batches]\n"
            "    await asyncio.gather(*tasks)\n",
            fixed="import asyncio\n"
            "import pytrio as trio\n"
            "async def run_job(train: trio.TrainingClient, batch):\n"
            "    return await (await train.forward_backward_async(batch, 'cross_entropy'))\n"
            "async def worker(train, batch):\n"
            "    return await run_job(train, batch)\n"
            "async def main(train, batches):\n"
            "    tasks = [asyncio.create_task(worker(train, b)) for b in batches]\n"
            "    await asyncio.gather(*tasks)\n",
            line=4,
        ),
        # Queue workers: the coroutines are made into a list first, then gathered.
        Invalid(
            "import asyncio\n"
            "import pytrio as trio\n"
            "async def worker(queue: asyncio.Queue, sampler: trio.SamplingClient, params):\n"
            "    while True:\n"
            "        prompt = await queue.get()\n"
            "        print(sampler.sample(prompt, 1, params).result())\n"
            "        queue.task_done()\n"
            "async def main(queue, sampler, params):\n"
            "    workers = [worker(queue, sampler, params) for _ in range(4)]\n"
            "    await asyncio.gather(*workers)\n",
            fixed="import asyncio\n"
            "import pytrio as trio\n"
            "async def worker(queue: asyncio.Queue, sampler: trio.SamplingClient, params):\n"
            "    while True:\n"
            "        prompt = await queue.get()\n"
            "        print(await sampler.sample_async(prompt, 1, params))\n"
            "        queue.task_done()\n"
            "async def main(queue, sampler, params):\n"
            "    workers = [worker(queue, sampler, params) for _ in range(4)]\n"
            "    await asyncio.gather(*workers)\n",
            line=6,
        ),
        # Coroutines handed over through a queue: the workers (tasks) await them.
        Invalid(
            "import asyncio\n"
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'cross_entropy').result()\n"
            "async def worker(queue: asyncio.Queue):\n"
            "    while True:\n"
            "        job = await queue.get()\n"
            "        await job\n"
            "        queue.task_done()\n"
            "async def main(train, batches):\n"
            "    queue: asyncio.Queue = asyncio.Queue()\n"
            "    for b in batches:\n"
            "        queue.put_nowait(step(train, b))\n"
            "    workers = [asyncio.create_task(worker(queue)) for _ in range(4)]\n"
            "    await queue.join()\n",
            fixed="import asyncio\n"
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    return await (await train.forward_backward_async(batch, 'cross_entropy'))\n"
            "async def worker(queue: asyncio.Queue):\n"
            "    while True:\n"
            "        job = await queue.get()\n"
            "        await job\n"
            "        queue.task_done()\n"
            "async def main(train, batches):\n"
            "    queue: asyncio.Queue = asyncio.Queue()\n"
            "    for b in batches:\n"
            "        queue.put_nowait(step(train, b))\n"
            "    workers = [asyncio.create_task(worker(queue)) for _ in range(4)]\n"
            "    await queue.join()\n",
            line=4,
        ),
        # Tinker: the client-creating call returns an awaitable future of the client.
        Invalid(
            "import asyncio\nimport tinker\n"
            "async def refresh(service: tinker.ServiceClient, path):\n"
            "    return service.create_sampling_client(model_path=path).result()\n"
            "async def main(service, paths):\n"
            "    await asyncio.gather(*(refresh(service, p) for p in paths))\n",
            fixed="import asyncio\nimport tinker\n"
            "async def refresh(service: tinker.ServiceClient, path):\n"
            "    return await service.create_sampling_client(model_path=path)\n"
            "async def main(service, paths):\n"
            "    await asyncio.gather(*(refresh(service, p) for p in paths))\n",
            line=4,
            config={"sdk-modules": ["tinker"]},
        ),
    )
    reach = limited(
        "init-attribute",
        "helper-return",
        "dict-entry-get",
        **{
            # Started as a task, a coroutine runs beside others: the VALID examples' blocking
            # calls in a coroutine nobody runs concurrently become exactly this rule's finding.
            "task-create-task:valid": "starting the coroutine makes it concurrent",
            "task-gather:valid": "starting the coroutine makes it concurrent",
            "task-group:valid": "starting the coroutine makes it concurrent",
            "task-via-awaited-helper:valid": "starting the coroutine makes it concurrent",
        },
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Per function: the calls in it used as `.attr`/`[i]` receivers (await needs parens).
        self._receivers: dict[int, set[int]] = {}
        self._handled: set[int] = set()  # inner calls already reported with their `.result()`
        # Blocking only matters when something else runs on the event loop, which is known once
        # the whole module was seen: findings wait in `_pending` until `finish`.
        self._pending: list[tuple[ast.AST, str, Fix | None, ast.AST, tuple[ast.AST, ...]]] = []
        self._loops: list[tuple[ast.AST, ast.AST | None]] = []  # (loop, its function)
        self._spawned: set[str] = set()  # coroutine functions run as tasks (gather, create_task)
        self._spawners: dict[int, int] = {}  # function -> line of its first task start
        self._awaits_in: dict[int, bool] = {}
        # `await helper(...)` inside `async def f`: helper's name -> the functions awaiting it
        # (a coroutine awaited by a concurrent one runs concurrently too).
        self._awaited_by: dict[str, list[ast.AST]] = {}

    def _function(self) -> ast.AST | None:
        return self.ctx.function_stack[-1] if self.ctx.function_stack else None

    def visit_For(self, node: ast.AST) -> None:
        self._loops.append((node, self._function()))

    def leave_For(self, node: ast.AST) -> None:
        self._loops.pop()

    visit_AsyncFor = visit_While = visit_For
    leave_AsyncFor = leave_While = leave_For

    def _note_concurrency(self, node: ast.Call) -> None:
        """`asyncio.gather(worker(a), worker(b))`, `tg.create_task(step())`, ...: the named
        coroutines run as tasks next to others, and the calling function keeps tasks running."""
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in _SPAWNERS:
            return
        function = self._function()
        if function is not None and name in _DETACHED:
            self._spawners.setdefault(id(function), node.lineno)
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            for inner in walk(arg):
                if isinstance(inner, ast.Call):
                    self._spawn(inner)
                elif isinstance(inner, ast.Name | ast.Attribute) and arg is inner:
                    # `loop.create_task(coro)`, `gather(*coros)`: a coroutine made elsewhere
                    self._spawned.add(inner.id if isinstance(inner, ast.Name) else inner.attr)
            # `workers = [worker(q) for _ in range(4)]; gather(*workers)`: the coroutines a name
            # was built from (a list, a comprehension, a copy) run as tasks too.
            held = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(held, ast.Name | ast.Attribute | ast.Subscript):
                built = [
                    *self._made_from(held),  # a name bound in this function
                    *(o for s in self.model.sources(held) for o in self._made_from(s)),
                ]  # a parameter (the arguments its call sites pass), `self.x`, `CONFIG["k"]`
                for origin in built:
                    if isinstance(origin, ast.Call):
                        self._spawn(origin)

    def _queued(self, name: ast.Name) -> list[ast.Call]:
        """`job = await queue.get()`: the calls that made what the module put in the queue."""
        bound = self.model.bound_expression(name)
        if not (isinstance(bound, ast.Await) and isinstance(bound.value, ast.Call)):
            return []
        return [o for o in self._made_from(bound, 20) if isinstance(o, ast.Call)]

    def _made_from(self, expr: ast.expr, limit: int = 200) -> list[ast.expr]:
        """`model.origins`, and through `await queue.get()` of an `asyncio.Queue` what the
        module put in it (coroutines handed to workers)."""
        found = self.model.origins(expr, limit)
        for origin in list(found):
            if isinstance(origin, ast.Await) and isinstance(origin.value, ast.Call):
                for item in self.model.sources(origin):  # what the queue was given
                    found += self.model.origins(item, limit)
        return found

    def _spawn(self, call: ast.Call) -> None:
        """The function or method a call names runs as a task."""
        target = call.func
        called = target.attr if isinstance(target, ast.Attribute) else None
        called = called or getattr(target, "id", None)
        if called:
            self._spawned.add(called)

    def visit_Await(self, node: ast.Await) -> None:
        function = self._function()
        value = node.value
        if not isinstance(function, ast.AsyncFunctionDef):
            return
        # `await job(...)`; `await job` of a coroutine made elsewhere (`job = await queue.get()`
        # of a queue the module fills with `step(...)` coroutines): those coroutines run here.
        made = (
            [value]
            if isinstance(value, ast.Call)
            else self._queued(value)
            if isinstance(value, ast.Name)
            else []
        )
        for call in made:
            target = call.func
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if name:
                self._awaited_by.setdefault(name, []).append(function)

    def _defer(self, node: ast.AST, message: str, fix: Fix | None) -> None:
        function = self._function()
        assert function is not None
        loops = tuple(loop for loop, owner in self._loops if owner is function)
        self._pending.append((node, message, fix, function, loops))

    def _loop_awaits(self, loop: ast.AST) -> bool:
        """An `async for` whose body also awaits: the iterator is fed by other work on the loop
        (a stream, a queue, an async generator), which a blocking call starves. A plain loop that
        awaits `gather(...)` is not enough: once gather returns, nothing else is running."""
        if id(loop) not in self._awaits_in:
            self._awaits_in[id(loop)] = isinstance(loop, ast.AsyncFor) and any(
                isinstance(inner, ast.Await | ast.AsyncFor | ast.AsyncWith)
                for statement in loop.body
                for inner in walk(statement)
            )
        return self._awaits_in[id(loop)]

    def _runs_concurrently(self, function: ast.AST, node: ast.AST) -> bool:
        """Other tasks share the loop at `node`: the function is run as a task or by a framework,
        or it started tasks of its own on an earlier line."""
        assert isinstance(function, ast.AsyncFunctionDef)
        started = self._spawners.get(id(function))
        if started is not None and node.lineno > started:  # type: ignore[attr-defined]  # a statement or expression: it has a line
            return True
        # Run as a task or by a framework, itself or through coroutines awaiting it
        # (`create_task(worker())` where `worker` does `await run_job()`).
        seen: set[int] = set()
        todo: list[ast.AST] = [function]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            assert isinstance(current, ast.AsyncFunctionDef)
            if current.name in self._spawned:
                return True
            if current is not function and id(current) in self._spawners:
                return True  # an awaiting coroutine that keeps tasks of its own running
            if any(_is_handler(decorator) for decorator in current.decorator_list):
                return True
            todo += self._awaited_by.get(current.name, ())
        return False

    def finish(self) -> None:
        for node, message, fix, function, loops in self._pending:
            if self._runs_concurrently(function, node) or any(map(self._loop_awaits, loops)):
                self.report(node, message, fix=fix)

    def _is_receiver(self, call: ast.Call) -> bool:
        """`x.m(...).attr` or `x.m(...)[i]`. The read encloses the call, so it is in the call's
        innermost function: walked on the first ask (only a fixable finding asks), rather than
        a hook on every attribute and item of the unit."""
        function = self.ctx.function_stack[-1]
        found = self._receivers.get(id(function))
        if found is None:
            found = self._receivers[id(function)] = {
                id(node.value)
                for node in walk(function)
                if isinstance(node, ast.Attribute | ast.Subscript)
                and isinstance(node.value, ast.Call)
            }
        return id(call) in found

    def visit_Call(self, node: ast.Call) -> None:
        self._note_concurrency(node)
        if not self.ctx.in_async_function or id(node) in self._handled:
            return
        func = node.func
        if self.model.other_sdk_only:
            if isinstance(func, ast.Attribute) and func.attr == "result" and not node.args:
                self._check_tinker_result(node, func.value)
            return
        if isinstance(func, ast.Attribute) and func.attr == "result" and not node.args:
            self._check_result(node, func.value)
            return
        found = self.model.client_call(node)
        if found is None:
            return
        kind, method = found
        if method.endswith("_async") or self.model.method_returns(kind, f"{method}_async") is None:
            return
        fix: Fix | None = None
        if kind in _SAME_SHAPE and not self._is_receiver(node):
            fix = safe_fix(f"Use `await ...{method}_async(...)`", edit(node, "Call", _to_async))
        self._defer(
            node,
            self.message.format(call=f"{method}(...)", fix=f"use `await {method}_async(...)`"),
            fix,
        )

    def _check_result(self, node: ast.Call, value: ast.expr) -> None:
        typ = self.model.type_of(value)
        if typ is None or typ.kind is not Kind.API_FUTURE:
            return
        fix: Fix | None = None
        found = self.model.client_call(value) if isinstance(value, ast.Call) else None
        if found is not None:
            self._handled.add(id(value))
            kind, method = found
            if kind is Kind.TRAINING_CLIENT:
                fix = safe_fix(
                    "Await the async twin twice", edit(node, "Call", _result_to_double_await)
                )
            elif kind is Kind.SAMPLING_CLIENT and sdk_line(self.ctx) == "0.2":
                fix = safe_fix(
                    f"Use `await ...{method}_async(...)`",
                    edit(node, "Call", _result_to_single_await),
                )
            what = f"{method}(...).result()"
        elif isinstance(value, ast.Name):
            fix = safe_fix(f"Use `await {value.id}`", edit(node, "Call", _await_name))
            what = f"{value.id}.result()"
        else:
            what = f"{ast.unparse(value)}.result()"
        self._defer(node, self.message.format(call=what, fix="await the future instead"), fix)

    def _check_tinker_result(self, node: ast.Call, value: ast.expr) -> None:
        """`x.m(...).result()` (or `fut.result()`, `fut = x.m(...)`) on a Tinker client method
        that returns a future (read from the tinker wheel): `result()` waits, `await` does not."""
        call = value if isinstance(value, ast.Call) else self.model.value_of(value)
        found = self.model.client_call(call) if isinstance(call, ast.Call) else None
        if found is None or found[1] not in _tinker_future_methods(found[0]):
            return
        what = f"{found[1]}(...).result()" if call is value else f"{ast.unparse(value)}.result()"
        fix = None
        if not self._is_receiver(node):
            fix = safe_fix("Await the future", edit(node, "Call", _await_name))
        self._defer(node, self.message.format(call=what, fix="await the future instead"), fix)


@functools.cache
def _tinker_future_methods(kind: Kind) -> frozenset[str]:
    """The methods of Tinker's client `kind` that return a future (`APIFuture`, or a future of a
    client), from `pytrio_facts/tinker_api.json`."""
    from pytrio_facts.porting import tinker_data, tinker_release

    found = tinker_data().symbol(f"tinker.{kind.value}", tinker_release())
    methods = getattr(found, "methods", {})
    return frozenset(name for name, function in methods.items() if function.future == "api")
