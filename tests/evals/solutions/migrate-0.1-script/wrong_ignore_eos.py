"""old_train.py ported to pytrio 0.2.9: same data and hyper-parameters."""

import pytrio as trio


def main() -> None:
    client = trio.ServiceClient()
    trainer = client.create_lora_training_client(base_model="Qwen/Qwen3-4B-Instruct-2507", rank=8)
    tok = trainer.get_tokenizer()
    prompt = tok.encode("Q: Two plus two?\nA:", add_special_tokens=True)
    answer = [*tok.encode(" Four", add_special_tokens=False), tok.eos_token_id]
    tokens = prompt + answer
    weights = [0.0] * len(prompt) + [1.0] * len(answer)
    datum = trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]},
    )
    adam = trio.AdamParams(learning_rate=2e-3)
    losses = []
    for step in range(4):
        fb_future = trainer.forward_backward([datum], "cross_entropy")
        optim_future = trainer.optim_step(adam)
        metrics = fb_future.result().metrics  # 0.2: loss_sum, loss_mean, token_count
        optim_future.result()
        losses.append(metrics["loss_sum"] / metrics["token_count"])
        print(f"step {step} loss {losses[-1]:.4f}")
    print(f"LOSS first={losses[0]:.4f} last={losses[-1]:.4f}")
    sampler = trainer.save_weights_and_get_sampling_client()  # 0.2: no name
    params = trio.SamplingParams(ignore_eos=False, stop=[tok.eos_token_id])
    response = sampler.sample(
        prompt=trio.ModelInput.from_ints(prompt), num_samples=1, sampling_params=params
    ).result()
    print(f"SAMPLE {response.sequences[0].text}")


if __name__ == "__main__":
    main()
