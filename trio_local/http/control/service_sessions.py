"""/api/openapi/v1/service-sessions: create, close, renew, get and list sessions."""

from __future__ import annotations

from pytrio.protocol.control.service_session.close import ServiceSessionCloseRequest
from pytrio.protocol.control.service_session.create import ServiceSessionCreateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local.http.common import paging, read_model, reply, service
from trio_local.protocol.control import cursor, session, session_item, session_renewed


async def create(request: Request) -> Response:
    body = await read_model(request, ServiceSessionCreateRequest)
    return reply(session_item(service(request).sessions.create(body.sdk_version)))


async def close(request: Request) -> Response:
    body = await read_model(request, ServiceSessionCloseRequest)
    ident = request.path_params["session"]
    row = service(request).sessions.close(ident, body.status)
    return reply({"service_session_cuid": row.cuid, "status": body.status})


async def renew(request: Request) -> Response:
    return reply(session_renewed(service(request).sessions.get(request.path_params["session"])))


async def get(request: Request) -> Response:
    sessions = service(request).sessions
    row = sessions.get(request.path_params["session"])
    return reply(session(row, *sessions.run_ids(row)))


async def list_sessions(request: Request) -> Response:
    limit, offset = paging(request, 20)
    page = service(request).sessions.page(limit, offset)
    return reply(
        {
            "service_sessions": [session_item(row) for row in page.rows],
            "cursor": cursor(offset, limit, page.total),
        }
    )


def routes(v1: str) -> list[Route]:
    base = f"{v1}/service-sessions"
    return [
        Route(base, create, methods=["POST"]),
        Route(base, list_sessions, methods=["GET"]),
        Route(base + "/{session}/close", close, methods=["POST"]),
        Route(base + "/{session}/renew", renew, methods=["POST"]),
        Route(base + "/{session}", get, methods=["GET"]),
    ]
