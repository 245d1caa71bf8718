"""POST /actor/v1/client/heartbeat: training clients report they are alive (see liveness.py)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from trio_local.http.common import service


async def beat(request: Request) -> Response:
    return JSONResponse({"heartbeat_ms": service(request).heartbeat(request.state.actor_run)})
