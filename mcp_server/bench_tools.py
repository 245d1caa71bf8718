"""Two echo tools for bench/mcp_bench.py: one raw, one through the same wrapper as every real tool
(validation, audit, timing), so the benchmark isolates trio-mcp's per-call overhead."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from mcp_server.app import AppState, ToolInput
from mcp_server.registry import ToolSpec


class EchoInput(ToolInput):
    text: str = Field(max_length=1000)


class EchoOutput(BaseModel):
    text: str


async def _echo(app: AppState, args: EchoInput, ctx: Context) -> EchoOutput:
    return EchoOutput(text=args.text)


ECHO = ToolSpec(
    name="echo",
    title="Echo (benchmark)",
    description="Returns its input; measures trio-mcp's per-call overhead.",
    input_model=EchoInput,
    output_model=EchoOutput,
    handler=_echo,
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
)


async def raw_echo(text: str) -> str:
    """Returns its input; the baseline with no trio-mcp wrapper."""
    return text


def add_raw_echo(server: MCPServer) -> None:
    server.add_tool(raw_echo, name="raw_echo")
