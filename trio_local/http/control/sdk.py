"""GET /api/sdk/bootstrap: SDK compatibility (the pinned range is compatible) and notices."""

from __future__ import annotations

from pytrio.protocol.control.platform.bootstrap import SDKBootstrapResponse
from starlette.requests import Request
from starlette.responses import Response

from trio_local.http.common import reply
from trio_local.protocol.control import dump


async def bootstrap(request: Request) -> Response:
    version = request.query_params.get("sdk_version", "")
    body = SDKBootstrapResponse(
        compatibility={"status": "compatible", "sdk_version": version or "unknown"},
        notices=[],
    )
    return reply(dump(body))
