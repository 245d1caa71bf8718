"""Targets equal to the inputs at most positions: the model learns to copy, not to predict."""

from __future__ import annotations

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext, DatumView, excerpt
from trio_local.checks.observations import FORWARD, FORWARD_BACKWARD, TrainerEvent

MIN_POSITIONS = 3


class UnshiftedTargets(Check):
    name = "unshifted-targets"
    rule = "unshifted-targets"
    title = "target_tokens equal the input tokens (not shifted by one)"
    fix = (
        "position i must predict the NEXT token: model_input=tokens[:-1], "
        "target_tokens=tokens[1:] (and weights[1:]), or pass auto_shift=True"
    )

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type not in (FORWARD, FORWARD_BACKWARD) or event.payload.auto_shift:
            return
        for index, datum in enumerate(event.payload.data):
            view = DatumView(datum, auto_shift=False)
            if not view.aligned:
                continue
            scored = [i for i, target in enumerate(view.targets) if target != -100]
            same = sum(view.targets[i] == view.tokens[i] for i in scored)
            if len(scored) >= MIN_POSITIONS and same * 2 > len(scored):
                self.tally.add(
                    event.run_id,
                    {
                        "run_id": event.run_id,
                        "step": event.step,
                        "datum": index,
                        "equal_positions": f"{same} of {len(scored)}",
                        "model_input": excerpt(view.tokens),
                        "target_tokens": excerpt(view.targets),
                    },
                )
