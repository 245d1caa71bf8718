"""/api/openapi/v1 sampling runs: create (in a session), renew the actor token, get."""

from __future__ import annotations

from pytrio.protocol.control.sampling_run.create import SamplingRunCreateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local import catalogue
from trio_local.errors import ApiError, not_found
from trio_local.http.common import origin, read_model, reply, service
from trio_local.http.control.training_runs import served_entry, tokenizer_ready
from trio_local.protocol.control import (
    actor,
    sampling_run,
    sampling_run_created,
    sampling_run_renewed,
)
from trio_local.security import issue_actor_token
from trio_local.storage.rows import SamplingRunRow


def _run(request: Request) -> SamplingRunRow:
    ident = request.path_params["run"]
    row = service(request).store.sampling_run(ident)
    if row is None:
        raise not_found("sampling run", ident)
    return row


def _actor(request: Request, run_id: str) -> dict:
    token, expires = issue_actor_token(service(request).secret, run_id)
    return actor(origin(request), token, expires)


async def create(request: Request) -> Response:
    state = service(request)
    session = request.path_params["session"]
    if state.store.session(session) is None:
        raise not_found("service session", session)
    body = await read_model(request, SamplingRunCreateRequest)
    if body.source_checkpoint_uri:
        state.sweep_expired()
        ckpt = state.store.checkpoint_by_uri(body.source_checkpoint_uri)
        if ckpt is None:
            raise ApiError(
                404,
                "checkpoint_not_found",
                f"no checkpoint at '{body.source_checkpoint_uri}' (deleted, expired, or never "
                "saved); save one with save_weights_for_sampler",
            )
        entry = catalogue.resolve(ckpt.model_id)
    else:
        entry = served_entry(request, body.base_model)
    state.engine.prepare(entry)
    # A sampling script may load the tokenizer for the sampler's id (get_tokenizer).
    await tokenizer_ready(request, entry)
    model_id = entry.model_id
    row = state.store.create_sampling_run(session, model_id, body.source_checkpoint_uri)
    return reply(sampling_run_created(row, _actor(request, row.cuid), state.config.sampler_limits))


async def renew(request: Request) -> Response:
    row = _run(request)
    return reply(sampling_run_renewed(row, _actor(request, row.cuid)))


async def get(request: Request) -> Response:
    return reply(sampling_run(_run(request)))


def routes(v1: str) -> list[Route]:
    return [
        Route(f"{v1}/service-sessions/{{session}}/sampling-runs", create, methods=["POST"]),
        Route(f"{v1}/sampling-runs/{{run}}/renew", renew, methods=["POST"]),
        Route(f"{v1}/sampling-runs/{{run}}", get, methods=["GET"]),
    ]
