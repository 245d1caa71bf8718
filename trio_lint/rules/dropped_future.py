"""PTR102 dropped-future: a training, save or REST call whose future is thrown away."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from trio_lint.diagnostics import Applicability, Severity
from trio_lint.rules._common import append_result_call
from trio_lint.rules.base import Invalid, Rule, Valid, edit, unsafe_fix

if TYPE_CHECKING:
    import libcst as cst


def _double_await(node: cst.CSTNode) -> cst.CSTNode:
    import libcst as cst

    assert isinstance(node, cst.Await)
    inner = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Await(expression=inner)


class DroppedFuture(Rule):
    code = "PTR102"
    name = "dropped-future"
    message = "Future of `{call}` is dropped: its errors are never seen; call `.result()`"
    severity = Severity.ERROR
    fix_safety = Applicability.UNSAFE
    doc = """
## What it does
Flags a PyTRIO call that returns a future (`APIFuture` or, on the RestClient,
`concurrent.futures.Future`) used as a bare statement, such as `train.optim_step(adam)` on a line
of its own, and `await train.optim_step_async(adam)` whose awaited future is discarded.

## Why is this bad?
The sync methods return right after the request is queued;
the outcome, including every server-side error, lives only in the future. Nobody waits for a
dropped future, so a failed `forward_backward` or `optim_step` goes unnoticed while the loop
carries on, and in 0.2 a failed single-event forward-backward does not even break the run. The async twins need two awaits: the first only enqueues.

## Fix safety
Appending `.result()` (or a second `await`) is unsafe: it blocks at that line, which removes the
pipelining of a forward-backward with the next optimizer step.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.optim_step`, `pytrio.types.APIFuture`
"""
    evidence = """
- (`029:runtime/event_loop.py:226-238`)
- (`029:transport/actor/training_run/coordinator.py:172-175`)
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "fb = train.forward_backward(batch, 'cross_entropy')\n"
            "opt = train.optim_step(trio.AdamParams(learning_rate=1e-4))\n"
            "fb.result(); opt.result()\n"
        ),
        Valid(
            "import pytrio as trio\nimport torch\n"
            "model = torch.nn.Linear(2, 2)\n"
            "model.forward(x)\nsampler.sample(prompt)\noptimizer.step()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "futures = []\n"
            "futures.append(train.forward_backward(batch))\n"
            "train.optim_step(trio.AdamParams()).result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    fut = await train.forward_backward_async(batch)\n"
            "    await (await train.optim_step_async(trio.AdamParams()))\n"
            "    return await fut\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.optim_step(trio.AdamParams(learning_rate=1e-4))\n",
            fixed="import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.optim_step(trio.AdamParams(learning_rate=1e-4)).result()\n",
            line=3,
            column=1,
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(tc, batch):\n"
            "    tc.forward_backward(batch, 'cross_entropy')  # submitted, never checked\n"
            "    return tc.optim_step(trio.AdamParams()).result()\n",
            fixed="import pytrio as trio\n"
            "def step(tc, batch):\n"
            "    tc.forward_backward(batch, 'cross_entropy').result()  # submitted, never checked\n"
            "    return tc.optim_step(trio.AdamParams()).result()\n",
            line=3,
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient):\n"
            "    await train.optim_step_async(trio.AdamParams())\n",
            fixed="import pytrio as trio\n"
            "async def step(train: trio.TrainingClient):\n"
            "    await (await train.optim_step_async(trio.AdamParams()))\n",
            message_contains="second `await`",
            unsafe=True,
        ),
        Invalid(
            "import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "rest.delete_checkpoint(run_id, checkpoint_id)\n",
            fixed="import pytrio as trio\n"
            "rest = trio.ServiceClient().create_rest_client()\n"
            "rest.delete_checkpoint(run_id, checkpoint_id).result()\n",
            unsafe=True,
        ),
    )

    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        if isinstance(value, ast.Call):
            # client_call first: it answers None at once for `print(...)` and the like.
            typ = self.model.type_of(value) if self.model.client_call(value) else None
            if typ is not None and typ.is_future:
                name = value.func.attr  # type: ignore[union-attr]
                self.report(
                    value,
                    self.message.format(call=name),
                    fix=unsafe_fix("Append `.result()`", edit(value, "Call", append_result_call)),
                )
        elif isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
            typ = self.model.type_of(value) if self.model.client_call(value.value) else None
            if typ is not None and typ.is_future:
                name = value.value.func.attr  # type: ignore[union-attr]
                self.report(
                    value,
                    f"Future of `await {name}(...)` is dropped: the first await only enqueues; "
                    "add a second `await` to see the result and its errors",
                    fix=unsafe_fix("Await the future", edit(value, "Await", _double_await)),
                )
