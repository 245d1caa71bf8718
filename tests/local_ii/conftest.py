"""trio-local II: services with the options these tests need, driven by the real SDK."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("torch")
import pytrio as trio
from ii_helpers import local_service

from trio_local.background import LocalService


@pytest.fixture(scope="module")
def fast_service() -> Iterator[LocalService]:
    trio.configure_observability(enabled=False)
    with local_service(cycle_ms=0) as running:
        yield running


@pytest.fixture(scope="module")
def client(fast_service: LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()
