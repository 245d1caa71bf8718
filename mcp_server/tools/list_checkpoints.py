"""list_checkpoints: the user's checkpoints, of one training run or of every run.

The SDK saves temporary sampler weights of its own (`temp-sampling-*`, for
`save_weights_and_get_sampling_client`); they are not the user's checkpoints, so they are left
out unless `include_temporary` asks for them, and then marked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.checkpoints import is_temporary, run_id_or_none
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import backend, optional_run_id, sdk

# Pages of the workspace listing read when no run is named (100 each).
MAX_PAGES = 10


class ListCheckpointsInput(ToolInput):
    run_id: str | None = optional_run_id(
        "A run id from create_training_run or list_training_runs; omit it to list "
        "the checkpoints of every run (in the order the service lists them, up to 1000)."
    )
    include_temporary: bool = Field(
        False,
        description="Also list the SDK's temporary sampler weights (temp-sampling-*), marked "
        "temporary; they are not checkpoints you saved.",
    )


class CheckpointInfo(BaseModel):
    checkpoint_id: str
    run_id: str | None
    kind: str = Field(description="'training' (state, resumable) or 'sampler' (weights to sample).")
    path: str = Field(
        description="Pass a 'training' path to resume_training_run; any path to sample or "
        "delete_checkpoint, in this session or a later one."
    )
    time: str
    size_bytes: int | None
    step: int | None = Field(
        description="The run's step when it was saved, when a trio-mcp session recorded it."
    )
    temporary: bool = Field(description="True: the SDK's temporary sampler weights.")


class ListCheckpointsOutput(BackendResult):
    run_id: str | None
    checkpoints: list[CheckpointInfo]
    temporary_hidden: int = Field(
        description="Temporary sampler weights left out (include_temporary shows them)."
    )


async def _all_checkpoints(rest: Any) -> list[Any]:
    found: list[Any] = []
    for page_no in range(MAX_PAGES):
        page = await sdk(
            "listing checkpoints", rest.list_user_checkpoints_async(limit=100, offset=100 * page_no)
        )
        found.extend(page.checkpoints)
        if len(page.checkpoints) < 100:
            break
    return found


async def list_checkpoints(
    app: AppState, args: ListCheckpointsInput, ctx: ToolCall
) -> ListCheckpointsOutput:
    be = await backend(app)
    if args.run_id is not None:
        page = await sdk("listing checkpoints", be.rest.list_checkpoints_async(args.run_id))
        listed = list(page.checkpoints)
    else:
        listed = await _all_checkpoints(be.rest)
    shown = [c for c in listed if args.include_temporary or not is_temporary(c.path)]
    return ListCheckpointsOutput(
        run_id=args.run_id,
        checkpoints=[
            CheckpointInfo(
                checkpoint_id=c.checkpoint_id,
                run_id=run_id_or_none(c.path),
                kind=str(c.checkpoint_type),
                path=c.path,
                time=c.time.isoformat(),
                size_bytes=c.size_bytes,
                step=app.runs.known_step(c.path),
                temporary=is_temporary(c.path),
            )
            for c in shown
        ],
        temporary_hidden=len(listed) - len(shown),
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="list_checkpoints",
    title="List checkpoints",
    description=(
        "Use to find checkpoints to resume, sample or delete, including those an earlier server "
        "saved: the training state and sampler weights of one run, or of every run when run_id "
        "is omitted, with the step each was saved at. The SDK's temporary sampler weights are "
        "hidden unless include_temporary is set."
    ),
    input_model=ListCheckpointsInput,
    output_model=ListCheckpointsOutput,
    handler=list_checkpoints,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)
