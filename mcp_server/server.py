"""Builds the MCP server: the tools, the resources, and the shared state they run against."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer

from mcp_server.app import AppState
from mcp_server.config import Config
from mcp_server.registry import ToolSpec, build_tool
from mcp_server.resources import register_resources
from mcp_server.tools import ALL_TOOLS

INSTRUCTIONS = """\
Fine-tune and sample PyTRIO models with guarded tools. A typical session: list_models ->
create_training_run -> train_sft (returns the loss of every step) -> sample (same prompt format
as training) -> save_checkpoint -> resume_training_run. Every result says which backend answered;
'local' is trio-local, a tiny offline stand-in model. Limits are set by the operator; a refusal
names the setting that raises it. lint_code checks PyTRIO code before you run it. The skill's docs
are resources under skill://pytrio/.
"""


def build_server(
    config: Config, app: AppState | None = None, extra_tools: Sequence[ToolSpec] = ()
) -> tuple[MCPServer, AppState]:
    state = app or AppState.from_config(config)

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[AppState]:
        yield state

    server = MCPServer(
        "trio-mcp",
        title="PyTRIO training tools",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        tools=[build_tool(spec) for spec in [*ALL_TOOLS, *extra_tools]],
        lifespan=lifespan,
    )
    register_resources(server, state)
    return server, state
