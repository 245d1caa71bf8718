"""GRPO-style reinforcement learning with the importance_sampling loss: rollout, reward, update.

Each step samples a group of completions per prompt from the current weights, scores them with a
verifiable reward, centres the rewards within each group (the GRPO advantage), and trains on
datums that carry the sampler's `logprobs` and per-token `advantages`; prompt positions are masked
with advantage 0 (policy losses ignore `weights`). A new sampler is made after every update.

The toy reward is the share of completion tokens that are plain ASCII words (letters and spaces),
so even an untrained model gets varied rewards and the mean reward visibly rises.

Run offline:       trio-local run python examples/05_grpo_importance_sampling.py
Run on PyTRIO:     python examples/05_grpo_importance_sampling.py --lr 1e-5   (after `trio login`)
"""

import argparse
import re

import pytrio as trio

PROMPTS = ["Write a word:", "Say something:", "Continue the text:", "Answer briefly:"]
ASCII_WORD = re.compile(r"[A-Za-z ]+")


def reward(tokenizer, tokens: list[int]) -> float:
    if not tokens:
        return 0.0
    pieces = [tokenizer.decode([token]) for token in tokens]
    return sum(1.0 for piece in pieces if ASCII_WORD.fullmatch(piece)) / len(tokens)


def rl_datum(prompt: list[int], sequence, advantage: float) -> trio.Datum:
    completion = list(sequence.tokens)
    tokens = prompt + completion
    # One value per position of `tokens`: 0 on the prompt, the sampler's logprob on each sampled
    # token; the shift below lines each up with its target.
    logprobs = [0.0] * len(prompt) + list(sequence.logprobs)
    advantages = [0.0] * len(prompt) + [advantage] * len(completion)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": tokens[1:],
            "logprobs": logprobs[1:],
            "advantages": advantages[1:],
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=6)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()

    service = trio.ServiceClient()
    training = service.create_lora_training_client(base_model=args.base_model, rank=16, seed=0)
    tokenizer = training.get_tokenizer()
    prompts = [tokenizer.encode(text) for text in PROMPTS]
    params = trio.SamplingParams(max_tokens=args.max_tokens, temperature=1.0)
    adam = trio.AdamParams(learning_rate=args.lr)

    for step in range(args.steps):
        # Rollout from the current weights: submit every prompt, then collect.
        sampler = training.save_weights_and_get_sampling_client()
        futures = [
            sampler.sample(
                prompt=trio.ModelInput.from_ints(prompt),
                num_samples=args.group_size,
                sampling_params=params,
            )
            for prompt in prompts
        ]
        datums, rewards, useful_groups = [], [], 0
        for prompt, future in zip(prompts, futures, strict=True):
            sequences = future.result().sequences
            group = [reward(tokenizer, list(seq.tokens)) for seq in sequences]
            rewards.extend(group)
            mean = sum(group) / len(group)
            if all(r == mean for r in group):
                continue  # equal rewards: zero advantages, nothing to learn
            useful_groups += 1
            datums.extend(
                rl_datum(prompt, seq, r - mean) for seq, r in zip(sequences, group, strict=True)
            )

        mean_reward = sum(rewards) / len(rewards)
        if datums:
            fb_future = training.forward_backward(datums, loss_fn="importance_sampling")
            optim_future = training.optim_step(adam)
            fb_future.result()
            optim_future.result()
        print(f"step {step} reward {mean_reward:.3f} groups {useful_groups}/{len(prompts)}")


if __name__ == "__main__":
    main()
