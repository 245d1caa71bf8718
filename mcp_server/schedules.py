"""Learning-rate schedules for one train_sft call: constant, linear or cosine decay, each with an
optional linear warm-up. The learning rate is an `AdamParams` field of every `optim_step` in
pytrio 0.2.9, so a schedule is one number per step, computed here before any step is sent."""

from __future__ import annotations

import math
from typing import Literal

Schedule = Literal["constant", "linear", "cosine"]


def learning_rates(
    base: float, steps: int, schedule: Schedule, warmup_steps: int = 0
) -> list[float]:
    """The learning rate of each of `steps` optimizer steps.

    Warm-up rises linearly to `base` over `warmup_steps` steps (step k of the warm-up uses
    base * (k + 1) / (warmup_steps + 1), so no step has rate 0); then `linear` and `cosine`
    decay towards 0 over the steps left, with every rate still positive, and `constant` stays.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    if not 0 <= warmup_steps < steps:
        raise ValueError("warmup_steps must be at least 0 and below steps")
    rates = []
    decay_steps = steps - warmup_steps
    for step in range(steps):
        if step < warmup_steps:
            rates.append(base * (step + 1) / (warmup_steps + 1))
            continue
        progress = (step - warmup_steps) / decay_steps  # 0 at the first step after warm-up, < 1
        if schedule == "linear":
            rates.append(base * (1 - progress))
        elif schedule == "cosine":
            rates.append(base * 0.5 * (1 + math.cos(math.pi * progress)))
        else:
            rates.append(base)
    return rates
