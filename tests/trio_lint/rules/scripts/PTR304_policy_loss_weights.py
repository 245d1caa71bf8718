"""Importance-sampling update that masks the prompt with weights, like an SFT datum."""

import pytrio as trio


def rl_update(training: trio.TrainingClient, rollouts, adam):
    batch = []
    for tokens, logprobs, advantage, n_prompt in rollouts:
        n = len(tokens) - 1
        batch.append(
            trio.Datum(  # bug: PTR304
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={
                    "target_tokens": tokens[1:],
                    "logprobs": logprobs,
                    "advantages": [advantage] * n,
                    "weights": [0.0] * (n_prompt - 1) + [1.0] * (n - n_prompt + 1),
                },
            )
        )
    fb = training.forward_backward(batch, "importance_sampling")
    training.optim_step(adam).result()
    return fb.result().metrics
