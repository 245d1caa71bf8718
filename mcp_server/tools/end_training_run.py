"""end_training_run: close a run this session opened, freeing its slot; its checkpoints stay."""

from __future__ import annotations

from pydantic import Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import RUN_ID, backend
from mcp_server.tools._sampling import RunSampler, delete_quietly


class EndTrainingRunInput(ToolInput):
    run_id: str = RUN_ID


class EndTrainingRunOutput(BackendResult):
    run_id: str
    ended_at_step: int = Field(description="The run's step when it ended.")
    checkpoints_kept: list[str] = Field(
        description="Checkpoint paths this session saved for the run; they stay usable "
        "(resume_training_run, sample, delete_checkpoint)."
    )
    unsaved_steps: int = Field(
        description="Steps trained since the run's last 'state' checkpoint of this session (or "
        "since it opened): they cannot be resumed."
    )
    open_runs: int = Field(description="Runs still open after this one ended.")
    slots_free: int = Field(description="Runs that can be opened now (max_concurrent_runs).")
    temporary_deleted: list[str] = Field(
        default_factory=list,
        description="The run's temporary sampler weights (saved by sample or evaluate), deleted "
        "now rather than left to expire.",
    )


async def end_training_run(
    app: AppState, args: EndTrainingRunInput, ctx: ToolCall
) -> EndTrainingRunOutput:
    guards.require_writable(app.config, "end_training_run")
    be = await backend(app)
    sampler = app.runs.get(args.run_id).sampler
    run = app.runs.end(args.run_id)  # the slot is free before anything is awaited
    deleted = []
    # Nothing samples an ended run's current weights again: they would only clutter the
    # backend until their TTL.
    if isinstance(sampler, RunSampler) and await delete_quietly(be, run.run_id, sampler.path):
        deleted.append(sampler.path)
    states = [c.step for c in run.checkpoints if c.kind == "state"]
    base = max(states) if states else (run.resumed_at_step or 0)
    limit = app.config.max_concurrent_runs
    open_runs = len(app.runs.runs)
    return EndTrainingRunOutput(
        run_id=run.run_id,
        ended_at_step=run.step,
        checkpoints_kept=[c.path for c in run.checkpoints],
        unsaved_steps=max(0, run.step - base),
        open_runs=open_runs,
        slots_free=max(0, limit - open_runs - app.runs.opening),
        temporary_deleted=deleted,
        **backend_fields(be),
    )


SPEC = ToolSpec(
    name="end_training_run",
    title="End a training run",
    description=(
        "Use when you are done with a run (or need its slot for another): ends a run this "
        "session opened or resumed, frees its slot at once, and keeps every checkpoint it saved "
        "(save a 'state' checkpoint first to continue it later with resume_training_run) and "
        "deletes the temporary sampler weights sample saved for it. Runs "
        "no call used for idle_run_timeout_s end on their own."
    ),
    input_model=EndTrainingRunInput,
    output_model=EndTrainingRunOutput,
    handler=end_training_run,
    read_only=False,
    destructive=False,
    idempotent=False,
    open_world=False,
    run_field="run_id",
)
