"""A completion trained without its end-of-turn / EOS token: the model never learns to stop."""

from __future__ import annotations

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext, DatumView, excerpt
from trio_local.checks.observations import FORWARD_BACKWARD, TrainerEvent


class EosUntrained(Check):
    name = "eos-not-trained"
    title = "completion trained without its end-of-turn/EOS token"
    fix = (
        "append the end token to each completion (tokenizer.eos_token_id, <|im_end|> for "
        "ChatML) and give it weight 1.0, so the model learns where to stop"
    )

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type != FORWARD_BACKWARD or event.loss != "cross_entropy":
            return
        chat = ctx.chat(event.run_id)
        if chat is None:
            return
        first_label = 1 if event.payload.auto_shift else 0
        for index, datum in enumerate(event.payload.data):
            view = DatumView(datum, event.payload.auto_shift)
            if not view.aligned:
                continue
            trained = view.trained()
            if not trained:
                continue
            sequence, offset = view.sequence()
            labels = chat.roles(sequence)
            # Only prompt/completion data: a chat, or a masked prompt before the trained part.
            # Plain text trained everywhere (pre-training style chunks) has no end to learn.
            if labels is None and trained[0] == first_label:
                continue
            problem = None
            if not any(view.targets[i] in chat.stop_ids for i in trained):
                problem = "no end-of-turn/EOS token among the trained targets"
            elif labels is not None:
                problem = _untrained_turn_end(view, labels, offset, set(trained))
            if problem:
                self.tally.add(
                    event.run_id,
                    {
                        "run_id": event.run_id,
                        "step": event.step,
                        "datum": index,
                        "problem": problem,
                        "last_trained_targets": excerpt(
                            [view.targets[i] for i in trained], len(trained)
                        ),
                    },
                )


def _untrained_turn_end(
    view: DatumView, labels: list[str], offset: int, trained: set[int]
) -> str | None:
    """An assistant turn whose content is trained while its end token has weight 0."""
    turn_trained = False
    for i in range(len(view.targets)):
        if i + offset >= len(labels):
            break
        label = labels[i + offset]
        if label == "assistant":
            turn_trained = turn_trained or i in trained
        elif label == "assistant:end":
            if turn_trained and i not in trained:
                return f"an assistant turn is trained but its end token (position {i}) is not"
            turn_trained = False
    return None
