"""SFT datums built the DataCollatorForLanguageModeling way: -100 labels on the prompt (an ignore
label in targets on pytrio 0.2.4+), and -100 where it is a bug: input tokens and weights."""

import pytrio as trio

IGNORE_INDEX = -100


def build(tokenizer, prompt, answer):
    prompt_ids = tokenizer.encode(prompt)
    answer_ids = tokenizer.encode(answer, add_special_tokens=False)
    input_ids = prompt_ids + answer_ids
    labels = [-100] * len(prompt_ids) + answer_ids
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(input_ids[:-1]),
        loss_fn_inputs={"target_tokens": labels[1:]},  # an ignore label on pytrio 0.2.4+
    )


def build_padded(tokenizer, prompt, answer, width=64):
    ids = tokenizer.encode(prompt + answer)
    padded = ids + [-100] * (width - len(ids))
    mask = [-100 if i < len(tokenizer.encode(prompt)) else 1.0 for i in range(width - 1)]
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(padded[:-1]),  # bug: PTR301
        loss_fn_inputs={"target_tokens": ids[1:], "weights": mask},  # bug: PTR301
    )
