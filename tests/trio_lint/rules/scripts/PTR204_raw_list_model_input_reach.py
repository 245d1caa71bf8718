"""A chat agent that encodes its prompts in helpers and in __init__, then samples with the raw
token lists."""

import pytrio as trio


def encode_prompt(tokenizer, question: str) -> list[int]:
    return tokenizer.encode(f"Question: {question}\nAnswer:")


class Agent:
    def __init__(self, sampler: trio.SamplingClient, tokenizer, system: str):
        self.sampler = sampler
        self.tokenizer = tokenizer
        self.prefix = tokenizer.encode(system)

    def greet(self, params):
        return self.sampler.sample(self.prefix, 1, params).result()  # bug: PTR204

    def answer(self, question: str, params):
        prompt = encode_prompt(self.tokenizer, question)
        return self.sampler.sample(
            prompt=prompt,  # bug: PTR204
            num_samples=1,
            sampling_params=params,
        )
