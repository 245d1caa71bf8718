"""Loss functions by the names the SDK sends (`loss.type`), computed per token.

A loss maps the model's log-probabilities of the target tokens, plus the datum's loss inputs,
to per-token terms. The trainer sums the terms for the reported `loss_sum` and backpropagates
`objective`, already divided by the logical batch's denominator from the SDK's
`gradient_accumulation` totals, so a batch the SDK splits into several events yields the same
gradient as one event.

To add a loss (issue 8: importance_sampling, ppo, cispo, dro), write a function with the
`LossFn` signature and register it in `LOSSES`; the trainer needs no change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LossInputs:
    """Batched [B, T] tensors aligned with the targets; padding is masked out of `valid`."""

    target_logprobs: Any  # model log p(target), with grad
    valid: Any  # bool: a real position whose target is not -100
    weights: Any  # cross_entropy weights (default 1.0)
    sampler_logprobs: Any | None  # policy losses: the sampler's log-probs
    advantages: Any | None  # policy losses
    config: dict[str, object]
    total_samples: int
    total_active_tokens: int
    total_advantage_tokens: int


@dataclass(frozen=True)
class LossTerms:
    elementwise: Any  # [B, T] per-token loss, zero where masked
    objective: Any  # scalar to backpropagate, normalised for the whole logical batch
    token_count: int  # active tokens of this event (the SDK adds them across events)


LossFn = Callable[[LossInputs], LossTerms]


def cross_entropy(inputs: LossInputs) -> LossTerms:
    """Weighted negative log-likelihood, as 0.2.9's client defines it.

    Per token: `-weights[t] * log p(target[t])`. A token is active when its target is not -100
    and its weight is not 0; the gradient is the sum over active tokens divided by
    `total_active_tokens`, the active-token count of the whole logical batch.
    """
    mask = inputs.valid & (inputs.weights != 0)
    elementwise = -(inputs.target_logprobs * inputs.weights) * mask
    denominator = max(inputs.total_active_tokens, 1)
    return LossTerms(
        elementwise=elementwise,
        objective=elementwise.sum() / denominator,
        token_count=int(mask.sum().item()),
    )


LOSSES: dict[str, LossFn] = {
    "cross_entropy": cross_entropy,
}
