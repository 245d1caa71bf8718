"""PTR106 serial-optim-step: waiting for forward-backward before `optim_step` is submitted."""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from trio_lint.lint.parse import split_lines
from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import source_text, walk
from trio_lint.rules.base import Invalid, Rule, Valid, limited

_FB = ("forward_backward_async", "forward_backward_custom_async")
_CONTROL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith)
_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def _submission(expr: ast.AST, methods: tuple[str, ...]) -> ast.Call | None:
    """The `R.m(...)` call inside `await R.m(...)` (or `await (await R.m(...))`)."""
    while isinstance(expr, ast.Await):
        expr = expr.value
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in methods
    ):
        return expr
    return None


def _receiver(call: ast.Call) -> str:
    return source_text(call.func.value)  # type: ignore[attr-defined]  # an `x.method(...)` call: `_step_call` took only those


class _Facts(NamedTuple):
    """What the look-ahead asks of one statement, from one walk of it."""

    names: frozenset[str]  # every name it reads or writes
    stored: frozenset[str]
    waited: frozenset[str]  # `await F` / `F.result()`
    submits_fb: bool  # some `x.forward_backward*(...)` call


def _facts(stmt: ast.stmt) -> _Facts:
    names: set[str] = set()
    stored: set[str] = set()
    waited: set[str] = set()
    submits_fb = False
    # Any: the walk tests classes with `__class__ is` (cheaper than isinstance on this hot
    # path), which mypy does not narrow on.
    node: Any
    for node in walk(stmt):
        node_class = node.__class__
        if node_class is ast.Name:
            names.add(node.id)
            if node.ctx.__class__ is ast.Store:
                stored.add(node.id)
        elif node_class is ast.Await:
            if node.value.__class__ is ast.Name:
                waited.add(node.value.id)
        elif node_class is ast.Call:
            func = node.func
            if func.__class__ is ast.Attribute:
                if func.attr == "result" and func.value.__class__ is ast.Name:
                    waited.add(func.value.id)
                elif func.attr.startswith("forward_backward"):
                    submits_fb = True
    return _Facts(frozenset(names), frozenset(stored), frozenset(waited), submits_fb)


def _reads(node: ast.AST, names: frozenset[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(node))


def _optim_in(stmt: ast.stmt, receiver: str) -> ast.Call | None:
    if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign):
        value = stmt.value
        if isinstance(value, ast.Await):
            call = _submission(value, ("optim_step_async",))
            if call is not None and _receiver(call) == receiver:
                return call
    return None


class SerialOptimStep(Rule):
    code = "PTR106"
    name = "serial-optim-step"
    message = (
        "The forward-backward result is awaited before `optim_step_async` is submitted: submit "
        "`optim_step_async` first, then await both (the two requests can then share a cycle)"
    )
    severity = Severity.INFO
    doc = """
## What it does
In one block of an `async def`, flags the sequence
`F = await R.forward_backward_async(...)`, then `await F` (or `F.result()`), then
`await R.optim_step_async(...)` on the same client with nothing in between that depends on the result. The fused `await (await R.forward_backward_async(...))`
followed by `await R.optim_step_async(...)` is flagged too.

## Why is this bad?
The first await of `forward_backward_async` only enqueues the request and returns its future.
That of `forward_backward_custom_async` does more: it runs a forward pass, waits for its result,
computes the custom loss and its gradients locally, then enqueues the backward pass and returns
its future; the backward itself is not awaited. Either way, waiting for the forward-backward
result before submitting the optimizer step leaves the server without queued work for a full
round-trip each step; submitting both and then awaiting lets them run back to back, and the
queue keeps their order.

## Fix safety
No fix. Pipelining changes error behaviour: with the serial form a failed forward-backward
means no optimizer step is sent; pipelined, the step is already queued, and 0.2 still submits it
after a failed single-event forward-backward. Not flagged when the
step depends on the result (adaptive learning rate, NaN guards, early stopping, `if`/`return`
between the two) or when another forward-backward is submitted in between (accumulation).
The sync form (`fb.result()` before `train.optim_step(...)`) is not flagged: the 0.2.9 README
itself writes it, and it is the clear form for a first script.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward_async`, `pytrio.TrainingClient.optim_step_async`
"""
    evidence = """
- `forward_backward_async` returns the `APIFuture` once the event is queued
  (`029:client/training.py:544-573`), `optim_step_async` likewise
  (`029:client/training.py:665-686`). `forward_backward_custom_async` awaits the whole of
  `_forward_backward_custom` (`029:client/training.py:413-419`): it queues a forward pass and
  waits for its result, runs the user's loss and `loss.backward()` locally, then queues the
  backward and returns its `APIFuture` without waiting for it (`029:client/training.py:421-500`).
- The training coordinator submits queued events in FIFO order
  (`029:transport/actor/training_run/coordinator.py:231-258`).
- A failed single-event forward-backward fails its own future only; the run breaks only when a
  multi-chunk forward-backward fails, so a queued optimizer step is still submitted
  (`029:transport/actor/training_run/coordinator.py:172-175,395-410`).
- The SDK README calls `.result()` on the forward-backward before `optim_step`
  (`029:pytrio-0.2.9.dist-info/METADATA:98-101`).
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    fb = await train.forward_backward_async(batch, 'cross_entropy')\n"
            "    opt = await train.optim_step_async(adam)\n"
            "    result = await fb\n"
            "    await opt\n"
            "    return result\n"
        ),
        Valid(
            "import math\nimport pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    fb = await train.forward_backward_async(batch)\n"
            "    result = await fb\n"
            "    if math.isnan(result.metrics['loss_mean']):\n"
            "        return None\n"
            "    await (await train.optim_step_async(adam))\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fb = await train.forward_backward_async(batch)\n"
            "    result = await fb\n"
            "    lr = 1e-4 / max(result.metrics['loss_mean'], 1.0)\n"
            "    await (await train.optim_step_async(trio.AdamParams(learning_rate=lr)))\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    fb = await train.forward_backward_async(batch, 'cross_entropy')\n"
            "    result = await fb\n"
            "    print(result.metrics['loss_mean'])\n"
            "    await (await train.optim_step_async(adam))\n",
            line=4,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch, adam):\n"
            "    result = await (await train.forward_backward_async(batch))\n"
            "    opt = await train.optim_step_async(adam)\n"
            "    await opt\n",
            line=3,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def train_loop(tc: trio.TrainingClient, batches, adam):\n"
            "    for batch in batches:\n"
            "        fut = await tc.forward_backward_custom_async(batch, my_loss)\n"
            "        out = fut.result()\n"
            "        await (await tc.optim_step_async(adam))\n",
            line=5,
        ),
    )
    reach = limited(
        "local-name",
        "helper-return",
        "call-site-parameter",
        "call-site-method-parameter",
        "config-dict",
        "loop-variable",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "gathered-list",
        "queue-worker",
        **{
            "dict-entry-get:valid": "the route reads the value with `.get()` where the example's shape needs the name itself"
        },
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._lines: list[str] | None = None  # the unit's, split on first use

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        if "optim_step_async" not in self.ctx.source:
            return  # a byte check spares the walk in almost every file
        self._known: dict[int, _Facts] = {}  # a statement can be looked at from several starts
        for block in self._blocks(node):
            self._scan(block)

    def _blocks(self, node: ast.AST):
        stack = [node]
        while stack:
            current = stack.pop()
            for field in ("body", "orelse", "finalbody"):
                block = getattr(current, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    yield block
                    stack.extend(
                        s
                        for s in block
                        if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    )
            for handler in getattr(current, "handlers", []):
                yield handler.body
                stack.extend(handler.body)

    def _scan(self, block: list[ast.stmt]) -> None:
        for i, stmt in enumerate(block):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0]
            value = stmt.value
            fb = _submission(value, _FB)
            if fb is None or not isinstance(target, ast.Name):
                continue
            receiver = _receiver(fb)
            fused = isinstance(value, ast.Await) and isinstance(value.value, ast.Await)
            if fused:
                self._look_ahead(block, i, i, receiver, self._facts(stmt).stored)
                continue
            for j in range(i + 1, len(block)):
                if isinstance(block[j], _CONTROL + _EXITS):
                    break
                if not self._mentions(block[j], (target.id,)):
                    continue  # cannot wait for the future without naming it
                facts = self._facts(block[j])
                if target.id in facts.waited:
                    self._look_ahead(block, j, j, receiver, facts.stored)
                    break

    def _look_ahead(
        self,
        block: list[ast.stmt],
        start: int,
        report_at: int,
        receiver: str,
        derived: frozenset[str],
    ) -> None:
        for k in range(start + 1, len(block)):
            stmt = block[k]
            if isinstance(stmt, _CONTROL + _EXITS):
                return
            optim = _optim_in(stmt, receiver)
            if optim is not None:
                if not _reads(optim, derived):
                    self.report(block[report_at])
                return
            if not self._mentions(stmt, ("forward_backward", *derived)):
                continue  # submits no forward-backward and reads nothing derived
            facts = self._facts(stmt)
            if facts.submits_fb:
                return
            if not facts.names.isdisjoint(derived):
                derived |= facts.stored

    def _mentions(self, stmt: ast.stmt, words: tuple[str, ...]) -> bool:
        """Whether one of `words` is written on the statement's lines: a name the statement reads
        is, so a statement without any needs no walk (most statements of a block)."""
        if self._lines is None:
            self._lines = split_lines(self.ctx.source)
        end = stmt.end_lineno or stmt.lineno
        text = "\n".join(self._lines[stmt.lineno - 1 : end])
        return any(word in text for word in words)

    def _facts(self, stmt: ast.stmt) -> _Facts:
        found = self._known.get(id(stmt))
        if found is None:
            found = self._known[id(stmt)] = _facts(stmt)
        return found
