"""Supervised fine-tuning (SFT) with PyTRIO: build masked datums, train, then sample the result.

Shows the whole SFT recipe for pytrio 0.2.9: prompt tokens with special tokens, completion tokens
without, EOS appended, weights 0 on the prompt, one manual shift (`tokens[:-1]` / `tokens[1:]`),
`forward_backward` and `optim_step` submitted before waiting, per-token loss from `loss_sum` and
`token_count`, then sampling the trained weights greedily.

Run offline:       trio-local run python examples/01_train_sft.py
Run on PyTRIO:     python examples/01_train_sft.py --lr 1e-4 --steps 60   (after `trio login`)

The defaults are small so the offline stand-in model memorises the four answers in seconds.
"""

import argparse

import pytrio as trio

EXAMPLES = [
    ("Q: What is the capital of France?\nA:", " Paris"),
    ("Q: What is two plus two?\nA:", " Four"),
    ("Q: What colour is the sky?\nA:", " Blue"),
    ("Q: Which planet is red?\nA:", " Mars"),
]


def build_datum(tokenizer, prompt: str, completion: str) -> trio.Datum:
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=True)
    completion_ids = tokenizer.encode(completion, add_special_tokens=False)
    completion_ids.append(tokenizer.eos_token_id)  # teach the model where to stop
    tokens = prompt_ids + completion_ids
    weights = [0.0] * len(prompt_ids) + [1.0] * len(completion_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens),
        loss_fn_inputs={"target_tokens": tokens, "weights": weights},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()

    service = trio.ServiceClient()
    models = service.get_supported_models()
    if args.base_model not in models:
        raise SystemExit(f"{args.base_model} is not served here; choose one of {models}")
    training = service.create_lora_training_client(base_model=args.base_model, rank=args.rank)
    tokenizer = training.get_tokenizer()
    batch = [build_datum(tokenizer, prompt, completion) for prompt, completion in EXAMPLES]
    adam = trio.AdamParams(learning_rate=args.lr)

    losses = []
    for step in range(args.steps):
        fb_future = training.forward_backward(batch, loss_fn="cross_entropy")
        optim_future = training.optim_step(adam)  # queued behind forward_backward
        metrics = fb_future.result().metrics
        optim_future.result()
        per_token = metrics["loss_sum"] / metrics["token_count"]
        losses.append(per_token)
        print(f"step {step} loss {per_token:.4f}")
    print(f"LOSS first={losses[0]:.4f} last={losses[-1]:.4f}")

    saved = training.save_weights_for_sampler("sft-demo").result()
    print(f"saved {saved.path}")
    sampler = training.create_sampling_client(saved.path)
    params = trio.SamplingParams(max_tokens=8, temperature=0.0, stop=[tokenizer.eos_token_id])
    futures = [
        sampler.sample(
            prompt=trio.ModelInput.from_ints(tokenizer.encode(prompt, add_special_tokens=True)),
            num_samples=1,
            sampling_params=params,
        )
        for prompt, _ in EXAMPLES
    ]
    for (prompt, _), future in zip(EXAMPLES, futures, strict=True):
        sequence = future.result().sequences[0]
        print(f"SAMPLE {prompt.splitlines()[0][3:]} -> {sequence.text.strip()}")


if __name__ == "__main__":
    main()
