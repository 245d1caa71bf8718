"""/api/openapi/v1/checkpoints: list the user's checkpoints, sign a download URL, delete."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local.errors import ApiError
from trio_local.http.common import origin, paging, reply, service
from trio_local.protocol.control import checkpoint, cursor, download
from trio_local.security import sign_download
from trio_local.storage.rows import CheckpointRow

DOWNLOAD_TTL_S = 3600


def _checkpoint(request: Request) -> CheckpointRow:
    ident = request.path_params["checkpoint"]
    state = service(request)
    state.sweep_expired()
    row = state.store.checkpoint(ident)
    if row is None:
        raise ApiError(
            404,
            "checkpoint_not_found",
            f"checkpoint '{ident}' does not exist (deleted, expired, or never saved)",
        )
    return row


async def list_user(request: Request) -> Response:
    limit, offset = paging(request, 100)
    state = service(request)
    state.sweep_expired()
    page = state.store.checkpoints(None, limit, offset)
    return reply(
        {
            "checkpoints": [checkpoint(row) for row in page.rows],
            "cursor": cursor(offset, limit, page.total),
        }
    )


async def download_url(request: Request) -> Response:
    row = _checkpoint(request)
    expires = int(time.time()) + DOWNLOAD_TTL_S
    signature = sign_download(service(request).secret, row.cuid, expires)
    url = f"{origin(request)}/files/checkpoints/{row.cuid}.tar?expires={expires}&sig={signature}"
    return reply(download(url, datetime.fromtimestamp(expires, UTC)))


async def delete(request: Request) -> Response:
    row = _checkpoint(request)
    service(request).delete_checkpoint(row)
    return Response(status_code=204)


def routes(v1: str) -> list[Route]:
    base = f"{v1}/checkpoints"
    return [
        Route(base, list_user, methods=["GET"]),
        Route(base + "/{checkpoint}/download-url", download_url, methods=["GET"]),
        Route(base + "/{checkpoint}", delete, methods=["DELETE"]),
    ]
