"""The engine through the real SDK: a service whose scheduler runs each cycle at once (cycle_ms=0),
for the tests of this folder that drive it (`client` here overrides the parent folder's)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("torch")
import pytrio as trio

from tests.support.local import local_service
from trio_local.background import LocalService


@pytest.fixture(scope="module")
def fast_service() -> Iterator[LocalService]:
    trio.configure_observability(enabled=False)
    with local_service(cycle_ms=0) as running:
        yield running


@pytest.fixture(scope="module")
def client(fast_service: LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()
