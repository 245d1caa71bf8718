"""delete_checkpoint: destructive, so confirmed by the user (elicitation) or by repeating the name.

Read-only mode and `allow_delete = false` refuse before anyone is asked. Then: if `confirm`
repeats the checkpoint exactly, that is the confirmation; otherwise, when the client supports
elicitation, the user is asked; otherwise the call is refused with the instruction to repeat the
name in `confirm`. Nothing reaches the backend before the confirmation.
"""

from __future__ import annotations

from mcp.server.elicitation import AcceptedElicitation
from pydantic import BaseModel, Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.elicit import ask, can_ask
from mcp_server.errors import InvalidInput
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import CHECKPOINT, RUN_ID_PATTERN, backend, sdk


class DeleteCheckpointInput(ToolInput):
    checkpoint: str = CHECKPOINT
    confirm: str | None = Field(
        None,
        max_length=1000,
        description="Repeat the checkpoint path exactly to confirm when your client cannot ask "
        "the user (no elicitation support).",
    )
    run_id: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        pattern=RUN_ID_PATTERN,
        description="The run that owns the checkpoint; needed only if it was not saved in this "
        "session.",
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
    confirmed_by = await _confirm(args, ctx)
    be = await backend(app)
    saved = app.runs.checkpoints.get(args.checkpoint)
    run_id = saved[0] if saved else args.run_id
    if run_id is None:
        raise InvalidInput(
            f"checkpoint {args.checkpoint!r} was not saved in this session; pass run_id (the "
            "run that owns it, see list_checkpoints)"
        )
    page = await sdk("listing checkpoints", be.rest.list_checkpoints_async(run_id))
    match = [c for c in page.checkpoints if args.checkpoint in (c.path, c.checkpoint_id)]
    if not match:
        raise InvalidInput(
            f"run {run_id!r} has no checkpoint {args.checkpoint!r}; list_checkpoints shows "
            "its paths"
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
        "Permanently delete a checkpoint. The user is asked to confirm when the client supports "
        "it; otherwise set `confirm` to the exact checkpoint path. Refused in read-only mode or "
        "when allow_delete is off."
    ),
    input_model=DeleteCheckpointInput,
    output_model=DeleteCheckpointOutput,
    handler=delete_checkpoint,
    read_only=False,
    destructive=True,
    idempotent=True,
    open_world=False,
)
