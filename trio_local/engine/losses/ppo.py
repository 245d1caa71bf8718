"""`ppo`: the clipped surrogate objective, applied token by token.

Tinker's definition (https://tinker-docs.thinkingmachines.ai/tinker/losses/ppo):

    prob_ratio = torch.exp(target_logprobs - sampling_logprobs)
    clipped_ratio = torch.clamp(prob_ratio, clip_low_threshold, clip_high_threshold)
    unclipped_objective = prob_ratio * advantages
    clipped_objective = clipped_ratio * advantages
    ppo_objective = torch.min(unclipped_objective, clipped_objective)
    loss = -ppo_objective.sum()

`loss_fn_config` sets `clip_low_threshold` and `clip_high_threshold` (absolute ratio bounds,
default 0.8 and 1.2 as Tinker documents them). Positions whose target is -100 or whose advantage
is 0 are masked; the gradient is divided by the SDK's `total_active_tokens`.
"""

from __future__ import annotations

from trio_local.engine.losses.base import (
    LossInputs,
    LossTerms,
    policy_terms,
    policy_tokens,
    read_config,
)
from trio_local.errors import EngineError

DEFAULTS = {"clip_low_threshold": 0.8, "clip_high_threshold": 1.2}


def clip_thresholds(inputs: LossInputs, defaults: dict[str, float]) -> tuple[float, float]:
    config = read_config(inputs, defaults)
    low, high = config["clip_low_threshold"], config["clip_high_threshold"]
    if not 0 <= low <= high:
        raise EngineError(
            "invalid_loss_config",
            f"loss_fn_config needs 0 <= clip_low_threshold <= clip_high_threshold, got {low} and "
            f"{high} (they are ratio bounds such as 0.8 and 1.2, not epsilons)",
        )
    return low, high


def ppo(inputs: LossInputs) -> LossTerms:
    import torch

    low, high = clip_thresholds(inputs, DEFAULTS)
    tokens = policy_tokens(inputs)
    prob_ratio = tokens.log_ratio.exp()
    clipped_ratio = prob_ratio.clamp(low, high)
    objective = torch.min(prob_ratio * tokens.advantages, clipped_ratio * tokens.advantages)
    return policy_terms(objective, tokens, inputs.total_active_tokens)
