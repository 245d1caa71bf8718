"""delete_checkpoint: destructive, so confirmed by the user (elicitation) or by repeating the name.

A resolver runs before the tool body: if `confirm` repeats the checkpoint exactly, that is the
confirmation; otherwise, when the client supports elicitation, the user is asked; otherwise the
call is refused with the instruction to repeat the name in `confirm`. Read-only mode and
`allow_delete = false` refuse before anyone is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    Resolve,
)
from pydantic import BaseModel, Field

from mcp_server import guards
from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.errors import InvalidInput
from mcp_server.registry import ToolSpec
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


@dataclass(frozen=True)
class Decision:
    approved: bool
    reason: str


async def confirm_deletion(
    checkpoint: str | None, confirm: str | None, ctx: Context
) -> Decision | Elicit[ConfirmDelete]:
    app: AppState = ctx.request_context.lifespan_context
    if app.config.read_only or not app.config.allow_delete or checkpoint is None:
        return Decision(False, "guard")  # refused (or invalid) before anyone is asked
    if confirm is not None:
        return Decision(confirm == checkpoint, "confirm")
    capabilities = ctx.client_capabilities
    if capabilities is not None and capabilities.elicitation is not None:
        return Elicit(
            f"Delete checkpoint {checkpoint} permanently? It cannot be restored.", ConfirmDelete
        )
    return Decision(False, "no-elicitation")


class DeleteCheckpointOutput(BackendResult):
    deleted: str
    run_id: str
    confirmed_by: str = Field(description="'user' (elicitation) or 'confirm' (repeated name).")


async def delete_checkpoint(
    app: AppState,
    args: DeleteCheckpointInput,
    ctx: Context,
    confirmation: ElicitationResult[ConfirmDelete],
) -> DeleteCheckpointOutput:
    guards.require_delete_allowed(app.config)
    confirmed_by = _confirmed_by(args, confirmation)
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


def _confirmed_by(
    args: DeleteCheckpointInput, confirmation: ElicitationResult[ConfirmDelete]
) -> str:
    if not isinstance(confirmation, AcceptedElicitation):
        raise InvalidInput(
            f"the user answered {confirmation.action!r} to deleting {args.checkpoint}; nothing "
            "was deleted"
        )
    data = confirmation.data
    if isinstance(data, ConfirmDelete):
        if not data.delete:
            raise InvalidInput(f"the user did not confirm; {args.checkpoint} was not deleted")
        return "user"
    if data.reason == "no-elicitation":
        raise InvalidInput(
            "deleting needs confirmation and this client cannot ask the user: call again with "
            f"confirm set to exactly {args.checkpoint!r}"
        )
    if not data.approved:
        raise InvalidInput(
            f"confirm does not match the checkpoint; set confirm to exactly {args.checkpoint!r}"
        )
    return "confirm"


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
    resolved={
        "confirmation": Annotated[ElicitationResult[ConfirmDelete], Resolve(confirm_deletion)]
    },
)
