"""/api/openapi/v1 training runs: create (in a session), update for load_state, find by
checkpoint URI, renew the actor token, get, list, and list a run's checkpoints."""

from __future__ import annotations

from typing import Any

from pytrio.protocol.control.training_run.create import TrainingRunCreateRequest
from pytrio.protocol.control.training_run.update import TrainingRunUpdateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local.errors import ApiError
from trio_local.http.common import origin, paging, read_model, reply, service
from trio_local.protocol.control import (
    actor,
    checkpoint,
    cursor,
    found_by_checkpoint,
    training_run,
    training_run_created,
    training_run_renewed,
    training_run_updated,
)


def _actor(request: Request, run_id: str) -> dict[str, Any]:
    token, expires = service(request).actor_token(run_id)
    return actor(origin(request), token, expires)


async def create(request: Request) -> Response:
    state = service(request)
    session = state.sessions.get(request.path_params["session"])
    body = await read_model(request, TrainingRunCreateRequest)
    row = await state.training_runs.create(session.cuid, body)
    access = _actor(request, row.cuid)
    return reply(training_run_created(row, row.model_id, access, state.config.trainer_limits))


async def update(request: Request) -> Response:
    state = service(request)
    row = state.training_runs.get(request.path_params["run"])
    body = await read_model(request, TrainingRunUpdateRequest)
    uri = body.source_checkpoint_uri
    state.training_runs.start_from(row, uri, restore_optimizer=body.restore_optimizer)
    access = _actor(request, row.cuid)
    limits = state.config.trainer_limits
    return reply(training_run_updated(uri, body.restore_optimizer, access, limits))


async def by_checkpoint_uri(request: Request) -> Response:
    uri = request.query_params.get("checkpoint_uri", "")
    if not uri:
        raise ApiError(400, "invalid_query_params", "checkpoint_uri is required")
    found, run = service(request).training_runs.by_checkpoint(uri)
    return reply(found_by_checkpoint(found, run))


async def renew(request: Request) -> Response:
    row = service(request).training_runs.get(request.path_params["run"])
    return reply(training_run_renewed(row, _actor(request, row.cuid)))


async def get(request: Request) -> Response:
    return reply(training_run(service(request).training_runs.get(request.path_params["run"])))


async def list_runs(request: Request) -> Response:
    limit, offset = paging(request, 20)
    page = service(request).training_runs.page(limit, offset)
    return reply(
        {
            "training_runs": [training_run(row) for row in page.rows],
            "cursor": cursor(offset, limit, page.total),
        }
    )


async def list_checkpoints(request: Request) -> Response:
    runs = service(request).training_runs
    row = runs.get(request.path_params["run"])
    limit, offset = paging(request, 200)
    page = runs.checkpoints(row, limit, offset)
    return reply(
        {
            "checkpoints": [checkpoint(item) for item in page.rows],
            "cursor": cursor(offset, limit, page.total),
        }
    )


def routes(v1: str) -> list[Route]:
    runs = f"{v1}/training-runs"
    return [
        Route(f"{v1}/service-sessions/{{session}}/training-runs", create, methods=["POST"]),
        Route(
            f"{v1}/service-sessions/{{session}}/training-runs/{{run}}", update, methods=["PATCH"]
        ),
        Route(f"{runs}/by-checkpoint-uri", by_checkpoint_uri, methods=["GET"]),
        Route(runs, list_runs, methods=["GET"]),
        Route(f"{runs}/{{run}}/renew", renew, methods=["POST"]),
        Route(f"{runs}/{{run}}/checkpoints", list_checkpoints, methods=["GET"]),
        Route(f"{runs}/{{run}}", get, methods=["GET"]),
    ]
