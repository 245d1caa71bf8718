"""The three ways a client can submit a training update, as plain SDK loops.

The clock-cycle scheduler tells them apart (about three, two and one cycles per update); the
cycle tests and `bench/local_cycles_bench.py` drive the service with exactly these loops, and
`examples/06_async_pipeline.py` shows users the same three (it repeats them on purpose: examples
import nothing of ours). Each takes a TrainingClient, a batch of Datums and AdamParams. They
drive the service, they are not part of it: they live with the benchmarks, out of the wheel.
"""

from __future__ import annotations

from typing import Any


def serial(training: Any, data: list[Any], adam: Any, updates: int) -> None:
    """Wait for forward_backward before submitting optim_step: the optimizer misses the cycle."""
    for _ in range(updates):
        training.forward_backward(data, "cross_entropy").result()
        training.optim_step(adam).result()


def submit_then_wait(training: Any, data: list[Any], adam: Any, updates: int) -> None:
    """Submit both calls of an update, then wait for both."""
    for _ in range(updates):
        fb, opt = training.forward_backward(data, "cross_entropy"), training.optim_step(adam)
        fb.result()
        opt.result()


def pipelined(training: Any, data: list[Any], adam: Any, updates: int) -> None:
    """One-batch look-ahead: the next update is queued before the current one is waited for."""
    pending = None
    for _ in range(updates):
        current = (training.forward_backward(data, "cross_entropy"), training.optim_step(adam))
        if pending is not None:
            pending[0].result()
            pending[1].result()
        pending = current
    if pending is not None:
        pending[0].result()
        pending[1].result()
