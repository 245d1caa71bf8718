"""delete_checkpoint: destructive, so confirmed by the user (elicitation) or by repeating the name.

Read-only mode, `allow_delete = false` and a checkpoint that is not a path naming its run
(`trio://<run>/...`) are refused before anyone is asked; any session's checkpoint can be deleted,
the path says which run holds it. Then: if `confirm`
repeats the checkpoint exactly, that is the confirmation; otherwise, when the client supports
elicitation, the user is asked; otherwise the call is refused with the instruction to repeat the
name in `confirm`. Nothing reaches the backend before the confirmation.
"""

from __future__ import annotations

from mcp.server.elicitation import AcceptedElicitation
from pydantic import BaseModel, Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.checkpoints import run_id_of, run_id_or_none
from mcp_server.elicit import ask, can_ask
from mcp_server.errors import InvalidInput
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import CHECKPOINT, backend, optional_run_id, sdk


class DeleteCheckpointInput(ToolInput):
    checkpoint: str = CHECKPOINT
    confirm: str | None = Field(
        None,
        max_length=1000,
        description="Repeat the checkpoint path exactly to confirm when your client cannot ask "
        "the user (no elicitation support).",
    )
    run_id: str | None = optional_run_id(
        "Not needed: the checkpoint path names its run (accepted for compatibility; "
        "it must match the path's run)."
    )


class ConfirmDelete(BaseModel):
    delete: bool = Field(description="Delete this checkpoint permanently?")


class DeleteCheckpointOutput(BackendResult):
    deleted: str
    run_id: str
    confirmed_by: str = Field(description="'user' (elicitation) or 'confirm' (repeated name).")


async def delete_checkpoint(
    app: AppState, args: DeleteCheckpointInput, ctx: ToolCall
) -> DeleteCheckpointOutput:
    guards.require_delete_allowed(app.config)
    in_path = run_id_or_none(args.checkpoint)
    # A bare checkpoint id (not a path) still works with its run_id, as before.
    run_id = in_path or args.run_id or run_id_of(args.checkpoint)
    if args.run_id is not None and args.run_id != run_id:
        raise InvalidInput(
            f"run_id {args.run_id!r} is not the run in the checkpoint path ({run_id!r}); leave "
            "run_id out, the path names its run"
        )
    # Everything that needs no backend is checked before the user is asked, and nothing
    # reaches the backend before the answer: the user is asked once, and the run comes from
    # the path, so a checkpoint of any earlier session needs nothing more.
    confirmed_by = await _confirm(args, ctx)
    be = await backend(app)
    page = await sdk("listing checkpoints", be.rest.list_checkpoints_async(run_id))
    match = [c for c in page.checkpoints if args.checkpoint in (c.path, c.checkpoint_id)]
    if not match:
        raise InvalidInput(
            f"run {run_id!r} has no checkpoint {args.checkpoint!r} (already deleted, or "
            "mistyped); nothing was deleted; list_checkpoints shows its paths"
        )
    await sdk(
        "deleting the checkpoint", be.rest.delete_checkpoint_async(run_id, match[0].checkpoint_id)
    )
    app.runs.forget_checkpoint(match[0].path)
    return DeleteCheckpointOutput(
        deleted=match[0].path, run_id=run_id, confirmed_by=confirmed_by, **backend_fields(be)
    )


async def _confirm(args: DeleteCheckpointInput, ctx: ToolCall) -> str:
    """'confirm' or 'user', or an error saying how to confirm."""
    if args.confirm is not None:
        if args.confirm != args.checkpoint:
            raise InvalidInput(
                f"confirm does not match the checkpoint; set confirm to exactly {args.checkpoint!r}"
            )
        return "confirm"
    if not can_ask(ctx):
        raise InvalidInput(
            "deleting needs confirmation and this client cannot ask the user: call again with "
            f"confirm set to exactly {args.checkpoint!r}"
        )
    answer = await ask(
        ctx,
        f"Delete checkpoint {args.checkpoint} permanently? It cannot be restored.",
        ConfirmDelete,
    )
    if not isinstance(answer, AcceptedElicitation):
        raise InvalidInput(
            f"the user answered {answer.action!r} to deleting {args.checkpoint}; nothing "
            "was deleted"
        )
    if not answer.data.delete:
        raise InvalidInput(f"the user did not confirm; {args.checkpoint} was not deleted")
    return "user"


SPEC = ToolSpec(
    name="delete_checkpoint",
    title="Delete a checkpoint",
    description=(
        "Use to remove a checkpoint you no longer need (this session's or an earlier one's): "
        "permanently deletes it. The user is asked to confirm once when the client supports it; "
        "otherwise set `confirm` to the exact checkpoint path. Refused in read-only mode or "
        "when allow_delete is off."
    ),
    input_model=DeleteCheckpointInput,
    output_model=DeleteCheckpointOutput,
    handler=delete_checkpoint,
    read_only=False,
    destructive=True,
    idempotent=True,
    open_world=False,
    task_support="forbidden",  # it may ask the user to confirm
)
