"""trio-local throughput and overhead, printed as a table.

    .venv/bin/python bench/local_bench.py [--steps 6] [--batch 8] [--seq 128] [--rounds 2]

- tokens/s of forward_backward + optim_step through the real SDK (over HTTP to trio-local in
  this process) against the same stand-in model and LoRA trained by a plain torch + peft loop
  in this process, on the same batch; target ratio >= 0.85. The two alternate for `--rounds`
  rounds and the medians are compared, because the machine is shared.
- per-event overhead: the SDK round trip (submit, scheduler, long-poll) of an `optim_step` with
  no accumulated gradient, whose engine work is nil; and the step-time difference per event.
- start-up: seconds from launching `trio-local serve` to its first HTTP answer (target < 2 s).
- with `--cycles`: issue 8's clock-cycle tables from `local_cycles_bench.py` (cycles per update
  for the three submission patterns, throughput with 1, 2 and 4 concurrent runs).
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
MODEL = "Qwen/Qwen3-4B-Instruct-2507"
RANK, LR = 16, 1e-4


def make_batch(batch: int, seq: int) -> list[list[int]]:
    rng = random.Random(0)
    return [[rng.randrange(0, 151_000) for _ in range(seq + 1)] for _ in range(batch)]


def plain_loop(rows: list[list[int]], steps: int) -> float:
    """Seconds per step of the same stand-in model with peft's LoRA, the same loss and
    torch's AdamW, in a plain loop: no SDK, no service, no scheduler."""
    import torch
    import torch.nn.functional as F
    from peft import LoraConfig, get_peft_model

    from trio_local.catalogue import LORA_ALPHA, STAND_IN
    from trio_local.engine.model import LoraSpec, build_base_model

    torch.set_num_threads(2)
    base, _ = build_base_model(STAND_IN)
    spec = LoraSpec(RANK, 0, train_mlp=True, train_attn=True, train_unembed=True)
    config = LoraConfig(r=RANK, lora_alpha=LORA_ALPHA, target_modules=spec.target_modules())
    model = get_peft_model(base, config)
    params = [param for param in model.parameters() if param.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=LR, betas=(0.9, 0.95), eps=1e-12, weight_decay=0)
    inputs = torch.tensor([row[:-1] for row in rows])
    targets = torch.tensor([row[1:] for row in rows])
    times = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        logits = model(input_ids=inputs).logits.float()
        flat = logits.reshape(-1, logits.shape[-1])
        loss = F.cross_entropy(flat, targets.reshape(-1), reduction="sum") / targets.numel()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def sdk_loop(client, rows: list[list[int]], steps: int) -> float:
    import pytrio as trio

    training = client.create_lora_training_client(base_model=MODEL, rank=RANK, seed=0)
    data = [
        trio.Datum(
            model_input=trio.ModelInput.from_ints(row[:-1]),
            loss_fn_inputs={"target_tokens": row[1:]},
        )
        for row in rows
    ]
    times = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        fb = training.forward_backward(data, "cross_entropy")
        opt = training.optim_step(trio.AdamParams(learning_rate=LR))
        fb.result()
        opt.result()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def event_round_trip_ms(client, events: int) -> float:
    import pytrio as trio

    training = client.create_lora_training_client(base_model=MODEL, rank=4, seed=0)
    training.optim_step(trio.AdamParams()).result()  # init_run and the first step
    times = []
    for _ in range(events):
        start = time.perf_counter()
        training.optim_step(trio.AdamParams()).result()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def startup_seconds() -> float:
    with tempfile.TemporaryDirectory() as data_dir:
        start = time.perf_counter()
        process = subprocess.Popen(
            [str(BIN / "trio-local"), "serve", "--port", "0", "--data-dir", data_dir],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            url = process.stdout.readline().split()[-1]
            while True:
                try:
                    if httpx.get(url + "/", timeout=1).status_code == 200:
                        return time.perf_counter() - start
                except httpx.HTTPError:
                    time.sleep(0.02)
        finally:
            process.terminate()
            process.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cycles", action="store_true", help="also run local_cycles_bench.py")
    args = parser.parse_args()

    import pytrio as trio

    import trio_local

    rows = make_batch(args.batch, args.seq)
    tokens = args.batch * args.seq
    plain, through_sdk = [], []
    trio.configure_observability(enabled=False)
    with trio_local.serve_in_background():
        client = trio.ServiceClient()
        for _ in range(args.rounds):
            plain.append(plain_loop(rows, args.steps))
            through_sdk.append(sdk_loop(client, rows, args.steps))
        round_trip = event_round_trip_ms(client, 20)
    startup = startup_seconds()

    plain_s, sdk_s = statistics.median(plain), statistics.median(through_sdk)
    ratio = plain_s / sdk_s
    overhead_ms = (sdk_s - plain_s) / 2 * 1000
    rows_out = [
        ("plain torch+peft loop, tokens/s", f"{tokens / plain_s:,.0f}", ""),
        ("SDK -> trio-local, tokens/s", f"{tokens / sdk_s:,.0f}", ""),
        ("ratio SDK / plain", f"{ratio:.3f}", ">= 0.85"),
        ("per-event round trip, empty optim_step, ms", f"{round_trip:.1f}", ""),
        ("step-time difference per event, ms", f"{overhead_ms:.1f}", ""),
        ("`trio-local serve` start to first answer, s", f"{startup:.2f}", "< 2"),
    ]
    print(
        f"batch {args.batch} x {args.seq} tokens, rank {RANK}, median of {args.steps} steps "
        f"x {args.rounds} rounds"
    )
    width = max(len(name) for name, _, _ in rows_out)
    print(f"| {'measure':<{width}} | {'value':>10} | target  |")
    print(f"|{'-' * (width + 2)}|{'-' * 12}|---------|")
    for name, value, target in rows_out:
        print(f"| {name:<{width}} | {value:>10} | {target:<7} |")
    if args.cycles:
        print()
        return subprocess.call(
            [sys.executable, str(Path(__file__).with_name("local_cycles_bench.py"))]
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
