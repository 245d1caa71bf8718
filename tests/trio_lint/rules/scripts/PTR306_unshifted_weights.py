"""Shifted targets, but the loss mask is left at the full sequence length."""

import pytrio as trio


def build(tokenizer, prompt, completion):
    prompt_ids = tokenizer.encode(prompt)
    completion_ids = tokenizer.encode(completion, add_special_tokens=False)
    tokens = prompt_ids + completion_ids
    loss_mask = [0.0] * len(prompt_ids) + [1.0] * len(completion_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": loss_mask},  # bug: PTR306
    )
