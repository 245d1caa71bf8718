"""trio-mcp's tools on the `mcp` SDK's low-level `Server`: one tools/list built from each
`ToolSpec`'s pydantic models, and one tools/call that runs every call the same way.

A call is validated against its input model (unknown arguments refused; the message names the
field and the constraint, never the rejected value), refused while the server stops, serialised
per run (`runs.py`), timed and appended to the audit log (`audit.py`); its errors become
`is_error` results with secrets removed (`redact.py`). `tool_catalogue()` gives docgen the same
schemas the server publishes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolExecution,
)
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from mcp_server import guards
from mcp_server.app import AppState
from mcp_server.config import Config
from mcp_server.elicit import InputRequired
from mcp_server.errors import InvalidInput, ServerStopping, TrioMcpError
from mcp_server.redact import redact
from mcp_server.spec import InputT, OutputT, ToolCall, ToolSpec
from mcp_server.tools import ALL_TOOLS

log = logging.getLogger("trio_mcp.tools")

# A tool outside the wrapper (the benchmark's baseline): its listing and a bare function.
RawTool = tuple[Tool, Callable[[dict[str, Any]], Awaitable[CallToolResult]]]


def format_validation_error(tool: str, exc: ValidationError, model: type[BaseModel]) -> str:
    """Name each bad field and what it must be, without echoing the value that was sent."""
    problems = []
    for err in exc.errors(include_input=False, include_url=False)[:8]:
        where = ".".join(str(part) for part in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            problems.append(f"`{where}` is not an argument of {tool}")
        elif err["type"] == "extra_forbidden":
            problems.append(f"`{where}` is not allowed there")
        elif err["type"] == "missing":
            problems.append(f"`{where}` is required")
        else:
            problems.append(f"`{where}`: {err['msg']}")
    accepted = ", ".join(model.model_fields) or "none"
    return f"invalid arguments for {tool}: {'; '.join(problems)} (arguments: {accepted})"


def input_schema(spec: ToolSpec[Any, Any], config: Config | None = None) -> dict[str, Any]:
    """The input model's schema with the configured caps as its bounds (`guards.cap_schema`;
    the defaults when no configuration is given, as the docs show them)."""
    schema = guards.cap_schema(
        spec.input_model.model_json_schema(by_alias=True), config or Config()
    )
    schema["additionalProperties"] = False  # unknown arguments are refused, not dropped
    properties = schema.get("properties", {})
    for name, info in spec.input_model.model_fields.items():
        # pydantic leaves a default_factory's value out of the schema; the agent should see it.
        if info.default_factory is not None and name in properties:
            default = info.get_default(call_default_factory=True, validated_data={})
            properties[name].setdefault("default", to_jsonable_python(default))
    return schema


def output_schema(spec: ToolSpec[Any, Any]) -> dict[str, Any]:
    model: type[BaseModel] = spec.output_model
    return model.model_json_schema(by_alias=True)


def tool_definition(spec: ToolSpec[Any, Any], config: Config | None = None) -> Tool:
    return Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=input_schema(spec, config),
        output_schema=output_schema(spec),
        annotations=spec.annotations,
        execution=ToolExecution(task_support=spec.task_support),
    )


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


# The text of a result is a summary of at most this many characters; the structured content
# carries the whole result, once.
SUMMARY_CHARS = 400
_NOT_SUMMARISED = ("backend_note",)


def summarise(name: str, structured: dict[str, Any]) -> str:
    """`<tool>: key=value, ...` of the result's top-level fields: lists by their length (and
    the last number of a list of numbers), nested objects by their scalar fields."""
    parts = []
    for key, value in structured.items():
        if key in _NOT_SUMMARISED or value is None:
            continue
        parts.append(f"{key}={_brief(value)}")
    text = f"{name}: " + ", ".join(parts)
    if len(text) > SUMMARY_CHARS:
        text = text[: SUMMARY_CHARS - 1] + "…"
    return text + " (full result: structured content)"


def _brief(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        return value if len(value) <= 80 else value[:79] + "…"
    if isinstance(value, list):
        if value and all(isinstance(v, (int, float)) for v in value):
            return f"[{len(value)} values, last {_brief(value[-1])}]"
        return f"[{len(value)} items]"
    if isinstance(value, dict):
        inner = [f"{k}={_brief(v)}" for k, v in value.items() if isinstance(v, (int, float, str))]
        return "{" + ", ".join(inner[:6]) + "}"
    return json.dumps(value)


def _result(name: str, output: BaseModel | CallToolResult) -> CallToolResult:
    if isinstance(output, CallToolResult):
        return output
    structured = output.model_dump(mode="json", by_alias=True)
    summary = getattr(output, "summary", None)
    text = summary() if callable(summary) else summarise(name, structured)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


@dataclass
class ToolTable:
    """The server's tools: `list_tools` and `call_tool` are its low-level request handlers."""

    specs: Sequence[ToolSpec[Any, Any]]
    raw: Sequence[RawTool] = ()
    config: Config | None = None
    _by_name: dict[str, ToolSpec[Any, Any]] = field(init=False)
    _listing: ListToolsResult = field(init=False)

    def __post_init__(self) -> None:
        self._by_name = {spec.name: spec for spec in self.specs}
        tools = [tool_definition(spec, self.config) for spec in self.specs]
        tools += [tool for tool, _ in self.raw]
        self._listing = ListToolsResult(tools=tools)
        self._raw = {tool.name: call for tool, call in self.raw}

    def input_schema_of(self, name: str) -> dict[str, Any] | None:
        spec = self._by_name.get(name)
        return None if spec is None else input_schema(spec, self.config)

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self._listing

    async def call_tool(
        self, ctx: ServerRequestContext[AppState, Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        arguments: Mapping[str, Any] = params.arguments or {}
        if params.name in self._raw:
            return await self._raw[params.name](dict(arguments))
        spec = self._by_name.get(params.name)
        if spec is None:
            return _error(
                f"unknown tool {redact(params.name)[:100]!r}; the tools are: "
                f"{', '.join(self._by_name)}"
            )
        return await run_call(spec, ctx.lifespan_context, ToolCall(ctx, params), arguments)


async def run_call(
    spec: ToolSpec[InputT, OutputT], app: AppState, call: ToolCall, arguments: Mapping[str, Any]
) -> CallToolResult | InputRequiredResult:
    """Validate, guard, serialise, run, audit: the one path of every tool call."""
    started = time.perf_counter()
    outcome, error = "ok", None
    app.in_flight += 1
    try:
        if app.stopping:
            raise ServerStopping(f"{spec.name} was not started: the server is shutting down")
        try:
            args = spec.input_model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise InvalidInput(format_validation_error(spec.name, exc, spec.input_model)) from None
        app.runs.end_idle(app.config.idle_run_timeout_s)
        if spec.run_field is not None:
            run_id = getattr(args, spec.run_field)
            app.runs.touch(run_id)
            try:
                async with app.runs.lock(run_id):
                    return _result(spec.name, await spec.handler(app, args, call))
            finally:
                app.runs.touch(run_id)  # idle is counted from the end of the last call
        return _result(spec.name, await spec.handler(app, args, call))
    except InputRequired as asked:
        outcome = "asked"
        return asked.result
    except TrioMcpError as exc:
        # Redacted: the message may echo a secret the agent sent.
        outcome, error = "refused", redact(str(exc))
        return _error(error)
    except Exception as exc:
        outcome, error = "failed", redact(f"{type(exc).__name__}: {exc}")
        log.exception("%s failed", spec.name)
        return _error(f"{spec.name} failed unexpectedly: {error}")
    except BaseException:
        outcome = "cancelled"  # by the client, or by the server stopping
        raise
    finally:
        app.in_flight -= 1
        app.audit.record(
            tool=spec.name,
            arguments=dict(arguments),
            outcome=outcome,
            duration_s=time.perf_counter() - started,
            budget_after=app.budget.left().model_dump(),
            error=error,
        )


def tool_catalogue(specs: Sequence[ToolSpec[Any, Any]] = ALL_TOOLS) -> list[dict[str, Any]]:
    """Name, title, description, annotations, input and output schema of every tool, in order.

    This is what the server publishes in tools/list; `references/mcp-tools.md` is rendered from it.
    """
    return [
        {
            "name": spec.name,
            "title": spec.title,
            "description": spec.description,
            "annotations": spec.annotations.model_dump(exclude_none=True),
            "input_schema": input_schema(spec),
            "output_schema": output_schema(spec),
        }
        for spec in specs
    ]
