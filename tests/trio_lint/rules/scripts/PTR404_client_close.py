"""Evaluation script that tidies up its clients like an httpx.Client."""

import pytrio as trio


def evaluate(prompts):
    service = trio.ServiceClient()
    sampler = service.create_sampling_client(base_model="Qwen/Qwen3-4B-Instruct-2507")
    tokenizer = sampler.get_tokenizer()
    params = trio.SamplingParams(max_tokens=32)
    answers = []
    for text in prompts:
        prompt = trio.ModelInput.from_ints(tokenizer.encode(text))
        answers.append(sampler.sample(prompt, sampling_params=params).result().sequences[0].text)
    sampler.close()  # bug: PTR404
    service.close()  # bug: PTR404
    return answers
