"""/api/openapi/v1 sampling runs: create (in a session), renew the actor token, get."""

from __future__ import annotations

from typing import Any

from pytrio.protocol.control.sampling_run.create import SamplingRunCreateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local.http.common import origin, read_model, reply, service
from trio_local.protocol.control import (
    actor,
    sampling_run,
    sampling_run_created,
    sampling_run_renewed,
)


def _actor(request: Request, run_id: str) -> dict[str, Any]:
    token, expires = service(request).actor_token(run_id)
    return actor(origin(request), token, expires)


async def create(request: Request) -> Response:
    state = service(request)
    session = state.sessions.get(request.path_params["session"])
    body = await read_model(request, SamplingRunCreateRequest)
    row = await state.sampling_runs.create(session.cuid, body)
    return reply(sampling_run_created(row, _actor(request, row.cuid), state.config.sampler_limits))


async def renew(request: Request) -> Response:
    row = service(request).sampling_runs.get(request.path_params["run"])
    return reply(sampling_run_renewed(row, _actor(request, row.cuid)))


async def get(request: Request) -> Response:
    return reply(sampling_run(service(request).sampling_runs.get(request.path_params["run"])))


def routes(v1: str) -> list[Route]:
    return [
        Route(f"{v1}/service-sessions/{{session}}/sampling-runs", create, methods=["POST"]),
        Route(f"{v1}/sampling-runs/{{run}}/renew", renew, methods=["POST"]),
        Route(f"{v1}/sampling-runs/{{run}}", get, methods=["GET"]),
    ]
