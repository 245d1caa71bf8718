"""PTR102 dropped-future: a training, save or REST call whose future is thrown away."""

from __future__ import annotations

from trio_lint.output.diagnostics import Applicability, Severity
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.rules.checkers.futures import FuturesChecker


class DroppedFuture(Rule):
    code = "PTR102"
    name = "dropped-future"
    message = "Future of `{call}` is dropped: its errors are never seen; call `.result()`"
    severity = Severity.ERROR
    fix_safety = Applicability.UNSAFE
    # Found and reported by the futures checker, with PTR101 and PTR104.
    checker = FuturesChecker
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
        # A Markdown block that lists one client's calls, one per line, runs nothing.
        Valid(
            "```python\nimport pytrio as trio\nrest = trio.ServiceClient().create_rest_client()\n"
            "rest.list_training_runs()      # training runs\n"
            "rest.list_checkpoints(run_id)  # one run's checkpoints\n"
            "rest.list_user_checkpoints()   # every checkpoint\n```\n",
            path="api.md",
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
