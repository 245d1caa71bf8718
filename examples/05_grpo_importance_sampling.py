"""GRPO-style reinforcement learning with the importance_sampling loss: rollout, reward, update.

A short supervised warm start teaches the format (answer " yes" or " no", then stop) with both
answers shown for every question, so the model starts at about even odds. Then each RL step
samples a group of answers per question from the current weights, scores them with a verifiable
reward (here a toy preference: 1.0 for an agreeable " yes"), centres the rewards within each group
(the GRPO advantage), and trains on datums that carry the sampler's `logprobs` and per-token
`advantages`; prompt positions are masked with advantage 0 (policy losses ignore `weights`). A new
sampler is made after every update, so rollouts always come from the weights being trained, and
RL starts from the warm-start checkpoint with a fresh optimizer, as a new training phase should.

Run offline:       trio-local run python examples/05_grpo_importance_sampling.py
Run on PyTRIO:     python examples/05_grpo_importance_sampling.py --lr 1e-5   (after `trio login`)
"""

import argparse
import re

import pytrio as trio

QUESTIONS = [
    ("Q: Can you help me?\nA:", "yes"),
    ("Q: Do you like music?\nA:", "yes"),
    ("Q: Is today a good day?\nA:", "yes"),
    ("Q: Would you recommend it?\nA:", "yes"),
]


def sft_datum(tokenizer, prompt: list[int], answer: str) -> trio.Datum:
    completion = [*tokenizer.encode(f" {answer}", add_special_tokens=False), tokenizer.eos_token_id]
    tokens = prompt + completion
    weights = [0.0] * len(prompt) + [1.0] * len(completion)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


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


def reward(text: str | None, answer: str) -> float:
    """1.0 when the completion's first word is the preferred answer (a verifiable reward)."""
    first_word = re.match(r"\s*(\w+)", (text or "").lower())
    return 1.0 if first_word and first_word.group(1) == answer else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--warm-start-steps", type=int, default=20)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, help="seed the sampling (one run, repeatable)")
    args = parser.parse_args()

    service = trio.ServiceClient()
    training = service.create_lora_training_client(base_model=args.base_model, rank=16, seed=0)
    tokenizer = training.get_tokenizer()
    prompts = [tokenizer.encode(question, add_special_tokens=True) for question, _ in QUESTIONS]
    adam = trio.AdamParams(learning_rate=args.lr)

    # Warm start: the answer format, with both answers for every question.
    warm = [sft_datum(tokenizer, p, a) for p in prompts for a in ("yes", "no")]
    for _ in range(args.warm_start_steps):
        fb_future = training.forward_backward(warm, loss_fn="cross_entropy")
        optim_future = training.optim_step(adam)
        fb_future.result()
        optim_future.result()

    # A new phase starts from the weights with a fresh optimizer: Adam's moments from the SFT
    # steps would otherwise outweigh the much smaller policy gradients for many steps.
    warm_state = training.save_state("grpo-warm-start").result()
    training = service.create_training_client_from_state(warm_state.path)

    for step in range(args.steps):
        seed = None if args.seed is None else args.seed + step  # each step draws afresh
        params = trio.SamplingParams(
            max_tokens=4, temperature=1.0, stop=[tokenizer.eos_token_id], seed=seed
        )
        sampler = training.save_weights_and_get_sampling_client()  # the current weights
        futures = [
            sampler.sample(
                prompt=trio.ModelInput.from_ints(prompt),
                num_samples=args.group_size,
                sampling_params=params,
            )
            for prompt in prompts
        ]  # submit every question, then collect
        datums, rewards, useful_groups = [], [], 0
        answers = [answer for _, answer in QUESTIONS]
        for prompt, answer, future in zip(prompts, answers, futures, strict=True):
            sequences = future.result().sequences
            group = [reward(sequence.text, answer) for sequence in sequences]
            rewards.extend(group)
            mean = sum(group) / len(group)
            if all(r == mean for r in group):
                continue  # equal rewards: zero advantages, nothing to learn
            useful_groups += 1
            datums.extend(
                rl_datum(prompt, seq, r - mean) for seq, r in zip(sequences, group, strict=True)
            )

        if datums:
            fb_future = training.forward_backward(datums, loss_fn="importance_sampling")
            optim_future = training.optim_step(adam)
            fb_future.result()
            optim_future.result()
        mean_reward = sum(rewards) / len(rewards)
        print(f"step {step} reward {mean_reward:.3f} groups {useful_groups}/{len(prompts)}")


if __name__ == "__main__":
    main()
