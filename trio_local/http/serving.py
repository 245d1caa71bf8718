"""The service served by uvicorn on a thread of its own: bind, start, stop."""

from __future__ import annotations

import errno
import socket
import threading

from trio_local.config import ConfigError
from trio_local.http.app import build_app
from trio_local.http.guarded import GuardedH11Protocol
from trio_local.service import Service


class PortUnavailable(ConfigError):
    """The address to serve on cannot be bound."""


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Responses go out as two writes (headers, body); without TCP_NODELAY, Nagle holds the body
    # until the client's delayed ACK, adding ~40 ms to every JSON answer. Accepted sockets
    # inherit the option from the listener.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        reason = "it is in use" if error.errno == errno.EADDRINUSE else error.strerror
        raise PortUnavailable(
            f"cannot listen on {host}:{port}: {reason}; pass another --port (0 picks a free one)"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def base_url_of(sock: socket.socket, host: str) -> str:
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


class RunningServer:
    """A uvicorn server on its own thread; `stop()` shuts it and the service down."""

    def __init__(self, service: Service) -> None:
        import uvicorn

        self.service = service
        self.sock = bind_socket(service.config.host, service.config.port)
        self.base_url = base_url_of(self.sock, service.config.host)
        config = uvicorn.Config(
            build_app(service),
            log_level=service.config.log_level,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            http=GuardedH11Protocol,  # deadlines for slow senders and stalled readers
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run,
            kwargs={"sockets": [self.sock]},
            daemon=True,
            name="trio-local-http",
        )

    @property
    def api_key(self) -> str:
        return self.service.api_key

    def start(self) -> RunningServer:
        self.service.start_background_work()
        self.thread.start()
        waited = threading.Event()
        while not self.server.started and self.thread.is_alive():
            waited.wait(0.01)
        if not self.server.started:
            raise RuntimeError("trio-local's HTTP server did not start")
        return self

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until the tokenizer is built (training runs wait for it anyway)."""
        self.service.tokenizer_ready.result(timeout)

    def stop(self, *, linger: bool = False) -> None:
        """Stop serving. With `linger`, the listener stays up answering 410 until the process
        exits: the SDK closes its sessions at exit and retries a refused connection for 15
        minutes, so an in-process client must still find someone to say goodbye to.
        """
        self.service.closed = True
        if not linger:
            self.server.should_exit = True
            self.thread.join(10)
            self.sock.close()
        self.service.stop()
