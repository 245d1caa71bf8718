"""PTR303 unknown-loss-fn: a `loss_fn` name the SDK does not have."""

from __future__ import annotations

import ast
import difflib

from pytrio_facts.versions import LOSS_NAMES_BY_LINE
from trio_lint.diagnostics import Severity
from trio_lint.rules._common import argument, sdk_line
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.semantics.receivers import Kind

_METHODS = ("forward", "forward_async", "forward_backward", "forward_backward_async")


class UnknownLossFn(Rule):
    code = "PTR303"
    call_methods = frozenset(_METHODS)  # its visit_Call looks at nothing else
    name = "unknown-loss-fn"
    message = "Unknown `loss_fn` {name!r} on pytrio {line}: use one of {names}{hint}"
    severity = Severity.ERROR
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags a string literal passed as `loss_fn` to `forward`/`forward_backward` (or their `_async`
twins) that names no built-in loss: `cross_entropy`, `importance_sampling`, `ppo` on 0.1, plus
`cispo` and `dro` on 0.2. On 0.1 the name must also be lower case without spaces.

## Why is this bad?
The SDK raises `ValueError: Unsupported loss function type` before anything is sent (for example for `"grpo"`). 0.2 normalises with `strip().lower()`; 0.1 compares exactly. A custom loss goes
through `forward_backward_custom`.

## Fix safety
No fix: choosing a loss changes the training objective.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward`, `pytrio.TrainingClient.forward_backward_custom`
"""
    evidence = """
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.forward_backward(batch, 'cross_entropy').result()\n"
            "train.forward_backward(batch, loss_fn=' PPO ').result()\n"
        ),
        Valid("import pytrio as trio\nimport torch\nout = model.forward(x, 'mse')\n"),
        Valid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.forward_backward_custom(batch, my_loss).result()\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "train = trio.ServiceClient().create_lora_training_client(base_model='m')\n"
            "train.forward_backward(batch, loss_fn='grpo').result()\n",
            line=3,
            message_contains="'grpo'",
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward(batch, 'cross-entropy')\n",
            message_contains="cross_entropy",
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient, batch):\n"
            "    return await train.forward_backward_async(batch, 'cispo')\n",
            config={"target-version": "0.1"},
        ),
        Invalid(
            "import pytrio as trio\n"
            "def step(train: trio.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'Cross_Entropy')\n",
            config={"target-version": "0.1"},
        ),
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.TRAINING_CLIENT or found[1] not in _METHODS:
            return
        written = argument(node, 1, "loss_fn")
        expr = self.model.literal(written)
        if not isinstance(expr, ast.Constant) or not isinstance(expr.value, str):
            return
        line = sdk_line(self.ctx)
        names = LOSS_NAMES_BY_LINE[line]  # type: ignore[index]
        given = expr.value if line == "0.1" else expr.value.strip().lower()
        if given in names:
            return
        close = difflib.get_close_matches(given.strip().lower().replace("-", "_"), names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        self.report(
            written,  # type: ignore[arg-type]
            self.message.format(
                name=expr.value, line=line, names=", ".join(map(repr, names)), hint=hint
            ),
        )
