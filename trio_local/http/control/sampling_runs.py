"""/api/openapi/v1 sampling runs: create (in a session), renew the actor token, get."""

from __future__ import annotations

from pytrio.protocol.control.sampling_run.create import SamplingRunCreateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local import catalogue
from trio_local.errors import ApiError, not_found
from trio_local.http.common import origin, read_model, reply, service
from trio_local.protocol.control import MODEL_SPEC, WORKSPACE, actor, limits
from trio_local.security import issue_actor_token


def _run(request: Request) -> dict:
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
        model_id = ckpt["model_id"]
    else:
        entry = catalogue.find(body.base_model)
        if entry is None:
            raise ApiError(
                404,
                "model_not_found",
                f"base_model '{body.base_model}' is not served by trio-local; available: "
                f"{', '.join(catalogue.known_ids())}",
            )
        model_id = entry.model_id
    row = state.store.create_sampling_run(session, model_id, body.source_checkpoint_uri)
    return reply(
        {
            "sampling_run_cuid": row["cuid"],
            "service_session_cuid": session,
            "workspace_cuid": WORKSPACE,
            "status": row["status"],
            "run_index": row["run_index"],
            "model_spec_cuid": MODEL_SPEC,
            "model_alias": model_id,
            "model_id": model_id,
            "sampler": limits(catalogue.SAMPLER_LIMITS),
            "created_at": row["created_at"],
            **_actor(request, row["cuid"]),
        }
    )


async def renew(request: Request) -> Response:
    row = _run(request)
    return reply(
        {
            "sampling_run_cuid": row["cuid"],
            "service_session_cuid": row["session_cuid"],
            "workspace_cuid": WORKSPACE,
            **_actor(request, row["cuid"]),
        }
    )


async def get(request: Request) -> Response:
    row = _run(request)
    return reply(
        {
            "sampling_run_cuid": row["cuid"],
            "service_session_cuid": row["session_cuid"],
            "workspace_cuid": WORKSPACE,
            "status": row["status"],
            "base_model": row["model_id"],
            "model_id": row["model_id"],
            "alias": row["model_id"],
            "source_checkpoint_uri": row["source_checkpoint_uri"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }
    )


def routes(v1: str) -> list[Route]:
    return [
        Route(f"{v1}/service-sessions/{{session}}/sampling-runs", create, methods=["POST"]),
        Route(f"{v1}/sampling-runs/{{run}}/renew", renew, methods=["POST"]),
        Route(f"{v1}/sampling-runs/{{run}}", get, methods=["GET"]),
    ]
