"""Helpers shared by trio-local's tests: SFT data built with the real tokenizer, a
`trio-local serve` process stopped by a signal, a service with any ServeConfig option and its
stats."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Callable
from typing import Any

import pytrio as trio

from trio_local.background import LocalService, serve_in_background

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


def serve_until_signalled(
    command: list[str], deliver: Callable[[subprocess.Popen], None], timeout: float
) -> tuple[int, str]:
    """Start `trio-local serve` (`command`), wait for its first line, `deliver` a signal to it
    and return its exit status and stderr. A service still running after `timeout` is killed
    (not `with Popen`, whose exit would wait for it without a timeout) and the wait raises."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert "trio-local serving PyTRIO at http://127.0.0.1:" in process.stdout.readline()
        deliver(process)
        _, stderr = process.communicate(timeout=timeout)
    finally:
        process.kill()
        process.wait(30)
    return process.returncode, stderr


# A service with any ServeConfig option (cycle_ms=, max_training_runs=, heartbeat_timeout_s=...),
# this process's SDK pointed at it.
local_service = serve_in_background


def read_stats(service: LocalService) -> dict[str, Any]:
    with urllib.request.urlopen(service.env["TRIO_LOCAL_STATS_URL"], timeout=10) as response:
        return json.load(response)
