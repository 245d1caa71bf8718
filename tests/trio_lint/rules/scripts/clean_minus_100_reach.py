"""The same datums written correctly: -100 stays with torch's own loss, PyTRIO gets 0/1 weights
built the same ways (constant, helper with slice assignment, comprehension, config default)."""

from dataclasses import dataclass

import numpy as np
import pytrio as trio
import torch

IGNORE_INDEX = -100
PROMPT_WEIGHT = 0.0


@dataclass
class DataConfig:
    pad_id: int = 0
    max_len: int = 512


def prompt_weights(n_prompt: int, total: int) -> list[float]:
    weights = [1.0] * total
    weights[:n_prompt] = [PROMPT_WEIGHT] * n_prompt
    return weights


def local_loss(logits, labels):
    return torch.nn.functional.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX)


def build(tokenizer, prompt: str, answer: str) -> trio.Datum:
    prompt_ids = tokenizer.encode(prompt)
    ids = prompt_ids + tokenizer.encode(answer, add_special_tokens=False)
    weights = prompt_weights(len(prompt_ids), len(ids))
    labels = [IGNORE_INDEX] * len(prompt_ids) + ids[len(prompt_ids) :]
    print(local_loss(torch.zeros(len(ids), 8), torch.tensor(labels)))
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(ids[:-1]),
        loss_fn_inputs={"target_tokens": ids[1:], "weights": weights[1:]},
    )


def build_padded(tokenizer, text: str, cfg: DataConfig) -> trio.Datum:
    ids = tokenizer.encode(text)
    padded = [ids[i] if i < len(ids) else cfg.pad_id for i in range(cfg.max_len)]
    weights = [1.0 if i < len(ids) else 0.0 for i in range(cfg.max_len)]
    tokens = np.asarray(padded)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1].tolist()),
        loss_fn_inputs={"target_tokens": tokens[1:].tolist(), "weights": weights[1:]},
    )
