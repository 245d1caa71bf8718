"""A supervised fine-tuning loop written for Tinker, ported to PyTRIO.

The loop was Tinker code (`import tinker`, `from tinker import types`). The port took three steps
(references/porting-from-tinker.md):
1. `import pytrio as trio` for both imports, and `trio.` for every `tinker.` and `types.`;
2. `trio-lint --fix`: Tinker's metric key `loss:sum` became pytrio's `loss_sum`;
3. what trio-lint still reported: `save_weights_and_get_sampling_client(name=...)` takes no
   arguments on pytrio (PTR005), so the name went, and the weights to keep are saved by name
   with `save_weights_for_sampler`.
Datum, ModelInput, AdamParams, SamplingParams, forward_backward, optim_step, sample and their
futures kept their spelling. Tinker divides `loss:sum` by the sum of the weights; pytrio gives
that mean as `loss_mean` (`loss_sum / token_count`), printed side by side below.

Run offline:       trio-local run python examples/10_port_from_tinker.py
Run on PyTRIO:     python examples/10_port_from_tinker.py --lr 1e-4   (after `trio login`)
"""

import argparse

import pytrio as trio

PAIRS = [("Q: capital of France?\nA:", " Paris"), ("Q: two plus two?\nA:", " Four")]


def make_datum(tokenizer, prompt: str, completion: str) -> trio.Datum:
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=True)
    completion_ids = tokenizer.encode(completion, add_special_tokens=False)
    tokens = prompt_ids + completion_ids + [tokenizer.eos_token_id]
    weights = [0.0] * len(prompt_ids) + [1.0] * (len(completion_ids) + 1)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--lr", type=float, default=5e-3)
    args = parser.parse_args()

    service_client = trio.ServiceClient()
    training_client = service_client.create_lora_training_client(
        base_model=args.base_model, rank=16, seed=0
    )
    tokenizer = training_client.get_tokenizer()
    batch = [make_datum(tokenizer, prompt, completion) for prompt, completion in PAIRS]
    weight_sum = sum(sum(d.loss_fn_inputs["weights"].tolist()) for d in batch)

    for step in range(args.steps):
        fwd_bwd = training_client.forward_backward(batch, "cross_entropy")
        optim = training_client.optim_step(trio.AdamParams(learning_rate=args.lr))
        result = fwd_bwd.result()
        optim.result()
        metrics = result.metrics
        # Tinker code divides its `loss:sum` by weight_sum; pytrio gives that mean as loss_mean.
        tinker_style = metrics["loss_sum"] / weight_sum
        print(
            f"step {step} loss {metrics['loss_mean']:.4f} "
            f"loss_sum/weights {tinker_style:.4f} tokens {metrics['token_count']:.0f}"
        )

    saved = training_client.save_weights_for_sampler("tinker-port-final").result()
    print(f"saved {saved.path}")
    sampling_client = training_client.save_weights_and_get_sampling_client()
    for prompt, completion in PAIRS:
        prompt_ids = tokenizer.encode(prompt, add_special_tokens=True)
        response = sampling_client.sample(
            prompt=trio.ModelInput.from_ints(prompt_ids),
            num_samples=1,
            sampling_params=trio.SamplingParams(
                max_tokens=8, temperature=0.0, stop=[tokenizer.eos_token_id]
            ),
        ).result()
        text = response.sequences[0].text
        print(f"sample {prompt!r} -> {text!r} (trained {completion!r})")


if __name__ == "__main__":
    main()
