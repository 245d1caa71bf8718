"""Transports: stdio (the default) and streamable HTTP on 127.0.0.1 behind a bearer token.

HTTP binds only 127.0.0.1, checks the Host and Origin headers against DNS rebinding (the SDK's
TransportSecuritySettings), and refuses any request without `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from mcp_server.redact import remember_secret

log = logging.getLogger("trio_mcp.http")

HOST = "127.0.0.1"
TOKEN_ENV = "TRIO_MCP_TOKEN"


class BearerTokenMiddleware:
    """Pure ASGI: every HTTP request must carry the token; lifespan events pass through."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            body = json.dumps(
                {"error": "unauthorized", "hint": f"send Authorization: Bearer ${TOKEN_ENV}"}
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="trio-mcp"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def resolve_token(token_file: Path) -> str:
    """The bearer token: $TRIO_MCP_TOKEN, else a new random one written to `token_file` (0600).

    The token itself is never logged; only where to find it.
    """
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        token = secrets.token_urlsafe(32)
        token_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = token_file.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(token + "\n")
        tmp.replace(token_file)
        log.warning("no %s set: generated a bearer token in %s", TOKEN_ENV, token_file)
    if len(token) < 16:
        raise SystemExit(f"trio-mcp: {TOKEN_ENV} must be at least 16 characters")
    remember_secret(token)
    return token


def http_app(server: MCPServer, token: str) -> Any:
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{HOST}:*", "localhost:*"],
        allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
    )
    app = server.streamable_http_app(host=HOST, transport_security=security)
    return BearerTokenMiddleware(app, token)


async def serve_http(server: MCPServer, port: int, token: str) -> None:
    import uvicorn

    config = uvicorn.Config(
        http_app(server, token), host=HOST, port=port, log_level="warning", lifespan="on"
    )
    log.info("serving streamable HTTP on http://%s:%d/mcp", HOST, port)
    await uvicorn.Server(config).serve()
