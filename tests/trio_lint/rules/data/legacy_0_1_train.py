"""A 0.1.13-era training script, as the original skill text taught it (migration guide input)."""

import pytrio as trio

client = trio.ServiceClient()
train = client.create_lora_training_client(
    base_model="Qwen/Qwen3-4B-Instruct-2507",
    rank=32,
    trainable_token_indices=[151643, 151644],
    lora_path="trio://runs/old/checkpoints/step-100",
)
tokenizer = train.get_tokenizer()
ids = tokenizer.encode("Q: 2+2?\nA: 4")
datum = trio.Datum(
    model_input=trio.ModelInput.from_ints(ids[:-1]),
    loss_fn_inputs={"target_tokens": ids[1:]},
)
for step in range(3):
    fb = train.forward_backward([datum], loss_fn="cross_entropy").result()
    train.optim_step(trio.AdamParams(learning_rate=1e-4)).result()
    print(step, fb.metrics.get("loss:sum", 0.0))

sampler = train.save_weights_and_get_sampling_client("final")
params = trio.SamplingParams(max_tokens=64, temperature=0.7, ignore_eos=False)
out = sampler.sample(prompt=trio.ModelInput.from_ints(ids), num_samples=1, sampling_params=params)
print(out.result().sequences[0].text)

rest = client.create_rest_client()
for weight in rest.list_weights()["weights"]:
    print(rest.get_archive_url(weight["id"]))
