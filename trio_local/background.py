"""`serve_in_background()`: trio-local on a thread of this process, for tests and tools."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trio_local.config import ServeConfig


@dataclass(frozen=True)
class LocalService:
    """A running service: point the SDK at `base_url` with `api_key`.

    `env` holds the variables a child process needs (PYTRIO_BASE_URL, PYTRIO_API_KEY and
    MODELSCOPE_CACHE, where the SDK finds the offline tokenizer).
    """

    base_url: str
    api_key: str
    data_dir: Path
    env: dict[str, str] = field(default_factory=dict)

    def configure_sdk(self) -> None:
        """Point this process's pytrio at the service (pytrio reads env vars only at import)."""
        import pytrio as trio

        os.environ["MODELSCOPE_CACHE"] = self.env["MODELSCOPE_CACHE"]
        trio.configure(base_url=self.base_url, api_key=self.api_key)


@contextlib.contextmanager
def serve_in_background(
    *,
    data_dir: str | Path | None = None,
    api_key: str | None = None,
    port: int = 0,
    cycle_ms: int = 0,
    configure_sdk: bool = True,
    **options: Any,
) -> Iterator[LocalService]:
    """Run trio-local on 127.0.0.1 until the block exits.

    Without `data_dir` the service uses a temporary directory removed afterwards. With
    `configure_sdk` (the default) this process's pytrio is pointed at the service and
    MODELSCOPE_CACHE is set for the block (and restored after it). `options` are any other
    ServeConfig fields (`max_training_runs=1`, `heartbeat_timeout_s=6.0`, ...).
    """
    from trio_local.http.serving import RunningServer
    from trio_local.service import Service

    with contextlib.ExitStack() as stack:
        if data_dir is None:
            data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="trio-local-"))
        config = ServeConfig(
            port=port, data_dir=Path(data_dir), api_key=api_key, cycle_ms=cycle_ms, **options
        )
        server = RunningServer(Service(config)).start()
        stack.callback(server.stop, linger=True)
        server.wait_ready()
        service = LocalService(
            base_url=server.base_url,
            api_key=server.api_key,
            data_dir=server.service.data_dir,
            env=server.service.environment(server.base_url),
        )
        if configure_sdk:
            previous = os.environ.get("MODELSCOPE_CACHE")

            def restore() -> None:
                if previous is None:
                    os.environ.pop("MODELSCOPE_CACHE", None)
                else:
                    os.environ["MODELSCOPE_CACHE"] = previous

            stack.callback(restore)
            service.configure_sdk()
        yield service
