"""PTR304 policy-loss-weights: `weights` given to a policy loss, which drops them."""

from __future__ import annotations

import ast

from pytrio_facts.sdk import LOSSES
from trio_lint.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, Rule, Valid
from trio_lint.semantics.receivers import Kind

# Policy losses drop `weights` on the client (029:client/builders/training.py:116-126).
_POLICY_LOSSES = frozenset(loss.name for loss in LOSSES if not loss.uses_weights)
_METHODS = ("forward", "forward_async", "forward_backward", "forward_backward_async")


def _inputs_keys(model, datum: ast.expr) -> list[str] | None:
    if not (isinstance(datum, ast.Call) and model.is_sdk(datum.func, "Datum")):
        return None
    inputs = argument(datum, 1, "loss_fn_inputs")
    if not isinstance(inputs, ast.Dict):
        return None
    return [k.value for k in inputs.keys if isinstance(k, ast.Constant)]


class PolicyLossWeights(Rule):
    code = "PTR304"
    name = "policy-loss-weights"
    message = (
        "`weights` are dropped for policy losses ({loss}): mask prompt tokens with "
        "`advantages` = 0 instead"
    )
    severity = Severity.WARNING
    # Facts of PyTRIO's own SDK (not Tinker's): see the doc's References.
    pytrio_only = True
    doc = """
## What it does
Flags `weights` in the `loss_fn_inputs` of data sent to a policy loss (`importance_sampling`,
`ppo`, `cispo`, `dro`): a list of `Datum(...)` literals passed to `forward_backward` with such a
`loss_fn`, or (as info) any `Datum` whose inputs have both `advantages` and `weights`.

## Why is this bad?
For policy losses the client sends only `target_tokens`, `logprobs` and `advantages`; `weights`
never leaves the machine (0.1.13 and 0.2.9). A
prompt "masked" with weights 0 is still in the policy gradient. Zero advantages mask it.

## Fix safety
No fix: the advantages have to be rebuilt with the mask.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward`, `pytrio.Datum`
"""
    evidence = """
- api-diff.md row 29, pitfall 23; TRIO013
"""
    VALID = (
        Valid(
            "import pytrio as trio\n"
            "train.forward_backward(\n"
            "    [trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'logprobs': lp,\n"
            "                'advantages': a})],\n"
            "    'importance_sampling',\n"
            ")\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'weights': w})\n"
            "train.forward_backward([d], 'cross_entropy')\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "train.forward_backward(\n"
            "    [trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'weights': w})],\n"
            "    loss_fn='cross_entropy',\n"
            ")\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=mi,\n"
            "               loss_fn_inputs={'target_tokens': t, 'logprobs': lp, 'advantages': a})\n"
            "train.forward_backward([d], 'ppo')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import pytrio as trio\n"
            "train.forward_backward(\n"
            "    [trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'logprobs': lp,\n"
            "                'advantages': a, 'weights': w})],\n"
            "    'importance_sampling',\n"
            ")\n",
            line=3,
            message_contains="importance_sampling",
        ),
        Invalid(
            "import pytrio as trio\n"
            "d = trio.Datum(model_input=mi, loss_fn_inputs={\n"
            "    'target_tokens': t, 'logprobs': lp, 'advantages': adv, 'weights': mask})\n",
            line=2,
        ),
        Invalid(
            "import pytrio as trio\n"
            "async def step(train: trio.TrainingClient):\n"
            "    return await train.forward_backward_async(\n"
            "        [trio.Datum(model_input=mi, loss_fn_inputs={'target_tokens': t, 'weights': w})],\n"
            "        loss_fn='ppo',\n"
            "    )\n",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[int] = set()

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node)
        if found is not None and found[0] is Kind.TRAINING_CLIENT and found[1] in _METHODS:
            loss = argument(node, 1, "loss_fn")
            data = argument(node, 0, "data")
            if (
                isinstance(loss, ast.Constant)
                and isinstance(loss.value, str)
                and loss.value.strip().lower() in _POLICY_LOSSES
                and isinstance(data, ast.List)
            ):
                for datum in data.elts:
                    keys = _inputs_keys(self.model, datum)
                    if keys is not None and "weights" in keys and id(datum) not in self._reported:
                        self._reported.add(id(datum))
                        self.report(datum, self.message.format(loss=loss.value.strip()))
            return
        keys = _inputs_keys(self.model, node)
        if keys and "advantages" in keys and "weights" in keys and id(node) not in self._reported:
            self._reported.add(id(node))
            self.report(node, self.message.format(loss="advantages given"), severity=Severity.INFO)
