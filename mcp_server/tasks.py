"""Long tool calls as MCP tasks (task-augmented `tools/call`, protocol 2025-11-25).

The server declares `capabilities.tasks.requests.tools.call` and each tool's
`execution.taskSupport`; a client that sends `tools/call` with `params.task = {"ttl": ms}` (the
2025-11-25 way of asking for a task) gets it answered at once with a `CreateTaskResult` (a task id,
status `working`) run in the background; `tasks/get` polls it, `tasks/result` waits for
and returns the tool's `CallToolResult`, `tasks/cancel` cancels it (the work stops at its next
step and what ran is charged, exactly as when a plain call is cancelled), `tasks/list` lists
them. Without `task`, or for a tool whose `execution.taskSupport` is "forbidden" (one that may
ask the user a question), the call runs as before.

mcp 2.3.0 ships the task types but leaves `tasks/*` out of its method tables and validates a
`tools/call` result as a `CallToolResult`, so the task path sits in a `Server.middleware` entry
(which may answer a request itself) and the `tasks/*` methods are added with
`Server.add_request_handler`. Tasks live in this process for their ttl (at most MAX_TTL_MS) and
are visible only to the connection that created them. Not done: `input_required` (a task never
asks the user; such tools refuse task augmentation) and `notifications/tasks/status` (optional
in the spec; clients poll). Progress notifications keep the original request's token.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksResult,
    PaginatedRequestParams,
    ServerCapabilities,
    ServerTasksCapability,
    ServerTasksRequestsCapability,
    Task,
    TasksCallCapability,
    TasksCancelCapability,
    TasksListCapability,
    TaskStatus,
    TasksToolsCapability,
)

from mcp_server.spec import RELATED_TASK as RELATED

TASKS_VERSION = "2025-11-25"
DEFAULT_TTL_MS = 60 * 60 * 1000
MAX_TTL_MS = 24 * 60 * 60 * 1000
POLL_MS = 1000
MAX_TASKS = 1000


def _owner(ctx: ServerRequestContext[Any, Any]) -> object:
    return ctx.session.client_params


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class TaskRecord:
    task_id: str
    # The connection that created it: its initialize params, one object per connection (the
    # SDK's per-request session exposes no connection of its own); held, so never reused.
    owner: object
    ttl_ms: int
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    status: TaskStatus = "working"
    message: str | None = None
    result: dict[str, Any] | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)

    def wire(self) -> Task:
        return Task(
            task_id=self.task_id,
            status=self.status,
            status_message=self.message,
            created_at=self.created_at,
            last_updated_at=self.updated_at,
            ttl=self.ttl_ms,
            poll_interval=POLL_MS,
        )

    def finish(
        self, status: TaskStatus, message: str | None, result: dict[str, Any] | None
    ) -> None:
        self.status, self.message, self.result = status, message, result
        self.updated_at = _now()
        self.finished = time.monotonic()
        self.done.set()

    def expired(self, now: float) -> bool:
        return self.finished is not None and now - self.started > self.ttl_ms / 1000


@dataclass
class TaskStore:
    """The tasks of this server process; `group` runs them (set by the server's lifespan)."""

    no_task: frozenset[str] = frozenset()  # tools that never run as tasks
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    group: anyio.abc.TaskGroup | None = None

    def _sweep(self) -> None:
        now = time.monotonic()
        for task_id in [t for t, r in self.tasks.items() if r.expired(now)]:
            del self.tasks[task_id]
        while len(self.tasks) >= MAX_TASKS:
            oldest = next((t for t, r in self.tasks.items() if r.finished is not None), None)
            if oldest is None:
                raise MCPError(code=INVALID_PARAMS, message=f"{MAX_TASKS} tasks are running")
            del self.tasks[oldest]

    def find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRecord:
        self._sweep()
        record = self.tasks.get(task_id)
        if record is None or record.owner is not _owner(ctx):
            raise MCPError(code=INVALID_PARAMS, message=f"unknown task {task_id[:100]!r}")
        return record

    # -- the tools/call path --------------------------------------------------------------

    def wants_task(self, ctx: ServerRequestContext[Any, Any]) -> Mapping[str, Any] | None:
        """The `task` metadata of a task-augmented tools/call this server will run as a task."""
        params = ctx.params
        if ctx.method != "tools/call" or not isinstance(params, Mapping) or self.group is None:
            return None
        task = params.get("task")
        if not isinstance(task, Mapping) or params.get("name") in self.no_task:
            return None
        return task

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        task = self.wants_task(ctx)
        if task is None:
            return await call_next(ctx)
        ttl = task.get("ttl")
        ttl_ms = min(ttl, MAX_TTL_MS) if isinstance(ttl, int) and ttl > 0 else DEFAULT_TTL_MS
        self._sweep()
        record = TaskRecord(task_id=uuid.uuid4().hex, owner=_owner(ctx), ttl_ms=ttl_ms)
        self.tasks[record.task_id] = record
        plain = {k: v for k, v in (ctx.params or {}).items() if k != "task"}
        meta = plain.get("_meta")
        if not isinstance(meta, Mapping):
            meta = {}
        plain["_meta"] = {**meta, RELATED: {"taskId": record.task_id}}
        assert self.group is not None
        self.group.start_soon(self._run, record, call_next, replace(ctx, params=plain))
        return CreateTaskResult(task=record.wire()).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )

    async def _run(
        self, record: TaskRecord, call_next: CallNext, ctx: ServerRequestContext[Any, Any]
    ) -> None:
        with record.scope:
            try:
                result = await call_next(ctx)
            except MCPError as exc:
                record.finish("failed", exc.error.message, None)
                return
            except Exception as exc:  # the registry turns tool errors into results already
                record.finish("failed", f"{type(exc).__name__}", None)
                return
            payload = dict(result) if isinstance(result, Mapping) else {}
            failed = bool(payload.get("isError"))
            record.finish("failed" if failed else "completed", None, payload)
        if not record.done.is_set():
            record.finish("cancelled", "cancelled by tasks/cancel", None)

    # -- tasks/* ----------------------------------------------------------------------------

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams
    ) -> GetTaskResult:
        record = self.find(ctx, params.task_id)
        return GetTaskResult(**record.wire().model_dump())

    async def result(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        record = self.find(ctx, params.task_id)
        await record.done.wait()
        if record.result is None:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"task {record.task_id} ended {record.status}: {record.message}",
            )
        meta = {**(record.result.get("_meta") or {}), RELATED: {"taskId": record.task_id}}
        return {**record.result, "_meta": meta}

    async def cancel(
        self, ctx: ServerRequestContext[Any, Any], params: CancelTaskRequestParams
    ) -> CancelTaskResult:
        record = self.find(ctx, params.task_id)
        if record.done.is_set():
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"task {record.task_id} already ended ({record.status}); nothing to cancel",
            )
        record.scope.cancel()
        with contextlib.suppress(TimeoutError):
            with anyio.fail_after(30):  # the call settles what it already sent, then ends
                await record.done.wait()
        return CancelTaskResult(**record.wire().model_dump())

    async def list(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListTasksResult:
        self._sweep()
        mine = [r.wire() for r in self.tasks.values() if r.owner is _owner(ctx)]
        return ListTasksResult(tasks=mine)

    def install(self, server: Server[Any]) -> None:
        """Serve tasks/* and answer task-augmented tools/call on `server`."""
        server.add_request_handler("tasks/get", GetTaskRequestParams, self.get)
        server.add_request_handler("tasks/result", GetTaskPayloadRequestParams, self.result)
        server.add_request_handler("tasks/cancel", CancelTaskRequestParams, self.cancel)
        server.add_request_handler("tasks/list", PaginatedRequestParams, self.list)
        server.middleware.append(self.middleware)


def with_tasks(capabilities: ServerCapabilities) -> ServerCapabilities:
    """`capabilities` declaring task-augmented tools/call, tasks/list and tasks/cancel."""
    return capabilities.model_copy(
        update={
            "tasks": ServerTasksCapability(
                list=TasksListCapability(),
                cancel=TasksCancelCapability(),
                requests=ServerTasksRequestsCapability(
                    tools=TasksToolsCapability(call=TasksCallCapability())
                ),
            )
        }
    )
