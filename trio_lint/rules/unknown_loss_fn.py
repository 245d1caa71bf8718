"""PTR303 unknown-loss-fn: a `loss_fn` name the SDK does not have."""

from __future__ import annotations

import ast
import difflib
import functools

from pytrio_facts.versions import LOSS_NAMES_BY_LINE
from trio_lint.output.diagnostics import Severity
from trio_lint.rules._common import argument, sdk_line
from trio_lint.rules.base import ALL_SDKS, Invalid, LooksAt, Rule, Valid, limited
from trio_lint.semantics.receivers import Kind

_METHODS = ("forward", "forward_async", "forward_backward", "forward_backward_async")


@functools.cache
def _tinker_losses() -> tuple[tuple[str, ...], str]:
    """Tinker's loss names (its `LossFnType`, read from the wheel) and the release they are of."""
    from pytrio_facts.porting import tinker_raw, tinker_release

    release = tinker_release()
    return tuple(tinker_raw()["facts"]["loss_names"]), f"tinker {release}"


class UnknownLossFn(Rule):
    code = "PTR303"
    looks_at = LooksAt(calls=frozenset(_METHODS))
    name = "unknown-loss-fn"
    message = "Unknown `loss_fn` {name!r} on {sdk}: use one of {names}{hint}"
    severity = Severity.ERROR
    # In PyTRIO code, PyTRIO's losses; in Tinker code, Tinker's (`pytrio_facts/tinker_api.json`).
    pytrio_only = True
    sdks = ALL_SDKS
    doc = """
## What it does
Flags a string literal passed as `loss_fn` to `forward`/`forward_backward` (or their `_async`
twins) that names no built-in loss: `cross_entropy`, `importance_sampling`, `ppo` on 0.1, plus
`cispo` and `dro` on 0.2. On 0.1 the name must also be lower case without spaces. In Tinker code
the names are tinker 0.38.0's `LossFnType`, matched exactly.

## Why is this bad?
PyTRIO raises `ValueError: Unsupported loss function type` before anything is sent (for example
for `"grpo"`). 0.2 normalises with `strip().lower()`; 0.1 compares exactly. Tinker does not check
the name on the client: `loss_fn` is only annotated `LossFnType` (a type checker sees the
mistake, the running code does not), and tinker 0.38.0 copies the string into the request as
written, so an unknown name is sent, and whether it is refused is up to the service.
A custom loss goes through `forward_backward_custom`.

## Fix safety
No fix: choosing a loss changes the training objective.

## References
- pytrio 0.2.9: `pytrio.TrainingClient.forward_backward`, `pytrio.TrainingClient.forward_backward_custom`
- tinker 0.38.0: `tinker.types.LossFnType`
"""
    evidence = """
- 0.2.9 accepts `cross_entropy`, `importance_sampling`, `ppo`, `cispo`, `dro` after
  `strip().lower()` and raises `ValueError("Unsupported loss function type: ...")` otherwise
  (`029:client/training_batch.py:19-57`), when the batch is planned, before anything is queued
  (`029:client/training.py:613-619,633`); 0.2.0 has the same names and normalisation
  (`020:types/forward/datum.py:8-33`).
- 0.1.13 compares exactly against `cross_entropy`, `importance_sampling`, `ppo`
  (`013:types/forward/datum.py:36-45`), called for each datum before sending
  (`013:lib/training_client.py:57`).
- Custom losses: `forward_backward_custom` (`029:client/training.py:359-364`).
- tinker 0.38.0: `tinker.types.LossFnType` (`cross_entropy`, `importance_sampling`, `ppo`,
  `cispo`, `dro`, `gspo`, `stable_reinforce`, `custom`: `tinker/types/loss_fn_type.py`) is a
  `Literal` alias, checked by no code at run time: `ForwardBackwardInput` and
  `ForwardBackwardRequest` are frozen dataclasses without validation
  (`tinker/types/forward_backward_input.py:12-20`,
  `tinker/types/forward_backward_request.py:12-18`), the training client passes `loss_fn`
  through (`tinker/lib/public_interfaces/training_client.py:352-420`), and the name goes into a protobuf string field as is (`tinker/proto/request_conv.py:93-105`);
  any rejection is the service's.
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
        # Tinker's own losses (tinker 0.38.0 `LossFnType`).
        Valid(
            "import tinker\n"
            "def step(train: tinker.TrainingClient, batch):\n"
            "    train.forward_backward(batch, 'gspo').result()\n"
            "    return train.forward_backward(batch, loss_fn='stable_reinforce').result()\n",
            config={"sdk-modules": ["tinker"]},
        ),
        # A test double of Tinker's client, in Tinker code: its loss names are its own.
        Valid(
            "import asyncio\nimport tinker\n"
            "class FakeTrainingClient:\n"
            "    async def forward_backward_async(self, data, loss_fn):\n"
            "        return loss_fn\n"
            "client = FakeTrainingClient()\n"
            "asyncio.run(client.forward_backward_async([1], 'ce'))\n",
            config={"sdk-modules": ["tinker"]},
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
        Invalid(
            "import tinker\n"
            "def step(train: tinker.TrainingClient, batch):\n"
            "    return train.forward_backward(batch, 'grpo').result()\n",
            line=3,
            message_contains="on tinker 0.38.0",
            config={"sdk-modules": ["tinker"]},
        ),
    )
    reach = limited(
        "queue-worker",
    )

    def visit_Call(self, node: ast.Call) -> None:
        found = self.model.client_call(node, methods=_METHODS)
        if found is None or found[0] is not Kind.TRAINING_CLIENT or found[1] not in _METHODS:
            return
        written = argument(node, 1, "loss_fn")
        expr = self.model.literal(written)
        if not isinstance(expr, ast.Constant) or not isinstance(expr.value, str):
            return
        if self.model.other_sdk_only:
            # Only a receiver known to be Tinker's client: test doubles share its method names.
            if self.model.type_of(node.func.value) is None:  # type: ignore[attr-defined]  # client_call found `x.method(...)`
                return
            (names, sdk), given = _tinker_losses(), expr.value
        else:
            line = sdk_line(self.ctx)
            names = LOSS_NAMES_BY_LINE[line]  # type: ignore[index]  # sdk_line gives one of the table's lines
            given = expr.value if line == "0.1" else expr.value.strip().lower()
            sdk = f"pytrio {line}"
        if given in names:
            return
        close = difflib.get_close_matches(given.strip().lower().replace("-", "_"), names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        self.report(
            written,  # type: ignore[arg-type]  # not None: its literal is a str
            self.message.format(
                name=expr.value, sdk=sdk, names=", ".join(map(repr, names)), hint=hint
            ),
        )
