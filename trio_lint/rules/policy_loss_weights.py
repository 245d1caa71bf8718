"""PTR304 policy-loss-weights: `weights` given to a policy loss, which drops them."""

from __future__ import annotations

import ast

from pytrio_facts.sdk import LOSSES
from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument
from trio_lint.rules.base import Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

# Policy losses drop `weights` on the client, and `cross_entropy` drops `logprobs` and
# `advantages` (029:client/builders/training.py:116-126): of the keys some built-in loss reads,
# the ones each loss does not read.
_POLICY_LOSSES = frozenset(loss.name for loss in LOSSES if not loss.uses_weights)
_LOSS_KEYS = frozenset(k for loss in LOSSES for k in (*loss.required_inputs, *loss.optional_inputs))
_UNREAD: dict[str, frozenset[str]] = {
    loss.name: _LOSS_KEYS
    - {*loss.required_inputs, *loss.optional_inputs}
    - ({"weights"} if loss.uses_weights else set())
    for loss in LOSSES
}
_READ: dict[str, tuple[str, ...]] = {
    loss.name: (*loss.required_inputs, *loss.optional_inputs) for loss in LOSSES
}
_METHODS = ("forward", "forward_async", "forward_backward", "forward_backward_async")


def _inputs_keys(model, datum: ast.expr) -> list[str] | None:
    """The keys of a `Datum(...)`'s `loss_fn_inputs`: a literal, `dict(...)`, `{**base, ...}` or
    a name bound to one (None when they are not known); without `weights` when the advantages
    were computed from them (`advantages = [a * w for a, w in zip(adv, weights)]`): the mask is
    in the loss already, and the extra key is only ignored."""
    if not (isinstance(datum, ast.Call) and model.is_sdk(datum.func, "Datum")):
        return None
    entries = model.dict_entries(argument(datum, 1, "loss_fn_inputs"))
    if entries is None:
        return None
    if (
        "weights" in entries
        and "advantages" in entries
        and _folded(model, entries["weights"], entries["advantages"])
    ):
        return [key for key in entries if key != "weights"]
    return list(entries)


def _folded(model, weights: ast.expr, advantages: ast.expr) -> bool:
    """The advantages are built from the weights: a name the weights are (or are converted
    from) is read where the advantages are built."""
    held = {ast.unparse(weights)} | {
        ast.unparse(origin)
        for origin in model.origins(weights, 20)
        if isinstance(origin, ast.Name | ast.Attribute | ast.Subscript)
    }
    for origin in model.origins(advantages, 40):
        for node in ast.walk(origin):
            if isinstance(node, ast.Name | ast.Attribute | ast.Subscript) and (
                ast.unparse(node) in held
            ):
                return True
    return False


class PolicyLossWeights(Rule):
    code = "PTR304"
    name = "policy-loss-weights"
    looks_at = LooksAt(calls=frozenset(_METHODS), sdk_calls=frozenset({"Datum"}))
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
`ppo`, `cispo`, `dro`): the `Datum(...)`s of a batch passed to `forward_backward` with such a
`loss_fn` (a list display, a comprehension, a list filled with `append`, or a helper's return
value), or (as info) any `Datum` whose inputs have both `advantages` and `weights`. The inputs
may be a dict literal, `dict(...)`, `{**base, ...}` or a name bound to one of those. Weights
the advantages were computed from (`advantages = [a * w for a, w in zip(adv, weights)]`) are
not reported: the mask is in the loss already. Likewise, the other way round: `logprobs` or
`advantages` in the data of a `cross_entropy` batch (RL datums, often built by a helper, sent
to the supervised loss).

## Why is this bad?
For policy losses the client sends only `target_tokens`, `logprobs` and `advantages`; `weights`
never leaves the machine (0.1.13 and 0.2.9). A
prompt "masked" with weights 0 is still in the policy gradient. Zero advantages mask it.
For `cross_entropy` the client sends only `target_tokens` and `weights` (0.2.9): the
advantages never reach the loss, and the step imitates every sampled answer, good or bad.

## Fix safety
No fix: the advantages have to be rebuilt with the mask.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward`, `pytrio.Datum`
"""
    evidence = """
- 0.2.9 keeps per loss: `cross_entropy` `target_tokens` and `weights`, policy losses
  `target_tokens`, `logprobs` and `advantages` (`029:client/training_batch.py:27-49`,
  `029:client/training_batch.py:249-272,294-325`), and sends exactly those fields
  (`029:client/builders/training.py:115-125`).
- 0.1.13 likewise: cross-entropy sends `weights`, importance sampling and PPO send `logprobs` and
  `advantages` only (`013:types/forward/datum.py:62-66,84-92`).
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
        Valid(
            "import pytrio as trio\n"
            "def make(tokens, lp, adv):\n"
            "    inputs = dict(target_tokens=tokens[1:], logprobs=lp, advantages=adv)\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs=inputs)\n"
            "def step(train: trio.TrainingClient, rollouts):\n"
            "    batch = [make(*r) for r in rollouts]\n"
            "    return train.forward_backward(batch, 'importance_sampling').result()\n"
        ),
        Valid(
            "import pytrio as trio\n"
            "BASE = {'weights': w}\n"
            "def step(train: trio.TrainingClient, rows):\n"
            "    batch = [trio.Datum(model_input=mi, loss_fn_inputs={**BASE, 'target_tokens': t})\n"
            "             for t in rows]\n"
            "    train.forward_backward(batch, 'cross_entropy').result()\n"
        ),
        # The weights are folded into the advantages: the prompt is masked where it counts.
        Valid(
            "import pytrio as trio\n"
            "def make(tokens, lp, adv, weights):\n"
            "    advantages = [a * w for a, w in zip(adv, weights)]\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:], 'logprobs': lp,\n"
            "                                      'advantages': advantages, 'weights': weights})\n"
            "def step(train: trio.TrainingClient, rollouts):\n"
            "    batch = [make(*r) for r in rollouts]\n"
            "    return train.forward_backward(batch, 'importance_sampling').result()\n"
        ),
    )
    INVALID = (
        # RL datums built in a helper, sent to the supervised loss: the advantages are dropped.
        Invalid(
            "import pytrio as trio\n"
            "def make_datum(tokens, lp, adv):\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs={'target_tokens': tokens[1:], 'logprobs': lp,\n"
            "                                      'advantages': adv})\n"
            "def step(tc, rollouts):\n"
            "    return tc.forward_backward([make_datum(*r) for r in rollouts],\n"
            "                               'cross_entropy').result()\n",
            line=3,
            message_contains="`logprobs` and `advantages` are dropped by `cross_entropy`",
        ),
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
        Invalid(
            "import pytrio as trio\n"
            "def make(tokens, lp, adv, mask):\n"
            "    inputs = dict(target_tokens=tokens[1:], logprobs=lp, advantages=adv)\n"
            "    inputs['weights'] = mask\n"
            "    return trio.Datum(model_input=trio.ModelInput.from_ints(tokens[:-1]),\n"
            "                      loss_fn_inputs=inputs)\n"
            "def step(train: trio.TrainingClient, rollouts):\n"
            "    batch = [make(*r) for r in rollouts]\n"
            "    return train.forward_backward(batch, 'importance_sampling').result()\n",
            line=5,
            message_contains="importance_sampling",
        ),
        Invalid(
            "import pytrio as trio\n"
            "BASE = {'weights': w}\n"
            "def step(train: trio.TrainingClient, rollouts):\n"
            "    batch = []\n"
            "    for t, lp, adv in rollouts:\n"
            "        batch.append(trio.Datum(model_input=mi,\n"
            "                                loss_fn_inputs={**BASE, 'target_tokens': t,\n"
            "                                                'logprobs': lp, 'advantages': adv}))\n"
            "    train.forward_backward(batch, loss_fn='ppo').result()\n",
            line=6,
            message_contains="ppo",
        ),
    )
    reach = limited(
        "init-attribute",
        "call-site-parameter",
        "call-site-method-parameter",
        "config-dict",
        "loop-variable",
        "dict-entry-get",
        "annotated-parameter",
        "nested-coroutine-parameter",
        "queue-worker",
        # These routes move the advantages built from the weights to where the fold is not
        # followed (a parameter, a dict entry, a queue): the folded-weights example is then
        # reported like any Datum with both keys.
        **{
            "dict-entry-get:valid": "the fold moves out of sight",
            "annotated-parameter:valid": "the fold moves out of sight",
            "nested-coroutine-parameter:valid": "the fold moves out of sight",
            "queue-worker:valid": "the fold moves out of sight",
        },
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._reported: set[int] = set()
        self._info: list[ast.Call] = []  # Datums with both `advantages` and `weights`

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is not None and found[0] is Kind.TRAINING_CLIENT and found[1] in _METHODS:
            loss = argument(node, 1, "loss_fn")
            data = argument(node, 0, "data")
            # A loss is named by a string: `forward_backward(data, 3)` names none.
            value = loss.value if isinstance(loss, ast.Constant) else None
            written = value.strip() if isinstance(value, str) else None
            name = written.lower() if written is not None else None
            if name is not None and _UNREAD.get(name) and data is not None:
                # the batch as built: a list display, a comprehension, appends, a helper's return
                for datum in self.model.origins(data):
                    keys = _inputs_keys(self.model, datum)
                    unread = [k for k in keys or () if k in _UNREAD[name]]
                    if unread and id(datum) not in self._reported:
                        self._reported.add(id(datum))
                        self.report(datum, self._message(name, str(written), unread))
            return
        keys = _inputs_keys(self.model, node)
        if keys and "advantages" in keys and "weights" in keys:
            self._info.append(node)

    def _message(self, name: str, loss: str, unread: list[str]) -> str:
        if name in _POLICY_LOSSES:
            return self.message.format(loss=loss)
        listed = " and ".join(f"`{k}`" for k in unread)
        read = " and ".join(f"`{k}`" for k in _READ[name])
        return (
            f"{listed} are dropped by `{loss}`, which reads only {read}: RL data trained "
            "this way is plain supervised training; use a policy loss (`importance_sampling`, "
            "`ppo`, ...)"
        )

    def finish(self) -> None:
        # A Datum also sent to a policy loss was reported there, with the loss named.
        for node in self._info:
            if id(node) not in self._reported:
                self.report(
                    node, self.message.format(loss="advantages given"), severity=Severity.INFO
                )
