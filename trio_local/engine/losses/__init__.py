"""Loss functions by the names the SDK sends (`loss.type`), one module per loss.

To add a loss, write a function with the `LossFn` signature in its own module and register it
in `LOSSES`; the trainer needs no change.
"""

from __future__ import annotations

from trio_local.engine.losses.base import LossFn, LossInputs, LossTerms
from trio_local.engine.losses.cispo import cispo
from trio_local.engine.losses.cross_entropy import cross_entropy
from trio_local.engine.losses.dro import dro
from trio_local.engine.losses.importance_sampling import importance_sampling
from trio_local.engine.losses.ppo import ppo

LOSSES: dict[str, LossFn] = {
    "cross_entropy": cross_entropy,
    "importance_sampling": importance_sampling,
    "ppo": ppo,
    "cispo": cispo,
    "dro": dro,
}

__all__ = ["LOSSES", "LossFn", "LossInputs", "LossTerms", "cross_entropy"]
