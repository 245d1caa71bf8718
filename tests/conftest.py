"""Suite-wide settings.

Under pytest-xdist (`make test` starts one worker more than the machine has cores, since many
tests wait on the processes they start) torch in a worker (and in the trio-local processes it
starts) uses one thread, so the workers do not multiply their threads over the same cores. Set
before any test module imports torch.

`make test` runs `--dist loadfile`: a test file's tests stay on one worker (its module fixtures,
such as a trio-local service, start once), except in the files of SPREAD_FILES, whose tests each
run in processes of their own and so may go to any worker. (pytest-xdist 3.8's `loadgroup` does
not group under pytest 9, whose node ids it can no longer rename; a scheduler of our own does.)"""

from __future__ import annotations

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

# Files whose tests share no fixture worth keeping on one worker: each test is its own process.
SPREAD_FILES = frozenset({"tests/evals/test_suite.py", "tests/bench/test_bench_smoke.py"})


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SpreadingFileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if file_of(nodeid) in SPREAD_FILES else file_of(nodeid)

    return SpreadingFileScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Files with slow tests first (a stable sort: the order inside a file is kept), and `make
    # test` hands them out in this order (--no-loadscope-reorder). pytest-xdist's default, the
    # files with the most tests first, sent the one-test files last: a 35 s end-to-end test then
    # ran alone at the end while the other workers had finished (three workers ended 6 s apart
    # in this order, 521 s for the suite, against 527 s with the default).
    slow_files = {file_of(item.nodeid) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: file_of(item.nodeid) not in slow_files)
