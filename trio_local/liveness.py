"""Run liveness and capacity: which training runs still have a client, and how many may run.

A training client proves it is alive by its heartbeat (the SDK posts one every `heartbeat_ms`,
which the service announces) and by its events. A run silent for `heartbeat_timeout_s` lost its
client: it is marked ENDED and its adapter is freed; its checkpoints stay. A session closed by
the SDK (at client shutdown) ends its runs at once. Ended runs free their capacity slot: past
`max_training_runs` active runs, creation answers the SDK's capacity 429
(`actor_capacity_exceeded`), which the SDK polls until a slot frees.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from trio_local.errors import ApiError
from trio_local.storage.db import Store
from trio_local.storage.rows import ACTIVE_TRAINING_RUN, TrainingRunStatus


class Liveness:
    def __init__(
        self,
        store: Store,
        *,
        max_training_runs: int,
        heartbeat_timeout_s: float,
        free_run: Callable[[str], object],
    ) -> None:
        self.store = store
        self.max_training_runs = max_training_runs
        self.timeout_s = heartbeat_timeout_s
        self._free_run = free_run  # drops a run's in-memory state (on the scheduler's thread)
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._end_runs_of_an_earlier_process()

    def _end_runs_of_an_earlier_process(self) -> None:
        """A RUNNING run's weights lived in an earlier process's memory: it can never take another
        step, so it ends now instead of holding a capacity slot until the heartbeat timeout. A
        CREATED run never reached the trainer; its client may still initialise it, so it gets the
        usual grace period."""
        for run_id in self.active_runs():
            row = self.store.training_run(run_id)
            if row is not None and row.status == TrainingRunStatus.RUNNING:
                self.store.move_training_run(
                    run_id, TrainingRunStatus.ENDED, stamp_column="ended_at"
                )
            else:
                self._seen[run_id] = time.monotonic()

    @property
    def heartbeat_ms(self) -> int:
        """The interval announced to the SDK: three beats per timeout, within [1 s, 60 s]."""
        return int(min(max(self.timeout_s / 3, 1.0), 60.0) * 1000)

    def touch(self, run_id: str) -> None:
        with self._lock:
            self._seen[run_id] = time.monotonic()

    def active_runs(self) -> list[str]:
        found, offset = [], 0
        while True:
            page = self.store.training_runs(1000, offset)
            found += [row.cuid for row in page.rows if row.status in ACTIVE_TRAINING_RUN]
            offset += len(page.rows)
            if not page.rows or offset >= page.total:
                return found

    def admit(self) -> None:
        """Raise the SDK's capacity 429 when every slot is taken (call right before creating)."""
        self.sweep()
        active = len(self.active_runs())
        if active >= self.max_training_runs:
            raise ApiError(
                429,
                "actor_capacity_exceeded",
                f"trio-local is running {active} training runs, its maximum "
                f"(--max-runs {self.max_training_runs}); the SDK retries until one ends",
            )

    def end_run(self, run_id: str, reason: str) -> None:
        row = self.store.training_run(run_id)
        with self._lock:
            self._seen.pop(run_id, None)
        if row is None or row.status not in ACTIVE_TRAINING_RUN:
            return
        if self.store.move_training_run(run_id, TrainingRunStatus.ENDED, stamp_column="ended_at"):
            self._free_run(run_id)

    def end_session(self, session_id: str) -> None:
        for run_id in self.store.session_run_ids(session_id, "training_runs"):
            self.end_run(run_id, "session closed")

    def sweep(self) -> list[str]:
        """End every active run whose client has been silent past the timeout."""
        moment = time.monotonic()
        ended = []
        for run_id in self.active_runs():
            with self._lock:
                seen = self._seen.setdefault(run_id, moment)
            if moment - seen > self.timeout_s:
                self.end_run(run_id, "heartbeat timeout")
                ended.append(run_id)
        return ended

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(min(self.timeout_s / 4, 5.0)):
                self.sweep()

        self._thread = threading.Thread(target=loop, name="trio-local-liveness", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
