"""`cross_entropy`: weighted negative log-likelihood, as 0.2.9's client defines it."""

from __future__ import annotations

from trio_local.engine.losses.base import LossInputs, LossTerms, active_positions, read_config


def cross_entropy(inputs: LossInputs) -> LossTerms:
    """Per token: `-weights[t] * log p(target[t])`.

    A token is active when its target is not -100 and its weight is not 0; the gradient is the
    sum over active tokens divided by `total_active_tokens`, the active-token count of the whole
    logical batch (the SDK counts tokens with a non-zero weight, client/training_batch.py).
    `forward_backward_custom` arrives here too: the SDK sends the gradient of the user's loss as
    `weights = -dL/dlogprob`, so this linear loss reproduces it up to that denominator.
    """
    read_config(inputs, {})  # it takes no settings: a key given here is a mistake, not ignored
    mask = active_positions(inputs.valid, inputs.weights)
    elementwise = -(inputs.target_logprobs * inputs.weights) * mask
    denominator = max(inputs.total_active_tokens, 1)
    return LossTerms(
        elementwise=elementwise,
        objective=elementwise.sum() / denominator,
        token_count=int(mask.sum().item()),
    )
