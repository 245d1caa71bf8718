"""Best-of-n selection written with vLLM's RequestOutput in mind."""

import pytrio as trio


def best_of_n(sampler: trio.SamplingClient, prompt, n=4):
    params = trio.SamplingParams(max_tokens=96, temperature=0.8)
    response = sampler.sample(prompt=prompt, num_samples=n, sampling_params=params).result()
    candidates = response.sequences  # bug: PTR211
    best = max(candidates, key=lambda c: sum(c.logprobs) / max(len(c.tokens), 1))
    print(len(response.sequences), "samples")  # bug: PTR211
    return best.text
