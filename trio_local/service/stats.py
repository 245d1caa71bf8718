"""/trio-local/stats' snapshot: the scheduler's counters, each run's kind and status, the
--check report, the engine's start-up timings and the warm-up's progress."""

from __future__ import annotations

import asyncio
from typing import Any

from trio_local.checks import Checker
from trio_local.engine.engine import Engine
from trio_local.scheduler import Scheduler
from trio_local.storage.db import Store

DRAIN_S = 30.0  # the first chat datum makes the checker load its tokenizer (seconds)


class Stats:
    def __init__(
        self, scheduler: Scheduler, store: Store, engine: Engine, checks: Checker | None
    ) -> None:
        self._scheduler = scheduler
        self._store = store
        self._engine = engine
        self._checks = checks

    async def snapshot(self, run: str | None, *, with_examples: bool) -> dict[str, Any]:
        """`run` narrows the check report to one run; the report's examples quote the client's
        data, so they are left out unless `with_examples` (the caller holds the API key)."""
        snapshot = self._scheduler.stats()
        runs = snapshot["runs"]
        for run_id, entry in runs.items():
            row = self._store.training_run(run_id)
            entry["kind"] = "training" if row is not None else "sampling"
            if row is not None:
                entry["status"] = row.status
        if self._checks is not None:
            # Wait briefly (off the event loop) for observations already queued, then report.
            await asyncio.to_thread(self._checks.drain, DRAIN_S)
            report = self._checks.report(run).model_dump(mode="json")
            if not with_examples:
                for finding in report["findings"]:
                    finding["example"] = None
            snapshot["checks"] = report
        snapshot["engine_timings"] = dict(self._engine.timings)
        snapshot["warmup"] = self._engine.warm_up_status()
        return snapshot
