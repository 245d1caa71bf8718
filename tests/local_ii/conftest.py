"""trio-local II: services with the options these tests need, driven by the real SDK."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import pytrio as trio

from trio_local.background import LocalService


@pytest.fixture(scope="module")
def fast_service(shared_local_service: LocalService) -> LocalService:
    """The suite's shared service: its clock is off (cycle_ms=0), as these tests need."""
    shared_local_service.configure_sdk()
    return shared_local_service


@pytest.fixture(scope="module")
def client(fast_service: LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()
