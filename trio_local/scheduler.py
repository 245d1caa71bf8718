"""One scheduler for every run: work is queued per lane (a run) and executed in cycles.

A cycle starts at a boundary, takes every item queued before it, and runs them on the single
worker thread, each lane's items in submission order; items arriving during a cycle wait for the
next one. `cycle_ms` sets a minimum cycle length (0 runs back to back).

Issue 8 builds the clock-cycle model on this seam: batching compatible work of different runs
inside `_run_cycle`, per-run statistics from the `Work` timestamps, capacity limits.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Work:
    lane: str  # a training or sampling run id; one lane's items run in order
    kind: str  # an event type or "sample", for statistics
    execute: Callable[[], Any]
    future: Future = field(default_factory=Future)
    submitted_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    finished_at: float | None = None


@dataclass
class LaneStats:
    items: int = 0
    cycles: int = 0
    queue_wait_s: float = 0.0


@dataclass
class SchedulerStats:
    cycles: int = 0
    items: int = 0
    lanes: dict[str, LaneStats] = field(default_factory=dict)


class Scheduler:
    def __init__(self, *, cycle_ms: int = 0) -> None:
        self.cycle_s = max(cycle_ms, 0) / 1000
        self.stats = SchedulerStats()
        self._queues: OrderedDict[str, deque[Work]] = OrderedDict()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="trio-local-scheduler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def submit(self, lane: str, kind: str, execute: Callable[[], Any]) -> Future:
        work = Work(lane=lane, kind=kind, execute=execute)
        with self._cond:
            if self._stopping:
                work.future.set_exception(RuntimeError("trio-local is shutting down"))
                return work.future
            self._queues.setdefault(lane, deque()).append(work)
            self._cond.notify_all()
        return work.future

    def _take_cycle(self) -> list[Work] | None:
        """Wait for work, then take everything queued so far (the cycle boundary)."""
        with self._cond:
            while not self._stopping and not any(self._queues.values()):
                self._cond.wait()
            if self._stopping:
                return None
            batch: list[Work] = []
            for queue in self._queues.values():
                batch.extend(queue)
                queue.clear()
            self._queues = OrderedDict((k, q) for k, q in self._queues.items() if q)
            return batch

    def _run_cycle(self, batch: list[Work]) -> None:
        lanes_seen: set[str] = set()
        for work in batch:
            work.started_at = time.monotonic()
            try:
                result = work.execute()
            except BaseException as error:  # the future carries it to the caller
                work.finished_at = time.monotonic()
                work.future.set_exception(error)
            else:
                work.finished_at = time.monotonic()
                work.future.set_result(result)
            lane = self.stats.lanes.setdefault(work.lane, LaneStats())
            lane.items += 1
            lane.queue_wait_s += work.started_at - work.submitted_at
            if work.lane not in lanes_seen:
                lanes_seen.add(work.lane)
                lane.cycles += 1
        self.stats.items += len(batch)

    def _loop(self) -> None:
        while True:
            batch = self._take_cycle()
            if batch is None:
                return
            started = time.monotonic()
            self._run_cycle(batch)
            self.stats.cycles += 1
            remaining = self.cycle_s - (time.monotonic() - started)
            if remaining > 0:
                time.sleep(remaining)
