"""Sampling with the two-await habit from the training methods (right on 0.1, wrong on 0.2)."""

import asyncio

import pytrio as trio


async def best_of_n(sampler: trio.SamplingClient, prompt, n=8):
    params = trio.SamplingParams(max_tokens=128, temperature=0.9)
    response = await (await sampler.sample_async(prompt=prompt, num_samples=n, sampling_params=params))  # bug: PTR104
    return max(response.sequences, key=lambda seq: sum(seq.logprobs))


async def score(sampler: trio.SamplingClient, prompt):
    future = await sampler.compute_logprobs_async(prompt)
    logprobs = future.result()  # bug: PTR104
    return sum(lp for lp in logprobs if lp is not None)


async def main():
    service = trio.ServiceClient()
    sampler = await service.create_sampling_client_async(base_model="Qwen/Qwen3-4B-Instruct-2507")
    tokenizer = sampler.get_tokenizer()
    prompt = trio.ModelInput.from_ints(tokenizer.encode("Name a prime number."))
    best = await best_of_n(sampler, prompt)
    print(best.text, await score(sampler, prompt))


asyncio.run(main())
