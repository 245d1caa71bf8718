"""list_training_runs: the training runs the backend knows, marking those open in this session."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import backend, sdk


class ListTrainingRunsInput(ToolInput):
    limit: int = Field(
        20,
        ge=1,
        le=100,
        description="How many runs to return, in the order the service lists them.",
    )
    offset: int = Field(0, ge=0, le=1_000_000, description="How many runs to skip.")


class RunSummary(BaseModel):
    run_id: str
    base_model: str
    lora_rank: int | None
    last_request_time: str
    open_in_session: bool = Field(description="True when this session can train or sample it.")
    step: int | None = Field(description="Optimizer steps taken in this session, if open.")
    last_loss: float | None = Field(description="The last per-token loss in this session, if any.")


class ListTrainingRunsOutput(BackendResult):
    runs: list[RunSummary]
    total: int | None = Field(description="How many runs exist in all.")


async def list_training_runs(
    app: AppState, args: ListTrainingRunsInput, ctx: ToolCall
) -> ListTrainingRunsOutput:
    be = await backend(app)
    page = await sdk(
        "listing training runs",
        be.rest.list_training_runs_async(limit=args.limit, offset=args.offset),
    )
    runs = []
    for run in page.training_runs:
        open_run = app.runs.runs.get(run.training_run_id)
        runs.append(
            RunSummary(
                run_id=run.training_run_id,
                base_model=run.base_model,
                lora_rank=run.lora_rank,
                last_request_time=run.last_request_time.isoformat(),
                open_in_session=open_run is not None,
                step=open_run.step if open_run else None,
                last_loss=open_run.losses[-1] if open_run and open_run.losses else None,
            )
        )
    total = getattr(page.cursor, "total_count", None)
    return ListTrainingRunsOutput(runs=runs, total=total, **backend_fields(be))


SPEC = ToolSpec(
    name="list_training_runs",
    title="List training runs",
    description=(
        "List training runs (in the order the service lists them) with their base model and "
        "LoRA rank."
    ),
    input_model=ListTrainingRunsInput,
    output_model=ListTrainingRunsOutput,
    handler=list_training_runs,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)
