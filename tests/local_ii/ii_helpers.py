"""Helpers for trio-local II tests: a service with any ServeConfig option, its stats."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trio_local.background import LocalService
from trio_local.config import ServeConfig

MODEL = "Qwen/Qwen3-4B-Instruct-2507"


@contextlib.contextmanager
def local_service(data_dir: Path | None = None, **options: Any) -> Iterator[LocalService]:
    """Like `serve_in_background`, with any ServeConfig option; points this process's SDK at it."""
    from trio_local.server import RunningServer, Service

    with contextlib.ExitStack() as stack:
        if data_dir is None:
            data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="trio-ii-")))
        server = RunningServer(Service(ServeConfig(data_dir=data_dir, **options))).start()
        stack.callback(server.stop, linger=True)
        server.wait_ready()
        service = LocalService(
            base_url=server.base_url,
            api_key=server.api_key,
            data_dir=server.service.data_dir,
            env=server.service.environment(server.base_url),
        )
        previous = os.environ.get("MODELSCOPE_CACHE")
        service.configure_sdk()
        try:
            yield service
        finally:
            if previous is None:
                os.environ.pop("MODELSCOPE_CACHE", None)
            else:
                os.environ["MODELSCOPE_CACHE"] = previous


def read_stats(service: LocalService) -> dict[str, Any]:
    with urllib.request.urlopen(service.env["TRIO_LOCAL_STATS_URL"], timeout=10) as response:
        return json.load(response)
