"""GET /api/models: the catalogue, paged."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from trio_local import catalogue
from trio_local.http.common import paging, reply, service
from trio_local.protocol.control import model_info


async def list_models(request: Request) -> Response:
    limit, offset = paging(request, 100)
    config = service(request).config
    every = catalogue.announced(config.models)
    entries = every[offset : offset + limit]
    return reply(
        {
            "items": [
                model_info(entry, config.trainer_limits, config.sampler_limits) for entry in entries
            ],
            "total": len(every),
            "limit": limit,
            "offset": offset,
        }
    )
