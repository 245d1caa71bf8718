"""The Starlette app: routes, authentication, body limits and error rendering."""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trio_local.config import STATS_PATH
from trio_local.errors import STORAGE_CODE, ApiError
from trio_local.http.actor import events, heartbeat, sample
from trio_local.http.control import (
    api_key,
    checkpoints,
    models,
    sampling_runs,
    sdk,
    service_sessions,
    telemetry,
    training_runs,
)
from trio_local.http.files import download
from trio_local.http.stats import stats
from trio_local.security import keys_match, verify_actor_token
from trio_local.service import Service

logger = logging.getLogger("trio_local")


async def _send_error(send: Send, error: ApiError) -> None:
    body = json.dumps(error.body()).encode()
    await send(
        {
            "type": "http.response.start",
            "status": error.status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _send_closed(send: Send, path: str) -> None:
    # After serve_in_background() exits: let SDK sessions close cleanly, refuse the rest with a
    # status the SDK does not retry.
    if path.endswith("/close"):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await _send_error(send, ApiError(410, "service_stopped", "this trio-local service stopped"))


class ServiceMiddleware:
    """An ASGI middleware of the service's: HTTP requests go to `http`, the rest passes."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class GuardMiddleware(ServiceMiddleware):
    """Authenticates each plane and caps request bodies before any route runs."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        if self.service.closed:
            await _send_closed(send, path)
            return
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope["headers"]
        }
        try:
            limit = self._authorise(scope, path, headers)
        except ApiError as error:
            await _send_error(send, error)
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await _send_error(send, too_large(limit))
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise too_large(limit)
            return message

        await self.app(scope, limited, send)

    def _authorise(self, scope: Scope, path: str, headers: dict[str, str]) -> int:
        config = self.service.config
        bearer = headers.get("authorization", "")
        token = bearer[7:].strip() if bearer.lower().startswith("bearer ") else None
        if path.startswith("/api/"):
            if not keys_match(headers.get("x-api-key") or token, self.service.api_key):
                raise ApiError(
                    401,
                    "unauthorized",
                    "invalid API key for this trio-local service; use the key it printed on "
                    "first start (stored in its data directory as api_key)",
                )
            return config.control_body_limit
        if path.startswith("/actor/"):
            run_id = verify_actor_token(self.service.secret, token or "")
            if run_id is None:
                raise ApiError(401, "unauthorized", "invalid or expired actor token")
            scope.setdefault("state", {})["actor_run"] = run_id
            return config.actor_body_limit
        return config.control_body_limit


def too_large(limit: int) -> ApiError:
    return ApiError(
        413, "payload_too_large", f"request body exceeds trio-local's limit of {limit} bytes"
    )


async def api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return JSONResponse(error.body(), status_code=error.status)


def unexpected_body(error: Exception, service: Service, method: str, path: str) -> dict[str, str]:
    """What an error no handler expected answers: a storage fault named, else internal_error."""
    storage = service.storage_fault(error)
    if storage is not None:  # a full disk or a read-only data dir: named, not a bug
        logger.error("%s %s: %s", method, path, storage)
        return {"code": STORAGE_CODE, "message": f"trio-local {storage}"}
    logger.error("unhandled error on %s %s", method, path, exc_info=error)
    return {"code": "internal_error", "message": f"trio-local failed: {type(error).__name__}"}


class CatchAll(ServiceMiddleware):
    """Answers an unexpected error itself, inside Starlette's ServerErrorMiddleware: that
    middleware re-raises after its handler answered, and uvicorn then closes the client's
    keep-alive connection (the SDK's next request on it was reset and retried). A deterministic
    failure is a 4xx: the SDK retries 5xx for 15 minutes."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as error:
            if started:  # part of an answer is out: only closing the connection ends it
                raise
            body = unexpected_body(error, self.service, scope.get("method", ""), scope["path"])
            await JSONResponse(body, status_code=400)(scope, receive, send)


async def probe(request: Request) -> Response:
    return Response(status_code=200)


def build_app(service: Service) -> Any:
    v1 = "/openapi/v1"
    control = [
        Route(f"{v1}/api-key/verify", api_key.verify, methods=["GET"]),
        Route("/sdk/bootstrap", sdk.bootstrap, methods=["GET"]),
        Route("/models", models.list_models, methods=["GET"]),
        Route("/telemetry/event", telemetry.receive, methods=["POST"]),
        *service_sessions.routes(v1),
        *training_runs.routes(v1),
        *sampling_runs.routes(v1),
        *checkpoints.routes(v1),
    ]
    actor = [
        Route("/v1/events", events.submit, methods=["POST"]),
        Route("/v1/events/{event_id}", events.poll, methods=["GET"]),
        Route("/v1/client/heartbeat", heartbeat.beat, methods=["POST"]),
        Route("/v1/sampling-runs/{sampling_run}/sample", sample.sample, methods=["POST"]),
    ]
    app = Starlette(
        routes=[
            Mount("/api", routes=control),
            Mount("/actor", routes=actor),
            Route("/files/checkpoints/{checkpoint}.tar", download, methods=["GET"]),
            Route(STATS_PATH, stats, methods=["GET"]),
            Route("/", probe, methods=["GET", "HEAD"]),
        ],
        exception_handlers={ApiError: api_error},
        middleware=[Middleware(CatchAll, service=service)],
    )
    # No slash redirects: a hostile id such as "/" would otherwise earn a 307 to another
    # route; every path either matches exactly or is a 404.
    app.router.redirect_slashes = False
    for route in app.router.routes:
        if isinstance(route, Mount) and isinstance(route.app, Router):
            route.app.redirect_slashes = False
    app.state.service = service
    return GuardMiddleware(app, service)
