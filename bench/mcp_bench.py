"""trio-mcp speed, printed as tables of ratios.

    .venv/bin/python bench/mcp_bench.py [--calls 200] [--starts 5] [--steps 8] [--skip-train]
        [--rl-iterations 5] [--rl-group 8] [--rl-prompts 4] [--rl-warmup 1] [--skip-rl]

1. Per-call overhead: `echo` goes through the same wrapper as every trio-mcp tool (argument
   validation, audit log line, timing); `raw_echo` is a bare MCPServer tool on the same server.
   200 sequential calls each, after 10 warm-up calls, over stdio (the real console script) and
   in process (the SDK's in-memory client).
2. Cold start: spawn `trio-mcp` over stdio and time until the first answer (tools/list), with the
   backend starting in the background as in normal use. Target: under 1.5 s (torch, pytrio and
   trio-local are imported lazily).
3. train_sft throughput against the same loop written directly with the SDK (same trio-local,
   same tokenizer, same datums, same pipelining), tokens per second. Target ratio: at least 0.9.
4. The RL loop: per iteration, sample a group per prompt from the current weights, reward the
   completions, centre the rewards per group and take one importance_sampling step. Through the
   tools that is one `sample` call and one `train_on_rewards` call; the direct SDK loop does the
   same work by hand (save_weights_and_get_sampling_client, every prompt sampled at once, the
   datums built in the script). Tokens trained per second of the whole loop (sampling included).
   Target ratio: at least 0.9.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
TRIO_MCP = str(Path(sys.executable).with_name("trio-mcp"))
EXAMPLES = [
    {"prompt": "Q: What is the capital of France?\nA:", "completion": " Paris."},
    {"prompt": "Q: What colour is the sky?\nA:", "completion": " Blue."},
    {"prompt": "Q: How many legs does a spider have?\nA:", "completion": " Eight."},
    {"prompt": "Q: What is two plus two?\nA:", "completion": " Four."},
]


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


async def time_calls(client: Client, tool: str, calls: int) -> list[float]:
    for _ in range(10):
        await client.call_tool(tool, {"text": "warm-up"})
    times = []
    for index in range(calls):
        started = time.perf_counter()
        result = await client.call_tool(tool, {"text": f"call {index}"})
        times.append(time.perf_counter() - started)
        assert not result.is_error, result.content
    return times


async def overhead(calls: int, audit: Path) -> list[tuple[str, float, float, float, float]]:
    rows = []
    params = StdioServerParameters(
        command=TRIO_MCP,
        args=["--bench-tools", "--set", "eager_backend=false", "--audit-log", str(audit)],
    )
    async with Client(params) as client:
        raw = await time_calls(client, "raw_echo", calls)
        wrapped = await time_calls(client, "echo", calls)
    rows.append(("stdio", *quantiles(raw), *quantiles(wrapped)))

    from mcp_server.bench_tools import ECHO, RAW_ECHO
    from mcp_server.config import Config
    from mcp_server.server import build_server

    server, app = build_server(
        Config(eager_backend=False, audit_log=audit), extra_tools=[ECHO], raw_tools=[RAW_ECHO]
    )
    async with Client(server) as client:
        raw = await time_calls(client, "raw_echo", calls)
        wrapped = await time_calls(client, "echo", calls)
    rows.append(("in-process", *quantiles(raw), *quantiles(wrapped)))
    app.close()
    return rows


async def first_answer(audit: Path, *extra: str) -> float:
    # A throwaway data dir: the benchmark never touches the user's saved runs.
    args = ["--audit-log", str(audit), "--set", "local_data_dir=temporary", *extra]
    params = StdioServerParameters(command=TRIO_MCP, args=args)
    started = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        return time.perf_counter() - started


def import_floor() -> float:
    """What this machine needs, right now, to start Python and import the MCP SDK alone."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.lowlevel"], check=True)
    return time.perf_counter() - started


def cold_starts(starts: int, audit: Path) -> dict[str, list[float]]:
    """Interleaved, so the floor and trio-mcp see the same machine load."""
    times: dict[str, list[float]] = {name: [] for name in COLD_VARIANTS}
    for _ in range(starts):
        for name, extra in COLD_VARIANTS.items():
            if extra is None:
                times[name].append(import_floor())
            else:
                times[name].append(anyio.run(first_answer, audit, *extra))
    return times


COLD_VARIANTS: dict[str, tuple[str, ...] | None] = {
    "python + import mcp (the floor)": None,
    "trio-mcp (backend warms up)": (),
    "trio-mcp --set eager_backend=false": ("--set", "eager_backend=false"),
}


def direct_loop(service, tokenizer_source, steps: int) -> tuple[float, int]:
    """The same SFT loop written by hand with the SDK: tokens/s over `steps` pipelined steps."""
    import pytrio as trio

    from mcp_server.datums import build_sft_example

    client = service.create_lora_training_client(
        base_model="Qwen/Qwen3-4B-Instruct-2507", rank=16, seed=0
    )
    tokenizer = client.get_tokenizer()
    examples = [
        build_sft_example(tokenizer, e["prompt"], e["completion"], i, chat=False)
        for i, e in enumerate(EXAMPLES)
    ]
    batch = [example.to_datum() for example in examples]
    tokens_per_step = sum(len(example.input_tokens) for example in examples)
    adam = trio.AdamParams(learning_rate=5e-3)
    started = time.perf_counter()
    pending = [(client.forward_backward(batch), client.optim_step(adam))]
    for step in range(steps):
        if step + 1 < steps:
            pending.append((client.forward_backward(batch), client.optim_step(adam)))
        forward, optim = pending.pop(0)
        forward.result()
        optim.result()
    elapsed = time.perf_counter() - started
    return tokens_per_step * steps / elapsed, tokens_per_step


async def throughput(client: Client, service, steps: int, rounds: int) -> list[tuple[str, float]]:
    results: dict[str, list[float]] = {"direct SDK loop": [], "trio-mcp train_sft": []}
    for _ in range(rounds):
        rate, _ = await anyio.to_thread.run_sync(direct_loop, service, None, steps)
        results["direct SDK loop"].append(rate)
        created = await client.call_tool("create_training_run", {"rank": 16, "seed": 0})
        run_id = created.structured_content["run_id"]
        trained = await client.call_tool(
            "train_sft",
            {
                "run_id": run_id,
                "examples": EXAMPLES,
                "steps": steps,
                "learning_rate": 5e-3,
                "batch_size": len(EXAMPLES),
            },
        )
        assert not trained.is_error, trained.content
        results["trio-mcp train_sft"].append(trained.structured_content["tokens_per_s"])
        await client.call_tool("end_training_run", {"run_id": run_id})
    return [(name, statistics.median(rates)) for name, rates in results.items()]


RL_PROMPTS = [
    "Q: Can you help me?\nA:",
    "Q: Do you like music?\nA:",
    "Q: Is today a good day?\nA:",
    "Q: Would you recommend it?\nA:",
]
RL_LEARNING_RATE = 2e-3


def rl_reward(text: str) -> float:
    """A reward both loops compute the same way, and one that varies within a group."""
    return float(len(text.strip()) % 2)


def rl_direct_loop(service, iterations: int, group: int, prompts: list[str]) -> float:
    """The RL loop written by hand with the SDK: trained tokens per second, sampling included."""
    import pytrio as trio

    from mcp_server.advantages import group_advantages

    training = service.create_lora_training_client(
        base_model="Qwen/Qwen3-4B-Instruct-2507", rank=16, seed=0
    )
    adam = trio.AdamParams(learning_rate=RL_LEARNING_RATE)
    tokens = 0
    # Timed from the tokenizer on: the tools load it on the first sample call too.
    started = time.perf_counter()
    tokenizer = training.get_tokenizer()
    encoded = [tokenizer.encode(p, add_special_tokens=False) for p in prompts]
    for iteration in range(iterations):
        sampler = training.save_weights_and_get_sampling_client()
        params = trio.SamplingParams(max_tokens=4, temperature=1.0, seed=100 * iteration)
        futures = [
            sampler.sample(
                prompt=trio.ModelInput.from_ints(prompt), num_samples=group, sampling_params=params
            )
            for prompt in encoded
        ]
        datums = []
        for prompt, future in zip(encoded, futures, strict=True):
            sequences = future.result().sequences
            texts = [tokenizer.decode(list(s.tokens), skip_special_tokens=True) for s in sequences]
            rewards = [rl_reward(text) for text in texts]
            if len(set(rewards)) < 2:
                continue  # equal rewards: nothing to learn (train_on_rewards skips them too)
            for sequence, advantage in zip(sequences, group_advantages(rewards), strict=True):
                full = prompt + list(sequence.tokens)
                logprobs = [0.0] * len(prompt) + list(sequence.logprobs)
                advantages = [0.0] * len(prompt) + [advantage] * len(sequence.tokens)
                datums.append(
                    trio.Datum(
                        model_input=trio.ModelInput.from_ints(full[:-1]),
                        loss_fn_inputs={
                            "target_tokens": full[1:],
                            "logprobs": logprobs[1:],
                            "advantages": advantages[1:],
                        },
                    )
                )
                tokens += len(full) - 1
        if datums:
            forward = training.forward_backward(datums, loss_fn="importance_sampling")
            optim = training.optim_step(adam)
            forward.result()
            optim.result()
    return tokens / (time.perf_counter() - started)


async def rl_tools_loop(client: Client, iterations: int, group: int, prompts: list[str]) -> float:
    """The same loop through trio-mcp: one sample and one train_on_rewards call per iteration."""
    created = await client.call_tool("create_training_run", {"rank": 16, "seed": 0})
    run_id = created.structured_content["run_id"]
    tokens = 0
    started = time.perf_counter()
    for iteration in range(iterations):
        sampled = await client.call_tool(
            "sample",
            {
                "model": run_id,
                "prompts": prompts,
                "num_samples": group,
                "max_tokens": 4,
                "temperature": 1.0,
                "seed": 100 * iteration,
            },
        )
        assert not sampled.is_error, sampled.content
        samples = sampled.structured_content["samples"]
        rewards = {s["rollout_id"]: rl_reward(s["text"]) for s in samples}
        update = await client.call_tool(
            "train_on_rewards",
            {"run_id": run_id, "rewards": rewards, "adam": {"learning_rate": RL_LEARNING_RATE}},
        )
        assert not update.is_error, update.content
        tokens += update.structured_content["tokens"]
    elapsed = time.perf_counter() - started
    await client.call_tool("end_training_run", {"run_id": run_id})
    return tokens / elapsed


async def rl_throughput(
    client: Client, service, args: argparse.Namespace
) -> list[tuple[str, float]]:
    iterations, group, warmup = args.rl_iterations, args.rl_group, args.rl_warmup
    prompts = RL_PROMPTS[: args.rl_prompts]
    results: dict[str, list[float]] = {"direct SDK loop": [], "sample + train_on_rewards": []}
    if warmup:  # untimed iterations of each first: the model build and first compilations
        await anyio.to_thread.run_sync(rl_direct_loop, service, warmup, 2, prompts)
        await rl_tools_loop(client, warmup, 2, prompts)
    for _ in range(args.rounds):
        rate = await anyio.to_thread.run_sync(rl_direct_loop, service, iterations, group, prompts)
        results["direct SDK loop"].append(rate)
        rate = await rl_tools_loop(client, iterations, group, prompts)
        results["sample + train_on_rewards"].append(rate)
    return [(name, statistics.median(rates)) for name, rates in results.items()]


async def training_benches(args: argparse.Namespace, audit: Path) -> dict[str, list]:
    """Sections 3 and 4 on one in-process server and one trio-local (started once)."""
    from mcp_server.config import Config
    from mcp_server.server import build_server

    config = Config(
        eager_backend=False, backend="local", audit_log=audit, local_data_dir="temporary"
    )
    server, app = build_server(config)
    rows: dict[str, list] = {}
    try:
        async with Client(server) as client:
            await client.call_tool("list_models", {})  # starts trio-local
            service = app.backend.started.service
            if not args.skip_train:
                rows["sft"] = await throughput(client, service, args.steps, args.rounds)
            if not args.skip_rl:
                rows["rl"] = await rl_throughput(client, service, args)
    finally:
        app.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-train", action="store_true")
    parser.add_argument("--rl-iterations", type=int, default=5)
    parser.add_argument("--rl-group", type=int, default=8)
    parser.add_argument(
        "--rl-prompts", type=int, default=len(RL_PROMPTS), choices=range(1, len(RL_PROMPTS) + 1)
    )
    parser.add_argument("--rl-warmup", type=int, default=1, help="untimed iterations first")
    parser.add_argument("--skip-rl", action="store_true")
    args = parser.parse_args()
    audit = Path(tempfile.mkdtemp(prefix="trio-mcp-bench-")) / "audit.jsonl"

    print(f"1. per-call overhead, {args.calls} sequential calls (ms)")
    print(
        f"{'transport':<12}{'raw median':>12}{'raw p95':>10}{'echo median':>13}{'echo p95':>10}"
        f"{'ratio':>8}"
    )
    for name, raw_med, raw_p95, med, p95 in anyio.run(overhead, args.calls, audit):
        print(
            f"{name:<12}{raw_med * 1e3:>12.2f}{raw_p95 * 1e3:>10.2f}{med * 1e3:>13.2f}"
            f"{p95 * 1e3:>10.2f}{med / raw_med:>8.2f}"
        )

    times = cold_starts(args.starts, audit)
    floor = statistics.median(times["python + import mcp (the floor)"])
    print(
        f"\n2. cold start to first answer (tools/list over stdio), median of {args.starts} starts"
    )
    print(f"{'variant':<36}{'median s':>10}{'max s':>8}{'vs 1.5 s':>10}{'vs floor':>10}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(
            f"{name:<36}{median:>10.2f}{max(samples):>8.2f}{median / 1.5:>10.2f}"
            f"{median / floor:>10.2f}"
        )

    benches = anyio.run(training_benches, args, audit)
    if "sft" in benches:
        rows = benches["sft"]
        direct = rows[0][1]
        print(f"\n3. train_sft tokens/s, {args.steps} steps x {args.rounds} rounds on trio-local")
        print(f"{'loop':<22}{'tokens/s':>10}{'ratio':>8}{'target':>8}")
        for name, rate in rows:
            print(f"{name:<22}{rate:>10.1f}{rate / direct:>8.2f}{0.9:>8.2f}")

    if "rl" in benches:
        rows = benches["rl"]
        direct = rows[0][1]
        print(
            f"\n4. RL loop, trained tokens/s (sampling included), {args.rl_iterations} iterations "
            f"x {args.rl_prompts} prompts x {args.rl_group} samples x {args.rounds} rounds"
        )
        print(f"{'loop':<28}{'tokens/s':>10}{'ratio':>8}{'target':>8}")
        for name, rate in rows:
            # No tokens when every group's rewards were equal (tiny smoke sizes): no ratio.
            ratio = f"{rate / direct:>8.2f}" if direct else f"{'n/a':>8}"
            print(f"{name:<28}{rate:>10.1f}{ratio}{0.9:>8.2f}")


if __name__ == "__main__":
    main()
