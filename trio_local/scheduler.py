"""The clock-cycle scheduler: one worker advances every run in lockstep cycles.

PyTRIO's service runs LoRA jobs on a shared worker pool that moves in cycles: a cycle executes
the work that was queued, from all jobs, before it began, and a request that arrives after the
boundary waits for the next cycle. trio-local models that with one worker thread:

- At a cycle boundary the scheduler takes, for every lane (a training or sampling run), the
  items queued so far in submission order, up to and including the lane's first optimizer step:
  a cycle advances each run by at most one update.
- The cycle then runs in two phases, as the service's cycle does: the forward phase (forward,
  forward-backward, init, save, sample: everything before the lane's optimizer step), then the
  optimizer phase. Each phase completes its events when it ends, so a client that waits for a
  forward-backward result learns it mid-cycle, and one that waits for the optimizer step learns
  it at the next boundary, too late for that cycle.
- With `cycle_ms` > 0 each phase lasts at least half of it, and the clock keeps ticking while
  idle (a lockstep pool does not wait for anyone). With `cycle_ms` 0 cycles run back to back as
  soon as work is queued, which is fast but makes cycle counts meaningless.

Work of different runs is not fused into one model pass: each run trains its own LoRA adapter
and peft's mixed-adapter batches are inference-only, so fusing them would not be honest. The
phases still group every run's work, which is what decides how many cycles an update costs:
awaiting forward_backward before submitting optim_step costs about three cycles per update,
submitting both before waiting about two, and a one-batch look-ahead pipeline about one.

Per-lane statistics (`stats()`, served at /trio-local/stats) count what happened.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

OPTIMIZER_KIND = "trainer.optimize_step"
T = TypeVar("T")


@dataclass
class Work:
    lane: str  # a training or sampling run id; one lane's items run in order
    kind: str  # an event type or "sample"
    execute: Callable[[], object]
    future: Future[Any] = field(default_factory=Future)
    submitted_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    result: object = None
    error: BaseException | None = None


@dataclass
class LaneStats:
    """What one run went through; cycles are counted by the scheduler's global cycle index."""

    first_cycle: int | None = None  # the first cycle in which the lane had work
    last_cycle: int | None = None  # the latest such cycle
    active_cycles: int = 0  # cycles in which the lane had work
    events: int = 0
    updates: int = 0  # optimizer steps completed
    queue_wait_s: float = 0.0  # submission to the start of the item's cycle, summed
    busy_s: float = 0.0  # time spent executing the lane's items

    def as_dict(self, lane: str) -> dict[str, Any]:
        span = 0 if self.first_cycle is None else (self.last_cycle or 0) - self.first_cycle + 1
        return {
            "run_id": lane,
            "cycles": span,
            "active_cycles": self.active_cycles,
            "idle_cycles": span - self.active_cycles,
            "updates": self.updates,
            "cycles_per_update": round(span / self.updates, 3) if self.updates else None,
            "events": self.events,
            "queue_wait_s": round(self.queue_wait_s, 6),
            "mean_queue_wait_ms": (
                round(1000 * self.queue_wait_s / self.events, 3) if self.events else None
            ),
            "busy_s": round(self.busy_s, 6),
            "first_cycle": self.first_cycle,
            "last_cycle": self.last_cycle,
        }


class Scheduler:
    def __init__(self, *, cycle_ms: int = 0) -> None:
        self.cycle_ms = max(cycle_ms, 0)
        self._phase_s = self.cycle_ms / 2000
        self._queues: OrderedDict[str, deque[Work]] = OrderedDict()
        self._cond = threading.Condition()
        self._stats_lock = threading.Lock()
        self._lanes: dict[str, LaneStats] = {}
        self._cycles = 0  # cycles started so far; the running cycle has index _cycles
        self._idle_cycles = 0
        self._shared_cycles = 0  # cycles that ran work of more than one lane
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

    def submit(self, lane: str, kind: str, execute: Callable[[], T]) -> Future[T]:
        """Queue `execute` in `lane`; the future holds what it returns (or raises)."""
        future: Future[T] = Future()
        work = Work(lane=lane, kind=kind, execute=execute, future=future)
        with self._cond:
            if self._stopping:
                future.set_exception(RuntimeError("trio-local is shutting down"))
                return future
            self._queues.setdefault(lane, deque()).append(work)
            self._cond.notify_all()
        return future

    def stats(self) -> dict[str, Any]:
        """A JSON-able snapshot: the clock and every lane seen so far."""
        with self._stats_lock:
            runs = {lane: item.as_dict(lane) for lane, item in self._lanes.items()}
            cycles, idle, shared = self._cycles, self._idle_cycles, self._shared_cycles
        with self._cond:
            queued = sum(len(queue) for queue in self._queues.values())
        return {
            "cycle_ms": self.cycle_ms,
            "cycles": cycles,
            "idle_cycles": idle,
            "shared_cycles": shared,
            "queued": queued,
            "runs": runs,
        }

    # the worker
    def _wait(self, deadline: float | None) -> bool:
        """Sleep until work is queued (no clock) or until `deadline`; False once stopping."""
        with self._cond:
            while not self._stopping:
                if deadline is None:
                    if any(self._queues.values()):
                        return True
                    self._cond.wait()
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return True
                    self._cond.wait(remaining)
            return False

    def _take(self) -> list[Work]:
        """At the boundary: each lane's queued items up to and including its first optimizer
        step (a cycle advances a run by at most one update)."""
        with self._cond:
            taken: list[Work] = []
            for queue in self._queues.values():
                while queue:
                    work = queue.popleft()
                    taken.append(work)
                    if work.kind == OPTIMIZER_KIND:
                        break
            self._queues = OrderedDict((k, q) for k, q in self._queues.items() if q)
            return taken

    def _execute(self, items: list[Work], started: float) -> None:
        for work in items:
            work.started_at = time.monotonic()
            try:
                work.result = work.execute()
            except BaseException as error:  # the future carries it to the caller
                work.error = error
            finished = time.monotonic()
            with self._stats_lock:
                lane = self._lanes.setdefault(work.lane, LaneStats())
                lane.events += 1
                lane.queue_wait_s += max(started - work.submitted_at, 0.0)
                lane.busy_s += finished - work.started_at
                if work.kind == OPTIMIZER_KIND and work.error is None:
                    lane.updates += 1

    @staticmethod
    def _complete(items: list[Work]) -> None:
        for work in items:
            if work.error is not None:
                work.future.set_exception(work.error)
            else:
                work.future.set_result(work.result)

    @staticmethod
    def _sleep_until(moment: float) -> None:
        remaining = moment - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)

    def _begin_cycle(self, items: list[Work]) -> None:
        with self._stats_lock:
            index = self._cycles
            self._cycles += 1
            lanes = dict.fromkeys(work.lane for work in items)
            if not items:
                self._idle_cycles += 1
            if len(lanes) > 1:
                self._shared_cycles += 1
            for lane_id in lanes:
                lane = self._lanes.setdefault(lane_id, LaneStats())
                if lane.first_cycle is None:
                    lane.first_cycle = index
                lane.last_cycle = index
                lane.active_cycles += 1

    def _run_cycle(self, items: list[Work], start: float) -> None:
        self._begin_cycle(items)
        forward = [work for work in items if work.kind != OPTIMIZER_KIND]
        optimizer = [work for work in items if work.kind == OPTIMIZER_KIND]
        self._execute(forward, start)
        self._sleep_until(start + self._phase_s)
        self._complete(forward)
        middle = time.monotonic()
        self._execute(optimizer, start)
        self._sleep_until(middle + self._phase_s)
        self._complete(optimizer)

    def _loop(self) -> None:
        if self._phase_s <= 0:
            while self._wait(None):
                self._run_cycle(self._take(), time.monotonic())
            self._drain()
            return
        # The clock: a boundary every cycle, whether or not anyone has work. Work that arrives
        # after a boundary waits for the next one; an idle cycle still takes its full length.
        boundary = time.monotonic()
        while True:
            items = self._take()
            if items:
                self._run_cycle(items, boundary)
                boundary = max(time.monotonic(), boundary)
            else:
                self._begin_cycle(items)
                boundary += 2 * self._phase_s
                if not self._wait(boundary):
                    break
        self._drain()

    def _drain(self) -> None:
        with self._cond:
            left = [work for queue in self._queues.values() for work in queue]
            self._queues.clear()
        for work in left:
            work.future.set_exception(RuntimeError("trio-local is shutting down"))
