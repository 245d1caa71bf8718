"""GET /api/openapi/v1/api-key/verify: who the key belongs to (a single local user)."""

from __future__ import annotations

from pytrio.protocol.control.api_key.verify import APIKeyInfo
from starlette.requests import Request
from starlette.responses import Response

from trio_local.http.common import reply
from trio_local.protocol.control import USER, WORKSPACE, dump


async def verify(request: Request) -> Response:
    info = APIKeyInfo(
        api_key_tid="key_local",
        api_key_name="trio-local",
        user_cuid=USER,
        username="local",
        display_name="trio-local user",
        workspace_cuid=WORKSPACE,
        workspace_name="trio-local",
        workspace_type="PERSONAL",
        expires_at=None,
    )
    return reply(dump(info))
