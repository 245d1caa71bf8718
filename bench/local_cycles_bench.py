"""trio-local's clock-cycle scheduler (issue 8), printed as tables.

    .venv/bin/python bench/local_cycles_bench.py [--cycle-ms 200] [--updates 6] [--batch 4]
                                                  [--concurrency 1,2,4]

- cycles per update for the three submission patterns (await forward_backward before submitting
  optim_step; submit both, then wait; a one-batch look-ahead pipeline), from the service's own
  stats endpoint, with seconds per update. Expected: about 3, 2 and 1.
- throughput with 1, 2 and 4 concurrent runs, each trained by its own client process with the
  pipelined pattern: aggregate tokens/s, its ratio to one run, cycles per update per run, and
  the cycles that served more than one run. All processes start together (a barrier on stdin).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from support.submission_patterns import pipelined, serial, submit_then_wait

MODEL = "Qwen/Qwen3-4B-Instruct-2507"
TEXT = "Example {i}: the quick brown fox jumps over the lazy dog, again and again."


def stats(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def make_batch(tokenizer, size: int):
    import pytrio as trio

    data = []
    for i in range(size):
        tokens = tokenizer.encode(TEXT.format(i=i))
        data.append(
            trio.Datum(
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={"target_tokens": tokens[1:]},
            )
        )
    return data


PATTERNS = {
    "await fb, then submit optim": serial,
    "submit both, then wait": submit_then_wait,
    "one-batch look-ahead": pipelined,
}

WORKER = """
import sys, time
sys.path.insert(0, {bench!r})
import pytrio as trio
from local_cycles_bench import make_batch
from support.submission_patterns import pipelined
trio.configure_observability(enabled=False)
training = trio.ServiceClient().create_lora_training_client(base_model={model!r}, rank=8)
data = make_batch(training.get_tokenizer(), {batch})
training.forward(data, "cross_entropy").result()
print("READY", training.training_run_cuid, flush=True)
sys.stdin.readline()
start = time.perf_counter()
pipelined(training, data, trio.AdamParams(learning_rate=1e-4), {updates})
tokens = sum(len(d.model_input.to_ints()) for d in data) * {updates}
print("DONE", tokens, time.perf_counter() - start, flush=True)
"""


def concurrent_runs(service, count: int, updates: int, batch: int) -> dict:
    code = WORKER.format(
        bench=str(Path(__file__).resolve().parent),
        model=MODEL,
        batch=batch,
        updates=updates,
    )
    env = {**os.environ, **service.env}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    runs = [worker.stdout.readline().split()[1] for worker in workers]
    url = service.env["TRIO_LOCAL_STATS_URL"]
    before = stats(url)
    started = time.perf_counter()
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    tokens = 0
    for worker in workers:
        _, done_tokens, _ = worker.stdout.readline().split()
        tokens += int(done_tokens)
        worker.wait(600)
    elapsed = time.perf_counter() - started
    after = stats(url)
    per_run = [
        (after["runs"][run]["cycles"] - before["runs"][run]["cycles"]) / updates for run in runs
    ]
    return {
        "tokens_per_s": tokens / elapsed,
        "cycles_per_update": statistics.mean(per_run),
        "shared_cycles": after["shared_cycles"] - before["shared_cycles"],
        "cycles": after["cycles"] - before["cycles"],
    }


def table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    print(title)
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycle-ms", type=int, default=200)
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--concurrency", default="1,2,4")
    args = parser.parse_args()

    import pytrio as trio

    import trio_local

    trio.configure_observability(enabled=False)
    with trio_local.serve_in_background(cycle_ms=args.cycle_ms) as service:
        url = service.env["TRIO_LOCAL_STATS_URL"]
        client = trio.ServiceClient()
        adam = trio.AdamParams(learning_rate=1e-4)
        pattern_rows = []
        for name, pattern in PATTERNS.items():
            training = client.create_lora_training_client(base_model=MODEL, rank=8)
            data = make_batch(training.get_tokenizer(), args.batch)
            training.forward(data, "cross_entropy").result()
            before = stats(url)["runs"][training.training_run_cuid]["cycles"]
            started = time.perf_counter()
            pattern(training, data, adam, args.updates)
            seconds = (time.perf_counter() - started) / args.updates
            after = stats(url)["runs"][training.training_run_cuid]["cycles"]
            cycles = (after - before) / args.updates
            pattern_rows.append((name, f"{cycles:.2f}", f"{seconds:.3f}"))
        concurrency_rows = []
        base = None
        for count in [int(n) for n in args.concurrency.split(",")]:
            measured = concurrent_runs(service, count, args.updates, args.batch)
            base = base or measured["tokens_per_s"]
            concurrency_rows.append(
                (
                    str(count),
                    f"{measured['tokens_per_s']:,.0f}",
                    f"{measured['tokens_per_s'] / base:.2f}",
                    f"{measured['cycles_per_update']:.2f}",
                    f"{measured['shared_cycles']} of {measured['cycles']}",
                )
            )
    print(f"cycle {args.cycle_ms} ms, batch {args.batch}, {args.updates} updates per run\n")
    table(
        "Cycles per update by submission pattern (expected about 3, 2, 1)",
        ("pattern", "cycles/update", "s/update"),
        pattern_rows,
    )
    table(
        "Concurrent runs (one client process each, look-ahead pipeline)",
        ("runs", "tokens/s", "x one run", "cycles/update", "shared cycles"),
        concurrency_rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
