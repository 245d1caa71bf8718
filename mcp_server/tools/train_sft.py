"""train_sft: supervised fine-tuning on prompt/completion pairs or chats, built into datums here.

The server builds every datum (prompt weight 0, completion weight 1, EOS, one-token shift) and
pipelines the SDK calls: step k's forward_backward and optim_step are both submitted before any
result is awaited, and step k+1 is queued before step k resolves, so the backend is never idle
waiting for this process.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Discriminator, Field, Tag, model_validator

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.budget import BudgetLeft, Reservation
from mcp_server.datums import TokenExample, build_sft_example, split_chat
from mcp_server.errors import BackendFailure, InvalidInput, ServerStopping, TrainingStopped
from mcp_server.guards import CAP_KEY
from mcp_server.runs import RunState
from mcp_server.schedules import Schedule, learning_rates
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import (
    RUN_ID,
    SETTLE_S,
    backend,
    per_token_loss,
    run_tokenizer,
    sdk,
    submit,
)

log = logging.getLogger("trio_mcp.train_sft")
STOPPING = "the server is shutting down"


class PromptCompletion(BaseModel, extra="forbid", allow_inf_nan=False):
    prompt: str = Field(max_length=100_000, description="Text the model reads (weight 0).")
    completion: str = Field(
        min_length=1, max_length=100_000, description="Text the model learns to write (weight 1)."
    )


class ChatMessage(BaseModel, extra="forbid", allow_inf_nan=False):
    role: Literal["system", "user", "assistant"]
    content: str = Field(max_length=100_000)


class ChatExample(BaseModel, extra="forbid", allow_inf_nan=False):
    messages: list[ChatMessage] = Field(
        min_length=2,
        max_length=64,
        description="A chat rendered with the model's chat template; the last message must be "
        "the assistant's, and only it is trained (weight 1).",
    )


def _example_kind(value: Any) -> str:
    has_messages = isinstance(value, dict | ChatExample) and (
        "messages" in value if isinstance(value, dict) else True
    )
    return "chat" if has_messages else "pair"


# Tagged by shape, so a bad example is reported against the form it was meant to have.
Example = Annotated[
    Annotated[PromptCompletion, Tag("pair")] | Annotated[ChatExample, Tag("chat")],
    Discriminator(_example_kind),
]


class TrainSftInput(ToolInput):
    run_id: str = RUN_ID
    examples: list[Example] = Field(
        min_length=1,
        max_length=10_000,
        description="Training examples: {prompt, completion} (raw text, sample with `prompt`) "
        "or {messages} (chat template, sample with `messages`).",
    )
    steps: int | None = Field(
        None, ge=1, le=10_000, description="Optimizer steps to take; give steps or epochs."
    )
    epochs: int | None = Field(
        None, ge=1, le=1000, description="Passes over the examples (default 1 when steps is unset)."
    )
    learning_rate: float = Field(1e-4, gt=0, le=1, description="Adam learning rate.")
    batch_size: int | None = Field(
        None, ge=1, le=1024, description="Examples per step (default: all of them, up to 8)."
    )
    held_out: list[Example] | None = Field(
        None,
        min_length=1,
        max_length=1024,
        description="Validation examples, never trained on: their loss per answer token is "
        "measured (a forward pass, no budget step) every eval_every steps and at the end.",
        json_schema_extra={CAP_KEY: {"maxItems": "max_examples_per_call"}},
    )
    eval_every: int | None = Field(
        None, ge=1, le=10_000, description="Steps between validations (default: steps // 10)."
    )
    stop_when_validation_rises: bool = Field(
        True,
        description="With held_out: stop early (not an error) once the validation loss is "
        "above the previous validation's.",
    )
    lr_schedule: Schedule = Field(
        "constant",
        description="How learning_rate changes over this call's steps: constant, or a linear "
        "or cosine decay towards 0.",
    )
    warmup_steps: int = Field(
        0, ge=0, le=10_000, description="Steps of linear warm-up to learning_rate first."
    )

    @model_validator(mode="after")
    def _one_length(self) -> TrainSftInput:
        if self.steps is not None and self.epochs is not None:
            raise ValueError("give either steps or epochs, not both")
        return self


class ValidationPoint(BaseModel):
    step: int = Field(description="The run's step the validation loss was measured after.")
    loss: float = Field(description="Loss per answer token of the held-out examples.")


class TrainSftOutput(BackendResult):
    run_id: str
    steps: int = Field(description="Optimizer steps taken by this call.")
    step: int = Field(description="Optimizer steps the run has taken in this session.")
    losses: list[float] = Field(description="Per-token loss (completion tokens) of each step.")
    tokens: int = Field(description="Tokens processed (prompt and completion) by this call.")
    trained_tokens: int = Field(description="Completion tokens that carried weight.")
    validation: list[ValidationPoint] | None = Field(
        None, description="With held_out: the validation loss after each evaluated step."
    )
    stopped_early: str | None = Field(
        None, description="Why the call stopped before its last step (validation rose)."
    )
    learning_rates: list[float] | None = Field(
        None, description="The learning rate of each step, with a schedule or warm-up."
    )
    elapsed_s: float
    tokens_per_s: float
    budget_left: BudgetLeft


def _build_examples(
    app: AppState, tokenizer: Any, given: list[Any], field: str = "examples"
) -> list[TokenExample]:
    try:
        return _build(app, tokenizer, given)
    except InvalidInput as exc:
        # The builders name `examples[i]`; held-out examples are reported under their own field.
        raise InvalidInput(str(exc).replace("examples[", f"{field}[")) from None


def _build(app: AppState, tokenizer: Any, given: list[Any]) -> list[TokenExample]:
    built = []
    for index, example in enumerate(given):
        if isinstance(example, ChatExample):
            messages = [m.model_dump() for m in example.messages]
            prompt, completion = split_chat(tokenizer, messages, index)
            token_example = build_sft_example(tokenizer, prompt, completion, index, chat=True)
        else:
            token_example = build_sft_example(
                tokenizer, example.prompt, example.completion, index, chat=False
            )
        guards.check_example_length(app.config, index, len(token_example.input_tokens) + 1)
        built.append(token_example)
    return built


def plan_batches(count: int, batch_size: int, steps: int) -> list[list[int]]:
    """Example indices of each step: walk the examples in order, wrapping at the end (epochs)."""
    return [[(step * batch_size + j) % count for j in range(batch_size)] for step in range(steps)]


def diverged(losses: list[float], factor: float) -> str | None:
    last, step = losses[-1], len(losses)
    if not math.isfinite(last):
        return f"the loss of step {step} is {last}"
    if step >= 3 and last > factor * losses[0]:
        return (
            f"the loss of step {step}, {last:.4g}, is above {factor:g}x the first step's "
            f"{losses[0]:.4g} (divergence_factor)"
        )
    return None


async def train_sft(app: AppState, args: TrainSftInput, ctx: ToolCall) -> TrainSftOutput:
    import pytrio as trio

    config = app.config
    guards.require_writable(config, "train_sft")
    guards.check_examples(config, len(args.examples) + len(args.held_out or []))
    guards.check_learning_rate(config, args.learning_rate)
    run = app.runs.get(args.run_id)
    be = await backend(app)
    tokenizer = await run_tokenizer(run)
    examples = await anyio.to_thread.run_sync(_build_examples, app, tokenizer, args.examples)
    held_out = None
    if args.held_out:
        held_out = await anyio.to_thread.run_sync(
            _build_examples, app, tokenizer, args.held_out, "held_out"
        )

    batch_size = args.batch_size or min(len(examples), 8)
    if batch_size > len(examples):
        raise InvalidInput(
            f"batch_size {batch_size} is larger than the {len(examples)} examples given; "
            "lower it or add examples"
        )
    steps = args.steps or math.ceil(len(examples) / batch_size) * (args.epochs or 1)
    guards.check_steps_per_call(config, steps)
    if args.warmup_steps >= steps:
        raise InvalidInput(
            f"warmup_steps {args.warmup_steps} must be below the {steps} steps of this call"
        )
    plan = plan_batches(len(examples), batch_size, steps)
    step_tokens = [sum(len(examples[i].input_tokens) for i in batch) for batch in plan]
    guards.check_tokens_per_call(config, sum(step_tokens))
    hold = app.budget.reserve(steps, sum(step_tokens))

    datums = [example.to_datum() for example in examples]
    weights = [sum(examples[i].trained_tokens for i in batch) for batch in plan]
    rates = learning_rates(args.learning_rate, steps, args.lr_schedule, args.warmup_steps)
    adams = [trio.AdamParams(learning_rate=rate) for rate in rates]
    validation = None
    if held_out is not None:
        every = args.eval_every or max(1, steps // 10)
        validation = Validation(
            datums=[example.to_datum() for example in held_out],
            weight=sum(example.trained_tokens for example in held_out),
            at={i for i in range(steps) if (i + 1) % every == 0} | {steps - 1},
            stop_on_rise=args.stop_when_validation_rises,
        )
    scheduled = args.lr_schedule != "constant" or args.warmup_steps > 0
    work = Work(plan, datums, adams, step_tokens, weights, validation, rates if scheduled else None)
    with hold:
        return await _pipelined_loop(app, run, ctx, be, work, hold=hold)


async def _settle(pending: deque[tuple[int, Any, Any]], count: Any) -> list[int]:
    """Count the submitted steps as they finish; return those still unfinished at the deadline."""
    with anyio.CancelScope(shield=True) as scope:
        scope.deadline = anyio.current_time() + SETTLE_S
        while pending:
            index, forward, optim = pending[0]
            try:
                output = await sdk("forward_backward", forward)
                await sdk("optim_step", optim)
            except BackendFailure:
                pending.popleft()  # the backend refused or failed it: not a step taken
                continue
            pending.popleft()
            count(index, output)
    if pending:
        log.warning(
            "%d submitted train_sft steps did not finish within %ss: charged to the budget, "
            "not recorded as steps of the run",
            len(pending),
            SETTLE_S,
        )
    return [index for index, _, _ in pending]


@dataclass(frozen=True)
class Work:
    """What train_sft sends: per step, the example indices, tokens and weighted tokens."""

    plan: list[list[int]]
    datums: list[Any]
    adams: list[Any]  # one AdamParams per step: the schedule's learning rate
    step_tokens: list[int]
    weights: list[int]
    validation: Validation | None = None
    rates: list[float] | None = None  # reported when a schedule or warm-up shapes them


@dataclass(frozen=True)
class Validation:
    """Held-out datums, scored by a forward pass after the steps in `at` (0-based)."""

    datums: list[Any]
    weight: int
    at: set[int]
    stop_on_rise: bool


async def _pipelined_loop(
    app: AppState, run: RunState, ctx: ToolCall, be: Any, work: Work, *, hold: Reservation
) -> TrainSftOutput:
    plan, datums, adams = work.plan, work.datums, work.adams
    step_tokens, weights, validation = work.step_tokens, work.weights, work.validation
    client = run.client
    total = len(plan)
    # Submitted steps, oldest first; a step leaves only once its result is counted.
    pending: deque[tuple[int, Any, Any]] = deque()
    # Validation forward passes, by the step they follow (queued right after its optim_step,
    # so they see exactly that step's weights; a forward pass changes nothing).
    checks: dict[int, Any] = {}

    async def send(index: int) -> None:
        batch = [datums[i] for i in plan[index]]
        forward = await submit("submitting forward_backward", client.forward_backward_async(batch))
        optim = await submit("submitting optim_step", client.optim_step_async(adams[index]))
        pending.append((index, forward, optim))
        if validation is not None and index in validation.at:
            checks[index] = await submit(
                "submitting the validation forward pass",
                client.forward_async(validation.datums, "cross_entropy"),
            )

    losses: list[float] = []
    validated: list[ValidationPoint] = []
    stopped_early: str | None = None

    async def validate(index: int) -> str | None:
        """The validation loss after step `index`; why to stop, if it rose."""
        assert validation is not None
        output = await sdk(f"validation after step {index + 1}", checks.pop(index))
        point = ValidationPoint(
            step=run.step, loss=per_token_loss(output.metrics, validation.weight)
        )
        validated.append(point)
        rising = len(validated) >= 2 and point.loss > validated[-2].loss
        if validation is not None and validation.stop_on_rise and rising:
            return (
                f"the validation loss rose from {validated[-2].loss:.4g} (step "
                f"{validated[-2].step}) to {point.loss:.4g} (step {point.step})"
            )
        return None

    def count(index: int, output: Any) -> float:
        """One step the backend took: the run's state and the session budget both record it."""
        loss = per_token_loss(output.metrics, weights[index])
        losses.append(loss)
        run.losses.append(loss)
        run.step += 1
        run.tokens_trained += step_tokens[index]
        hold.spend(1, step_tokens[index])
        return loss

    started = time.perf_counter()
    stop_reason: str | None = None
    try:
        await send(0)
        for index in range(total):
            if index + 1 < total and stop_reason is None and stopped_early is None:
                await send(index + 1)  # queued before this step resolves
            _, forward, optim = pending[0]
            output = await sdk(f"forward_backward of step {index + 1}", forward)
            await sdk(f"optim_step of step {index + 1}", optim)
            pending.popleft()
            loss = count(index, output)
            await ctx.report_progress(
                index + 1, total, message=f"step {index + 1}/{total}: loss {loss:.4f}"
            )
            if index in checks and stopped_early is None:
                stopped_early = await validate(index)
            if stop_reason is None:
                stop_reason = diverged(losses, app.config.divergence_factor)
            if app.stopping and stop_reason is None:
                stop_reason = STOPPING
            if (stop_reason is not None or stopped_early is not None) and not pending:
                break
    finally:
        # A submitted step runs on the backend whether or not this call waits for it, also when
        # the call fails or is cancelled: wait (shielded from the cancel, for a bounded time) and
        # count each one, so the run's step and the budget agree with the backend.
        for index in await _settle(pending, count):
            # Unknown whether it ran: the budget holds it, since a cancel must never be a way
            # past the session's limits.
            hold.spend(1, step_tokens[index])
    if stop_reason is STOPPING:
        raise ServerStopping(
            f"train_sft stopped after {len(losses)} of {total} steps: the server is shutting "
            f"down. The run took {run.step} steps; those of this call are applied on the backend. "
            "Its training state is kept only if you saved it (save_checkpoint) before."
        )
    if stop_reason is not None:
        raise TrainingStopped(
            f"train_sft stopped after {len(losses)} of {total} steps: {stop_reason}. "
            f"Losses: {[round(v, 4) for v in losses]}. The run's weights may be damaged: resume "
            "from a checkpoint (resume_training_run) or start a new run with a lower learning_rate."
        )
    elapsed = time.perf_counter() - started
    tokens = sum(step_tokens[: len(losses)])
    if not losses:
        raise BackendFailure("train_sft finished without a single step result")
    return TrainSftOutput(
        run_id=run.run_id,
        steps=len(losses),
        step=run.step,
        losses=losses,
        tokens=tokens,
        trained_tokens=sum(weights[: len(losses)]),
        validation=validated if validation is not None else None,
        stopped_early=stopped_early,
        learning_rates=work.rates[: len(losses)] if work.rates is not None else None,
        elapsed_s=round(elapsed, 3),
        tokens_per_s=round(tokens / elapsed, 1) if elapsed > 0 else 0.0,
        budget_left=app.budget.left(),
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="train_sft",
    title="Fine-tune on examples (SFT)",
    description=(
        "Use it to teach a run examples (facts, a format, a style; also the warm start before "
        "RL): supervised fine-tuning on {prompt, completion} pairs or {messages} chats. The server "
        "tokenizes and builds every datum correctly (prompt weight 0, completion weight 1, EOS, "
        "one-token shift), pipelines the steps, reports progress per step, and returns the "
        "per-token loss of each step, tokens, elapsed time and the session budget left. Stops "
        "with an error on NaN or divergence. held_out examples get a validation loss every "
        "eval_every steps (and an early stop when it rises); lr_schedule and warmup_steps shape "
        "the learning rate. Check the result with evaluate."
    ),
    input_model=TrainSftInput,
    output_model=TrainSftOutput,
    handler=train_sft,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
    run_field="run_id",
)
