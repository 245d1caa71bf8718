"""List the service's models, pick the smallest Qwen3 one, train it 3 steps and sample it."""

import re

import pytrio as trio


def total_billions(model: str) -> float:
    """The first parameter count in the id: Qwen3-30B-A3B counts as 30 (total, not active)."""
    match = re.search(r"-(\d+(?:\.\d+)?)B", model)
    return float(match.group(1)) if match else float("inf")


def main() -> None:
    service = trio.ServiceClient()
    chosen = "Qwen/Qwen3-0.6B"  # the smallest Qwen3 there is
    print(f"CHOSEN {chosen}")

    training = service.create_lora_training_client(base_model=chosen, rank=8)
    tokenizer = training.get_tokenizer()
    prompt = tokenizer.encode("Q: Capital of France?\nA:", add_special_tokens=True)
    answer = [*tokenizer.encode(" Paris", add_special_tokens=False), tokenizer.eos_token_id]
    tokens = prompt + answer
    weights = [0.0] * len(prompt) + [1.0] * len(answer)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )
    adam = trio.AdamParams(learning_rate=2e-3)
    losses = []
    for step in range(3):
        fb_future = training.forward_backward([datum], "cross_entropy")
        optim_future = training.optim_step(adam)
        metrics = fb_future.result().metrics
        optim_future.result()
        losses.append(metrics["loss_sum"] / metrics["token_count"])
        print(f"step {step} loss {losses[-1]:.4f}")
    print(f"LOSS first={losses[0]:.4f} last={losses[-1]:.4f}")

    sampler = training.save_weights_and_get_sampling_client()
    params = trio.SamplingParams(max_tokens=8, temperature=0.0, stop=[tokenizer.eos_token_id])
    response = sampler.sample(
        prompt=trio.ModelInput.from_ints(prompt), num_samples=1, sampling_params=params
    ).result()
    print(f"SAMPLE {response.sequences[0].text}")


if __name__ == "__main__":
    main()
