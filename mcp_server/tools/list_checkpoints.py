"""list_checkpoints: the checkpoints stored for one training run."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, backend, sdk


class ListCheckpointsInput(ToolInput):
    run_id: str = RUN_ID


class CheckpointInfo(BaseModel):
    checkpoint_id: str
    kind: str = Field(description="'training' (state, resumable) or 'sampler' (weights to sample).")
    path: str = Field(description="Pass this to sample, resume_training_run or delete_checkpoint.")
    time: str
    size_bytes: int | None


class ListCheckpointsOutput(BackendResult):
    run_id: str
    checkpoints: list[CheckpointInfo]


async def list_checkpoints(
    app: AppState, args: ListCheckpointsInput, ctx: ToolCall
) -> ListCheckpointsOutput:
    be = await backend(app)
    page = await sdk("listing checkpoints", be.rest.list_checkpoints_async(args.run_id))
    return ListCheckpointsOutput(
        run_id=args.run_id,
        checkpoints=[
            CheckpointInfo(
                checkpoint_id=c.checkpoint_id,
                kind=str(c.checkpoint_type),
                path=c.path,
                time=c.time.isoformat(),
                size_bytes=c.size_bytes,
            )
            for c in page.checkpoints
        ],
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="list_checkpoints",
    title="List checkpoints",
    description="List the checkpoints (training state and sampler weights) of one training run.",
    input_model=ListCheckpointsInput,
    output_model=ListCheckpointsOutput,
    handler=list_checkpoints,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)
