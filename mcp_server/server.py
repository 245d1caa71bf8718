"""Builds the MCP server on the SDK's low-level `Server`: the tools (`registry.ToolTable`), the
resources (`resources.ResourceTable`), and the shared state they run against."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types import ServerCapabilities

from mcp_server.app import AppState
from mcp_server.config import Config
from mcp_server.registry import RawTool, ToolTable
from mcp_server.resources import ResourceTable, documents
from mcp_server.spec import ToolSpec
from mcp_server.tasks import TASKS_VERSION, TaskStore, with_tasks
from mcp_server.tools import ALL_TOOLS

NAME = "trio-mcp"
INSTRUCTIONS = """\
Fine-tune and sample PyTRIO models with guarded tools. A typical session: list_models ->
create_training_run -> train_sft (returns the loss of every step) -> sample (same prompt format
as training) -> save_checkpoint -> resume_training_run -> end_training_run (frees the run's slot).
Every result says which backend answered; 'local' is trio-local, a tiny offline stand-in model.
Limits are set by the operator: read trio-mcp://limits first (each tool's schema carries them
too); a refusal names every setting it hit. Long calls can run as MCP tasks (2025-11-25).
lint_code checks PyTRIO code before you run it. The skill's docs are resources under
skill://pytrio/.
"""


def build_server(
    config: Config,
    app: AppState | None = None,
    extra_tools: Sequence[ToolSpec[Any, Any]] = (),
    raw_tools: Sequence[RawTool] = (),
) -> tuple[Server[AppState], AppState]:
    state = app or AppState.from_config(config)

    specs = [*ALL_TOOLS, *extra_tools]
    tasks = TaskStore(no_task=frozenset(s.name for s in specs if s.task_support == "forbidden"))

    @asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[AppState]:
        # Tasks run in this group: they outlive the request that started them.
        async with anyio.create_task_group() as group:
            tasks.group = group
            try:
                yield state
            finally:
                tasks.group = None
                group.cancel_scope.cancel()

    tools = ToolTable(specs, raw=raw_tools, config=state.config)
    resources = ResourceTable(documents(state))
    server: Server[AppState] = TaskServer(
        NAME,
        version="0.1.0",
        title="PyTRIO training tools",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        get_tool_input_schema=tools.input_schema_of,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=resources.list_resources,
        on_read_resource=resources.read_resource,
    )
    # Seals the request_state of a question to the user (elicit.py), bound to the call.
    server.middleware.append(
        RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=NAME)
    )
    tasks.install(server)
    return server, state


class TaskServer(Server[AppState]):
    """The SDK's low-level server, declaring the task capabilities `tasks.py` serves."""

    def get_capabilities(self, *args: Any, **kwargs: Any) -> ServerCapabilities:
        capabilities = super().get_capabilities(*args, **kwargs)
        if kwargs.get("protocol_version") in (None, TASKS_VERSION):
            capabilities = with_tasks(capabilities)
        return capabilities
