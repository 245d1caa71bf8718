"""resume_training_run: open a new training client from a saved state checkpoint."""

from __future__ import annotations

from pydantic import Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.backend import Backend
from mcp_server.budget import BudgetLeft
from mcp_server.errors import InvalidInput
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
    with_optimizer: bool
    config: RunConfig
    budget_left: BudgetLeft


async def _checkpoint_model(app: AppState, be: Backend, checkpoint: str) -> tuple[str, int | None]:
    """Base model and LoRA rank of the run that saved `checkpoint`, before anything is opened.

    The allow-list and max_rank must hold for a run resumed from a checkpoint saved outside this
    session too, so the backend is asked which run holds it (the run is the path's first segment,
    `trio://<run>/...`, and the checkpoint must be listed under that run).
    """
    saved = app.runs.checkpoints.get(checkpoint)
    if saved is not None:
        owner = app.runs.runs[saved[0]]
        return owner.base_model, owner.rank
    run_id = checkpoint.split("://", 1)[-1].split("/", 1)[0]
    listed = await sdk(
        "looking up the checkpoint's training run", be.rest.list_checkpoints_async(run_id)
    )
    if checkpoint not in {c.path for c in listed.checkpoints}:
        raise InvalidInput(
            f"checkpoint {checkpoint!r} is not listed under its training run {run_id!r}; pass a "
            "'state' checkpoint path exactly as save_checkpoint or list_checkpoints returned it"
        )
    run = await sdk("reading the checkpoint's training run", be.rest.get_training_run_async(run_id))
    return run.base_model, run.lora_rank


async def resume_training_run(
    app: AppState, args: ResumeTrainingRunInput, ctx: ToolCall
) -> ResumeTrainingRunOutput:
    guards.require_writable(app.config, "resume_training_run")
    with app.runs.reserve_slot(app.config.max_concurrent_runs) as slot:
        be = await backend(app)
        base_model, rank = await _checkpoint_model(app, be, args.checkpoint)
        guards.check_model(app.config, base_model, [])
        if rank is not None:
            guards.check_rank(app.config, rank)
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
        previous = app.runs.runs.get(saved[0]) if saved else None
        run = RunState(
            run_id=client.training_run_cuid,
            client=client,
            base_model=base_model,
            rank=lora.rank,
            train_mlp=lora.train_mlp,
            train_attn=lora.train_attn,
            train_unembed=lora.train_unembed,
            seed=lora.seed,
            resumed_from=args.checkpoint,
            step=saved[1].step if saved else 0,
            losses=list(previous.losses[: saved[1].step]) if previous and saved else [],
        )
        slot.fill(run)
    return ResumeTrainingRunOutput(
        run_id=run.run_id,
        resumed_from=args.checkpoint,
        with_optimizer=args.with_optimizer,
        config=run_config(run),
        budget_left=app.budget.left(),
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="resume_training_run",
    title="Resume from a checkpoint",
    description=(
        "Open a training run from a 'state' checkpoint path (from save_checkpoint or "
        "list_checkpoints), with or without the optimizer state. Returns the run_id to continue."
    ),
    input_model=ResumeTrainingRunInput,
    output_model=ResumeTrainingRunOutput,
    handler=resume_training_run,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
)
