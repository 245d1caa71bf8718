"""State every check may read, kept by the checker from the observations in order.

Also the per-datum view (`DatumView`) the data checks share: input tokens, targets and the
per-token lists with the position alignment worked out once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from trio_local.checks.chat import ChatTokens
from trio_local.checks.observations import (
    FORWARD_BACKWARD,
    INIT_RUN,
    OPTIMIZE_STEP,
    POLICY_LOSSES,
    SAVE_STATE,
    SAVE_WEIGHTS,
    SampleCall,
    TrainerEvent,
)

logger = logging.getLogger("trio_local.checks")
IMAGE = -1  # the placeholder for an image position in a DatumView's tokens


@dataclass(frozen=True)
class SavedWeights:
    run_id: str
    optim_steps: int  # the run's optimizer steps when the checkpoint was saved


@dataclass
class CheckContext:
    chat_tokens_for: Callable[[str], ChatTokens | None] | None = None
    models: dict[str, str] = field(default_factory=dict)  # training run -> model id
    optim_steps: dict[str, int] = field(default_factory=dict)
    learning_rates: dict[str, float] = field(default_factory=dict)  # the latest, per run
    policy_runs: set[str] = field(default_factory=set)  # runs trained with a policy loss
    checkpoints: dict[str, SavedWeights] = field(default_factory=dict)  # uri -> origin
    _chat: dict[str, ChatTokens | None] = field(default_factory=dict)

    def update(self, observation: TrainerEvent | SampleCall) -> None:
        """Bookkeeping before the checks see `observation`."""
        if not isinstance(observation, TrainerEvent):
            return
        event, run = observation, observation.run_id
        if event.type == INIT_RUN:
            self.models[run] = event.payload.base_model
        elif event.type == FORWARD_BACKWARD and event.loss in POLICY_LOSSES:
            self.policy_runs.add(run)
        elif event.type == OPTIMIZE_STEP and event.result is not None:
            self.optim_steps[run] = self.optim_steps.get(run, 0) + 1
            self.learning_rates[run] = event.payload.adam_params.learning_rate
        elif event.type in (SAVE_STATE, SAVE_WEIGHTS) and event.result is not None:
            uri = event.result.get("checkpoint", {}).get("uri")
            if uri:
                self.checkpoints[uri] = SavedWeights(run, self.optim_steps.get(run, 0))

    def chat(self, run_id: str) -> ChatTokens | None:
        """The chat-format tokens of the run's model (None without a chat template)."""
        return self.chat_of_model(self.models.get(run_id, ""))

    def chat_of_model(self, model: str) -> ChatTokens | None:
        if model not in self._chat:
            chat = None
            if self.chat_tokens_for is not None:
                try:
                    chat = self.chat_tokens_for(model)
                except Exception:  # a check must never break the run: no chat checks then
                    logger.warning("trio-local check: no chat tokens for %s", model, exc_info=True)
            self._chat[model] = chat
        return self._chat[model]


class DatumView:
    """One wire datum, read for checks. Image positions hold IMAGE in `tokens`."""

    def __init__(self, datum: Any, auto_shift: bool) -> None:
        tokens: list[int] = []
        for chunk in datum.model_input.chunks:
            if chunk.type == "encoded_text":
                tokens.extend(chunk.tokens)
            else:
                tokens.extend([IMAGE] * (chunk.expected_tokens or 0))
        self.tokens = tokens
        self.targets: list[int] = list(datum.target_ids)
        self.weights: list[float] | None = datum.weights
        self.logprobs: list[float] | None = datum.logprobs
        self.advantages: list[float] | None = datum.advantages
        self.auto_shift = auto_shift

    @property
    def aligned(self) -> bool:
        """Every per-token list is as long as the input (the engine refuses the datum if not,
        but the wire does not require it, and a check must not trip over it)."""
        n = len(self.tokens)
        lists = (self.targets, self.weights, self.logprobs, self.advantages)
        return all(values is None or len(values) == n for values in lists)

    @cached_property
    def shifted(self) -> bool:
        """Whether targets[i] is the token after tokens[i] (the manual shift).

        Judged on the positions the loss uses: masked positions may hold any placeholder
        target (pytrio-cookbook's GRPO puts 0 there).
        """
        if self.auto_shift or not self.aligned:
            return False
        active = [i for i in range(len(self.targets) - 1) if self._active(i)]
        if not active:
            active = [i for i in range(len(self.targets) - 1) if self.targets[i] != -100]
        same = sum(self.targets[i] == self.tokens[i + 1] for i in active)
        return bool(active) and same * 2 >= len(active)

    def _active(self, i: int) -> bool:
        if self.targets[i] == -100:
            return False
        if self.advantages is not None:
            return self.advantages[i] != 0 or bool(self.logprobs and self.logprobs[i] != 0)
        return self.weights is None or self.weights[i] != 0

    def sequence(self) -> tuple[list[int], int]:
        """The whole token sequence and the offset of target i in it (i + offset)."""
        if self.shifted and self.targets[-1] != -100:
            return [*self.tokens, self.targets[-1]], 1
        if self.shifted:
            return self.tokens, 1
        return self.tokens, 0

    def trained(self) -> list[int]:
        """Target positions a cross-entropy loss trains: weight != 0 and target != -100."""
        weights = self.weights if self.weights is not None else [1.0] * len(self.targets)
        start = 1 if self.auto_shift else 0  # auto_shift drops the first label
        return [
            i
            for i in range(start, min(len(self.targets), len(weights)))
            if weights[i] != 0 and self.targets[i] != -100
        ]


def excerpt(values: list[Any], around: int = 0, width: int = 12) -> str:
    """A short rendering of a long list, centred near `around`."""
    lo = max(0, min(around - width // 2, len(values) - width))
    part = [round(v, 4) if isinstance(v, float) else v for v in values[lo : lo + width]]
    text = ", ".join(str(v) for v in part)
    return f"[{'..., ' if lo else ''}{text}{', ...' if lo + width < len(values) else ''}]"
