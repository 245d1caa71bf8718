"""Helpers shared by trio-local's tests: SFT data built with the real tokenizer."""

from __future__ import annotations

import pytrio as trio

MODEL = "Qwen/Qwen3-4B-Instruct-2507"
PAIRS = [
    ("What is the capital of France?", "Paris is the capital."),
    ("Say hi", "Hello there!"),
    ("2+2?", "Four."),
    ("Color of the sky?", "Blue, usually."),
]


def prompt_tokens(tokenizer, question: str) -> list[int]:
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
    )
    return tokenizer.encode(text)


def sft_datum(tokenizer, question: str, answer: str) -> trio.Datum:
    """Prompt tokens weighted 0, completion tokens (and <|im_end|>) weighted 1, shifted by one."""
    prompt = prompt_tokens(tokenizer, question)
    completion = tokenizer.encode(answer + "<|im_end|>")
    tokens = prompt + completion
    weights = [0.0] * (len(prompt) - 1) + [1.0] * len(completion)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights},
    )


def sft_batch(tokenizer) -> list[trio.Datum]:
    return [sft_datum(tokenizer, q, a) for q, a in PAIRS]


def train(training_client, data, steps: int, lr: float = 5e-3) -> list[float]:
    """Pipelined SFT steps (both calls submitted before waiting); per-token losses."""
    losses = []
    for _ in range(steps):
        fb = training_client.forward_backward(data, "cross_entropy")
        opt = training_client.optim_step(trio.AdamParams(learning_rate=lr))
        losses.append(fb.result().metrics["loss_mean"])
        opt.result()
    return losses
