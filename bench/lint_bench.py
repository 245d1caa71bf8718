"""trio-lint speed against a bare libcst parse and fixit, printed as a table of ratios.

    .venv/bin/python bench/lint_bench.py [--files 200] [--parse-stride 10] [--skip-fixit]

Two corpora, written under bench/out/ (git-ignored):
- pytrio-heavy: generated training/sampling scripts that all use pytrio (with and without pitfalls);
- site-packages: every .py file of the installed site-packages (trio-lint lints them all; the
  libcst parse of "everything" is measured on every Nth file and scaled by lines, because parsing
  six million lines with libcst takes many minutes on this machine).
trio-lint runs as its console script (process start-up, discovery and the pool included); the
libcst parse runs in this process on one core; fixit runs as `fixit lint` with its default rules
(on a copy in /tmp: it skips git-ignored paths such as bench/out/).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
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


def count_lines(paths: list[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in paths)


def time_libcst_parse(paths: list[Path]) -> float:
    start = time.perf_counter()
    for path in paths:
        with contextlib.suppress(Exception):  # unparsable files cost what they cost
            libcst.parse_module(path.read_bytes())
    return time.perf_counter() - start


def wall(command: list[str], cwd: Path, repeat: int = 1) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def row(
    corpus: str, files: int, lines: int, what: str, seconds: float, *, note: str = ""
) -> list[str]:
    return [
        corpus,
        what,
        f"{seconds:8.2f}",
        f"{files / seconds:9.0f}" if seconds else "-",
        f"{lines / seconds:10.0f}" if seconds else "-",
        note,
    ]


def verdict(value: float, target: float, higher_is_better: bool) -> str:
    ok = value >= target if higher_is_better else value <= target
    sign = ">=" if higher_is_better else "<="
    return f"{value:7.2f}x (target {sign} {target}x: {'met' if ok else 'MISSED'})"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=200, help="generated pytrio files")
    parser.add_argument("--parse-stride", type=int, default=10, help="site-packages parse sample")
    parser.add_argument("--skip-fixit", action="store_true")
    parser.add_argument(
        "--forced", action="store_true", help="also time --force-sdk over all of site-packages"
    )
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    config = OUT / "bench.toml"
    config.write_text('exclude = [".git"]\nrespect-gitignore = false\ncache-dir = "cache"\n')
    rows: list[list[str]] = []
    ratios: list[tuple[str, str]] = []

    # --- pytrio-heavy corpus --------------------------------------------------------------
    corpus = build_pytrio_corpus(OUT / "corpus", args.files)
    lines = count_lines(corpus)
    parse = time_libcst_parse(corpus)
    lint = ["--config", str(config), "--exit-zero", "-q", "--output-format", "concise"]
    shutil.rmtree(OUT / "cache", ignore_errors=True)
    cold = wall([TRIO_LINT, *lint, "--no-cache", "corpus"], OUT, repeat=3)
    wall([TRIO_LINT, *lint, "corpus"], OUT)  # fill the cache
    warm = wall([TRIO_LINT, *lint, "corpus"], OUT, repeat=3)
    one = wall([TRIO_LINT, *lint, "--no-cache", str(corpus[0])], OUT, repeat=5)
    name = f"pytrio-heavy ({args.files} generated files)"
    rows.append(row(name, len(corpus), lines, "libcst.parse_module only (1 core)", parse))
    rows.append(row(name, len(corpus), lines, "trio-lint cold (--no-cache)", cold))
    rows.append(row(name, len(corpus), lines, "trio-lint warm cache", warm))
    ratios.append(
        ("pytrio-heavy: trio-lint cold / libcst parse", verdict(cold / parse, 1.5, False))
    )
    ratios.append(("pytrio-heavy: cold / warm cache", verdict(cold / warm, 10, True)))
    if not args.skip_fixit:
        # fixit skips git-ignored paths (bench/out is), so it lints an identical copy in /tmp.
        with tempfile.TemporaryDirectory() as scratch:
            shutil.copytree(OUT / "corpus", Path(scratch) / "corpus")
            fixit = wall([str(BIN / "fixit"), "lint", "corpus"], Path(scratch))
        rows.append(row(name, len(corpus), lines, "fixit lint (default rules)", fixit))
        ratios.append(("pytrio-heavy: fixit / trio-lint cold", verdict(fixit / cold, 10, True)))
    ratios.append(
        (
            "trio-lint one_file.py (wall, median of 5)",
            f"{one:7.2f}s (target < 0.5s: {'met' if one < 0.5 else 'MISSED'})",
        )
    )

    # --- site-packages ---------------------------------------------------------------------
    site, files = site_packages_files()
    site_lines = count_lines(files)
    sample = files[:: args.parse_stride]
    sample_lines = count_lines(sample)
    parse_all = time_libcst_parse(sample) * site_lines / max(sample_lines, 1)
    shutil.rmtree(OUT / "cache", ignore_errors=True)
    cold_site = wall([TRIO_LINT, *lint, "--no-cache", str(site)], OUT)
    wall([TRIO_LINT, *lint, str(site)], OUT)
    warm_site = wall([TRIO_LINT, *lint, str(site)], OUT, repeat=3)
    name = f"site-packages ({len(files)} files)"
    rows.append(
        row(
            name,
            len(files),
            site_lines,
            "libcst.parse_module only (1 core)",
            parse_all,
            note=f"scaled from every {args.parse_stride}th file",
        )
    )
    rows.append(row(name, len(files), site_lines, "trio-lint cold (--no-cache)", cold_site))
    rows.append(row(name, len(files), site_lines, "trio-lint warm cache", warm_site))
    if args.forced:
        forced = wall([TRIO_LINT, *lint, "--no-cache", "--force-sdk", str(site)], OUT)
        rows.append(row(name, len(files), site_lines, "trio-lint --force-sdk (all parsed)", forced))
    ratios.append(
        (
            "site-packages: libcst parse of all / trio-lint cold",
            verdict(parse_all / cold_site, 20, True),
        )
    )
    ratios.append(("site-packages: cold / warm cache", verdict(cold_site / warm_site, 10, True)))

    header = ["corpus", "measure", "seconds", "files/s", "lines/s", "note"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(
        f"corpus sizes: pytrio-heavy {len(corpus)} files / {lines} lines; "
        f"site-packages {len(files)} files / {site_lines} lines; {sys.version.split()[0]}"
    )
    for r in [header, *rows]:
        print(" | ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    print()
    width = max(len(label) for label, _ in ratios)
    for label, value in ratios:
        print(f"{label.ljust(width)}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
