"""The HTTP protocol's stall deadline, on a real uvicorn server with a small send buffer (so
that a reader who stops reading stalls the writes at once instead of filling megabytes of
kernel buffers first)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

from trio_local.http.guarded import GuardedH11Protocol

SIZE = 4 * 1024 * 1024


def _endless(_request) -> StreamingResponse:
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(SIZE // 65536):
            sent.append(1)
            yield b"x" * 65536

    return StreamingResponse(chunks(), headers={"content-length": str(SIZE)})


@pytest.fixture
def server(monkeypatch) -> Iterator[tuple[str, int]]:
    monkeypatch.setattr(GuardedH11Protocol, "write_stall_timeout", 1.0)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)  # accepted sockets inherit it
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    app = Starlette(routes=[Route("/big", _endless)])
    config = uvicorn.Config(app, log_level="critical", lifespan="off", http=GuardedH11Protocol)
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.01)
    yield sock.getsockname()
    running.should_exit = True
    thread.join(10)
    sock.close()


def test_a_reader_that_stops_reading_is_reset(server) -> None:
    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.connect(server)
    reader.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(3)  # stalled for longer than the deadline
    received = 0
    reader.settimeout(10)
    try:
        while chunk := reader.recv(1 << 20):
            received += len(chunk)
    except (ConnectionResetError, TimeoutError):
        pass
    reader.close()
    assert received < SIZE // 4, f"{received} bytes: the stalled response was kept going"


def test_a_reader_that_keeps_reading_gets_everything(server) -> None:
    reader = socket.create_connection(server, timeout=10)
    reader.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    received = 0
    while chunk := reader.recv(1 << 20):
        received += len(chunk)
    reader.close()
    assert received > SIZE
