"""One trio-local service per test module, driven by the real pytrio SDK over HTTP."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

pytest.importorskip("torch")
import pytrio as trio

import trio_local


@pytest.fixture(scope="module")
def service() -> Iterator[trio_local.LocalService]:
    trio.configure_observability(enabled=False)
    with trio_local.serve_in_background() as running:
        yield running
        # The module's ServiceClients are garbage by now: their pytrio 0.2.9 finalizers close
        # their sessions through this service and wait for its answer, so they run here, on
        # this thread, while it still answers (never on the service's own HTTP thread).
        gc.collect()


@pytest.fixture(scope="module")
def client(service: trio_local.LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()
