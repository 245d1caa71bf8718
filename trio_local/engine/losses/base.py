"""What every loss receives and returns, and the shared helpers of the policy losses.

A loss maps the model's log-probabilities of the target tokens, plus the datum's loss inputs,
to per-token terms. The trainer sums the terms for the reported `loss_sum` and backpropagates
`objective`, already divided by the logical batch's denominator from the SDK's
`gradient_accumulation` totals, so a batch the SDK splits into several events yields the same
gradient as one event.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trio_local.errors import EngineError


@dataclass(frozen=True)
class LossInputs:
    """Batched [B, T] tensors aligned with the targets; padding is masked out of `valid`."""

    target_logprobs: Any  # model log p(target), with grad; 0 where not valid
    valid: Any  # bool: a real position whose target is not -100
    weights: Any  # cross_entropy weights (default 1.0)
    sampler_logprobs: Any | None  # policy losses: the sampler's log-probs
    advantages: Any | None  # policy losses
    config: dict[str, object]
    total_samples: int
    total_active_tokens: int
    total_advantage_tokens: int
    loss_name: str = ""


@dataclass(frozen=True)
class LossTerms:
    elementwise: Any  # [B, T] per-token loss, zero where masked
    objective: Any  # scalar to backpropagate, normalised for the whole logical batch
    token_count: int  # active tokens of this event (the SDK adds them across events)


LossFn = Callable[[LossInputs], LossTerms]


def active_positions(valid: Any, gate: Any) -> Any:
    """The positions a loss counts: a target that is not -100 and a non-zero gate value (the
    `weights` of cross_entropy, the `advantages` of the policy losses). Every other position's
    term is zero whatever the model's log-probability, so its gradient is exactly zero."""
    return valid & (gate != 0)


def read_config(inputs: LossInputs, defaults: dict[str, float]) -> dict[str, float]:
    """`loss_fn_config` merged over `defaults`; unknown keys and non-numbers are errors."""
    values = dict(defaults)
    for key, value in inputs.config.items():
        if key not in defaults:
            allowed = ", ".join(sorted(defaults)) or "none"
            raise EngineError(
                "invalid_loss_config",
                f"loss_fn_config key '{key}' is not used by loss '{inputs.loss_name}'; "
                f"accepted keys: {allowed}",
            )
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not isinstance(value, int | float) or not math.isfinite(value):
            raise EngineError(
                "invalid_loss_config",
                f"loss_fn_config['{key}'] must be a finite number, got {value!r}",
            )
        values[key] = float(value)
    return values


@dataclass(frozen=True)
class PolicyTokens:
    """The per-token quantities the policy losses share, with masked positions made inert."""

    mask: Any  # bool: target is not -100 and the advantage is not 0
    target_logprobs: Any  # log p_theta(x), 0 where masked
    sampler_logprobs: Any  # log q(x), 0 where masked
    advantages: Any  # A(x), 0 where masked
    log_ratio: Any  # log p_theta(x) - log q(x), 0 where masked (so exp() cannot overflow there)


def policy_tokens(inputs: LossInputs) -> PolicyTokens:
    import torch

    if inputs.sampler_logprobs is None or inputs.advantages is None:
        raise EngineError(
            "invalid_datum",
            f"loss '{inputs.loss_name}' needs loss_fn_inputs 'logprobs' (the sampler's) and "
            "'advantages' for every datum",
        )
    mask = active_positions(inputs.valid, inputs.advantages)
    zero = torch.zeros_like(inputs.target_logprobs)
    target = torch.where(mask, inputs.target_logprobs, zero)
    sampler = torch.where(mask, inputs.sampler_logprobs, zero)
    return PolicyTokens(
        mask=mask,
        target_logprobs=target,
        sampler_logprobs=sampler,
        advantages=torch.where(mask, inputs.advantages, zero),
        log_ratio=target - sampler,
    )


def policy_terms(objective_per_token: Any, tokens: PolicyTokens, denominator: int) -> LossTerms:
    """Loss = -objective per token, masked; the gradient is normalised by `denominator`."""
    import torch

    elementwise = torch.where(
        tokens.mask, -objective_per_token, torch.zeros_like(objective_per_token)
    )
    return LossTerms(
        elementwise=elementwise,
        objective=elementwise.sum() / max(denominator, 1),
        token_count=int(tokens.mask.sum().item()),
    )
