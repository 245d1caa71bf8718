"""trio-local's first-answer latency and async-vs-sync speed, printed as tables.

    .venv/bin/python bench/local_speed_bench.py [--steps 3] [--prompts 4] [--group 4]

Each measure runs against a fresh `trio-local serve` process (as `trio-local run` starts it, with
its default clock cycle) and a fresh client process:

- first answer: seconds from `ServiceClient()` returning to the first `forward_backward` result
  (target < 2 s), split into run creation, the script's own `get_tokenizer()` call, and the first
  step, of which the SDK spends part loading the tokenizer again (0.2.9's forward_backward checks
  token ids against `len(get_tokenizer(model_id))`; a timing wrapper around that loader, which
  changes nothing else, measures it); then the first `sample` of a fresh sampling client. Three
  columns: a user's first run on a machine (empty tokenizer and weights caches), a later run
  (caches filled by the first), and a later run with `--no-warmup`. Below them, where the
  service's own first seconds went (`/trio-local/stats` -> `engine_timings`, all on background
  threads with warm-up) and its warm-up state when the client finished.
- async vs sync: the same GRPO-shaped steps (save weights and get a sampler, sample `--prompts`
  prompts x `--group` completions, one importance-sampling forward_backward, optim_step), written
  once with the blocking API and once with `*_async` + `asyncio.gather`, as pytrio-cookbook's
  GRPO trainer does; target: async / sync wall time <= 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
KEY = "bench-key-0123456789"

CLIENT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    t_import = time.perf_counter()
    import pytrio as trio
    trio.configure_observability(enabled=False)
    args = json.loads(sys.argv[1])
    model, mode = args["model"], args["mode"]
    out = {"import_s": time.perf_counter() - t_import}
    t0 = time.perf_counter()
    service = trio.ServiceClient()
    out["service_client_s"] = time.perf_counter() - t0

    def prompt(i):
        return trio.ModelInput.from_ints([(97 * i + j) % 150000 for j in range(24)])

    def datums(sampled, prompt_len):
        data = []
        for k, seq in enumerate(sampled):
            tokens = list(range(100, 100 + prompt_len)) + list(seq.tokens)
            n = len(tokens) - 1
            data.append(trio.Datum(
                model_input=trio.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={
                    "target_tokens": tokens[1:],
                    "logprobs": [0.0] * (prompt_len - 1) + [float(x) for x in seq.logprobs],
                    "advantages": [0.0] * (prompt_len - 1)
                    + [1.0 if k % 2 else -1.0] * len(seq.tokens),
                },
            ))
        return data

    params = trio.SamplingParams(max_tokens=args["max_tokens"], temperature=1.0, seed=0)

    if mode == "first":
        # A timing wrapper (behaviour unchanged) around the SDK's tokenizer loader, which
        # TrainingClient.get_tokenizer and the first forward_backward's vocabulary check call.
        import pytrio.client.training as sdk_training
        loader, spent = sdk_training.get_tokenizer, []
        def timed_loader(model_id):
            begin = time.perf_counter()
            try:
                return loader(model_id)
            finally:
                spent.append(time.perf_counter() - begin)
        sdk_training.get_tokenizer = timed_loader
        start = time.perf_counter()
        training = service.create_lora_training_client(base_model=model, rank=16, seed=0)
        created = time.perf_counter()
        tokenizer = training.get_tokenizer()
        loaded = time.perf_counter()
        tokens = tokenizer.encode("Question: what is Trio?\\nAnswer: a training platform.")
        datum = trio.Datum(
            model_input=trio.ModelInput.from_ints(tokens[:-1]),
            loss_fn_inputs={"target_tokens": tokens[1:]},
        )
        training.forward_backward([datum], "cross_entropy").result()
        done = time.perf_counter()
        out.update(create_s=created - start, tokenizer_s=loaded - created,
                   first_step_s=done - loaded, first_answer_s=done - start,
                   sdk_tokenizer_loads=len(spent), sdk_tokenizer_in_step_s=sum(spent[1:]))
        start = time.perf_counter()
        sampler = service.create_sampling_client(base_model=model)
        sampler.sample(prompt(0), 1, trio.SamplingParams(max_tokens=8)).result()
        out["first_sample_s"] = time.perf_counter() - start
    elif mode == "sync":
        training = service.create_lora_training_client(base_model=model, rank=16, seed=0)
        training.get_tokenizer()
        training.optim_step(trio.AdamParams()).result()  # init_run outside the timing
        start = time.perf_counter()
        for step in range(args["steps"]):
            sampler = training.save_weights_and_get_sampling_client()
            futures = [
                sampler.sample(prompt(i), args["group"], params) for i in range(args["prompts"])
            ]
            sampled = [seq for f in futures for seq in f.result().sequences]
            fb = training.forward_backward(datums(sampled, 24), "importance_sampling")
            fb.result()
            training.optim_step(trio.AdamParams(learning_rate=1e-4)).result()
        out["wall_s"] = time.perf_counter() - start
    elif mode == "fanout":
        sampler = service.create_sampling_client(base_model=model)
        sampler.sample(prompt(0), 1, params).result()  # the sampler's first-use costs
        n = args["prompts"] * args["group"]
        walls = {}
        start = time.perf_counter()
        sampler.sample(prompt(1), n, params).result()
        walls["one request of n samples"] = time.perf_counter() - start
        async def fan_out():
            return await asyncio.gather(
                *(sampler.sample_async(prompt(1), 1, params) for _ in range(n))
            )
        start = time.perf_counter()
        asyncio.run(fan_out())
        walls["n concurrent 1-sample requests (async)"] = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(n):
            sampler.sample(prompt(1), 1, params).result()
        walls["n 1-sample requests one by one (sync)"] = time.perf_counter() - start
        out["walls"] = walls
    else:
        async def main():
            training = await service.create_lora_training_client_async(
                base_model=model, rank=16, seed=0
            )
            training.get_tokenizer()
            await training.optim_step_async(trio.AdamParams())
            start = time.perf_counter()
            for step in range(args["steps"]):
                sampler = await training.save_weights_and_get_sampling_client_async()
                results = await asyncio.gather(*(
                    sampler.sample_async(prompt(i), args["group"], params)
                    for i in range(args["prompts"])
                ))
                sampled = [seq for r in results for seq in r.sequences]
                fb = await training.forward_backward_async(
                    datums(sampled, 24), "importance_sampling"
                )
                await fb
                opt = await training.optim_step_async(trio.AdamParams(learning_rate=1e-4))
                await opt
            return time.perf_counter() - start
        out["wall_s"] = asyncio.run(main())
    print("RESULT " + json.dumps(out), flush=True)
    """
)


class Served:
    """A `trio-local serve` process on a free port with a fresh data directory."""

    def __init__(
        self, root: Path, cycle_ms: int | None, cache: Path, options: tuple[str, ...] = ()
    ) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "TRIO_LOCAL_DATA_DIR": str(root / "data"),
            "TRIO_LOCAL_CACHE_DIR": str(cache),
        }
        command = [str(BIN / "trio-local"), "serve", "--port", "0", "--api-key", KEY, *options]
        if cycle_ms is not None:
            command += ["--cycle-ms", str(cycle_ms)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=self.env)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().split()[-1]
        for line in self.process.stdout:
            if line.startswith("export MODELSCOPE_CACHE="):
                self.env["MODELSCOPE_CACHE"] = line.strip().split("=", 1)[1]
                break
        self.env.update(PYTRIO_BASE_URL=self.url, PYTRIO_API_KEY=KEY)

    def client(self, **args: object) -> dict:
        completed = subprocess.run(
            [sys.executable, "-c", CLIENT, json.dumps(args)],
            env=self.env,
            capture_output=True,
            check=False,
            text=True,
            timeout=900,
        )
        for line in completed.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[len("RESULT ") :])
        raise RuntimeError(f"client failed:\n{completed.stdout}\n{completed.stderr[-3000:]}")

    def stats(self) -> dict:
        try:
            return httpx.get(f"{self.url}/trio-local/stats", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return {}

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def _table(title: str, rows: list[tuple[str, str, str]]) -> None:
    _grid(title, ["value"], [(name, [value], target) for name, value, target in rows])


def _grid(title: str, columns: list[str], rows: list[tuple[str, list[str], str]]) -> None:
    print(title)
    width = max(len(name) for name, _, _ in rows)
    cells = [max(9, len(column)) for column in columns]
    head = " | ".join(f"{c:>{w}}" for c, w in zip(columns, cells, strict=True))
    print(f"| {'measure':<{width}} | {head} | target |")
    rule = "|".join("-" * (w + 2) for w in cells)
    print(f"|{'-' * (width + 2)}|{rule}|--------|")
    for name, values, target in rows:
        line = " | ".join(f"{v:>{w}}" for v, w in zip(values, cells, strict=True))
        print(f"| {name:<{width}} | {line} | {target:<6} |")
    print()


# (column, serve options, whether the caches start empty)
FIRST_SCENARIOS = (
    ("first run (cold caches)", (), True),
    ("later run", (), False),
    ("later, --no-warmup", ("--no-warmup",), False),
)


def first_answer(args: argparse.Namespace, work: dict, tmp: Path, cache: Path) -> None:
    results, services = [], []
    for index, (_, options, cold) in enumerate(FIRST_SCENARIOS):
        root = tmp / f"first-{index}"
        served = Served(root, args.cycle_ms, root / "cache" if cold else cache, options)
        try:
            time.sleep(1.0)  # a script starts a moment after the service, as under `run`
            results.append(served.client(mode="first", **work))
            services.append(served.stats())
        finally:
            served.stop()
    seconds = lambda key: [f"{r[key]:.2f}" for r in results]  # noqa: E731
    rows = [
        ("import pytrio, s", seconds("import_s"), ""),
        ("ServiceClient(), s", seconds("service_client_s"), ""),
        ("create_lora_training_client, s", seconds("create_s"), ""),
        ("get_tokenizer (the script's call), s", seconds("tokenizer_s"), ""),
        ("first forward_backward after it, s", seconds("first_step_s"), ""),
        ("  of which the SDK's own get_tokenizer, s", seconds("sdk_tokenizer_in_step_s"), ""),
        ("first answer after ServiceClient(), s", seconds("first_answer_s"), "< 2"),
        (
            "  of which the SDK's tokenizer loads, s",
            [f"{r['tokenizer_s'] + r['sdk_tokenizer_in_step_s']:.2f}" for r in results],
            "",
        ),
        (
            "  of which the rest (service, wire), s",
            [
                f"{r['first_answer_s'] - r['tokenizer_s'] - r['sdk_tokenizer_in_step_s']:.2f}"
                for r in results
            ],
            "",
        ),
        ("first sample, new sampling client, s", seconds("first_sample_s"), ""),
    ]
    names = sorted({name for stats in services for name in stats.get("engine_timings", {})})
    for name in names:
        values = [stats.get("engine_timings", {}).get(name) for stats in services]
        rows.append((f"service: {name}, s", ["-" if v is None else f"{v:.2f}" for v in values], ""))
    rows.append(
        ("service: warm-up state", [s.get("warmup", {}).get("state", "?") for s in services], "")
    )
    _grid(
        f"first answer, {args.model}, fresh service and client process each",
        [name for name, _, _ in FIRST_SCENARIOS],
        rows,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="Qwen/Qwen3-4B-Instruct-2507")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--cycle-ms", type=int, default=None, help="default: trio-local's own")
    parser.add_argument("--skip-first", action="store_true")
    parser.add_argument("--skip-async", action="store_true")
    parser.add_argument("--skip-fanout", action="store_true")
    args = parser.parse_args()
    work = {
        "model": args.model,
        "steps": args.steps,
        "prompts": args.prompts,
        "group": args.group,
        "max_tokens": args.max_tokens,
    }
    with tempfile.TemporaryDirectory(prefix="trio-local-speed-") as tmp:
        # One cache for the whole bench (a user's machine after the first run): the first
        # scenario fills it, so its build costs are counted once, in that scenario.
        cache = Path(tmp) / "first-0" / "cache"
        if not args.skip_first:
            first_answer(args, work, Path(tmp), cache)
        if not args.skip_async:
            walls = {}
            for mode in ("sync", "async", "sync", "async"):
                served = Served(Path(tmp) / f"{mode}-{len(walls)}", args.cycle_ms, cache)
                try:
                    walls.setdefault(mode, []).append(served.client(mode=mode, **work)["wall_s"])
                finally:
                    served.stop()
            sync_s, async_s = min(walls["sync"]), min(walls["async"])
            _table(
                f"async vs sync, {args.steps} GRPO steps of {args.prompts} prompts x "
                f"{args.group} samples x {args.max_tokens} tokens (best of 2 each)",
                [
                    ("sync wall, s", f"{sync_s:.2f}", ""),
                    ("async wall, s", f"{async_s:.2f}", ""),
                    ("ratio async / sync", f"{async_s / sync_s:.2f}", "<= 1"),
                ],
            )
        if not args.skip_fanout:
            served = Served(Path(tmp) / "fanout", args.cycle_ms, cache)
            try:
                walls = served.client(mode="fanout", **work)["walls"]
                busy = served.stats()
            finally:
                served.stop()
            n = args.prompts * args.group
            base = walls["one request of n samples"]
            lane = max(busy.get("runs", {}).values(), key=lambda r: r.get("events", 0), default={})
            _grid(
                f"sampling fan-out, n = {n} samples x {args.max_tokens} tokens, one sampler",
                ["wall, s", "x one request"],
                [(name, [f"{wall:.2f}", f"{wall / base:.2f}"], "") for name, wall in walls.items()]
                + [("sampler's busy seconds (all)", [f"{lane.get('busy_s', 0):.2f}", ""], "")],
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
