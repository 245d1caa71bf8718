"""The suite's shared trio-local service (tests/conftest.py), driven by the real pytrio SDK over
HTTP; a module's client is its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import pytrio as trio

import trio_local


@pytest.fixture(scope="module")
def service(shared_local_service: trio_local.LocalService) -> trio_local.LocalService:
    # A test that started a second service pointed this process's SDK there: point it back.
    shared_local_service.configure_sdk()
    return shared_local_service


@pytest.fixture(scope="module")
def client(service: trio_local.LocalService) -> trio.ServiceClient:
    return trio.ServiceClient()
