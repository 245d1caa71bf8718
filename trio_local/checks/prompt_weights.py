"""Cross-entropy weights on the system/user turns or the chat template's own tokens."""

from __future__ import annotations

from collections import Counter

from trio_local.checks.base import Check
from trio_local.checks.chat import is_prompt
from trio_local.checks.context import CheckContext, DatumView, excerpt
from trio_local.checks.observations import FORWARD_BACKWARD, TrainerEvent


class PromptWeights(Check):
    name = "prompt-tokens-trained"
    title = "non-zero weights on system/user turns or chat-template tokens"
    fix = (
        "weight only the assistant's reply (and its end-of-turn token): 0.0 for every token of "
        "the prompt, i.e. apply_chat_template(..., add_generation_prompt=True), then 1.0 for "
        "the completion"
    )

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type != FORWARD_BACKWARD or event.loss != "cross_entropy":
            return
        chat = ctx.chat(event.run_id)
        if chat is None:
            return
        for index, datum in enumerate(event.payload.data):
            view = DatumView(datum, event.payload.auto_shift)
            if not view.aligned:
                continue
            sequence, offset = view.sequence()
            labels = chat.roles(sequence)
            if labels is None:
                continue
            hits = [
                i
                for i in view.trained()
                if i + offset < len(labels) and is_prompt(labels[i + offset])
            ]
            if hits:
                parts = Counter(labels[i + offset].split(":", 1)[0] for i in hits)
                self.tally.add(
                    event.run_id,
                    {
                        "run_id": event.run_id,
                        "step": event.step,
                        "datum": index,
                        "trained_prompt_positions": len(hits),
                        "by_part": dict(parts),
                        "first_position": hits[0],
                        "weights": excerpt(list(view.weights or []), hits[0]),
                    },
                )
