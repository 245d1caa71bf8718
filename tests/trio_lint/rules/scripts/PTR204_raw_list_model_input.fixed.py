"""Build SFT datums from tokenizer output, the way one builds input_ids for a HF model."""

import pytrio as trio


def build(tokenizer, prompt, answer):
    ids = tokenizer.encode(prompt + answer)
    n_prompt = len(tokenizer.encode(prompt))
    weights = [0.0] * n_prompt + [1.0] * (len(ids) - n_prompt)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(ids[:-1]),  # bug: PTR204
        loss_fn_inputs={"target_tokens": ids[1:], "weights": weights[1:]},
    )


def generate(sampler: trio.SamplingClient, tokenizer, text):
    prompt = tokenizer(text)["input_ids"]
    params = trio.SamplingParams(max_tokens=64)
    return sampler.sample(prompt=trio.ModelInput.from_ints(prompt), sampling_params=params).result()  # bug: PTR204
