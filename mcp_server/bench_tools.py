"""Two echo tools for bench/mcp_bench.py: one raw, one through the same wrapper as every real tool
(validation, audit, timing), so the benchmark isolates trio-mcp's per-call overhead."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent, Tool
from pydantic import BaseModel, Field

from mcp_server.app import AppState, ToolInput
from mcp_server.registry import RawTool
from mcp_server.spec import ToolCall, ToolSpec


class EchoInput(ToolInput):
    text: str = Field(max_length=1000)


class EchoOutput(BaseModel):
    text: str


async def _echo(app: AppState, args: EchoInput, ctx: ToolCall) -> EchoOutput:
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


async def _raw_echo(arguments: dict[str, Any]) -> CallToolResult:
    """Returns its input; the baseline with no trio-mcp wrapper."""
    text = str(arguments.get("text", ""))
    return CallToolResult(content=[TextContent(type="text", text=text)])


RAW_ECHO: RawTool = (
    Tool(
        name="raw_echo",
        description="Returns its input; the baseline with no trio-mcp wrapper.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    ),
    _raw_echo,
)
