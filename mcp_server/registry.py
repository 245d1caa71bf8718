"""Turns a `ToolSpec` (input model, output model, annotations, handler) into an MCP tool.

The pydantic input model is the single source of the tool's arguments: its fields become the
tool's parameters (so the input schema carries their descriptions and limits), unknown arguments
are refused, and every call is validated, serialised per run, audited and timed in one place.
`tool_catalogue()` gives docgen the same schemas the server publishes.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticUndefined

from mcp_server.app import AppState
from mcp_server.errors import InvalidInput, ServerStopping, TrioMcpError
from mcp_server.redact import redact

log = logging.getLogger("trio_mcp.tools")

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
    run_field: str | None = None
    # Parameters the framework fills (e.g. a `Resolve(...)` confirmation), passed to the handler.
    resolved: dict[str, Any] = field(default_factory=dict)

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.read_only,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=self.open_world,
        )


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


def _plain(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


def _parameter(name: str, info: Any) -> inspect.Parameter:
    # A FieldInfo with a default may not sit inside Annotated, so rebuild it without one.
    fresh = Field(description=info.description, examples=info.examples, title=info.title)
    annotation = Annotated[(info.annotation, *info.metadata, fresh)]
    if info.default_factory is not None:
        default = info.default_factory()
    elif info.default is PydanticUndefined:
        default = inspect.Parameter.empty
    else:
        default = info.default
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
    )


def _tool_function(spec: ToolSpec) -> Callable[..., Awaitable[Any]]:
    async def call(ctx: Context, **kwargs: Any) -> Any:
        app: AppState = ctx.request_context.lifespan_context
        resolved = {name: kwargs.pop(name) for name in spec.resolved}
        rejected = kwargs.pop(REJECTED, None)
        raw = rejected[1] if rejected else kwargs
        started = time.perf_counter()
        outcome, error = "ok", None
        app.in_flight += 1
        try:
            if app.stopping:
                raise ServerStopping(f"{spec.name} was not started: the server is shutting down")
            if rejected:
                raise InvalidInput(rejected[0])
            try:
                args = spec.input_model.model_validate(kwargs)
            except ValidationError as exc:
                message = format_validation_error(spec.name, exc, spec.input_model)
                raise InvalidInput(message) from None
            if spec.run_field is not None:
                async with app.runs.lock(getattr(args, spec.run_field)):
                    return await spec.handler(app, args, ctx, **resolved)
            return await spec.handler(app, args, ctx, **resolved)
        except TrioMcpError as exc:
            outcome, error = "refused", redact(str(exc))
            if error != str(exc):  # the message echoed a secret the agent sent
                raise TrioMcpError(error) from None
            raise
        except Exception as exc:
            outcome, error = "failed", redact(f"{type(exc).__name__}: {exc}")
            log.exception("%s failed", spec.name)
            raise TrioMcpError(f"{spec.name} failed unexpectedly: {error}") from None
        except BaseException:
            outcome = "cancelled"  # by the client, or by the server stopping
            raise
        finally:
            app.in_flight -= 1
            app.audit.record(
                tool=spec.name,
                arguments={k: _plain(v) for k, v in raw.items()},
                outcome=outcome,
                duration_s=time.perf_counter() - started,
                budget_after=app.budget.left().model_dump(),
                error=error,
            )

    params = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    params += [_parameter(name, info) for name, info in spec.input_model.model_fields.items()]
    params += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
        for name, annotation in spec.resolved.items()
    ]
    call.__signature__ = inspect.Signature(params, return_annotation=spec.output_model)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in params} | {"return": spec.output_model}
    call.__name__ = spec.name
    call.__qualname__ = f"trio_mcp.{spec.name}"
    return call


# Key under which a schema rejection reaches the tool wrapper (not a valid argument name).
REJECTED = "rejected arguments"


class CheckedMetadata(FuncMetadata):
    """The SDK's argument handling, except that a schema rejection is handed to the tool wrapper
    instead of raised: the wrapper audits it and answers with a message that names the field and
    the constraint but never echoes the rejected value (which may be a secret or a huge payload)."""

    tool_name: str = ""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().validate_arguments(arguments_to_validate)
        except ValidationError as exc:
            # Placeholders keep by-name resolvers (delete_checkpoint's confirmation) well-defined.
            placeholders = dict.fromkeys(self.arg_model.model_fields)
            message = format_validation_error(self.tool_name, exc, self.arg_model)
            return placeholders | {REJECTED: (message, arguments_to_validate)}


def build_tool(spec: ToolSpec) -> Tool:
    tool = Tool.from_function(
        _tool_function(spec),
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=spec.annotations,
    )
    # Refuse unknown arguments instead of silently dropping them (a misspelt `learning_rte`
    # must not train with the default).
    base = tool.fn_metadata.arg_model
    strict = type(
        base.__name__,
        (base,),
        {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True)},
    )

    tool.fn_metadata = CheckedMetadata(
        arg_model=strict,
        output_schema=tool.fn_metadata.output_schema,
        output_model=tool.fn_metadata.output_model,
        wrap_output=tool.fn_metadata.wrap_output,
        tool_name=spec.name,
    )
    tool.parameters["additionalProperties"] = False
    return tool


def tool_catalogue(specs: list[ToolSpec] | None = None) -> list[dict[str, Any]]:
    """Name, title, description, annotations, input and output schema of every tool, in order.

    This is what the server publishes in tools/list; `references/mcp-tools.md` is rendered from it.
    """
    if specs is None:
        from mcp_server.tools import ALL_TOOLS

        specs = ALL_TOOLS
    catalogue = []
    for spec in specs:
        tool = build_tool(spec)
        catalogue.append(
            {
                "name": spec.name,
                "title": spec.title,
                "description": spec.description,
                "annotations": spec.annotations.model_dump(exclude_none=True),
                "input_schema": tool.parameters,
                "output_schema": tool.output_schema,
            }
        )
    return catalogue
