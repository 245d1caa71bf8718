"""What a tool is: its `ToolSpec` (models, handler, annotations) and the `ToolCall` a handler
gets (progress reports, the client's capabilities, questions to the user).

The bottom of the tool layer: tools import this module, `registry.py` turns specs into the MCP
server's tool list and call handler, and nothing here imports either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, ClientCapabilities, ToolAnnotations
from pydantic import BaseModel

from mcp_server.app import AppState, ToolInput

# `_meta` key tying a message to a task (MCP 2025-11-25; mcp_types names it only in a docstring).
RELATED_TASK = "io.modelcontextprotocol/related-task"

InputT = TypeVar("InputT", bound=ToolInput)
OutputT = TypeVar("OutputT", bound=BaseModel)


@dataclass(frozen=True)
class ToolCall:
    """One tools/call as its handler sees it."""

    request: ServerRequestContext[Any, Any]
    params: CallToolRequestParams

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        token = self._meta.get("progress_token", self._meta.get("progressToken"))
        if self.task_id is not None and token is not None:
            # A task outlives its request: progress goes out on the connection, with the
            # original request's token (MCP 2025-11-25, tasks).
            await self.request.session.send_progress_notification(token, progress, total, message)
            return
        await self.request.session.report_progress(progress, total, message)

    @property
    def _meta(self) -> Mapping[str, Any]:
        return self.params.meta or {}

    @property
    def task_id(self) -> str | None:
        """The MCP task this call runs as (tasks.py), or None for a plain call."""
        related = self._meta.get(RELATED_TASK)
        return related.get("taskId") if isinstance(related, Mapping) else None

    @property
    def client_capabilities(self) -> ClientCapabilities | None:
        return self.request.session.client_capabilities


# async (app, args, call) -> the output model, or a ready CallToolResult (plot_loss: an image)
# whose structured content is that model's dump.
Handler = Callable[[AppState, InputT, ToolCall], Awaitable[OutputT | CallToolResult]]


@dataclass(frozen=True)
class ToolSpec(Generic[InputT, OutputT]):
    """One tool, generic over its input and output models: `ToolSpec(input_model=A,
    output_model=B, handler=h)` is a `ToolSpec[A, B]`, and mypy refuses a handler that does
    not take an `A` or does not return a `B` (or a ready `CallToolResult`)."""

    name: str
    title: str
    description: str
    input_model: type[InputT]
    output_model: type[OutputT]
    handler: Handler[InputT, OutputT]
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    run_field: str | None = None  # calls naming the same run in this field are serialised
    # "optional": a client may run it as an MCP task (tasks.py); "forbidden" for a tool that
    # may ask the user a question (a task never does).
    task_support: Literal["forbidden", "optional"] = "optional"

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )
