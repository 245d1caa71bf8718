"""Start `trio-mcp` as a real subprocess (stdio or HTTP) for transport and end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

TRIO_MCP = str(Path(sys.executable).with_name("trio-mcp"))
TOKEN = "test-token-0123456789abcdef"


def stdio_params(*args: str, cwd: Path) -> StdioServerParameters:
    # The whole environment, not the SDK's default subset: the tests' TRIO_LOCAL_DATA_DIR keeps
    # the local backend's data out of the user's own data dir.
    return StdioServerParameters(
        command=TRIO_MCP, args=list(args), cwd=str(cwd), env=dict(os.environ)
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def http_server(*args: str, cwd: Path, timeout: float = 60.0) -> Iterator[tuple[str, Path]]:
    """Yield the MCP URL and the stderr log file of a running `trio-mcp --http`."""
    with http_server_process(*args, cwd=cwd, timeout=timeout) as (url, log, _):
        yield url, log


@contextlib.contextmanager
def http_server_process(
    *args: str, cwd: Path, timeout: float = 60.0
) -> Iterator[tuple[str, Path, subprocess.Popen]]:
    """`http_server`, and the process itself (for tests that kill it)."""
    port = free_port()
    log = cwd / f"trio-mcp-{port}.log"
    env = {**os.environ, "TRIO_MCP_TOKEN": TOKEN}
    with log.open("w") as err:
        process = subprocess.Popen(
            [TRIO_MCP, "--http", "--port", str(port), *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"trio-mcp --http did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", log, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def authorised_client(url: str, **options: Any):
    """An `mcp.Client` over streamable HTTP that sends the bearer token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    return Client(streamable_http_client(url, http_client=http), **options)
