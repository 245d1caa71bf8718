"""GRPO-style loop: rollouts, group-normalised advantages, importance-sampling update."""

import pytrio as trio

GROUP = 8


def advantages(rewards):
    mean = sum(rewards) / len(rewards)
    return [r - mean for r in rewards]


def grpo(training: trio.TrainingClient, tokenizer, prompts, reward_fn, steps=20):
    adam = trio.AdamParams(learning_rate=1e-5)
    params = trio.SamplingParams(max_tokens=128, temperature=1.0)
    policy = training.save_weights_and_get_sampling_client()
    for step in range(steps):
        prompt_ids = tokenizer.encode(prompts[step % len(prompts)])
        prompt = trio.ModelInput.from_ints(prompt_ids)
        rollouts = policy.sample(prompt, num_samples=GROUP, sampling_params=params).result()  # bug: PTR405
        rewards = [reward_fn(seq.text) for seq in rollouts.sequences]
        batch = []
        for seq, adv in zip(rollouts.sequences, advantages(rewards)):
            tokens = prompt_ids + seq.tokens
            n = len(tokens) - 1
            batch.append(
                trio.Datum(
                    model_input=trio.ModelInput.from_ints(tokens[:-1]),
                    loss_fn_inputs={
                        "target_tokens": tokens[1:],
                        "logprobs": [0.0] * (len(prompt_ids) - 1) + list(seq.logprobs),
                        "advantages": [0.0] * (len(prompt_ids) - 1) + [adv] * (n - len(prompt_ids) + 1),
                    },
                )
            )
        fb = training.forward_backward(batch, "importance_sampling")
        training.optim_step(adam).result()
        print(step, sum(rewards) / GROUP, fb.result().metrics["loss_mean"])
