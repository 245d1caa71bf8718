"""A policy-loss step whose advantages are all zero: the update has no learning signal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trio_local.checks.base import Check, Tally
from trio_local.checks.context import CheckContext
from trio_local.checks.observations import (
    FORWARD_BACKWARD,
    OPTIMIZE_STEP,
    POLICY_LOSSES,
    TrainerEvent,
)


@dataclass
class _Step:
    step: int
    loss: str
    data: int = 0
    nonzero: bool = False


class ZeroAdvantages(Check):
    name = "all-advantages-zero"
    title = "every advantage of a policy-loss forward_backward is zero"
    fix = (
        "the step trains nothing: drop groups whose rewards are all equal before building the "
        "batch, and check the advantage computation (reward - group mean)"
    )
    unit = "steps"

    def __init__(self) -> None:
        super().__init__()
        self.open: dict[str, _Step] = {}  # run -> the forward_backward step being gathered

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        run = event.run_id
        current = self.open.get(run)
        if event.type == OPTIMIZE_STEP or (
            event.type == FORWARD_BACKWARD and current is not None and current.step != event.step
        ):
            self._close(run)
        if event.type != FORWARD_BACKWARD or event.loss not in POLICY_LOSSES:
            return
        step = self.open.setdefault(run, _Step(step=event.step, loss=event.loss))
        for datum in event.payload.data:
            step.data += 1
            step.nonzero = step.nonzero or any(a != 0 for a in datum.advantages or [])

    def _close(self, run: str) -> None:
        step = self.open.pop(run, None)
        if step is not None and not step.nonzero:
            self.tally.add(run, _example(run, step))

    def summary(self, ctx: CheckContext) -> Tally:
        pending = Tally()
        for run, step in self.open.items():
            if not step.nonzero:
                pending.add(run, _example(run, step))
        return self.tally.merged(pending)


def _example(run: str, step: _Step) -> dict[str, Any]:
    return {"run_id": run, "step": step.step, "loss": step.loss, "data": step.data}
