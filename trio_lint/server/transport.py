"""The server's stdio transport: base-protocol framing that survives malformed input, and the
LSP lifecycle rules, in place of pygls' reader loop.

pygls 2.1's stdio loop (`pygls.io_.run_async`) takes any line it cannot match as a header and
reads bodies with `read(n)`: after one malformed frame (`Content-Length: abc`, a negative
length, no header) every later message is glued to the garbage before it and lost, so the
server stays alive but deaf; a huge `Content-Length` is allocated at once (MemoryError). Its
dispatch drops a request whose params do not match their type, or that arrives after
`shutdown`, without a response, and answers a second `initialize` by replacing the workspace.

Here a frame fault is logged and the stream resynchronises at the next `Content-Length` header
(a raw `Content-Length: N` + CRLF cannot occur inside a JSON text, so one seen while a body is
awaited means the declared length was wrong); lengths over `MAX_BODY_BYTES` are refused before
anything is allocated. Every request gets a response: `InvalidParams` for params of the wrong
shape, `InvalidRequest` after `shutdown` or for a second `initialize`, `ServerNotInitialized`
before `initialize`; `exit` ends the process with 0 after `shutdown`, else 1 (LSP 3.17)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from trio_lint.server.pygls_adapter import Malformed, send_error

MAX_BODY_BYTES = 64 * 1024 * 1024  # far above any document an editor sends (trio-lint: 10 MiB)
MAX_HEADER_BYTES = 8 * 1024
_CHUNK = 64 * 1024
_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = b"content-length:"
# A header line of a next frame, in bytes a JSON body can never hold (a raw CRLF after digits).
_NEXT_FRAME = re.compile(rb"Content-Length:[ \t]*\d+[ \t]*\r\n", re.IGNORECASE)
_TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")

# JSON-RPC 2.0 / LSP 3.17 error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002


@dataclass(frozen=True, slots=True)
class Fault:
    """A frame that could not be read; the parser has skipped to the next header."""

    reason: str


class FrameParser:
    """Bytes in, message bodies (bytes) and Faults out. Memory stays bounded by the header cap
    plus the declared (capped) body length plus one read."""

    def __init__(self, max_body: int = MAX_BODY_BYTES, max_header: int = MAX_HEADER_BYTES) -> None:
        self.max_body = max_body
        self.max_header = max_header
        self._buffer = bytearray()
        self._length: int | None = None  # the body being awaited, once its header is read
        self._scanned = 0  # how much of that body was searched for a next frame's header

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next(self) -> bytes | Fault | None:
        """The next body or fault, or None until more bytes are fed."""
        return self._next()

    def items(self, data: bytes = b"") -> list[bytes | Fault]:
        """Feed `data` and take every item it completes (for callers that need no `reinsert`)."""
        self.feed(data)
        out: list[bytes | Fault] = []
        while (item := self._next()) is not None:
            out.append(item)
        return out

    def _resync(self, start: int) -> None:
        """Drop the buffer up to the next `Content-Length` at or after `start` (keeping a tail
        that may be the beginning of one)."""
        lowered = bytes(self._buffer).lower()
        found = lowered.find(_CONTENT_LENGTH, start)
        if found < 0:
            # Keep only a tail that may grow into `Content-Length:` (so each resync drops bytes).
            keep = next(
                (n for n in range(len(_CONTENT_LENGTH) - 1, 0, -1)
                 if lowered.endswith(_CONTENT_LENGTH[:n])),
                0,
            )  # fmt: skip
            del self._buffer[: len(self._buffer) - keep]
        else:
            del self._buffer[:found]
        self._length = None
        self._scanned = 0

    def _next(self) -> bytes | Fault | None:
        buffer = self._buffer
        if self._length is not None:
            length = self._length
            start = max(self._scanned - 64, 0)  # a header may straddle two reads
            glued = _NEXT_FRAME.search(buffer, start, min(len(buffer), length))
            self._scanned = min(len(buffer), length)
            if glued is not None:
                self._resync(glued.start())
                return Fault(
                    f"a message body is shorter than its Content-Length ({length} bytes):"
                    " skipped to the next message"
                )
            if len(buffer) < length:
                return None
            body = bytes(buffer[:length])
            del buffer[:length]
            self._length = None
            self._scanned = 0
            return body
        end = buffer.find(_HEADER_END)
        if end < 0:
            if len(buffer) > self.max_header:
                self._resync(1)
                return Fault(f"no message header within {self.max_header} bytes: skipped them")
            return None
        header = bytes(buffer[:end])
        length, why = self._parse_header(header)
        if why is not None:
            self._resync(1)
            return Fault(why)
        del buffer[: end + len(_HEADER_END)]
        self._length = length
        return self._next() if length else b""

    def _parse_header(self, header: bytes) -> tuple[int, str | None]:
        length: int | None = None
        for line in header.split(b"\r\n"):
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.match(name.strip()):
                return 0, f"not a message header: {line[:60]!r}"
            if name.strip().lower() == b"content-length":
                text = value.strip()
                if not text.isdigit() or len(text) > 20:
                    return 0, f"Content-Length must be a number of bytes, got {text[:30]!r}"
                length = int(text)
                if length > self.max_body:
                    return 0, (
                        f"Content-Length {length} is over the server's limit of"
                        f" {self.max_body} bytes: message skipped"
                    )
        if length is None:
            return 0, "a message header without Content-Length"
        return length, None


def _request_id(data: dict[str, Any]) -> Any:
    value = data.get("id")
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


class Session:
    """The LSP lifecycle and dispatch of one connection, over a pygls LanguageServer."""

    def __init__(self, server: Any, log: Callable[[str], None]) -> None:
        self.server = server
        self.protocol = server.protocol
        self.log = log
        self.initialized = False
        self.shut_down = False
        self.exit_code: int | None = None

    def error(self, msg_id: Any, code: int, message: str) -> None:
        send_error(self.protocol, msg_id, code, message)

    def handle_body(self, body: bytes) -> bool:
        """Dispatch one message body; False when it is not JSON."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]
            self.log(f"trio-lint server: a message is not JSON ({reason}); skipped")
            self.error(None, PARSE_ERROR, f"Parse error: {reason}")
            return False
        try:
            self.handle(data)
        except Exception as exc:  # a server bug on one message must not end the session
            import traceback

            self.log(f"trio-lint server: cannot handle a message:\n{traceback.format_exc()}")
            if isinstance(data, dict) and "method" in data and _request_id(data) is not None:
                self.error(_request_id(data), INTERNAL_ERROR, f"Internal error: {exc}"[:300])
        return True

    def handle(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            msg_id = _request_id(data) if isinstance(data, dict) else None
            self.error(msg_id, INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 object")
            return
        method = data.get("method")
        has_id = "id" in data
        if method is None:
            if has_id and ("result" in data or "error" in data):
                self._dispatch(data, request=False)  # a response to one of our requests
            else:
                self.error(_request_id(data), INVALID_REQUEST, "Invalid request: no `method`")
            return
        msg_id = _request_id(data)
        if not isinstance(method, str) or (has_id and msg_id is None):
            self.error(None, INVALID_REQUEST, "Invalid request: `method` or `id` of a wrong type")
            return
        if method == "exit":
            self.exit_code = 0 if self.shut_down else 1
            return
        if not has_id:  # a notification: never answered
            if self.shut_down:
                return
            if not self.initialized:
                self.log(f"trio-lint server: `{method}` before `initialize`; ignored")
                return
            self._dispatch(data, request=False)
            return
        if self.shut_down:
            self.error(msg_id, INVALID_REQUEST, f"`{method}` after `shutdown`: the server is"
                       " shutting down; send `exit`")  # fmt: skip
            return
        if method == "initialize":
            if self.initialized:
                self.error(msg_id, INVALID_REQUEST, "the server is already initialized")
                return
        elif not self.initialized:
            self.error(msg_id, SERVER_NOT_INITIALIZED, f"`{method}` before `initialize`")
            return
        if self._dispatch(data, request=True):
            if method == "initialize":
                self.initialized = True
            elif method == "shutdown":
                self.shut_down = True

    def _dispatch(self, data: dict[str, Any], *, request: bool) -> bool:
        """Structure `data` as its method's message type and hand it to pygls; params of the
        wrong shape are InvalidParams (False)."""
        try:
            message = self.protocol.structure_message(data)
        except Exception as exc:  # pygls raises JsonRpcInvalidParams / JsonRpcInternalError
            detail = _why(exc.__cause__ or exc)
            method = data.get("method", "a response")
            if request:
                self.error(_request_id(data), INVALID_PARAMS, f"Invalid params for `{method}`:"
                           f" {detail}")  # fmt: skip
            else:
                self.log(f"trio-lint server: invalid params for `{method}` ({detail}); ignored")
            return False
        self.protocol.handle_message(message)
        return True


def _why(exc: BaseException) -> str:
    """Where the params do not fit their type (cattrs names the path: `$.params.textDocument`)."""
    try:
        from cattrs import transform_error
        from cattrs.v import format_exception

        def why(error: BaseException, kind: type | None) -> str:
            return str(error) if isinstance(error, Malformed) else format_exception(error, kind)

        found = transform_error(exc, path="$", format_exception=why)
    except Exception:
        found = []
    text = "; ".join(found[:3]) if found else (str(exc) or type(exc).__name__)
    return text[:300]


class _Writer:
    def __init__(self, stdout: BinaryIO) -> None:
        self._stdout = stdout

    def close(self) -> None:
        self._stdout.close()

    def write(self, data: bytes) -> None:
        self._stdout.write(data)
        self._stdout.flush()


def _read_forever(stdin: BinaryIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue) -> None:
    """The reading thread (a daemon: blocked in a read, it must not keep the process alive
    after `exit`). Empty bytes mean end of input."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    # os.read on the descriptor, not the buffered file: a daemon thread blocked inside the
    # file's read holds its lock, and the interpreter aborts when it finalizes that file.
    read = (lambda n: os.read(fd, n)) if fd is not None else getattr(stdin, "read1", stdin.read)
    while True:
        try:
            chunk = read(_CHUNK)
        except (OSError, ValueError):
            chunk = b""
        loop.call_soon_threadsafe(queue.put_nowait, chunk)
        if not chunk:
            return


async def _serve(server: Any, stdin: BinaryIO, stdout: BinaryIO) -> int:
    def log(message: str) -> None:
        sys.stderr.write(message + "\n")
        if not session.initialized:
            return  # before `initialize` the client may be sent nothing but responses
        try:
            from lsprotocol import types

            server.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=message)
            )
        except Exception:  # the client is gone: stderr has it
            return

    server.protocol.set_writer(_Writer(stdout))
    session = Session(server, log)
    parser = FrameParser()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    threading.Thread(
        target=_read_forever, args=(stdin, loop, queue), name="trio-lint-stdin", daemon=True
    ).start()
    while session.exit_code is None:
        chunk = await queue.get()
        if not chunk:
            return 0  # the client went away
        parser.feed(chunk)
        while session.exit_code is None and (item := parser.next()) is not None:
            if isinstance(item, Fault):
                log(f"trio-lint server: malformed message frame: {item.reason}")
                continue
            session.handle_body(item)
            await asyncio.sleep(0)  # let the handlers just scheduled start, in order
    return session.exit_code


def serve_stdio(server: Any, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Run `server` over stdio until `exit` or end of input; returns the process exit code."""
    try:
        return asyncio.run(_serve(server, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer))
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    finally:
        server.shutdown()
