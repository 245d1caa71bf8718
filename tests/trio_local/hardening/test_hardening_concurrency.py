"""Guards under concurrency: run capacity, event order, deletes and the data-dir lock.

Each test fires many requests at once (threads, one HTTP connection each) at a guard and
checks that exactly the allowed number got through.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import trio_local
from tests.trio_local.hardening.wire import MODEL, V1, Wire, lora
from trio_local.storage.lock import DataDirInUse


def at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run `work(i)` on `count` threads released together; their results in order."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = work(index)
        except Exception as error:  # reported, not swallowed: the test asserts on it
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


def test_concurrent_creates_never_exceed_max_runs(tmp_path: Path) -> None:
    with trio_local.serve_in_background(
        data_dir=tmp_path, configure_sdk=False, max_training_runs=2
    ) as service:
        sessions = [Wire(service).session() for _ in range(8)]

        def create(index: int) -> int:
            wire = Wire(service)
            try:
                return wire.create_training_run(sessions[index]).status_code
            finally:
                wire.close()

        statuses = Counter(at_once(8, create))
        assert statuses == {200: 2, 429: 6}
        listed = Wire(service).control("GET", f"{V1}/training-runs").json()["training_runs"]
        assert sum(run["status"] in ("CREATED", "RUNNING") for run in listed) == 2


def test_concurrent_submits_of_one_index_accept_exactly_one(tmp_path: Path) -> None:
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False) as service:
        wire = Wire(service)
        run = wire.training_run(wire.session())
        init = {"base_model": MODEL, "lora_config": lora(4)}

        def submit(_: int) -> int:
            client = Wire(service)
            try:
                return client.event(run, "trainer.init_run", init, index=1).status_code
            finally:
                client.close()

        statuses = Counter(at_once(6, submit))
        assert statuses == {200: 1, 409: 5}
        wire.close()


@pytest.mark.slow
def test_concurrent_deletes_of_one_checkpoint_delete_it_once(tmp_path: Path) -> None:
    with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False) as service:
        wire = Wire(service)
        run = wire.training_run(wire.session())
        init = {"base_model": MODEL, "lora_config": lora(4)}
        assert wire.result(run, wire.event(run, "trainer.init_run", init, 1))["status"] == (
            "succeeded"
        )
        saved = wire.result(run, wire.event(run, "trainer.save_state", {"name": "once"}, 2))
        assert saved["status"] == "succeeded"
        checkpoint = wire.control("GET", f"{V1}/checkpoints").json()["checkpoints"][0]
        target = f"{V1}/checkpoints/{checkpoint['checkpoint_cuid']}"

        def delete(_: int) -> int:
            client = Wire(service)
            try:
                return client.control("DELETE", target).status_code
            finally:
                client.close()

        statuses = Counter(at_once(6, delete))
        assert statuses[204] == 1 and statuses[204] + statuses[404] == 6
        assert not list((service.data_dir / "checkpoints").glob("*/weights/*"))
        wire.close()


def test_only_one_of_many_services_starting_on_one_data_dir_wins(tmp_path: Path) -> None:
    refused = threading.Semaphore(0)

    def start(_: int) -> str:
        try:
            with trio_local.serve_in_background(data_dir=tmp_path, configure_sdk=False):
                # hold the directory until the three others have been turned away
                for _ in range(3):
                    assert refused.acquire(timeout=60)
                return "served"
        except DataDirInUse:
            refused.release()
            return "refused"

    assert Counter(at_once(4, start)) == {"served": 1, "refused": 3}
