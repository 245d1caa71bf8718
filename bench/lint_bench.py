"""trio-lint speed against a bare libcst parse and fixit, printed as a table of ratios.

    .venv/bin/python bench/lint_bench.py [--files 200] [--parse-stride 10] [--skip-fixit]
    .venv/bin/python bench/lint_bench.py --detection-only   # just the detection rows

Detection rows time, in this process and without interpreter start-up, discovery or output, the
`ast` parse, parse + semantic model, and parse + model + every default rule on the pytrio-heavy
corpus, as lines per CPU second (the steps take turns on chunks of 40 files, so the VM's drift in
speed cancels out of their ratio). Targets for the last: 40,000 lines per CPU second, and (the same
target made portable across machines) at most 3.9x the `ast` parse's CPU time; see
DETECTION_RATIO_TARGET.

Two corpora, written under bench/out/ (git-ignored):
- pytrio-heavy: generated training/sampling scripts that all use pytrio (with and without pitfalls);
- site-packages: every .py file of the installed site-packages (trio-lint lints them all; the
  libcst parse of "everything" is measured on every Nth file and scaled by lines, because parsing
  six million lines with libcst takes many minutes on this machine).
trio-lint runs as its console script (process start-up, discovery and the pool included); the
libcst parse runs in this process on one core; ratios are judged on CPU seconds (user + system of
every process involved), which stay meaningful on a shared, loaded machine, and wall ratios are
printed beside them; fixit runs as `fixit lint` with its default rules
(on a copy in /tmp: it skips git-ignored paths such as bench/out/).
A warm run follows one run that filled the per-file cache (one stat per file, no parse). Cold and
warm runs are taken in turns, five of each,
and their medians compared: on this shared VM a single run varies by +-40% and the speed of
system calls drifts over minutes, so both sides of a ratio must be measured in the same window.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import libcst

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
BIN = Path(sys.executable).parent
TRIO_LINT = str(BIN / "trio-lint")

HEADER = '''"""Generated benchmark script {n}: {kind}."""

import asyncio
import json
import pytrio as trio
from pathlib import Path

BASE_MODEL = "Qwen/Qwen3-4B-Instruct-2507"
'''
SFT = """

def build_datum_{n}_{i}(tokenizer, prompt: str, answer: str) -> trio.Datum:
    prompt_tokens = tokenizer.encode(prompt)
    answer_tokens = tokenizer.encode(" " + answer)
    tokens = prompt_tokens + answer_tokens
    weights = [0.0] * len(prompt_tokens) + [1.0] * len(answer_tokens)
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={{"target_tokens": tokens[1:], "weights": weights[1:]}},
    )


def train_sft_{n}_{i}(
    service: trio.ServiceClient, rows: list[dict], steps: int = {steps}
) -> list[float]:
    training = service.create_lora_training_client(base_model=BASE_MODEL, rank={rank})
    tokenizer = training.get_tokenizer()
    batch = [build_datum_{n}_{i}(tokenizer, row["prompt"], row["answer"]) for row in rows]
    adam = trio.AdamParams({lr_kw}={lr})
    losses = []
    for step in range(steps):
        fb = training.forward_backward(batch, "cross_entropy")
        opt = training.optim_step(adam)
        result = fb.result()
        opt.result()
        losses.append(result.metrics["loss_mean"])
        if step % 5 == 0:
            print(json.dumps({{"step": step, "loss": losses[-1]}}))
    training.save_state("sft-{n}-{i}").result()
    return losses
"""
SAMPLE = """

def sample_{n}_{i}(training: trio.TrainingClient, tokenizer, question: str) -> str:
    sampler = training.save_weights_and_get_sampling_client()
    params = trio.SamplingParams({max_kw}={max_tokens}, temperature={temperature})
    prompt = trio.ModelInput.from_ints(tokenizer.encode(question))
    response = sampler.sample(prompt, num_samples=1, sampling_params=params).result()
    texts = [sequence.text for sequence in response.sequences]
    return texts[0] if texts else ""
"""
ASYNC = """

async def pipeline_{n}_{i}(training: trio.TrainingClient, batches: list[list[trio.Datum]]) -> float:
    total = 0.0
    adam = trio.AdamParams(learning_rate={lr})
    for batch in batches:
        fb_future = await training.forward_backward_async(batch, "cross_entropy")
        opt_future = await training.optim_step_async(adam)
        fb = await fb_future
        await opt_future
        total += fb.metrics["loss_sum"]
    return total / max(len(batches), 1)
"""
BUGGY = """

def quick_loss_{n}_{i}(training, batch) -> float:
    return training.forward_backward(batch, "cross_entropy").metrics["loss_mean"]


def masked_{n}_{i}(prompt: list[int], completion: list[int]) -> trio.Datum:
    labels = [-100] * len(prompt) + completion
    return trio.Datum(
        model_input=trio.ModelInput.from_ints(prompt + completion[:-1]),
        loss_fn_inputs={{"target_tokens": labels[1:]}},
    )
"""
FOOTER = """

def main() -> None:
    service = trio.ServiceClient()
    rows = [json.loads(line) for line in Path("data.jsonl").read_text().splitlines()]
    print(len(rows), service)


if __name__ == "__main__":
    main()
"""


def build_pytrio_corpus(directory: Path, count: int, seed: int = 20261130) -> list[Path]:
    rng = random.Random(seed)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    paths = []
    for n in range(count):
        buggy = n % 3 == 0
        parts = [HEADER.format(n=n, kind="with pitfalls" if buggy else "clean")]
        for i in range(rng.randint(2, 4)):
            values = {
                "n": n,
                "i": i,
                "steps": rng.randint(5, 50),
                "rank": rng.choice([8, 16, 32]),
                "lr": rng.choice(["1e-4", "2e-4", "5e-5"]),
                "lr_kw": "lr" if buggy and i == 0 else "learning_rate",
                "max_kw": "max_new_tokens" if buggy and i == 0 else "max_tokens",
                "max_tokens": rng.choice([32, 64, 128]),
                "temperature": rng.choice(["0.0", "0.7", "1.0"]),
            }
            parts += [SFT.format(**values), SAMPLE.format(**values), ASYNC.format(**values)]
            if buggy:
                parts.append(BUGGY.format(**values))
        parts.append(FOOTER)
        path = directory / f"train_{n:04}.py"
        path.write_text("".join(parts))
        paths.append(path)
    return paths


def site_packages_files() -> tuple[Path, list[Path]]:
    site = Path(sysconfig.get_paths()["purelib"])
    return site, sorted(p for p in site.rglob("*.py") if p.is_file())


def compile_own_sources() -> None:
    sources = [str(ROOT / package) for package in ("trio_lint", "pytrio_facts")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *sources], check=True)


def count_lines(paths: list[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in paths)


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # user + system seconds of this process or of the child (all pool workers)


def time_libcst_parse(paths: list[Path]) -> Timing:
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    for path in paths:
        with contextlib.suppress(Exception):  # unparsable files cost what they cost
            libcst.parse_module(path.read_bytes())
    return Timing(time.perf_counter() - wall_start, time.process_time() - cpu_start)


def time_detection(paths: list[Path], repeat: int = 7) -> tuple[dict[str, Timing], list[float]]:
    """Detection in this process, without interpreter start-up, discovery or output: `ast`
    parse, parse + semantic model, and parse + model + every default rule (findings after noqa,
    as the engine makes them), taking turns on chunks of files; the best of `repeat` rounds per
    step, and each round's ratio of the last to the first."""
    from trio_lint.lint.dispatch import run_rules
    from trio_lint.lint.parse import parse
    from trio_lint.rules import select_rules
    from trio_lint.settings.config import LintConfig

    config = LintConfig()
    rules = select_rules(config)
    sources = [p.read_bytes().decode("utf-8") for p in paths]
    try:
        from trio_lint.semantics.binder import build_model
    except ImportError:  # a trio-lint without the model (measured for "before" numbers)
        build_model = None

    def parse_only(source: str) -> None:
        parse(source)

    def with_model(source: str) -> None:
        tree = parse(source)
        if build_model is not None:
            build_model(tree, config.sdk_modules, config.target_version)

    def with_rules(source: str) -> None:
        run_rules(parse(source), source, config, rules)

    # The three steps take turns on chunks of the corpus, not on the whole of it: on a shared VM
    # the speed of the same code drifts within seconds (rounds of whole-corpus steps gave ratios
    # from 2.9x to 5.7x), and a chunk's steps are a second apart. Not file by file either: a
    # parse between other steps' work runs with cold caches (~17% slower than in a run of
    # parses), which would flatter the ratio. Which step goes first rotates from chunk to chunk,
    # and garbage is collected before each step (untimed), so no step pays for another's. A
    # round's ratio is the ratio of its sums; the median of the rounds is the verdict, the best
    # round per step is the table.
    steps = (("parse", parse_only), ("model", with_model), ("rules", with_rules))
    clock = time.process_time
    chunk = 40
    found: dict[str, Timing] = {}
    ratios: list[float] = []
    for _ in range(repeat):
        cpu = dict.fromkeys(("parse", "model", "rules"), 0.0)
        wall = dict.fromkeys(("parse", "model", "rules"), 0.0)
        for index in range(0, len(sources), chunk):
            turn = index // chunk % len(steps)
            for label, step in steps[turn:] + steps[:turn]:
                gc.collect()
                wall_start, cpu_start = time.perf_counter(), clock()
                for source in sources[index : index + chunk]:
                    step(source)
                cpu[label] += clock() - cpu_start
                wall[label] += time.perf_counter() - wall_start
        for label in cpu:
            if label not in found or cpu[label] < found[label].cpu:
                found[label] = Timing(wall[label], cpu[label])
        ratios.append(cpu["rules"] / cpu["parse"] if cpu["parse"] else math.inf)
    return found, ratios


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command: list[str], cwd: Path, repeat: int = 1) -> Timing:
    """Median wall and CPU time of `repeat` runs of a command."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu_start, wall_start = _children_cpu(), time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        walls.append(time.perf_counter() - wall_start)
        cpus.append(_children_cpu() - cpu_start)
    return Timing(statistics.median(walls), statistics.median(cpus))


def cold_and_warm(cold: list[str], warm: list[str], pairs: int) -> tuple[Timing, Timing]:
    """Medians of `pairs` cold (--no-cache) and warm runs, taken in turns after one run fills the
    cache: on this shared VM the speed of system calls drifts over minutes, and both sides of the
    ratio should see the same drift."""
    run(warm, OUT)
    colds, warms = [], []
    for _ in range(pairs):
        colds.append(run(cold, OUT))
        warms.append(run(warm, OUT))
    median = statistics.median
    return (
        Timing(median(t.wall for t in colds), median(t.cpu for t in colds)),
        Timing(median(t.wall for t in warms), median(t.cpu for t in warms)),
    )


def row(
    corpus: str, files: int, lines: int, what: str, timing: Timing, *, note: str = ""
) -> list[str]:
    return [
        corpus,
        what,
        f"{timing.wall:8.2f}",
        f"{timing.cpu:8.2f}",
        f"{files / timing.cpu:8.0f}" if timing.cpu else "-",
        f"{lines / timing.cpu:9.0f}" if timing.cpu else "-",
        note,
    ]


def ratio(
    label: str, numerator: Timing, denominator: Timing, target: float, higher: bool
) -> list[str]:
    by_cpu = numerator.cpu / denominator.cpu if denominator.cpu else float("inf")
    by_wall = numerator.wall / denominator.wall if denominator.wall else float("inf")
    ok = by_cpu >= target if higher else by_cpu <= target
    sign = ">=" if higher else "<="
    return [
        label,
        f"{by_cpu:7.2f}x",
        f"{by_wall:7.2f}x",
        f"{sign} {target}x",
        "met" if ok else "MISSED",
    ]


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print(" | ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=200, help="generated pytrio files")
    parser.add_argument("--fixit-files", type=int, default=60, help="of those, linted by fixit")
    parser.add_argument("--parse-stride", type=int, default=10, help="site-packages parse sample")
    parser.add_argument("--skip-fixit", action="store_true")
    parser.add_argument(
        "--forced", action="store_true", help="also time --force-sdk over all of site-packages"
    )
    parser.add_argument(
        "--detection-only",
        action="store_true",
        help="only the in-process detection rows (parse, model, rules) on the pytrio-heavy corpus",
    )
    args = parser.parse_args()
    if args.detection_only:
        return detection_report(args.files)

    # An installed package runs from bytecode (pip compiles it on install); an editable checkout
    # under PYTHONDONTWRITEBYTECODE=1 would recompile trio-lint's modules in every run.
    compile_own_sources()
    OUT.mkdir(parents=True, exist_ok=True)
    config = OUT / "bench.toml"
    config.write_text('exclude = [".git"]\nrespect-gitignore = false\ncache-dir = "cache"\n')
    lint = [TRIO_LINT, "--config", str(config), "--exit-zero", "-q", "--output-format", "concise"]
    rows: list[list[str]] = []
    ratios: list[list[str]] = []

    # --- pytrio-heavy corpus ----------------------------------------------------------------
    corpus = build_pytrio_corpus(OUT / "corpus", args.files)
    lines = count_lines(corpus)
    name = f"pytrio-heavy, {len(corpus)} files"
    parse = time_libcst_parse(corpus)
    shutil.rmtree(OUT / "cache", ignore_errors=True)
    cold, warm = cold_and_warm([*lint, "--no-cache", "corpus"], [*lint, "corpus"], pairs=5)
    one = run([*lint, "--no-cache", str(corpus[0])], OUT, repeat=5)
    rows.append(row(name, len(corpus), lines, "libcst.parse_module only (in process)", parse))
    rows.append(row(name, len(corpus), lines, "trio-lint cold (--no-cache)", cold))
    rows.append(row(name, len(corpus), lines, "trio-lint warm cache", warm))
    rows.append(row("one file", 1, count_lines(corpus[:1]), "trio-lint one_file.py", one))
    detection, detection_timings, detection_ratios = detection_rows(corpus, lines)
    rows += detection
    ratios.append(ratio("pytrio-heavy: trio-lint cold / libcst parse", cold, parse, 1.5, False))
    ratios.append(ratio("pytrio-heavy: trio-lint cold / warm cache", cold, warm, 10, True))
    if not args.skip_fixit:
        # fixit skips git-ignored paths (bench/out is), so both lint an identical copy in /tmp.
        subset = corpus[: args.fixit_files]
        subset_lines = count_lines(subset)
        with tempfile.TemporaryDirectory() as scratch:
            target = Path(scratch) / "corpus"
            target.mkdir()
            for path in subset:
                shutil.copy(path, target / path.name)
            fixit = run([str(BIN / "fixit"), "lint", "corpus"], Path(scratch))
            ours = run([*lint, "--no-cache", "corpus"], Path(scratch), repeat=3)
        label = f"pytrio-heavy, {len(subset)} files"
        rows.append(row(label, len(subset), subset_lines, "fixit lint (default rules)", fixit))
        rows.append(row(label, len(subset), subset_lines, "trio-lint cold, same files", ours))
        ratios.append(ratio("pytrio-heavy: fixit / trio-lint cold", fixit, ours, 10, True))

    # --- site-packages ------------------------------------------------------------------------
    site, files = site_packages_files()
    site_lines = count_lines(files)
    sample = files[:: args.parse_stride]
    sample_lines = count_lines(sample)
    sampled = time_libcst_parse(sample)
    scale = site_lines / max(sample_lines, 1)
    parse_all = Timing(sampled.wall * scale, sampled.cpu * scale)
    shutil.rmtree(OUT / "cache", ignore_errors=True)
    cold_site, warm_site = cold_and_warm(
        [*lint, "--no-cache", str(site)], [*lint, str(site)], pairs=5
    )
    name = f"site-packages, {len(files)} files"
    note = f"scaled by lines from every {args.parse_stride}th file"
    rows.append(row(name, len(files), site_lines, "libcst.parse_module only", parse_all, note=note))
    rows.append(row(name, len(files), site_lines, "trio-lint cold (--no-cache)", cold_site))
    rows.append(row(name, len(files), site_lines, "trio-lint warm cache", warm_site))
    ratios.append(
        ratio("site-packages: libcst parse / trio-lint cold", parse_all, cold_site, 20, True)
    )
    ratios.append(
        ratio("site-packages: trio-lint cold / warm cache", cold_site, warm_site, 10, True)
    )
    if args.forced:
        forced = run([*lint, "--no-cache", "--force-sdk", str(site)], OUT)
        rows.append(row(name, len(files), site_lines, "trio-lint --force-sdk (all parsed)", forced))

    print(
        f"pytrio-heavy {len(corpus)} files / {lines} lines; site-packages {len(files)} files /"
        f" {site_lines} lines; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs,"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    print("files/s and lines/s are per CPU second (all processes); wall time depends on load.\n")
    print_table(["corpus", "measure", "wall s", "CPU s", "files/s", "lines/s", "note"], rows)
    print()
    print_table(["ratio", "by CPU", "by wall", "target", "verdict (CPU)"], ratios)
    print("\n" + detection_verdicts(detection_timings, lines, detection_ratios))
    verdict = "met" if one.cpu < 0.5 else "MISSED"
    print(
        f"\ntrio-lint one_file.py: {one.cpu:.2f} s CPU, {one.wall:.2f} s wall"
        f" (target < 0.5 s; judged on CPU, which equals wall on an idle machine: {verdict})"
    )
    return 0


DETECTION_TARGET = 40_000  # lines per CPU second, parse + model + rules
# The same target as a ratio to the `ast` parse: 40k was set where `ast.parse` alone ran ~155k
# lines per CPU second, i.e. detection at most 155 / 40 ~= 3.9x the parse. CPU speed differs
# between machines (and on a shared VM between hours); the parse timed in the same process and
# the same minute cancels it out, so the ratio is the portable form of the target. Both are
# printed, and the absolute one is never relaxed.
DETECTION_RATIO_TARGET = 3.9


def detection_rows(
    corpus: list[Path], lines: int
) -> tuple[list[list[str]], dict[str, Timing], list[float]]:
    timings, ratios = time_detection(corpus)
    name = f"pytrio-heavy, {len(corpus)} files"
    labels = {
        "parse": "detection: ast parse only (in process)",
        "model": "detection: parse + semantic model",
        "rules": "detection: parse + model + rules",
    }
    rows = [row(name, len(corpus), lines, labels[key], timings[key]) for key in labels]
    return rows, timings, ratios


def detection_verdicts(timings: dict[str, Timing], lines: int, ratios: list[float]) -> str:
    """The two verdicts on detection (parse + model + rules, no start-up): absolute lines per CPU
    second (best round), and CPU time as a multiple of the `ast` parse's (median of the rounds'
    own ratios)."""
    rules, parse = timings["rules"].cpu, timings["parse"].cpu
    speed = lines / rules if rules else float("inf")
    times = statistics.median(ratios)
    spread = f"rounds {min(ratios):.2f}x-{max(ratios):.2f}x"
    absolute = "met" if speed >= DETECTION_TARGET else "MISSED"
    relative = "met" if times <= DETECTION_RATIO_TARGET else "MISSED"
    return (
        f"detection (parse + model + rules, no start-up): {speed:,.0f} lines per CPU second"
        f" (target >= {DETECTION_TARGET:,}: {absolute})\n"
        f"detection / ast parse: {times:.2f}x the CPU time, median of {len(ratios)} rounds"
        f" ({spread}; parse alone: {lines / parse:,.0f} lines per CPU second here); target <="
        f" {DETECTION_RATIO_TARGET}x, the absolute target's ratio on the machine it was set on:"
        f" {relative}"
    )


def detection_report(files: int) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    corpus = build_pytrio_corpus(OUT / "corpus", files)
    lines = count_lines(corpus)
    rows, timings, ratios = detection_rows(corpus, lines)
    print(
        f"pytrio-heavy {len(corpus)} files / {lines} lines; Python {sys.version.split()[0]};"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    print_table(["corpus", "measure", "wall s", "CPU s", "files/s", "lines/s", "note"], rows)
    print("\n" + detection_verdicts(timings, lines, ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
