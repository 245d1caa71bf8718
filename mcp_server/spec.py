"""What a tool is: its `ToolSpec` (models, handler, annotations) and the `ToolCall` a handler
gets (progress reports, the client's capabilities, questions to the user).

The bottom of the tool layer: tools import this module, `registry.py` turns specs into the MCP
server's tool list and call handler, and nothing here imports either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, ClientCapabilities, ToolAnnotations
from pydantic import BaseModel

# `_meta` key tying a message to a task (MCP 2025-11-25; mcp_types names it only in a docstring).
RELATED_TASK = "io.modelcontextprotocol/related-task"

# async (app, args, call) -> output model (or a ready CallToolResult).
Handler = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Handler
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
