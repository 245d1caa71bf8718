"""Training runs this server session opened or resumed, and the per-run locks.

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


@dataclass
class RunRegistry:
    runs: dict[str, RunState] = field(default_factory=dict)
    checkpoints: dict[str, tuple[str, CheckpointRecord]] = field(default_factory=dict)
    _locks: dict[str, anyio.Lock] = field(default_factory=dict)
    # Slots taken by create/resume calls that are still waiting for the backend.
    opening: int = 0

    def reserve_slot(self, limit: int) -> RunSlot:
        """Take a slot for a run about to open, or refuse when open + opening runs hit `limit`.

        No await happens between the count and the increment, so it is atomic on the loop.
        """
        taken = len(self.runs) + self.opening
        if taken >= limit:
            raise GuardRefusal(
                f"{taken} training runs are already open or opening in this session",
                "max_concurrent_runs",
                limit,
            )
        self.opening += 1
        return RunSlot(self)

    def lock(self, run_id: str) -> anyio.Lock:
        if run_id not in self._locks:
            self._locks[run_id] = anyio.Lock()
        return self._locks[run_id]

    def add(self, state: RunState) -> None:
        self.runs[state.run_id] = state

    def get(self, run_id: str) -> RunState:
        state = self.runs.get(run_id)
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

    def forget_checkpoint(self, path: str) -> None:
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
