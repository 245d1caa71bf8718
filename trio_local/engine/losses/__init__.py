"""Loss functions by the names the SDK sends (`loss.type`), one module per loss.

To add a loss, write a function with the `LossFn` signature in its own module and register it
in `LOSSES` with its gate; the trainer needs no change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytrio_facts import LOSSES as LOSS_FACTS
from trio_local.engine.losses.base import LossFn, LossInputs, LossTerms, active_positions
from trio_local.engine.losses.cispo import cispo
from trio_local.engine.losses.cross_entropy import cross_entropy
from trio_local.engine.losses.dro import dro
from trio_local.engine.losses.importance_sampling import importance_sampling
from trio_local.engine.losses.ppo import ppo


@dataclass(frozen=True)
class Loss:
    fn: LossFn
    # The loss input whose zeros leave a position out of the loss (`active_positions`): the
    # trainer scores those positions without autograd, since their gradient is exactly zero.
    gate: Literal["weights", "advantages"]


_FUNCTIONS: dict[str, LossFn] = {
    "cross_entropy": cross_entropy,
    "importance_sampling": importance_sampling,
    "ppo": ppo,
    "cispo": cispo,
    "dro": dro,
}
# The SDK's facts say which losses read `weights`; the policy losses mask with advantages.
LOSSES: dict[str, Loss] = {
    fact.name: Loss(_FUNCTIONS[fact.name], "weights" if fact.uses_weights else "advantages")
    for fact in LOSS_FACTS
}

__all__ = [
    "LOSSES",
    "Loss",
    "LossFn",
    "LossInputs",
    "LossTerms",
    "active_positions",
    "cross_entropy",
]
