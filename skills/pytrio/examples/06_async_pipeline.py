"""Ways to submit the same training: serial, submit-then-wait, and a one-batch pipeline.

PyTRIO's service advances in clock cycles: work queued before a cycle boundary runs in that cycle,
work that arrives later waits for the next. Waiting for `forward_backward` before submitting
`optim_step` costs about three cycles per update, submitting both before waiting about two, and
keeping the next batch queued while reading the current one about one. This script runs the
patterns on separate training runs (the pipeline twice: with the sync API and inside
`async def` with the `_async` API) and prints seconds per update and, when the service reports
them, cycles per update.

Cycle statistics come from trio-local's own stats endpoint (not part of the PyTRIO protocol);
`trio-local run` sets TRIO_LOCAL_STATS_URL. On the real service only the timings are printed.

Run offline:       trio-local run python examples/06_async_pipeline.py
Run on PyTRIO:     python examples/06_async_pipeline.py   (after `trio login`)
"""

import argparse
import asyncio
import json
import os
import time
import urllib.request

import pytrio as trio


def build_batch(tokenizer, size: int) -> list[trio.Datum]:
    batch = []
    for i in range(size):
        tokens = tokenizer.encode(f"Example {i}: the quick brown fox jumps over the lazy dog.")
        batch.append(
            trio.Datum(
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": tokens[1:]},
            )
        )
    return batch


def serial(training: trio.TrainingClient, batch, adam, updates: int) -> None:
    for _ in range(updates):
        training.forward_backward(batch, "cross_entropy").result()  # wait ...
        training.optim_step(adam).result()  # ... then submit the step


def submit_then_wait(training: trio.TrainingClient, batch, adam, updates: int) -> None:
    for _ in range(updates):
        fb_future = training.forward_backward(batch, "cross_entropy")
        optim_future = training.optim_step(adam)  # queued before waiting
        fb_future.result()
        optim_future.result()


def pipelined(training: trio.TrainingClient, batch, adam, updates: int) -> None:
    pending = None
    for _ in range(updates):
        current = (training.forward_backward(batch, "cross_entropy"), training.optim_step(adam))
        if pending is not None:  # read step k while step k+1 is already queued
            pending[0].result()
            pending[1].result()
        pending = current
    if pending is not None:
        pending[0].result()
        pending[1].result()


async def pipelined_async(training: trio.TrainingClient, batch, adam, updates: int) -> list:
    """The one-batch look-ahead inside `async def`: each `*_async` training call is awaited once
    to queue it (in order) and once more for its result."""
    losses, pending = [], None
    for _ in range(updates):
        fb_future = await training.forward_backward_async(batch, "cross_entropy")  # queued
        optim_future = await training.optim_step_async(adam)  # queued right behind it
        if pending is not None:  # read step k while step k+1 is already queued
            losses.append((await pending[0]).metrics["loss_mean"])
            await pending[1]
        pending = (fb_future, optim_future)
    if pending is not None:
        losses.append((await pending[0]).metrics["loss_mean"])
        await pending[1]
    return losses


async def async_training_client(base_model: str):
    """Sync-only calls (`ServiceClient()`, `get_tokenizer()`) are fine in async code: the SDK
    waits on its own event loop thread. They block this loop while they run, so make them at
    start-up, before other tasks depend on the loop."""
    service = trio.ServiceClient()
    training = await service.create_lora_training_client_async(base_model=base_model, rank=8)
    return training, training.get_tokenizer()


def run_cycles(stats_url: str | None, run_id: str) -> float | None:
    """Cycles this run has been scheduled in, from trio-local's stats (None elsewhere)."""
    if not stats_url:
        return None
    with urllib.request.urlopen(stats_url, timeout=10) as response:
        stats = json.load(response)
    runs = stats.get("runs", {})
    entry = runs.get(run_id) if isinstance(runs, dict) else None
    if entry is None and isinstance(runs, list):
        entry = next(
            (r for r in runs if run_id in (r.get("run_id"), r.get("training_run_id"))), None
        )
    return None if entry is None else float(entry["cycles"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--stats-url", default=os.environ.get("TRIO_LOCAL_STATS_URL"))
    args = parser.parse_args()

    service = trio.ServiceClient()
    adam = trio.AdamParams(learning_rate=1e-4)
    patterns = [
        ("serial", serial),
        ("submit-then-wait", submit_then_wait),
        ("pipelined", pipelined),
        ("pipelined-async", lambda *call: asyncio.run(pipelined_async(*call))),
    ]
    for name, pattern in patterns:
        if name.endswith("-async"):
            training, tokenizer = asyncio.run(async_training_client(args.base_model))
        else:
            training = service.create_lora_training_client(base_model=args.base_model, rank=8)
            tokenizer = training.get_tokenizer()
        batch = build_batch(tokenizer, args.batch_size)
        training.forward(batch, "cross_entropy").result()  # warm up: lazy init, tokenizer
        cycles_before = run_cycles(args.stats_url, training.training_run_cuid)
        started = time.perf_counter()
        pattern(training, batch, adam, args.updates)
        seconds = (time.perf_counter() - started) / args.updates
        cycles_after = run_cycles(args.stats_url, training.training_run_cuid)
        if cycles_before is None or cycles_after is None:
            cycles = "n/a"
        else:
            cycles = f"{(cycles_after - cycles_before) / args.updates:.2f}"
        print(f"pattern {name} seconds_per_update {seconds:.3f} cycles_per_update {cycles}")


if __name__ == "__main__":
    main()
