"""trio-mcp against a PyTRIO service it cannot reach answers within seconds, naming the URL;
against one that refuses the key it fails at once (the real console script over stdio)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp_server.mcp_helpers import TRIO_MCP, free_port

pytestmark = pytest.mark.anyio

KEY = "sk-test-unreachable-0123456789"


def _params(tmp_path, base_url: str) -> StdioServerParameters:
    env = {**os.environ, "PYTRIO_API_KEY": KEY, "PYTRIO_BASE_URL": base_url}
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        env.pop(name, None)
    args = ["--backend", "remote", "--audit-log", str(tmp_path / "a.jsonl")]
    args += ["--set", "connect_timeout_s=3"]
    return StdioServerParameters(command=TRIO_MCP, args=args, cwd=str(tmp_path), env=env)


async def _timed_call(tmp_path, base_url: str) -> tuple[float, str, bool]:
    async with Client(_params(tmp_path, base_url)) as client:
        started = time.monotonic()
        with anyio.fail_after(30):  # the SDK alone would retry for 15 minutes
            result = await client.call_tool("list_models", {})
        elapsed = time.monotonic() - started
    return elapsed, " ".join(getattr(c, "text", "") for c in result.content), result.is_error


async def test_an_unreachable_service_is_named_within_seconds(tmp_path, monkeypatch) -> None:
    """In process: the remote backend's first call probes the service's URL before the SDK
    (which would retry for 15 minutes) is asked anything."""
    from mcp_server import backend
    from mcp_server.config import Config
    from mcp_server.server import build_server

    url = f"http://user:{KEY}@127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("PYTRIO_API_KEY", KEY)
    monkeypatch.setattr(backend, "service_url", lambda: url)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    config = Config(backend="remote", eager_backend=False, audit_log=tmp_path / "a.jsonl")
    server, app = build_server(config.model_copy(update={"connect_timeout_s": 3}))
    async with Client(server) as client:
        started = time.monotonic()
        with anyio.fail_after(30):
            result = await client.call_tool("list_models", {})
        elapsed = time.monotonic() - started
    app.close()
    text = result.content[0].text
    assert result.is_error and "cannot reach the PyTRIO service at http://127.0.0.1:" in text
    assert elapsed < 5, elapsed
    assert KEY not in text  # not even the user:password part of the URL


class _Refuses(BaseHTTPRequestHandler):
    def _refuse(self) -> None:
        body = json.dumps({"code": "unauthorized", "message": "invalid api key"}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _refuse

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _refusing_service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_refused_key_fails_at_once(tmp_path) -> None:
    with _refusing_service() as url:
        elapsed, text, is_error = await _timed_call(tmp_path, url)
    assert is_error and "cannot reach" not in text, text
    assert elapsed < 10, elapsed
    assert KEY not in text
