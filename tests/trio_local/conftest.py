"""One trio-local service per test module, driven by the real pytrio SDK over HTTP."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def client(service: trio_local.LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()
