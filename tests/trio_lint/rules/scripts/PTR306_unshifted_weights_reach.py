"""Weights built over the whole sequence and then cut or converted the wrong way."""

import numpy as np
import pytrio as trio


def build_a(prompt_ids, answer_ids):
    tokens = prompt_ids + answer_ids
    weights = [0.0] * len(prompt_ids) + [1.0] * len(answer_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[:-1]},  # bug: PTR306
    )


def build_b(prompt_ids, answer_ids):
    tokens = prompt_ids + answer_ids
    targets = tokens[1:]
    mask = [0.0] * len(prompt_ids) + [1.0] * len(answer_ids)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": targets, "weights": mask[: len(targets)]},  # bug: PTR306
    )


def build_c(prompt_ids, answer_ids):
    tokens = prompt_ids + answer_ids
    mask = [0.0] * len(prompt_ids) + [1.0] * len(answer_ids)
    weights = np.asarray(mask, dtype=np.float32)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights},  # bug: PTR306
    )
