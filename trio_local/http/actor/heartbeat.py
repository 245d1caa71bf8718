"""POST /actor/v1/client/heartbeat: training clients report they are alive."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from trio_local.http.common import service

HEARTBEAT_MS = 60_000


async def beat(request: Request) -> Response:
    state = service(request)
    state.engine_heartbeats = getattr(state, "engine_heartbeats", {})
    state.engine_heartbeats[request.state.actor_run] = time.time()
    return JSONResponse({"heartbeat_ms": HEARTBEAT_MS})
