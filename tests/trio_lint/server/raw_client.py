"""A bare stdio client for `trio-lint server` (the console script): writes whatever bytes a
test wants, well-formed frames or not, and reads the server's frames with a deadline, so that a
server that went deaf fails the test instead of stalling it."""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.trio_lint.server.lsp_helpers import TRIO_LINT


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    def __init__(self, cwd: Path) -> None:
        # A file, not a pipe: it never fills up and blocks the server. Closed by `close`.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.process = subprocess.Popen(
            [TRIO_LINT, "server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._buffer = b""
        self.received: list[dict] = []  # every message read, in order
        self._next_id = 1000

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(frame(message))

    def request(self, method: str, params: Any = None, timeout: float = 20.0) -> dict:
        """Send a request and wait for the response with its id (AssertionError if none)."""
        self._next_id += 1
        msg_id = self._next_id
        message: dict = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(frame(message))
        return self.response(msg_id, timeout)

    def response(self, msg_id: Any, timeout: float = 20.0) -> dict:
        found = self.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout)
        assert found is not None, (
            f"no response to request {msg_id} within {timeout} s; the server's stderr ends:\n"
            + self.stderr()[-3000:]
        )
        return found

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def wait(self, predicate, timeout: float = 20.0) -> dict | None:
        for message in self.received:
            if predicate(message):
                self.received.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline)
            if message is None:
                return None
            if predicate(message):
                return message
            self.received.append(message)

    def _read(self, deadline: float) -> dict | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                headers = dict(
                    line.split(b":", 1) for line in self._buffer[:end].split(b"\r\n") if line
                )
                length = int(headers[b"Content-Length"])
                if len(self._buffer) >= end + 4 + length:
                    body = self._buffer[end + 4 : end + 4 + length]
                    self._buffer = self._buffer[end + 4 + length :]
                    return json.loads(body)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk

    def initialize(self, root: Path) -> dict:
        result = self.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        )
        self.notify("initialized", {})
        return result

    def close(self) -> int:
        """End the process (if still running) and return its exit code."""
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait(timeout=20)
        for stream in (self.process.stdin, self.process.stdout, self._stderr):
            if stream is not None:
                stream.close()
        return code
