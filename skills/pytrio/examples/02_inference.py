"""Sampling with PyTRIO: sample a base model, score text with compute_logprobs, sample async.

Shows `create_sampling_client(base_model=...)`, `SamplingParams` (max_tokens is required on
pytrio 0.2.9; stop strings or token ids), several samples per prompt, reading
`sequences[i].tokens / .text / .logprobs / .stop_reason`, `compute_logprobs` for prompt scoring,
and `sample_async` (one await on 0.2.9) with `asyncio.gather` for many prompts at once.

Run offline:       trio-local run python examples/02_inference.py
Run on PyTRIO:     python examples/02_inference.py   (after `trio login`)

Offline, the stand-in model is untrained, so the text is random tokens; the calls are real.
"""

import argparse
import asyncio

import pytrio as trio

PROMPTS = ["The capital of France is", "Two plus two equals", "The sky is"]


async def sample_all(
    sampler: trio.SamplingClient, tokenizer, params: trio.SamplingParams
) -> list[trio.types.SampleResponse]:
    calls = [
        sampler.sample_async(
            prompt=trio.ModelInput.from_ints(tokenizer.encode(text)),
            num_samples=1,
            sampling_params=params,
        )
        for text in PROMPTS
    ]
    return await asyncio.gather(*calls)  # sample_async returns the response: one await


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--num-samples", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=12)
    args = parser.parse_args()

    service = trio.ServiceClient()
    sampler = service.create_sampling_client(base_model=args.base_model)
    tokenizer = sampler.get_tokenizer()

    prompt_ids = tokenizer.encode(PROMPTS[0])
    params = trio.SamplingParams(max_tokens=args.max_tokens, temperature=0.8, top_p=0.95, seed=0)
    response = sampler.sample(
        prompt=trio.ModelInput.from_ints(prompt_ids),
        num_samples=args.num_samples,
        sampling_params=params,
    ).result()
    print(f"prompt {PROMPTS[0]!r}: {len(response.sequences)} samples")
    for i, sequence in enumerate(response.sequences):
        print(
            f"sample {i} stop={sequence.stop_reason} tokens={len(sequence.tokens)} "
            f"logprobs={len(sequence.logprobs)} text={sequence.text!r}"
        )

    # Greedy decoding is deterministic: two calls give the same tokens.
    greedy = trio.SamplingParams(max_tokens=args.max_tokens, temperature=0.0)
    first = sampler.sample(prompt=trio.ModelInput.from_ints(prompt_ids), sampling_params=greedy)
    second = sampler.sample(prompt=trio.ModelInput.from_ints(prompt_ids), sampling_params=greedy)
    same = first.result().sequences[0].tokens == second.result().sequences[0].tokens
    print(f"greedy repeatable {same}")

    # Score a text: one logprob per prompt token (None where the model has no prediction).
    logprobs = sampler.compute_logprobs(trio.ModelInput.from_ints(prompt_ids)).result()
    scored = [lp for lp in logprobs if lp is not None]
    print(f"logprobs {len(logprobs)} for {len(prompt_ids)} tokens, sum {sum(scored):.3f}")

    responses = asyncio.run(sample_all(sampler, tokenizer, params))
    for text, result in zip(PROMPTS, responses, strict=True):
        print(f"async {text!r} -> {result.sequences[0].text!r}")


if __name__ == "__main__":
    main()
