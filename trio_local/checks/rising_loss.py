"""A cross-entropy loss that rises sharply over several optimizer steps: the learning rate is
too high (or the data changed under the run)."""

from __future__ import annotations

from dataclasses import dataclass, field

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext
from trio_local.checks.observations import FORWARD_BACKWARD, OPTIMIZE_STEP, TrainerEvent

WINDOW = 3  # the latest optimizer steps judged together
FACTOR = 2.0  # their mean against the best loss before them
MIN_RISE = 0.5  # nats per token, so noise on a near-zero loss is not a "rise"
# A too-high learning rate makes the loss oscillate upwards rather than climb every step, so
# the window is judged by its mean, with at least two of its steps well above the best (one
# spike alone is a hard batch).


@dataclass
class _Run:
    loss_sum: float = 0.0
    tokens: int = 0
    usable: bool = True  # False once a step's data is not a plain cross-entropy
    history: list[tuple[float, float]] = field(default_factory=list)  # (loss per token, lr)
    flagged: bool = False


class RisingLoss(Check):
    name = "loss-rising"
    title = "training loss rises sharply over several steps (learning rate too high?)"
    fix = (
        "lower AdamParams(learning_rate=...) (LoRA fine-tunes usually use 1e-5..5e-4), or set "
        "grad_clip_norm; check that each step's data is what you meant"
    )
    unit = "runs"

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, _Run] = {}

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        run = self.runs.setdefault(event.run_id, _Run())
        if event.type == FORWARD_BACKWARD:
            metrics = (event.result or {}).get("metrics")
            # Custom losses arrive as cross_entropy with signed weights (gradients): not a loss.
            signed = any(w < 0 for datum in event.payload.data for w in (datum.weights or []))
            if event.loss != "cross_entropy" or signed or not metrics:
                run.usable = False
                return
            run.loss_sum += float(metrics["loss_sum"])
            run.tokens += int(metrics["token_count"])
        elif event.type == OPTIMIZE_STEP and event.result is not None:
            if run.usable and run.tokens:
                lr = event.payload.adam_params.learning_rate
                run.history.append((run.loss_sum / run.tokens, lr))
                self._judge(event.run_id, run)
            run.loss_sum, run.tokens, run.usable = 0.0, 0, True

    def _judge(self, run_id: str, run: _Run) -> None:
        losses = [loss for loss, _ in run.history]
        if run.flagged or len(losses) <= WINDOW:
            return
        best = min(losses[:-WINDOW])
        window = losses[-WINDOW:]
        mean = sum(window) / WINDOW
        high = sum(loss >= 1.5 * best for loss in window)
        if mean >= FACTOR * best and mean - best >= MIN_RISE and high >= 2:
            run.flagged = True
            self.tally.add(
                run_id,
                {
                    "run_id": run_id,
                    "optimizer_step": len(losses),
                    "best_loss": round(best, 4),
                    "latest_losses": [round(loss, 4) for loss in window],
                    "learning_rate": run.history[-1][1],
                },
            )
