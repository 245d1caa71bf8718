"""Which training run made a checkpoint, read from the backend, so guards hold across sessions.

A checkpoint path names its run: `trio://<run>/weights/<name>` (training state, resumable) and
`trio://<run>/sampler_weights/<name>` (sampler weights). A checkpoint saved by an earlier server
process is unknown to this one's `RunRegistry`, yet the allow-listed models and the rank caps must
apply to it exactly as to a run opened now. `checkpoint_origin` therefore asks the backend,
through the SDK's public `RestClient` (pytrio 0.2.9: `list_checkpoints_async(run_id)` and
`get_training_run_async(run_id)`), that the checkpoint is listed under that run and what the run
is (base model, LoRA rank). `guarded_checkpoint` adds the configured guards on top.

Checkpoints saved in this session are answered from the session's records without a request.
Names starting with `temp-sampling-` are the temporary sampler weights the SDK saves for
`save_weights_and_get_sampling_client` (pytrio 0.2.9 `client/training.py`): `is_temporary` marks
them so listings can keep them apart from the user's own checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_server import guards
from mcp_server.backend import sdk_message
from mcp_server.errors import BackendFailure, InvalidInput

if TYPE_CHECKING:
    from mcp_server.app import AppState

# The SDK's prefix for the sampler weights it saves on its own (pytrio 0.2.9,
# `_TEMP_SAMPLING_NAME_PREFIX` in client/training.py).
TEMP_SAMPLING_PREFIX = "temp-sampling-"

Kind = Literal["training", "sampler"]


@dataclass(frozen=True)
class CheckpointOrigin:
    """A checkpoint and the run that made it, as the backend (or this session) knows them."""

    path: str
    run_id: str
    name: str
    checkpoint_id: str | None  # the backend's id (None when answered from the session's records)
    kind: Kind  # 'training' (state: weights and optimizer) or 'sampler' (weights only)
    base_model: str
    rank: int | None  # LoRA rank; None for a full fine-tune
    step: int | None  # the run's step when it was saved, when known (None: unknown)
    saved_in_session: bool
    corrupted: bool = False

    @property
    def temporary(self) -> bool:
        return is_temporary(self.name)


def run_id_of(path: str) -> str:
    """The run a checkpoint path names (`trio://<run>/...`), or InvalidInput naming the field."""
    scheme, sep, rest = path.partition("://")
    run_id, slash, tail = rest.partition("/")
    if not sep or not scheme or not run_id or not slash or not tail:
        raise InvalidInput(
            f"checkpoint {path!r} is not a checkpoint path: pass one exactly as save_checkpoint "
            "or list_checkpoints returned it (trio://<run>/weights/<name>)"
        )
    return run_id


def run_id_or_none(path: str) -> str | None:
    try:
        return run_id_of(path)
    except InvalidInput:
        return None


def name_of(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2]


def is_temporary(name_or_path: str) -> bool:
    """True for the SDK's own temporary sampler weights, not a checkpoint the user saved."""
    return name_of(name_or_path).startswith(TEMP_SAMPLING_PREFIX)


async def _ask(what: str, awaitable: Any) -> Any:
    try:
        return await awaitable
    except Exception as exc:
        raise BackendFailure(f"{what} failed: {sdk_message(exc)}") from None


async def checkpoint_origin(app: AppState, path: str) -> CheckpointOrigin:
    """The checkpoint at `path` and the run that made it (base model, rank, kind).

    From this session's records when it was saved here; otherwise from the backend: the path's
    run must list the checkpoint (else InvalidInput naming it), and the run's base model and rank
    come from `RestClient.get_training_run_async`. Backend errors come back as BackendFailure.
    """
    saved = app.runs.checkpoints.get(path)
    if saved is not None and saved[0] in app.runs.runs:
        run_id, record = saved
        owner = app.runs.runs[run_id]
        return CheckpointOrigin(
            path=path,
            run_id=run_id,
            name=record.name,
            checkpoint_id=None,
            kind="training" if record.kind == "state" else "sampler",
            base_model=owner.base_model,
            rank=owner.rank,
            step=record.step,
            saved_in_session=True,
        )
    run_id = run_id_of(path)
    be = await app.backend.get()
    listed = await _ask(
        "looking up the checkpoint's training run", be.rest.list_checkpoints_async(run_id)
    )
    match = [c for c in listed.checkpoints if c.path == path]
    if not match:
        raise InvalidInput(
            f"checkpoint {path!r} is not listed under its training run {run_id!r}: it was "
            "deleted or mistyped; list_checkpoints shows the run's checkpoint paths"
        )
    run = await _ask(
        "reading the checkpoint's training run", be.rest.get_training_run_async(run_id)
    )
    kind: Kind = "training" if str(match[0].checkpoint_type) == "training" else "sampler"
    return CheckpointOrigin(
        path=path,
        run_id=run_id,
        name=name_of(path),
        checkpoint_id=match[0].checkpoint_id,
        kind=kind,
        base_model=run.base_model,
        rank=run.lora_rank,
        step=app.runs.known_step(path),
        saved_in_session=False,
        corrupted=bool(run.corrupted),
    )


def check_origin(app: AppState, origin: CheckpointOrigin, *, need: Kind | None = None) -> None:
    """Apply the configured guards to a checkpoint through the run that made it: the base model
    must be allowed and the rank within the caps; `need` refuses the other kind by name."""

    def rank() -> None:
        if origin.rank is not None:
            guards.check_rank(app.config, origin.rank)

    def corrupted() -> None:
        if origin.corrupted:
            raise InvalidInput(
                f"checkpoint {origin.path!r} belongs to run {origin.run_id!r}, which the backend "
                "marks as corrupted; use another checkpoint"
            )

    def kind() -> None:
        if need is not None and origin.kind != need:
            wanted = "a 'state' checkpoint (trio://<run>/weights/<name>)"
            if need == "sampler":
                wanted = "a 'sampler' checkpoint (trio://<run>/sampler_weights/<name>)"
            raise InvalidInput(
                f"checkpoint {origin.path!r} is a {origin.kind} checkpoint; pass {wanted}"
            )

    guards.all_of(
        lambda: guards.check_model(app.config, origin.base_model, []), rank, corrupted, kind
    )


async def guarded_checkpoint(
    app: AppState, path: str, *, need: Kind | None = None
) -> CheckpointOrigin:
    """`checkpoint_origin` and then `check_origin`: the one call a tool needs before it uses a
    checkpoint of this or any earlier session."""
    origin = await checkpoint_origin(app, path)
    check_origin(app, origin, need=need)
    return origin
