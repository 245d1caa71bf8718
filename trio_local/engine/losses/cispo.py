"""`cispo`: the clipped importance ratio as a constant coefficient on log p.

Tinker's definition (https://tinker-docs.thinkingmachines.ai/tinker/losses/cispo):

    prob_ratio = torch.exp(target_logprobs - sampling_logprobs)
    clipped_ratio = torch.clamp(prob_ratio, clip_low_threshold, clip_high_threshold)
    cispo_objective = clipped_ratio.detach() * target_logprobs * advantages
    loss = -cispo_objective.sum()

`loss_fn_config` sets `clip_low_threshold` and `clip_high_threshold`; the defaults are Tinker's
one-sided clip, 0.0 and 4.0 (https://tinker-docs.thinkingmachines.ai/tutorials/core-concepts/
loss-functions). Positions whose target is -100 or whose advantage is 0 are masked; the gradient
is divided by the SDK's `total_active_tokens`.
"""

from __future__ import annotations

from trio_local.engine.losses.base import LossInputs, LossTerms, policy_terms, policy_tokens
from trio_local.engine.losses.ppo import clip_thresholds

DEFAULTS = {"clip_low_threshold": 0.0, "clip_high_threshold": 4.0}


def cispo(inputs: LossInputs) -> LossTerms:
    low, high = clip_thresholds(inputs, DEFAULTS)
    tokens = policy_tokens(inputs)
    clipped_ratio = tokens.log_ratio.exp().clamp(low, high).detach()
    objective = clipped_ratio * tokens.target_logprobs * tokens.advantages
    return policy_terms(objective, tokens, inputs.total_active_tokens)
