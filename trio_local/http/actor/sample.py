"""POST /actor/v1/sampling-runs/{sampling_run}/sample: generation and compute_logprobs."""

from __future__ import annotations

import asyncio

from pytrio.protocol.actor.sampling_run.sample import SampleRequest
from starlette.requests import Request
from starlette.responses import Response

from trio_local.errors import ApiError, EngineError, not_found
from trio_local.http.common import encode_json, read_model, service
from trio_local.protocol import bounds


async def sample(request: Request) -> Response:
    state = service(request)
    run_id = request.path_params["sampling_run"]
    if request.state.actor_run != run_id:
        raise ApiError(403, "forbidden", "the actor token was issued for another sampling run")
    row = state.store.sampling_run(run_id)
    if row is None:
        raise not_found("sampling run", run_id)
    body = await read_model(request, SampleRequest)
    try:
        bounds.check_sample(body)
    except ApiError:
        if state.checks is not None:  # --check reports what a script sent, refused or not
            state.checks.refused_sample(run_id, row.source_checkpoint_uri, body)
        raise
    prompt_tokens = sum(
        len(chunk.tokens) if chunk.type == "encoded_text" else chunk.expected_tokens or 1
        for chunk in body.prompt.chunks
    )
    bounds.check_sample_size(body, prompt_tokens)
    uri = row.source_checkpoint_uri
    model_id = row.model_id
    work = lambda: state.engine.sample(model_id, uri, body)  # noqa: E731
    if state.checks is not None:
        work = state.checks.sample_work(run_id, uri, body, work, model_id=model_id)
    future = state.scheduler.submit(run_id, "sample", work)
    try:
        result = await asyncio.wrap_future(future)
    except EngineError as error:
        raise ApiError(400, error.code, error.message) from None
    result["sampling_run"] = run_id
    # Encoding a large answer takes a while; off the event loop, every other request (and
    # every heartbeat) keeps being answered meanwhile.
    return Response(await asyncio.to_thread(encode_json, result), media_type="application/json")
