"""get_training_run: a run's configuration, step count, loss history and checkpoints."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, RunConfig, backend, run_config, sdk


class GetTrainingRunInput(ToolInput):
    run_id: str = RUN_ID


class SavedCheckpoint(BaseModel):
    name: str
    kind: str
    path: str
    step: int


class GetTrainingRunOutput(BackendResult):
    run_id: str
    config: RunConfig
    open_in_session: bool = Field(description="False: known to the backend but not opened here.")
    ended: bool = Field(
        False,
        description="True: this session opened the run and ended it (end_training_run or "
        "idle timeout); its checkpoints stay.",
    )
    step: int = Field(
        description="The run's optimizer step: a resumed run continues from its checkpoint's step."
    )
    losses: list[float] = Field(description="Per-token loss of every step in this session.")
    tokens_trained: int
    checkpoints: list[SavedCheckpoint] = Field(description="Checkpoints saved in this session.")
    resumed_from: str | None = None
    resumed_at_step: int | None = Field(
        None, description="The step of the checkpoint it was resumed from, when known."
    )


async def get_training_run(
    app: AppState, args: GetTrainingRunInput, ctx: ToolCall
) -> GetTrainingRunOutput:
    be = await backend(app)
    run = app.runs.runs.get(args.run_id) or app.runs.ended.get(args.run_id)
    if run is not None:
        return GetTrainingRunOutput(
            run_id=run.run_id,
            config=run_config(run),
            open_in_session=args.run_id in app.runs.runs,
            ended=args.run_id in app.runs.ended,
            resumed_at_step=run.resumed_at_step,
            step=run.step,
            losses=run.losses,
            tokens_trained=run.tokens_trained,
            checkpoints=[SavedCheckpoint(**vars(c)) for c in run.checkpoints],
            resumed_from=run.resumed_from,
            **backend_fields(be),
        )
    remote = await sdk("reading the training run", be.rest.get_training_run_async(args.run_id))
    return GetTrainingRunOutput(
        run_id=remote.training_run_id,
        config=RunConfig(base_model=remote.base_model, rank=remote.lora_rank),
        open_in_session=False,
        step=0,
        losses=[],
        tokens_trained=0,
        checkpoints=[],
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="get_training_run",
    title="Get a training run",
    description=(
        "A training run's configuration, optimizer steps, per-step loss history and the "
        "checkpoints saved in this session."
    ),
    input_model=GetTrainingRunInput,
    output_model=GetTrainingRunOutput,
    handler=get_training_run,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
    run_field="run_id",
)
