"""Sample requests: checked, sized, run on the scheduler in the sampling run's lane."""

from __future__ import annotations

import asyncio
from typing import Any

from pytrio.protocol.actor.sampling_run.sample import SampleRequest

from trio_local.checks import Checker
from trio_local.engine.engine import Engine
from trio_local.engine.images import image_positions
from trio_local.errors import ApiError, EngineError
from trio_local.protocol import bounds
from trio_local.scheduler import Scheduler
from trio_local.storage.rows import SamplingRunRow


def _prompt_positions(body: SampleRequest, model_id: str) -> int:
    """The prompt's length in positions, an image's counted from its header as the engine
    counts it (its expected_tokens is only the client's estimate); an image that cannot be
    counted weighs its estimate here, and the engine refuses it by name."""
    total = 0
    for chunk in body.prompt.chunks:
        if chunk.type == "encoded_text":
            total += len(chunk.tokens)
        else:
            counted = image_positions(chunk, model_id)
            total += counted if counted is not None else chunk.expected_tokens or 1
    return total


class Sampler:
    def __init__(self, scheduler: Scheduler, engine: Engine, checks: Checker | None) -> None:
        self._scheduler = scheduler
        self._engine = engine
        self._checks = checks

    async def sample(self, row: SamplingRunRow, body: SampleRequest) -> dict[str, Any]:
        """The sampling response (generation or compute_logprobs) for `row`'s model."""
        run_id, uri, model_id = row.cuid, row.source_checkpoint_uri, row.model_id
        try:
            bounds.check_sample(body)
        except ApiError:
            if self._checks is not None:  # --check reports what a script sent, refused or not
                self._checks.refused_sample(run_id, uri, body)
            raise
        bounds.check_sample_size(body, _prompt_positions(body, model_id))
        engine = self._engine

        def work() -> dict[str, Any]:
            return engine.sample(model_id, uri, body)

        scheduled = work
        if self._checks is not None:
            scheduled = self._checks.sample_work(run_id, uri, body, work, model_id=model_id)
        future = self._scheduler.submit(run_id, "sample", scheduled)
        try:
            result: dict[str, Any] = await asyncio.wrap_future(future)
        except EngineError as error:
            raise ApiError(400, error.code, error.message) from None
        result["sampling_run"] = run_id
        return result
