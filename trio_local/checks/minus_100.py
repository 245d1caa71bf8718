"""The HuggingFace ignore label -100 in input tokens or in `weights`."""

from __future__ import annotations

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext, DatumView, excerpt
from trio_local.checks.observations import FORWARD, FORWARD_BACKWARD, TrainerEvent

IGNORE = -100


class Minus100(Check):
    name = "minus-100"
    rule = "minus-100-mask"
    title = "-100 in the input tokens or in weights (a HuggingFace label, not a PyTRIO mask)"
    fix = (
        "keep real token ids in model_input and mask with weights 0.0 (prompt) / 1.0 "
        "(completion); a weight of -100 multiplies the loss by -100 and makes training diverge"
    )

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type not in (FORWARD, FORWARD_BACKWARD):
            return
        for index, datum in enumerate(event.payload.data):
            view = DatumView(datum, event.payload.auto_shift)
            for field, values in (("model_input", view.tokens), ("weights", view.weights)):
                if values is None or IGNORE not in values:
                    continue
                position = list(values).index(IGNORE)
                self.tally.add(
                    event.run_id,
                    {
                        "run_id": event.run_id,
                        "step": event.step,
                        "datum": index,
                        "field": field,
                        "position": position,
                        field: excerpt(list(values), position),
                    },
                )
                break
