"""Which PyTRIO answers: the real service (an API key is configured) or trio-local (the default).

The server always drives the real, unmodified `pytrio` SDK; only its base URL and key differ.
`pytrio` reads its environment variables once, at import, so the local backend is selected with
`trio.configure(base_url=..., api_key=...)`, never by editing `os.environ`. Telemetry is off unless
the configuration opts in. pytrio and trio-local import lazily: a server that only lints or reads
docs never pays for them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio

from mcp_server.config import Config
from mcp_server.errors import BackendFailure
from mcp_server.local_data import persistent_dir, throwaway_dir
from mcp_server.redact import redact, remember_secret

log = logging.getLogger("trio_mcp.backend")

LOCAL_NOTE = (
    "trio-local: an offline stand-in with a tiny model that really trains on the CPU; "
    "losses and samples show the mechanics, not the quality of the real base model"
)
REMOTE_NOTE = "the PyTRIO service"


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def configured_api_key() -> str | None:
    """The key the SDK would use: PYTRIO_API_KEY, else the active `trio login` profile
    (~/.pytrio/config.toml, or envs/<name>/config.toml when `trio env use` picked one). Never
    logged."""
    key = os.environ.get("PYTRIO_API_KEY", "").strip()
    if key:
        return key
    home = Path.home() / ".pytrio"  # the SDK's root (pytrio config/config.py: root_path)
    env = os.environ.get("PYTRIO_ENV") or _toml(home / "env.toml").get("active_env")
    profile = home / "config.toml"
    if isinstance(env, str) and env not in ("", "default", "(default)"):
        profile = home / "envs" / env / "config.toml"
    value = _toml(profile).get("api_key")
    return value.strip() if isinstance(value, str) and value.strip() else None


def choose_backend(config: Config) -> Literal["local", "remote"]:
    if config.backend == "auto":
        return "remote" if configured_api_key() else "local"
    if config.backend == "remote" and not configured_api_key():
        raise BackendFailure(
            "backend = 'remote' needs an API key: set PYTRIO_API_KEY or run `trio login`, "
            "or use --backend local for the offline stand-in"
        )
    return config.backend


@dataclass
class Backend:
    """A connected SDK: the service client and its REST client, and which backend they talk to."""

    kind: Literal["local", "remote"]
    service: Any
    rest: Any
    # trio-local's handle (base_url, data_dir) when the backend is local.
    local: Any = None

    @property
    def note(self) -> str:
        return LOCAL_NOTE if self.kind == "local" else REMOTE_NOTE


def _connect(config: Config, stack: contextlib.ExitStack) -> Backend:
    """Blocking: start trio-local if needed, configure the SDK, authenticate."""
    kind = choose_backend(config)
    import pytrio as trio

    handle = None
    if kind == "local":
        import trio_local

        if config.local_data_dir == "temporary":
            data_dir = stack.enter_context(throwaway_dir())
        else:
            data_dir = persistent_dir(config.local_data_dir)
        try:
            handle = stack.enter_context(trio_local.serve_in_background(data_dir=data_dir))
        except ImportError:
            raise
        except Exception as exc:
            raise BackendFailure(
                f"the offline backend cannot start on its data dir {data_dir}: "
                f"{sdk_message(exc)}. Set local_data_dir to another directory (or to "
                "'temporary' for a throwaway one), or stop the other service using it"
            ) from None
        remember_secret(handle.api_key)
        trio.configure(base_url=handle.base_url, api_key=handle.api_key)
    else:
        remember_secret(configured_api_key())
        url = service_url()
        if url is not None:
            probe(url, config.connect_timeout_s)
        # The SDK retries a failing Control request for up to 15 minutes (pytrio 0.2.9
        # `control_retry_timeout_seconds`); an agent waiting that long sees a hung tool call.
        # (trio-local is this process's own child: a slow answer there is a model loading.)
        trio.configure(control_retry_timeout_seconds=config.connect_timeout_s)
    trio.configure_observability(enabled=config.telemetry)
    service = trio.ServiceClient()
    return Backend(kind=kind, service=service, rest=service.create_rest_client(), local=handle)


_PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
)


# pytrio 0.2.9 has no public getter for the base URL it resolved (PYTRIO_BASE_URL, the active
# profile's, or its default): it is read from the SDK's configuration module, checked on 0.2.9.
# Should that module move, the probe is skipped and only the bounded retry window applies.
SERVICE_URL_CHECKED_ON = "0.2.9"


def service_url() -> str | None:
    """The base URL the SDK will call, or None when this SDK release does not tell."""
    try:
        from pytrio.config.config import configuration  # noqa: PTR002 (no public getter)
    except ImportError:
        return None
    url = getattr(configuration, "base_url", None)
    return str(url) if url else None


def probe(url: str, timeout_s: float) -> None:
    """Refuse at once, naming `url`, when nothing accepts a connection there.

    A TCP connect within `timeout_s` (name lookup included) is the whole test; behind a proxy
    the service is reached through the proxy, so only the SDK's own (bounded) retries apply.
    """
    if any(os.environ.get(name) for name in _PROXY_VARIABLES):
        return
    parsed = urlsplit(url)
    host = parsed.hostname
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    if not host:
        raise BackendFailure("the PyTRIO service URL has no host; check PYTRIO_BASE_URL")
    shown = f"{parsed.scheme}://{host}:{port}{parsed.path}"  # never a user:password@ part
    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout_s).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(exc)

    # A name lookup has no timeout of its own: the attempt runs in a daemon thread and is
    # abandoned when it takes longer than `timeout_s`.
    worker = threading.Thread(target=connect, daemon=True, name="trio-mcp-probe")
    worker.start()
    worker.join(timeout_s)
    if not outcome:
        reason: str = f"no answer within {timeout_s:g} s"
    elif outcome[0] is None:
        return
    else:
        reason = str(outcome[0]) or type(outcome[0]).__name__
    raise BackendFailure(
        f"cannot reach the PyTRIO service at {shown} ({reason}). Check the network and the "
        "service URL (PYTRIO_BASE_URL or `trio env use`), or use --backend local for the "
        "offline stand-in; connect_timeout_s sets how long to wait"
    )


@dataclass
class BackendManager:
    """Starts the backend once, on first use or eagerly in the background, and stops it at exit."""

    config: Config
    _backend: Backend | None = None
    _error: str | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock)
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    async def get(self) -> Backend:
        async with self._lock:
            if self._backend is None:
                try:
                    self._backend = await anyio.to_thread.run_sync(
                        _connect, self.config, self._stack
                    )
                except BackendFailure:
                    raise
                except ImportError as exc:
                    raise BackendFailure(
                        f"the offline backend cannot start ({exc}): install it with "
                        "pip install 'pytrio-skill[local]', or configure a PyTRIO API key "
                        "(PYTRIO_API_KEY or `trio login`) to use the service"
                    ) from None
                except Exception as exc:
                    message = redact(f"{type(exc).__name__}: {exc}")
                    log.error("backend start failed: %s", message)
                    raise BackendFailure(f"the PyTRIO backend could not start: {message}") from None
                log.info("backend ready: %s", self._backend.note)
            return self._backend

    @property
    def started(self) -> Backend | None:
        return self._backend

    async def warm_up(self) -> None:
        """Start in the background; a failure is reported again by the first call that needs it."""
        with contextlib.suppress(BackendFailure):
            await self.get()

    def close(self) -> None:
        self._stack.close()


async def call_sdk(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking SDK call in a worker thread; its errors come back as `BackendFailure`."""
    try:
        return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))
    except BackendFailure:
        raise
    except Exception as exc:
        raise BackendFailure(f"{what} failed: {sdk_message(exc)}") from None


def sdk_message(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return redact(text)[:2000]
