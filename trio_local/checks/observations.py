"""What a check sees: one trainer event or one sample request, with its outcome.

Observations hold references to the request models the service already validated (never
copies), so handing one to the checker costs nothing on the request path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FORWARD = "trainer.forward"
FORWARD_BACKWARD = "trainer.forward_backward"
OPTIMIZE_STEP = "trainer.optimize_step"
SAVE_STATE = "trainer.save_state"
SAVE_WEIGHTS = "trainer.save_weights"
INIT_RUN = "trainer.init_run"
POLICY_LOSSES = frozenset({"importance_sampling", "ppo", "cispo", "dro"})


@dataclass(frozen=True)
class TrainerEvent:
    run_id: str
    type: str  # an EventType value
    step: int  # forward_backward groups completed before it (all chunks of one call share it)
    index: int
    payload: Any  # the SDK's validated payload model for `type`
    result: dict[str, Any] | None  # the event's `result`; None when it failed

    @property
    def loss(self) -> str:
        return str(self.payload.loss.type).strip().lower()


@dataclass(frozen=True)
class SampleCall:
    sampling_run: str
    source_checkpoint_uri: str | None  # None or "": the base model
    request: Any  # pytrio.protocol.actor.sampling_run.sample.SampleRequest
    result: dict[str, Any] | None
    model_id: str = ""  # the sampling run's base model ("" when the caller did not say)

    @property
    def is_scoring(self) -> bool:
        """compute_logprobs (and prompt scoring): reads the prompt, generates nothing useful."""
        return self.sampling_params.get("max_tokens") == 1 and bool(
            self.request.return_prompt_logprobs
        )

    @property
    def sampling_params(self) -> dict[str, Any]:
        params = self.request.sampling_params  # a plain dict in pytrio 0.2.9's SampleRequest
        return params if isinstance(params, dict) else params.model_dump()


Observation = TrainerEvent | SampleCall
