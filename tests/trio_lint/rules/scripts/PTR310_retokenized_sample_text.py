"""One on-policy step that rebuilds the sampled completion from its text."""

import pytrio as trio

service = trio.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-8B", rank=16)
tokenizer = training.get_tokenizer()


def rollout(prompt: str, params: trio.SamplingParams, advantage: float) -> list[trio.Datum]:
    sampler = training.save_weights_and_get_sampling_client()
    prompt_ids = tokenizer.encode(prompt)
    out = sampler.sample(trio.ModelInput.from_ints(prompt_ids), sampling_params=params).result()
    batch = []
    for seq in out.sequences:
        completion = tokenizer.encode(seq.text, add_special_tokens=False)  # bug: PTR310
        tokens = prompt_ids + completion
        n = len(tokens) - 1
        batch.append(
            trio.Datum(
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={
                    "target_tokens": tokens[1:],
                    "logprobs": [0.0] * (len(prompt_ids) - 1) + list(seq.logprobs),
                    "advantages": [0.0] * (len(prompt_ids) - 1)
                    + [advantage] * (n + 1 - len(prompt_ids)),
                },
            )
        )
        print(len(tokenizer.encode(seq.text)))  # a length for logging: not training data
    return batch
