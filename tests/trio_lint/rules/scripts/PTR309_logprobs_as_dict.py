"""Score completions with prompt logprobs, written for 0.1's dict result."""

import pytrio as trio


def score(sampler: trio.SamplingClient, prompt_ids: list[int]) -> float:
    result = sampler.compute_logprobs(trio.ModelInput.from_ints(prompt_ids)).result()
    values = result["logprobs"]  # bug: PTR309
    return sum(v for v in values if v is not None)


async def score_async(sampler: trio.SamplingClient, prompt_ids: list[int]) -> float:
    logprobs = await sampler.compute_logprobs_async(trio.ModelInput.from_ints(prompt_ids))
    present = [v for v in logprobs if v is not None]  # a list on 0.2: fine
    return sum(present) / max(len(present), 1) + len(logprobs.keys())  # bug: PTR309
