"""Training runs this server session opened or resumed, and the per-run locks.

A run stays open (its slot taken) until end_training_run ends it, or until it has been idle for
`idle_run_timeout_s` (`end_idle`); ending drops the SDK's training client, whose heartbeat then
stops, and keeps the run's checkpoints.

Calls on one run are serialised (a second train_sft on the same run waits for the first);
calls on different runs proceed in parallel. Opening a run first takes a slot (`reserve_slot`),
so concurrent create and resume calls can never open more runs than `max_concurrent_runs`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcp_server.errors import GuardRefusal, InvalidInput
from mcp_server.ledger import Ledger

ENDED_KEPT = 100


@dataclass
class CheckpointRecord:
    name: str
    kind: str
    path: str
    step: int


@dataclass
class RunState:
    run_id: str
    client: Any
    base_model: str
    rank: int
    train_mlp: bool
    train_attn: bool
    train_unembed: bool
    seed: int | None
    resumed_from: str | None = None
    step: int = 0
    losses: list[float] = field(default_factory=list)
    tokens_trained: int = 0
    created: float = field(default_factory=time.time)
    checkpoints: list[CheckpointRecord] = field(default_factory=list)
    tokenizer: Any = None
    # The sampling client of the run's current weights (tools/_sampling.RunSampler); saved
    # again only after training.
    sampler: Any = None
    # The step of the checkpoint it was resumed from (None: not resumed, or the step is unknown).
    resumed_at_step: int | None = None
    # When a call last used the run (time.monotonic()); idle runs end after a timeout.
    last_used: float = field(default_factory=time.monotonic)


@dataclass
class RunRegistry:
    runs: dict[str, RunState] = field(default_factory=dict)
    checkpoints: dict[str, tuple[str, CheckpointRecord]] = field(default_factory=dict)
    _locks: dict[str, anyio.Lock] = field(default_factory=dict)
    # Slots taken by create/resume calls that are still waiting for the backend.
    opening: int = 0
    # Runs ended in this session (newest last, at most ENDED_KEPT), for get_training_run.
    ended: dict[str, RunState] = field(default_factory=dict)
    # Each checkpoint's step, kept across restarts (resume continues the count).
    ledger: Ledger = field(default_factory=lambda: Ledger(None))

    def reserve_slot(self, limit: int, idle_timeout_s: float = 0) -> RunSlot:
        """Take a slot for a run about to open, or refuse when open + opening runs hit `limit`
        (runs idle past `idle_timeout_s` are ended first).

        No await happens between the count and the increment, so it is atomic on the loop.
        """
        self.end_idle(idle_timeout_s)
        taken = len(self.runs) + self.opening
        if taken >= limit:
            open_ids = ", ".join(self.runs) or "none yet"
            raise GuardRefusal(
                f"{taken} training runs are already open or opening in this session (open: "
                f"{open_ids}); end one you are done with with end_training_run (its checkpoints "
                "stay)",
                "max_concurrent_runs",
                limit,
            )
        self.opening += 1
        return RunSlot(self)

    def touch(self, run_id: str) -> None:
        run = self.runs.get(run_id)
        if run is not None:
            run.last_used = time.monotonic()

    def end(self, run_id: str) -> RunState:
        """Close a run: its slot is free at once; its checkpoints stay (records and ledger)."""
        run = self.get(run_id)
        del self.runs[run_id]
        self._locks.pop(run_id, None)
        # Dropping the SDK clients lets pytrio's finalizer stop the run's heartbeat.
        run.client = None
        run.sampler = None
        run.tokenizer = None
        self.ended[run_id] = run
        while len(self.ended) > ENDED_KEPT:
            self.ended.pop(next(iter(self.ended)))
        return run

    def end_idle(self, timeout_s: float, now: float | None = None) -> list[str]:
        """End every run unused for `timeout_s` seconds and not in a call now; their ids."""
        if timeout_s <= 0:
            return []
        now = time.monotonic() if now is None else now
        idle = [
            run_id
            for run_id, run in self.runs.items()
            if now - run.last_used >= timeout_s and not self._busy(run_id)
        ]
        for run_id in idle:
            self.end(run_id)
        return idle

    def _busy(self, run_id: str) -> bool:
        lock = self._locks.get(run_id)
        return lock is not None and (lock.locked() or lock.statistics().tasks_waiting > 0)

    def lock(self, run_id: str) -> anyio.Lock:
        if run_id not in self._locks:
            self._locks[run_id] = anyio.Lock()
        return self._locks[run_id]

    def add(self, state: RunState) -> None:
        self.runs[state.run_id] = state

    def get(self, run_id: str) -> RunState:
        state = self.runs.get(run_id)
        if state is None and run_id in self.ended:
            states = [c.path for c in self.ended[run_id].checkpoints if c.kind == "state"]
            again = (
                f"resume_training_run from {states[-1]!r}"
                if states
                else ("create_training_run (it saved no state checkpoint in this session)")
            )
            raise InvalidInput(
                f"run_id {run_id!r} is not open: it ended (end_training_run, or idle for "
                f"idle_run_timeout_s); continue with {again}"
            )
        if state is None:
            known = ", ".join(self.runs) or "none yet"
            raise InvalidInput(
                f"run_id {run_id!r} is not open in this session (open: {known}); create one with "
                "create_training_run or reopen a checkpoint with resume_training_run"
            )
        return state

    def add_checkpoint(self, run_id: str, record: CheckpointRecord) -> None:
        self.runs[run_id].checkpoints.append(record)
        self.checkpoints[record.path] = (run_id, record)
        self.ledger.set_step(record.path, record.step)

    def known_step(self, path: str) -> int | None:
        """The step a checkpoint was saved at: this session's record, else the ledger's (a
        checkpoint an earlier server saved), else None."""
        entry = self.checkpoints.get(path)
        return entry[1].step if entry is not None else self.ledger.step_of(path)

    def forget_checkpoint(self, path: str) -> None:
        self.ledger.drop(path)
        entry = self.checkpoints.pop(path, None)
        if entry is not None:
            run = self.runs.get(entry[0])
            if run is not None:
                run.checkpoints = [c for c in run.checkpoints if c.path != path]


@dataclass
class RunSlot:
    """A reserved place for one run: `fill` registers the run; leaving unfilled gives it back."""

    registry: RunRegistry
    done: bool = False

    def fill(self, state: RunState) -> None:
        self.registry.add(state)
        self._give_back()

    def _give_back(self) -> None:
        if not self.done:
            self.done = True
            self.registry.opening -= 1

    def __enter__(self) -> RunSlot:
        return self

    def __exit__(self, *exc: object) -> None:
        self._give_back()
