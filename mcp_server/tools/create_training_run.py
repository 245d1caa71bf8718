"""create_training_run: open a LoRA training run on a base model."""

from __future__ import annotations

from pydantic import Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.backend import call_sdk
from mcp_server.budget import BudgetLeft
from mcp_server.runs import RunState
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import ID_PATTERN, RunConfig, backend, run_config, sdk
from pytrio_facts import DEFAULT_BASE_MODEL, LIMITS


class CreateTrainingRunInput(ToolInput):
    base_model: str = Field(
        DEFAULT_BASE_MODEL,
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="A base model id from list_models.",
    )
    rank: int = Field(
        16,
        ge=LIMITS.lora_rank_min,
        le=LIMITS.lora_rank_max,
        description="LoRA rank: higher learns more and costs more (the server may cap it further).",
    )
    train_mlp: bool = Field(True, description="Add LoRA to the MLP layers.")
    train_attn: bool = Field(True, description="Add LoRA to the attention layers.")
    train_unembed: bool = Field(True, description="Add LoRA to the output (unembedding) layer.")
    seed: int | None = Field(
        None, ge=0, le=2**31 - 1, description="Seed of the LoRA initialisation (reproducible runs)."
    )


class CreateTrainingRunOutput(BackendResult):
    run_id: str = Field(description="Pass this to train_sft, train_step, sample, save_checkpoint.")
    config: RunConfig
    budget_left: BudgetLeft


async def create_training_run(
    app: AppState, args: CreateTrainingRunInput, ctx: ToolCall
) -> CreateTrainingRunOutput:
    guards.all_of(
        lambda: guards.require_writable(app.config, "create_training_run"),
        lambda: guards.check_rank(app.config, args.rank),
        lambda: guards.check_model(app.config, args.base_model, []),
    )
    limit, idle = app.config.max_concurrent_runs, app.config.idle_run_timeout_s
    with app.runs.reserve_slot(limit, idle) as slot:
        be = await backend(app)
        offered = list(await call_sdk("listing models", be.service.get_supported_models))
        guards.check_model(app.config, args.base_model, offered)
        client = await sdk(
            "creating the training run",
            be.service.create_lora_training_client_async(
                base_model=args.base_model,
                rank=args.rank,
                seed=args.seed,
                train_mlp=args.train_mlp,
                train_attn=args.train_attn,
                train_unembed=args.train_unembed,
            ),
        )
        run = RunState(
            run_id=client.training_run_cuid,
            client=client,
            base_model=args.base_model,
            rank=args.rank,
            train_mlp=args.train_mlp,
            train_attn=args.train_attn,
            train_unembed=args.train_unembed,
            seed=args.seed,
        )
        slot.fill(run)
    return CreateTrainingRunOutput(
        run_id=run.run_id,
        config=run_config(run),
        budget_left=app.budget.left(),
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="create_training_run",
    title="Create a training run",
    description=(
        "Open a LoRA training run on a base model. Returns the run_id the training, sampling "
        "and checkpoint tools take."
    ),
    input_model=CreateTrainingRunInput,
    output_model=CreateTrainingRunOutput,
    handler=create_training_run,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
)
