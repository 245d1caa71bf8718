"""NaN or infinity anywhere: in the data, the loss config, Adam's or the sampler's parameters,
or in what the service computed from them (a loss or gradient norm that blew up)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from trio_local.checks.base import Check
from trio_local.checks.context import CheckContext
from trio_local.checks.observations import (
    FORWARD,
    FORWARD_BACKWARD,
    OPTIMIZE_STEP,
    SampleCall,
    TrainerEvent,
)


class NonFinite(Check):
    name = "non-finite"
    title = "NaN or infinity in the request or in the loss it produced"
    fix = (
        "check for NaN/inf before sending (math.isfinite); a NaN learning rate or loss config "
        "value poisons every weight, and a loss that becomes inf/NaN usually means the "
        "learning rate is too high"
    )
    unit = "requests"

    def on_event(self, event: TrainerEvent, ctx: CheckContext) -> None:
        found = None
        if event.type in (FORWARD, FORWARD_BACKWARD):
            found = _first(_forward_values(event))
        elif event.type == OPTIMIZE_STEP:
            adam = event.payload.adam_params.model_dump()
            metrics = (event.result or {}).get("metrics", {})
            found = _first(
                [
                    *(("adam_params." + k, v) for k, v in adam.items()),
                    *(("result.metrics." + k, v) for k, v in metrics.items()),
                ]
            )
        if found is not None:
            self.tally.add(
                event.run_id,
                {
                    "run_id": event.run_id,
                    "event": event.type,
                    "step": event.step,
                    "field": found[0],
                    "value": repr(found[1]),
                },
            )

    def on_sample(self, call: SampleCall, ctx: CheckContext) -> None:
        found = _first(_walk("sampling_params", call.sampling_params))
        if found is not None:
            self.tally.add(
                call.sampling_run,
                {"sampling_run": call.sampling_run, "field": found[0], "value": repr(found[1])},
            )


def _forward_values(event: TrainerEvent) -> Iterator[tuple[str, Any]]:
    for index, datum in enumerate(event.payload.data):
        for name in ("weights", "logprobs", "advantages"):
            values = getattr(datum, name) or []
            if math.isfinite(sum(values)):  # one C-level pass; scan only when it is not
                continue
            for position, value in enumerate(values):
                yield f"data[{index}].{name}[{position}]", value
    yield from _walk("loss.config", event.payload.loss.config)
    for key, value in ((event.result or {}).get("metrics") or {}).items():
        yield f"result.metrics.{key}", value


def _walk(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(f"{path}.{key}", item)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(f"{path}[{index}]", item)
    else:
        yield path, value


def _first(values) -> tuple[str, Any] | None:
    for path, value in values:
        if isinstance(value, float) and not math.isfinite(value):
            return path, value
    return None
