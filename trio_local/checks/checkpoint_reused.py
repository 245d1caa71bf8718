"""A checkpoint name saved twice in one run: the second save fails or replaces the first."""

from __future__ import annotations

from collections import Counter

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext
from trio_local.checks.observations import SAVE_STATE, SAVE_WEIGHTS, TrainerEvent


class CheckpointReused(Check):
    name = "checkpoint-name-reused"
    title = "a checkpoint name is saved more than once in a run"
    fix = (
        'put the step in the name (f"step-{step:06d}") so every save is kept; pass '
        "overwrite=True only when replacing is what you want"
    )
    unit = "saves"

    def __init__(self) -> None:
        super().__init__()
        self.names: Counter[tuple[str, str, str]] = Counter()

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type not in (SAVE_STATE, SAVE_WEIGHTS):
            return
        key = (event.run_id, event.type, event.payload.name)
        self.names[key] += 1
        if self.names[key] > 1:
            self.tally.add(
                event.run_id,
                {
                    "run_id": event.run_id,
                    "event": event.type,
                    "name": event.payload.name,
                    "saves": self.names[key],
                    "overwrite": event.payload.overwrite,
                    "outcome": "replaced" if event.result is not None else "failed",
                },
            )
