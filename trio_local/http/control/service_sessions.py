"""/api/openapi/v1/service-sessions: create, close, renew, get and list sessions."""

from __future__ import annotations

from pytrio.protocol.control.service_session.close import ServiceSessionCloseRequest
from pytrio.protocol.control.service_session.create import ServiceSessionCreateRequest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trio_local.errors import not_found
from trio_local.http.common import paging, read_model, reply, service
from trio_local.protocol.control import cursor, session, session_item, session_renewed
from trio_local.storage.rows import SessionRow, SessionStatus


def _session(request: Request) -> SessionRow:
    ident = request.path_params["session"]
    row = service(request).store.session(ident)
    if row is None:
        raise not_found("service session", ident)
    return row


async def create(request: Request) -> Response:
    body = await read_model(request, ServiceSessionCreateRequest)
    row = service(request).store.create_session(body.sdk_version)
    return reply(session_item(row))


async def close(request: Request) -> Response:
    body = await read_model(request, ServiceSessionCloseRequest)
    row = _session(request)
    service(request).store.close_session(row.cuid, SessionStatus(body.status))
    service(request).liveness.end_session(row.cuid)  # the client is gone: free its slots
    return reply({"service_session_cuid": row.cuid, "status": body.status})


async def renew(request: Request) -> Response:
    return reply(session_renewed(_session(request)))


async def get(request: Request) -> Response:
    row = _session(request)
    store = service(request).store
    return reply(
        session(
            row,
            store.session_run_ids(row.cuid, "training_runs"),
            store.session_run_ids(row.cuid, "sampling_runs"),
        )
    )


async def list_sessions(request: Request) -> Response:
    limit, offset = paging(request, 20)
    page = service(request).store.sessions(limit, offset)
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
