"""`dro`: log p times the advantage, with a quadratic penalty on the log-ratio.

Tinker's definition (https://tinker-docs.thinkingmachines.ai/tinker/losses/dro):

    quadratic_term = (target_logprobs - sampling_logprobs) ** 2
    dro_objective = target_logprobs * advantages - 0.5 * beta * quadratic_term
    loss = -dro_objective.sum()

`loss_fn_config` sets `beta`. Tinker documents no default; trio-local uses 0.05, the value of
Tinker's own example. The penalty does not depend on the advantage, so masking zero advantages
matters here: those positions are left out, and the gradient is divided by the SDK's
`total_advantage_tokens` (the count of non-zero advantages it computes for this loss).
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

DEFAULTS = {"beta": 0.05}


def dro(inputs: LossInputs) -> LossTerms:
    beta = read_config(inputs, DEFAULTS)["beta"]
    if beta < 0:
        raise EngineError("invalid_loss_config", f"loss_fn_config['beta'] must be >= 0, got {beta}")
    tokens = policy_tokens(inputs)
    quadratic_term = tokens.log_ratio**2
    objective = tokens.target_logprobs * tokens.advantages - 0.5 * beta * quadratic_term
    return policy_terms(objective, tokens, inputs.total_advantage_tokens)
