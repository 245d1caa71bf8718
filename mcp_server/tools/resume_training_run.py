"""resume_training_run: open a new training client from a saved state checkpoint."""

from __future__ import annotations

from pydantic import Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.budget import BudgetLeft
from mcp_server.checkpoints import guarded_checkpoint
from mcp_server.runs import RunState
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import CHECKPOINT, RunConfig, backend, run_config, sdk


class ResumeTrainingRunInput(ToolInput):
    checkpoint: str = CHECKPOINT
    with_optimizer: bool = Field(
        True,
        description="Restore Adam's moments too (continue the same run); false restores only the "
        "weights (start a new phase with a fresh optimizer).",
    )


class ResumeTrainingRunOutput(BackendResult):
    run_id: str = Field(description="The run to continue training; use it like any run_id.")
    resumed_from: str
    resumed_at_step: int | None = Field(
        description="The step the checkpoint was saved at (recorded by this server or an "
        "earlier one on the same data); null when no trio-mcp ledger knows it."
    )
    step: int = Field(
        description="The run's step now: training continues the count from the checkpoint's "
        "step (0 when that is unknown)."
    )
    with_optimizer: bool
    config: RunConfig
    budget_left: BudgetLeft


async def resume_training_run(
    app: AppState, args: ResumeTrainingRunInput, ctx: ToolCall
) -> ResumeTrainingRunOutput:
    guards.require_writable(app.config, "resume_training_run")
    limit, idle = app.config.max_concurrent_runs, app.config.idle_run_timeout_s
    with app.runs.reserve_slot(limit, idle) as slot:
        be = await backend(app)
        # The run that saved the checkpoint, from this session or the backend: the allow-list
        # and the rank caps hold for a checkpoint of any earlier server too.
        origin = await guarded_checkpoint(app, args.checkpoint, need="training")
        if args.with_optimizer:
            opening = be.service.create_training_client_from_state_with_optimizer_async(
                args.checkpoint
            )
        else:
            opening = be.service.create_training_client_from_state_async(args.checkpoint)
        client = await sdk("resuming from the checkpoint", opening)
        lora = client.lora
        # What the backend opened is checked again: the guards hold even if the lookup and the
        # opened run disagree.
        guards.check_rank(app.config, lora.rank)
        saved = app.runs.checkpoints.get(args.checkpoint)
        previous = app.runs.runs.get(saved[0]) or app.runs.ended.get(saved[0]) if saved else None
        step = origin.step or 0
        run = RunState(
            run_id=client.training_run_cuid,
            client=client,
            base_model=origin.base_model,
            rank=lora.rank,
            train_mlp=lora.train_mlp,
            train_attn=lora.train_attn,
            train_unembed=lora.train_unembed,
            seed=lora.seed,
            resumed_from=args.checkpoint,
            resumed_at_step=origin.step,
            step=step,
            losses=list(previous.losses[:step]) if previous else [],
        )
        slot.fill(run)
    return ResumeTrainingRunOutput(
        run_id=run.run_id,
        resumed_from=args.checkpoint,
        resumed_at_step=origin.step,
        step=step,
        with_optimizer=args.with_optimizer,
        config=run_config(run),
        budget_left=app.budget.left(),
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="resume_training_run",
    title="Resume from a checkpoint",
    description=(
        "Use to continue training from a saved 'state' checkpoint (from save_checkpoint or "
        "list_checkpoints, this server's or an earlier one's), with or without the optimizer "
        "state. Returns the new run_id; its step count continues from the checkpoint's step. "
        "Takes one of the max_concurrent_runs slots (end_training_run frees one)."
    ),
    input_model=ResumeTrainingRunInput,
    output_model=ResumeTrainingRunOutput,
    handler=resume_training_run,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
)
