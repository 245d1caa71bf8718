"""/api/openapi/v1 training runs: create (in a session), update for load_state, find by
checkpoint URI, renew the actor token, get, list, and list a run's checkpoints."""

from __future__ import annotations

import asyncio

from pytrio.protocol.control.training_run.create import TrainingRunCreateRequest
from pytrio.protocol.control.training_run.update import TrainingRunUpdateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local import catalogue
from trio_local.errors import ApiError, not_found
from trio_local.http.common import origin, paging, read_model, reply, service
from trio_local.protocol import bounds
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
from trio_local.security import issue_actor_token
from trio_local.storage.rows import CheckpointRow, NewTrainingRun, TrainingRunRow


def _run(request: Request) -> TrainingRunRow:
    ident = request.path_params["run"]
    row = service(request).store.training_run(ident)
    if row is None:
        raise not_found("training run", ident)
    return row


def _checkpoint_by_uri(request: Request, uri: str) -> CheckpointRow:
    row = service(request).store.checkpoint_by_uri(uri)
    if row is None:
        raise ApiError(
            404,
            "checkpoint_not_found",
            f"no checkpoint at '{uri}'; list them with RestClient.list_user_checkpoints()",
        )
    return row


def _actor(request: Request, run_id: str) -> dict:
    token, expires = issue_actor_token(service(request).secret, run_id)
    return actor(origin(request), token, expires)


def served_entry(request: Request, base_model: str) -> catalogue.CatalogueEntry:
    try:
        return catalogue.resolve(base_model, service(request).config.models)
    except catalogue.ModelNotServed as error:
        raise ApiError(404, "model_not_found", str(error)) from None


async def tokenizer_ready(request: Request, entry: catalogue.CatalogueEntry) -> None:
    # The SDK loads the tokenizer right after creating a run; it must exist by then, under
    # the id's own name in the modelscope cache (else the SDK would try a hub download).
    tokenizers = service(request).tokenizers
    try:
        await asyncio.wrap_future(tokenizers.ready(entry.family))
        tokenizers.seed(entry)
    except Exception as error:
        raise ApiError(
            400, "tokenizer_unavailable", f"the {entry.family.name} tokenizer build failed: {error}"
        ) from None


async def create(request: Request) -> Response:
    state = service(request)
    session = request.path_params["session"]
    if state.store.session(session) is None:
        raise not_found("service session", session)
    body = await read_model(request, TrainingRunCreateRequest)
    if body.source_checkpoint_uri:
        saved = _checkpoint_by_uri(request, body.source_checkpoint_uri).model_id
        entry = catalogue.resolve(saved)  # the checkpoint's own model, whatever --models says
    else:
        entry = served_entry(request, body.base_model)
    model_id = entry.model_id
    state.engine.prepare(entry)  # built while the client loads its tokenizer
    bounds.check_rank(body.lora_rank)
    if not (body.train_mlp or body.train_attn or body.train_unembed):
        raise ApiError(
            400,
            "validation_failed",
            "LoRA trains nothing: set at least one of train_mlp, train_attn, train_unembed",
        )
    await tokenizer_ready(request, entry)
    state.liveness.admit()  # no await between the capacity check and the insert
    new = NewTrainingRun(
        model_id=model_id,
        lora_rank=body.lora_rank,
        train_mlp=body.train_mlp,
        train_attn=body.train_attn,
        train_unembed=body.train_unembed,
        seed=body.seed,
        source_checkpoint_uri=body.source_checkpoint_uri or None,
        restore_optimizer=body.restore_optimizer,
    )
    row = state.store.create_training_run(session, new)
    state.liveness.touch(row.cuid)
    access = _actor(request, row.cuid)
    return reply(training_run_created(row, model_id, access, state.config.trainer_limits))


async def update(request: Request) -> Response:
    row = _run(request)
    body = await read_model(request, TrainingRunUpdateRequest)
    _checkpoint_by_uri(request, body.source_checkpoint_uri)
    service(request).store.set_training_run_source(
        row.cuid, body.source_checkpoint_uri, restore_optimizer=body.restore_optimizer
    )
    access = _actor(request, row.cuid)
    limits = service(request).config.trainer_limits
    return reply(
        training_run_updated(body.source_checkpoint_uri, body.restore_optimizer, access, limits)
    )


async def by_checkpoint_uri(request: Request) -> Response:
    uri = request.query_params.get("checkpoint_uri", "")
    if not uri:
        raise ApiError(400, "invalid_query_params", "checkpoint_uri is required")
    ckpt = _checkpoint_by_uri(request, uri)
    run = service(request).store.training_run(ckpt.run_cuid)
    if run is None:
        raise not_found("training run", ckpt.run_cuid)
    return reply(found_by_checkpoint(ckpt, run))


async def renew(request: Request) -> Response:
    row = _run(request)
    return reply(training_run_renewed(row, _actor(request, row.cuid)))


async def get(request: Request) -> Response:
    return reply(training_run(_run(request)))


async def list_runs(request: Request) -> Response:
    limit, offset = paging(request, 20)
    page = service(request).store.training_runs(limit, offset)
    return reply(
        {
            "training_runs": [training_run(row) for row in page.rows],
            "cursor": cursor(offset, limit, page.total),
        }
    )


async def list_checkpoints(request: Request) -> Response:
    row = _run(request)
    limit, offset = paging(request, 200)
    state = service(request)
    state.sweep_expired()
    page = state.store.checkpoints(row.cuid, limit, offset)
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
