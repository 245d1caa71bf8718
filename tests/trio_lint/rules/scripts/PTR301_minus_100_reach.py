"""SFT datums whose -100 mask arrives from elsewhere: a module constant, a helper that fills the
prompt part by slice assignment, a comprehension, and a config default."""

from dataclasses import dataclass

import numpy as np
import pytrio as trio

IGNORE_INDEX = -100


@dataclass
class DataConfig:
    pad_id: int = -100
    max_len: int = 512


def prompt_weights(n_prompt: int, total: int) -> list[float]:
    weights = [1.0] * total
    weights[:n_prompt] = [IGNORE_INDEX] * n_prompt
    return weights


def build(tokenizer, prompt: str, answer: str) -> trio.Datum:
    prompt_ids = tokenizer.encode(prompt)
    ids = prompt_ids + tokenizer.encode(answer, add_special_tokens=False)
    weights = prompt_weights(len(prompt_ids), len(ids))
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(ids[:-1]),
        loss_fn_inputs={"target_tokens": ids[1:], "weights": weights[1:]},  # bug: PTR301
    )


def build_padded(tokenizer, text: str, cfg: DataConfig) -> trio.Datum:
    ids = tokenizer.encode(text)
    padded = [ids[i] if i < len(ids) else cfg.pad_id for i in range(cfg.max_len)]
    tokens = np.asarray(padded)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1].tolist()),  # bug: PTR301
        loss_fn_inputs={"target_tokens": tokens[1:].tolist()},
    )
