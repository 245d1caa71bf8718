"""Evaluation sampling with a generation-config dict."""

import pytrio as trio

GENERATION = {"max_tokens": 128, "temperature": 0.0}


def evaluate(sampler: trio.SamplingClient, tokenizer, questions):
    answers = []
    for question in questions:
        prompt = trio.ModelInput.from_ints(tokenizer.encode(question))
        out = sampler.sample(
            prompt=prompt,
            sampling_params=trio.SamplingParams(max_tokens=128, temperature=0.0),  # bug: PTR205
        ).result()
        answers.append(out.sequences[0].text)
    return answers
