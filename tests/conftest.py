"""Suite-wide settings.

Under pytest-xdist each worker is one of the machine's cores: torch in a worker (and in the
trio-local processes it starts) uses one thread, so two workers on two cores do not fight over
four threads. Set before any test module imports torch.

`make test` runs `--dist loadgroup`: a test file's tests stay on one worker (its module fixtures,
such as a trio-local service, start once), unless the module sets SPREAD_ACROSS_WORKERS = True
(each test is its own process, so the tests spread over the workers)."""

from __future__ import annotations

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers it too; without xdist (-p no:xdist) --strict-markers needs it here.
    config.addinivalue_line("markers", "xdist_group(name): tests that share one xdist worker")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Files with slow tests first (a stable sort: the order inside a file is kept), so the long
    # ones start while the other worker works through the many quick ones, not at the end.
    slow_files = {
        item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")
    }
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in slow_files)
    for item in items:
        module = getattr(item, "module", None)
        if item.get_closest_marker("xdist_group") or getattr(
            module, "SPREAD_ACROSS_WORKERS", False
        ):
            continue
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))

