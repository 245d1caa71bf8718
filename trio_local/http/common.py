"""Helpers every route module uses: the service, JSON in and out, paging."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from trio_local.errors import ApiError
from trio_local.protocol.bounds import INT64_MAX, check_finite
from trio_local.protocol.events import describe
from trio_local.service import Service

Model = TypeVar("Model", bound=BaseModel)
DIGITS = re.compile(r"[0-9]{1,20}")
OFF_LOOP_BYTES = 256 * 1024


def service(request: Request) -> Service:
    return request.app.state.service


def origin(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def encode_json(data: dict[str, Any]) -> bytes:
    """JSON exactly as JSONResponse writes it (NaN and inf are refused, not sent)."""
    return json.dumps(
        data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode()


def reply(data: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def _parse(body: bytes, model: type[Model]) -> Model:
    try:
        parsed = model.model_validate_json(body or b"{}")
    except ValidationError as error:
        raise ApiError(400, "invalid_request_body", describe(error)) from None
    check_finite(parsed, "")
    return parsed


async def read_model(request: Request, model: type[Model]) -> Model:
    body = await request.body()
    if len(body) < OFF_LOOP_BYTES:
        return _parse(body, model)
    # A body of megabytes takes a while to parse and check; meanwhile the loop serves others.
    return await asyncio.to_thread(_parse, body, model)


def _query_int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    # ASCII digits only: int() also reads "٣" and "+3", and "1e3" is not an integer.
    if DIGITS.fullmatch(text) is None:
        raise ApiError(400, "invalid_query_params", f"{name} must be a non-negative integer")
    return int(text)


def paging(request: Request, default_limit: int) -> tuple[int, int]:
    limit = _query_int(request, "limit", default_limit)
    offset = _query_int(request, "offset", 0)
    if not 1 <= limit <= 1000 or not 0 <= offset <= INT64_MAX:
        raise ApiError(
            400, "invalid_query_params", "limit must be in [1, 1000] and offset in [0, 2**63-1]"
        )
    return limit, offset
