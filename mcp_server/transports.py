"""Transports: stdio (the default) and streamable HTTP on 127.0.0.1 behind a bearer token.

HTTP binds only 127.0.0.1, checks the Host and Origin headers against DNS rebinding (the SDK's
TransportSecuritySettings), and refuses any request without `Authorization: Bearer <token>`.

stdio repairs one thing: JSON allows an escaped lone UTF-16 surrogate (`"\\ud800"`) and Python's
`json` reads it, but the MCP SDK's parser refuses the whole line and, since it never learns the
request id, sends no reply, so the client waits for ever. Such a line is read with `json`, each
lone surrogate becomes U+FFFD, and the request goes on like any other, so it is answered.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import re
import secrets
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

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
        write_secret_file(token_file, token + "\n")
        log.warning("no %s set: generated a bearer token in %s", TOKEN_ENV, token_file)
    if len(token) < 16:
        raise SystemExit(f"trio-mcp: {TOKEN_ENV} must be at least 16 characters")
    remember_secret(token)
    return token


def write_secret_file(path: Path, text: str) -> None:
    """Write `text` to `path` readable by the owner only, atomically.

    The temporary file is new (`mkstemp`: O_CREAT | O_EXCL, mode 0600), so a file or symlink
    planted at a predictable temporary name is never followed; the rename then replaces `path`
    itself, even when `path` is a symlink, never the file it points at.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def http_app(server: Server[Any], token: str) -> Any:
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{HOST}:*", "localhost:*"],
        allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
    )
    app = server.streamable_http_app(host=HOST, transport_security=security)
    return BearerTokenMiddleware(app, token)


async def serve_http(server: Server[Any], port: int, token: str, stop: anyio.Event) -> None:
    """Serve until `stop` is set, then close within a few seconds even with streams open."""
    import uvicorn

    class Uvicorn(uvicorn.Server):
        # The caller handles SIGTERM/SIGINT (it ends the calls in flight first, then sets
        # `stop`); uvicorn's own handlers would wait for every open stream to close.
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    config = uvicorn.Config(
        http_app(server, token),
        host=HOST,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    http = Uvicorn(config)

    async def stop_when_asked() -> None:
        await stop.wait()
        http.should_exit = True

    log.info("serving streamable HTTP on http://%s:%d/mcp", HOST, port)
    async with anyio.create_task_group() as group:
        group.start_soon(stop_when_asked)
        await http.serve()
        group.cancel_scope.cancel()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def repair(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """A message the SDK could not parse only because of lone surrogates, parsed; else as is."""
    if not isinstance(item, ValidationError):
        return item
    errors = item.errors()
    if len(errors) != 1 or errors[0]["type"] != "json_invalid":
        return item
    line = errors[0].get("input")
    if not isinstance(line, str) or "\\u" not in line.lower():
        return item
    try:
        data = json.loads(line)
    except ValueError:
        return item
    cleaned = _replace_surrogates(data)
    if cleaned == data:
        return item
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(cleaned, by_name=False))
    except ValidationError:
        return item


class StdinLines:
    """stdin as lines of text, read so that a cancel never waits for the client's next line.

    The SDK's reader waits in a worker thread that only returns when stdin yields a line or
    closes, so a server stopping on a signal would hang until the client writes. Here the
    blocking read is abandoned on cancel (the process is about to exit), not awaited.
    """

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        pending = bytearray()
        while True:
            end = pending.find(b"\n")
            if end >= 0:
                line = bytes(pending[: end + 1])
                del pending[: end + 1]
                yield line.decode("utf-8", errors="replace")
                continue
            chunk = await anyio.to_thread.run_sync(
                os.read, self.fd, 1 << 16, abandon_on_cancel=True
            )
            if not chunk:
                if pending:
                    yield bytes(pending).decode("utf-8", errors="replace")
                return
            pending += chunk


async def run_stdio(server: Server[Any]) -> None:
    """`server.run()` over stdio, with every incoming message passed through `repair`, on a
    stdin reader that a cancel (the server stopping) never waits for."""
    async with stdio_server(stdin=StdinLines()) as (read_stream, write_stream):  # type: ignore[arg-type]
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send:
                async for item in read_stream:
                    await send.send(repair(item))

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            await server.run(receive, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
