"""POST /actor/v1/sampling-runs/{sampling_run}/sample: generation and compute_logprobs."""

from __future__ import annotations

import asyncio

from pytrio.protocol.actor.sampling_run.sample import SampleRequest
from starlette.requests import Request
from starlette.responses import Response

from trio_local.errors import ApiError
from trio_local.http.common import encode_json, read_model, service


async def sample(request: Request) -> Response:
    state = service(request)
    run_id = request.path_params["sampling_run"]
    if request.state.actor_run != run_id:
        raise ApiError(403, "forbidden", "the actor token was issued for another sampling run")
    row = state.sampling_runs.get(run_id)
    body = await read_model(request, SampleRequest)
    result = await state.sampler.sample(row, body)
    # Encoding a large answer takes a while; off the event loop, every other request (and
    # every heartbeat) keeps being answered meanwhile.
    return Response(await asyncio.to_thread(encode_json, result), media_type="application/json")
