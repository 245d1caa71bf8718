"""train_step: one forward_backward + optim_step on token-level datums (RL and custom data).

The escape hatch for what train_sft does not build: policy losses (importance_sampling, ppo,
cispo, dro) with per-token logprobs and advantages, or hand-made cross-entropy data. Every datum
is validated before anything is sent (see `mcp_server.datums.check_datum`).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel, Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.budget import BudgetLeft
from mcp_server.datums import check_datum, to_sdk_datum
from mcp_server.errors import BackendFailure, InvalidInput, TrainingStopped
from mcp_server.runs import RunState
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, SETTLE_S, backend, per_token_loss, sdk, submit
from pytrio_facts.sdk import LossName

MAX_SEQUENCE = 65_536


class TokenDatum(BaseModel, extra="forbid", allow_inf_nan=False):
    model_input: list[int] = Field(
        min_length=1,
        max_length=MAX_SEQUENCE,
        description="Input token ids: tokens[:-1] of the sequence.",
    )
    loss_fn_inputs: dict[str, list[float]] = Field(
        max_length=4,
        description="One value per model_input position: target_tokens (= tokens[1:]) and, by "
        "loss, weights (cross_entropy) or logprobs and advantages (policy losses).",
    )


class AdamConfig(BaseModel, extra="forbid", allow_inf_nan=False):
    learning_rate: float = Field(1e-4, gt=0, le=1)
    beta1: float = Field(0.9, ge=0, lt=1)
    beta2: float = Field(0.95, ge=0, lt=1)
    eps: float = Field(1e-12, gt=0, le=1)
    weight_decay: float = Field(0.0, ge=0, le=1)
    grad_clip_norm: float = Field(0.0, ge=0, description="0 disables clipping.")


class TrainStepInput(ToolInput):
    run_id: str = RUN_ID
    datums: list[TokenDatum] = Field(
        min_length=1, max_length=10_000, description="The batch: one datum per sequence."
    )
    loss_fn: LossName = Field("cross_entropy", description="The built-in loss to apply.")
    loss_fn_config: dict[str, float] | None = Field(
        None, max_length=16, description="Loss settings, e.g. clip thresholds for ppo."
    )
    adam: AdamConfig = Field(default_factory=AdamConfig, description="Optimizer settings.")


class TrainStepOutput(BackendResult):
    run_id: str
    step: int = Field(description="Optimizer steps the run has taken in this session.")
    loss: float = Field(description="Loss per weighted target token of this step.")
    metrics: dict[str, float] = Field(description="The SDK's metrics (loss_sum, loss_mean, ...).")
    tokens: int
    elapsed_s: float
    budget_left: BudgetLeft


async def train_step(app: AppState, args: TrainStepInput, ctx: ToolCall) -> TrainStepOutput:
    config = app.config
    guards.require_writable(config, "train_step")
    guards.check_examples(config, len(args.datums))
    guards.check_learning_rate(config, args.adam.learning_rate)
    guards.check_loss_config(args.loss_fn, args.loss_fn_config)
    counted = 0
    for index, datum in enumerate(args.datums):
        guards.check_example_length(config, index, len(datum.model_input) + 1)
        counted += check_datum(index, datum.model_input, datum.loss_fn_inputs, args.loss_fn)
    if counted == 0:
        raise InvalidInput(
            "no target position carries weight (all weights are 0 or every target is -100), so "
            "the step would change nothing; weight the completion tokens with 1"
        )
    tokens = sum(len(d.model_input) for d in args.datums)
    guards.check_tokens_per_call(config, tokens)
    run = app.runs.get(args.run_id)
    be = await backend(app)
    batch = [to_sdk_datum(d.model_input, d.loss_fn_inputs) for d in args.datums]
    update = await apply_update(
        app,
        run,
        Update(batch, args.loss_fn, args.loss_fn_config, args.adam, tokens, counted),
    )
    if not math.isfinite(update.loss):
        raise TrainingStopped(
            f"train_step produced a non-finite loss ({update.loss}); the step was applied and the "
            "weights may be damaged. Check logprobs/advantages, lower the learning rate, or "
            "resume from a checkpoint."
        )
    return TrainStepOutput(
        run_id=run.run_id,
        step=run.step,
        loss=update.loss,
        metrics=update.metrics,
        tokens=tokens,
        elapsed_s=update.elapsed_s,
        budget_left=app.budget.left(),
        **backend_fields(be),
    )


@dataclass(frozen=True)
class Update:
    """One optimizer update to send: SDK datums, the loss, Adam's settings, what it costs."""

    batch: list[Any]
    loss_fn: str
    loss_fn_config: dict[str, float] | None
    adam: AdamConfig
    tokens: int  # budgeted tokens (every model_input position)
    weighted: int  # target positions that carry weight (the per-token loss's denominator)


@dataclass(frozen=True)
class Applied:
    metrics: dict[str, float]
    loss: float
    elapsed_s: float


async def apply_update(app: AppState, run: RunState, update: Update) -> Applied:
    """forward_backward + optim_step as one budgeted step (train_step, train_on_rewards).

    The budget holds the step before anything is sent. A cancel after submission still charges
    the step (it runs on the backend anyway) and, if it settles within SETTLE_S, records it in
    the run, so the run's step, the budget and the backend agree.
    """
    import pytrio as trio

    adam = trio.AdamParams(**update.adam.model_dump())
    with app.budget.reserve(1, update.tokens) as hold:
        started = time.perf_counter()
        forward = await submit(
            "submitting forward_backward",
            run.client.forward_backward_async(update.batch, update.loss_fn, update.loss_fn_config),
        )
        optim = await submit("submitting optim_step", run.client.optim_step_async(adam))
        try:
            output = await sdk("forward_backward", forward)
            await sdk("optim_step", optim)
        except anyio.get_cancelled_exc_class():
            # The step runs on the backend anyway: count it before the cancel goes on.
            hold.spend(1, update.tokens)  # charged even if it never answers in time
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(SETTLE_S),
                contextlib.suppress(BackendFailure),
            ):
                output = await sdk("forward_backward", forward)
                await sdk("optim_step", optim)
                _record(run, update, output)
            raise
        hold.spend(1, update.tokens)
    metrics, loss = _record(run, update, output)
    return Applied(metrics, loss, round(time.perf_counter() - started, 3))


def _record(run: RunState, update: Update, output: Any) -> tuple[dict[str, float], float]:
    """The step in the run's state; its metrics and its loss."""
    metrics = {k: float(v) for k, v in output.metrics.items()}
    loss = (
        per_token_loss(metrics, update.weighted)
        if update.loss_fn == "cross_entropy"
        else metrics.get("loss_mean", float("nan"))
    )
    run.step += 1
    run.losses.append(loss)
    run.tokens_trained += update.tokens
    return metrics, loss


SPEC = ToolSpec(
    name="train_step",
    title="One training step on token data",
    description=(
        "One forward_backward + optim_step on token-level datums, for RL losses "
        "(importance_sampling, ppo, cispo, dro) and custom data. Each datum is "
        "{model_input: tokens[:-1], loss_fn_inputs: {target_tokens: tokens[1:], ...}} with one "
        "value per position; everything is validated (lengths, shift, finite values, the "
        "loss's required inputs) before it is sent. Prefer train_sft for plain SFT and "
        "sample + train_on_rewards for RL from rewards; use this for losses they do not build."
    ),
    input_model=TrainStepInput,
    output_model=TrainStepOutput,
    handler=train_step,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
    run_field="run_id",
)
