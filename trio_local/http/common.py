"""Helpers every route module uses: the service, JSON in and out, paging."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from trio_local.errors import ApiError
from trio_local.protocol.events import describe
from trio_local.server import Service

Model = TypeVar("Model", bound=BaseModel)


def service(request: Request) -> Service:
    return request.app.state.service


def origin(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def reply(data: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


async def read_model(request: Request, model: type[Model]) -> Model:
    body = await request.body()
    try:
        return model.model_validate_json(body or b"{}")
    except ValidationError as error:
        raise ApiError(400, "invalid_request_body", describe(error)) from None


def paging(request: Request, default_limit: int) -> tuple[int, int]:
    try:
        limit = int(request.query_params.get("limit", default_limit))
        offset = int(request.query_params.get("offset", 0))
    except ValueError:
        raise ApiError(400, "invalid_query_params", "limit and offset must be integers") from None
    if not 1 <= limit <= 1000 or offset < 0:
        raise ApiError(400, "invalid_query_params", "limit must be in [1, 1000] and offset >= 0")
    return limit, offset
