"""list_models: the base models the backend offers and the server's configuration allows."""

from __future__ import annotations

from pydantic import Field

from mcp_server.app import AppState, BackendResult, ToolInput, backend_fields
from mcp_server.backend import call_sdk
from mcp_server.spec import ToolCall, ToolSpec
from mcp_server.tools._common import backend


class ListModelsInput(ToolInput):
    pass


class ListModelsOutput(BackendResult):
    models: list[str] = Field(description="Base models the backend offers.")
    allowed: list[str] = Field(description="The subset create_training_run accepts here.")


async def list_models(app: AppState, args: ListModelsInput, ctx: ToolCall) -> ListModelsOutput:
    be = await backend(app)
    models = list(await call_sdk("listing models", be.service.get_supported_models))
    allowed = [m for m in models if not app.config.allowed_models or m in app.config.allowed_models]
    return ListModelsOutput(models=models, allowed=allowed, **backend_fields(be))


SPEC = ToolSpec(
    name="list_models",
    title="List base models",
    description="List the base models you can fine-tune (pass one to create_training_run).",
    input_model=ListModelsInput,
    output_model=ListModelsOutput,
    handler=list_models,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)
