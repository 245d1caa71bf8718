"""`importance_sampling`: REINFORCE with an importance-sampling correction.

Tinker's definition (https://tinker-docs.thinkingmachines.ai/losses, "importance_sampling"):

    prob_ratio = torch.exp(target_logprobs - sampling_logprobs)
    loss = -(prob_ratio * advantages).sum()

Per token here; positions whose target is -100 or whose advantage is 0 are masked. The gradient
is divided by the SDK's `total_active_tokens` for the logical batch.
"""

from __future__ import annotations

from trio_local.engine.losses.base import (
    LossInputs,
    LossTerms,
    policy_terms,
    policy_tokens,
    read_config,
)


def importance_sampling(inputs: LossInputs) -> LossTerms:
    read_config(inputs, {})
    tokens = policy_tokens(inputs)
    prob_ratio = tokens.log_ratio.exp()
    return policy_terms(prob_ratio * tokens.advantages, tokens, inputs.total_active_tokens)
