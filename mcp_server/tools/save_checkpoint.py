"""save_checkpoint: save a run's training state (resumable) or its weights for sampling."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.runs import CheckpointRecord
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, backend, settled, submit
from pytrio_facts import LIMITS


class SaveCheckpointInput(ToolInput):
    run_id: str = RUN_ID
    name: str = Field(
        min_length=1,
        max_length=LIMITS.checkpoint_name_max_length,
        description="Checkpoint name: letters, digits, '.', '_' or '-' (e.g. 'step-20'); "
        "the server's max_checkpoint_name_length may set a lower bound.",
    )
    kind: Literal["state", "sampler"] = Field(
        "state",
        description="'state': weights and optimizer, for resume_training_run. 'sampler': "
        "weights only, for sample.",
    )


class SaveCheckpointOutput(BackendResult):
    run_id: str
    name: str
    kind: str
    path: str = Field(description="Pass this to sample, resume_training_run or delete_checkpoint.")
    step: int


async def save_checkpoint(
    app: AppState, args: SaveCheckpointInput, ctx: ToolCall
) -> SaveCheckpointOutput:
    guards.all_of(
        lambda: guards.require_writable(app.config, "save_checkpoint"),
        lambda: guards.check_checkpoint_name(app.config, args.name),
        lambda: app.runs.get(args.run_id),
    )
    run = app.runs.get(args.run_id)
    be = await backend(app)
    if args.kind == "state":
        future = await submit("saving the state", run.client.save_state_async(args.name))
    else:
        future = await submit(
            "saving sampler weights", run.client.save_weights_for_sampler_async(args.name)
        )

    def record(saved: Any) -> None:
        entry = CheckpointRecord(name=args.name, kind=args.kind, path=saved.path, step=run.step)
        app.runs.add_checkpoint(run.run_id, entry)

    response = await settled("saving the checkpoint", future, on_cancel=record)
    record(response)
    return SaveCheckpointOutput(
        run_id=run.run_id,
        name=args.name,
        kind=args.kind,
        path=response.path,
        step=run.step,
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="save_checkpoint",
    title="Save a checkpoint",
    description=(
        "Save a run's training state ('state', resumable with resume_training_run) or its "
        "weights for sampling ('sampler'). Returns the checkpoint path."
    ),
    input_model=SaveCheckpointInput,
    output_model=SaveCheckpointOutput,
    handler=save_checkpoint,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
    run_field="run_id",
)
