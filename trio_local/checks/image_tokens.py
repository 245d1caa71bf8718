"""An ImageChunk whose `expected_tokens` disagrees with what the model's processor makes of it.

pytrio 0.2.9 uses `expected_tokens` only for local length arithmetic; the service recomputes an
image's positions from the image. In training data a wrong estimate sizes the targets wrongly
(the event fails); in a sampling prompt it is silently ignored, and the script's own length
arithmetic (`ModelInput.length`, budgets against max_seq_len) is off by the difference.
"""

from __future__ import annotations

from typing import Any

from pytrio_facts import vision
from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext
from trio_local.checks.observations import FORWARD, FORWARD_BACKWARD, SampleCall, TrainerEvent
from trio_local.engine.image_size import ImageHeaderError, image_size


def disagreements(chunks: Any, model_id: str) -> list[dict[str, Any]]:
    """One entry per image chunk whose expected_tokens differs from the processor's count."""
    family = vision.family_of(model_id)
    if family is None or family.processor is None:
        return []  # the engine refuses the image itself
    found = []
    for index, chunk in enumerate(chunks):
        if chunk.type != "image" or chunk.expected_tokens is None:
            continue
        try:
            width, height = image_size(bytes(chunk.data), chunk.format)
            tokens = family.processor.tokens(height, width)
        except (ImageHeaderError, ValueError):
            continue  # not an image the engine can size: it fails the request itself
        if tokens != chunk.expected_tokens:
            found.append(
                {
                    "chunk": index,
                    "size": f"{width}x{height}",
                    "expected_tokens": chunk.expected_tokens,
                    "processor_tokens": tokens,
                    "model": model_id,
                }
            )
    return found


class ImageTokens(Check):
    name = "image-expected-tokens"
    title = "an ImageChunk's expected_tokens disagrees with the image (the service recomputes it)"
    fix = (
        "compute expected_tokens from the image's width and height with the model's image "
        "processor settings (patch size, merge size, pixel bounds; the skill's vision page); "
        "training targets and weights need one entry per image position"
    )
    unit = "images"

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        if event.type not in (FORWARD, FORWARD_BACKWARD):
            return
        model = ctx.models.get(event.run_id, "")
        for index, datum in enumerate(event.payload.data):
            for found in disagreements(datum.model_input.chunks, model):
                example = {"run_id": event.run_id, "step": event.step, "datum": index, **found}
                self.tally.add(event.run_id, example)

    def on_sample(self, call: SampleCall, ctx: CheckContext) -> None:
        for found in disagreements(call.request.prompt.chunks, call.model_id):
            self.tally.add(call.sampling_run, {"sampling_run": call.sampling_run, **found})
