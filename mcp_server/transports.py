"""Transports: stdio (the default) and streamable HTTP on 127.0.0.1 behind a bearer token.

HTTP binds only 127.0.0.1, checks the Host and Origin headers against DNS rebinding (the SDK's
TransportSecuritySettings), and refuses any request without `Authorization: Bearer <token>`.

stdio answers every request (`CheckedLines`): the MCP SDK's reader sends no reply to a line it
cannot parse as a message, since it never learns the request id, so the client would wait for
ever. A line whose only fault is an escaped lone UTF-16 surrogate (`"\\ud800"`, which JSON allows)
goes on with U+FFFD in its place; any other (params an array or a number, nesting too deep for a
parser, not JSON) gets a JSON-RPC error with the request's id when it can be found.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import re
import secrets
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

from localfs.atomic import write_atomic
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
    write_atomic(path, text.encode("utf-8"), suffix=".tmp", durable=True)


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


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_KEY_END = re.compile(r"\s*:\s*")


def top_level_id(line: str) -> int | str | None:
    """The `id` member of the top-level object of `line`, found without parsing the rest (a
    line nested 20,000 deep defeats every recursive parser, yet its request deserves a reply).
    None when there is no such member or it is not a JSON-RPC id (an integer or a string)."""
    depth = 0
    for match in _TOKEN.finditer(line):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif depth == 1 and token == '"id"':
            colon = _KEY_END.match(line, match.end())
            if colon is None:
                continue  # "id" as a value, not a key
            try:
                value, _ = json.JSONDecoder().raw_decode(line, colon.end())
            except (ValueError, RecursionError):
                return None
            if isinstance(value, (int, str)) and not isinstance(value, bool):
                return value
            return None
    return None


def _surrogate_free(line: str) -> str | None:
    """`line` re-encoded with each lone surrogate as U+FFFD, if that is what made it invalid."""
    if "\\u" not in line.lower():
        return None
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    cleaned = _replace_surrogates(data)
    if cleaned == data:
        return None
    return json.dumps(cleaned) + "\n"


def rejection(line: str) -> types.JSONRPCError | None:
    """The JSON-RPC error answering a line the SDK cannot read as a message; None when nothing
    must be answered (a notification or a response from the client, or a blank line)."""
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except RecursionError:
        return _error(top_level_id(line), types.PARSE_ERROR, "parse error: nested too deeply")
    except ValueError:
        return _error(top_level_id(line), types.PARSE_ERROR, "parse error: not valid JSON")
    if not isinstance(data, dict):
        what = "a batch (array)" if isinstance(data, list) else "not an object"
        return _error(None, types.INVALID_REQUEST, f"invalid request: the message is {what}")
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        if "id" in data and "method" in data:
            return _error(
                None, types.INVALID_REQUEST, "invalid request: id must be a string or an integer"
            )
        return None  # a notification or a response: JSON-RPC sends no reply
    if "method" not in data:
        return None  # a malformed response from the client
    if data.get("jsonrpc") != "2.0":
        return _error(request_id, types.INVALID_REQUEST, 'invalid request: jsonrpc must be "2.0"')
    if not isinstance(data["method"], str):
        return _error(request_id, types.INVALID_REQUEST, "invalid request: method must be a string")
    if "params" in data and not isinstance(data["params"], dict | None):
        return _error(request_id, types.INVALID_PARAMS, "invalid params: params must be an object")
    return _error(request_id, types.INVALID_REQUEST, "invalid request")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


class CheckedLines:
    """stdin lines on their way to the SDK's reader, each one it would drop answered instead.

    The SDK's stdio reader parses each line as a JSON-RPC message and, when that fails, never
    learns the request's id and sends no reply, so the client waits for ever (mcp 2.3.0:
    params that are an array or a number, a line nested too deeply for its parser). Each line
    is checked here first: one whose only fault is a lone UTF-16 surrogate (`"\\ud800"`, which
    JSON allows and Python's `json` reads) goes on with U+FFFD in its place; any other line the
    SDK cannot read is answered with a JSON-RPC error (`rejections`) and not passed on.
    """

    def __init__(self, lines: AsyncIterator[str] | Any) -> None:
        self.lines = lines
        self.rejections, self.rejected = anyio.create_memory_object_stream[types.JSONRPCError](64)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async with self.rejections:
            async for line in self.lines:
                try:
                    types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValidationError:
                    repaired = _surrogate_free(line)
                    if repaired is not None:
                        yield repaired
                        continue
                    error = rejection(line)
                    if error is not None:
                        await self.rejections.send(error)
                    continue
                yield line


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
    """`server.run()` over stdio, on a stdin reader that a cancel (the server stopping) never
    waits for, with every line the SDK would drop without a reply answered (`CheckedLines`)."""
    lines = CheckedLines(StdinLines())
    # mcp 2.3.0 annotates `stdin` as `anyio.AsyncFile[str]` but only iterates it line by line.
    streams = stdio_server(stdin=lines)  # type: ignore[arg-type]  # any async line iterator
    async with streams as (read_stream, write_stream):

        async def answer_rejections() -> None:
            async with lines.rejected:
                async for error in lines.rejected:
                    await write_stream.send(SessionMessage(error))

        async with anyio.create_task_group() as group:
            group.start_soon(answer_rejections)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
