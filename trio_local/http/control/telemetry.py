"""POST /api/telemetry/event: the SDK's telemetry sink. Batches are counted, not stored."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from trio_local.http.common import service


async def receive(request: Request) -> Response:
    await request.body()
    service(request).telemetry_batches += 1
    return Response(status_code=204)
