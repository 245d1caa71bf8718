"""/api/openapi/v1/checkpoints: list the user's checkpoints, sign a download URL, delete."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local.http.common import origin, paging, reply, service
from trio_local.protocol.control import checkpoint, cursor, download


async def list_user(request: Request) -> Response:
    limit, offset = paging(request, 100)
    page = service(request).checkpoints.page(None, limit, offset)
    return reply(
        {
            "checkpoints": [checkpoint(row) for row in page.rows],
            "cursor": cursor(offset, limit, page.total),
        }
    )


async def download_url(request: Request) -> Response:
    signed = service(request).checkpoints.signed_download(request.path_params["checkpoint"])
    url = (
        f"{origin(request)}/files/checkpoints/{signed.cuid}.tar"
        f"?expires={signed.expires}&sig={signed.signature}"
    )
    return reply(download(url, datetime.fromtimestamp(signed.expires, UTC)))


async def delete(request: Request) -> Response:
    checkpoints = service(request).checkpoints
    checkpoints.delete(checkpoints.get(request.path_params["checkpoint"]))
    return Response(status_code=204)


def routes(v1: str) -> list[Route]:
    base = f"{v1}/checkpoints"
    return [
        Route(base, list_user, methods=["GET"]),
        Route(base + "/{checkpoint}/download-url", download_url, methods=["GET"]),
        Route(base + "/{checkpoint}", delete, methods=["DELETE"]),
    ]
