"""Compatibility bench: real public PyTRIO trainers and our examples, unchanged, under trio-local.

pytrio-cookbook 0.1.0 (PyPI) is downloaded at bench time into bench/out/ (never committed):

    pip download --no-deps --python-version 3.12 --only-binary=:all: pytrio-cookbook==0.1.0

Its SFT, GRPO, DPO and OPD trainers are each driven for 2 steps by a small driver (in-memory
rows, the trainers' own `train()`), and examples/01..07 run with short settings. Every entry
is its own `trio-local run --check --check-report FILE` process, so the table also shows what
the runtime data checks found. Only non-PyTRIO packages are stubbed: `swanlab` (a logging
service; the drivers keep its default `report_to=None`, so the stub is only imported).

    .venv/bin/python bench/local_compat_bench.py [--only NAME ...]

Prints one row per entry: whether it ran, its wall time, and the check findings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "compat"
COOKBOOK = "pytrio-cookbook==0.1.0"
STUDENT = "Qwen/Qwen3-4B-Instruct-2507"
TEACHER = "Qwen/Qwen3-32B"
TIMEOUT_S = 900

SWANLAB_STUB = '''"""Stand-in for SwanLab (a logging service, not PyTRIO): records nothing."""


class _Run:
    def log(self, *args, **kwargs):
        return None

    def log_text(self, *args, **kwargs):
        return None

    def finish(self, *args, **kwargs):
        return None


def init(*args, **kwargs):
    return _Run()
'''

QUESTIONS = [
    ("What is the capital of France?", "Paris", "London"),
    ("What is two plus two?", "Four", "Five"),
    ("Which planet is red?", "Mars", "Venus"),
    ("What colour is the sky?", "Blue", "Green"),
]

COMMON = f"""
import time
QUESTIONS = {QUESTIONS!r}
def messages(question):
    return [{{"role": "system", "content": "Answer in one word."}},
            {{"role": "user", "content": question}}]
"""

# One GRPO driver for the sync and the asyncio entry points, so both run the same work.
GRPO_DRIVER = """
from trio_cookbook.trainer import GRPOConfig, GRPOTrainer
def varied(completions, **kwargs):  # differs between samples, so advantages are not all 0
    return [len(set(str(c))) / 10.0 for c in completions]
rows = [{"messages": messages(q), "answer": a} for q, a, _ in QUESTIONS]
args = GRPOConfig(num_generations=4, max_completion_length=8, batch_size=2, max_steps=2,
                  learning_rate=1e-4)
trainer = GRPOTrainer(MODEL, reward_funcs=varied, args=args, train_dataset=rows, lora_rank=8)
started = time.perf_counter()
state = RUN_TRAINER
print("DRIVER train_s", time.perf_counter() - started)
print("DRIVER steps", state.global_step)
"""

DRIVERS: dict[str, str] = {
    "cookbook SFTTrainer": """
import asyncio
from trio_cookbook.trainer import SFTConfig, SFTTrainer
rows = [{"prompt": messages(q), "completion": [{"role": "assistant", "content": a}]}
        for q, a, _ in QUESTIONS]
args = SFTConfig(batch_size=2, max_steps=2, learning_rate=1e-4, max_length=256)
trainer = SFTTrainer(MODEL, args=args, train_dataset=rows, lora_rank=8)
state = asyncio.run(trainer.train())
print("DRIVER steps", state.global_step, "loss", state.metrics.get("train/loss"))
""",
    "cookbook SFTTrainer (messages rows)": """
import asyncio
from trio_cookbook.trainer import SFTConfig, SFTTrainer
rows = [{"messages": messages(q) + [{"role": "assistant", "content": a}]}
        for q, a, _ in QUESTIONS]
args = SFTConfig(batch_size=2, max_steps=2, learning_rate=1e-4, max_length=256)
trainer = SFTTrainer(MODEL, args=args, train_dataset=rows, lora_rank=8)
state = asyncio.run(trainer.train())
print("DRIVER steps", state.global_step, "loss", state.metrics.get("train/loss"))
""",
    "cookbook GRPOTrainer": GRPO_DRIVER.replace("RUN_TRAINER", "trainer.train()"),
    # The same trainer's asyncio variant on the same work (its rollouts gathered): async vs sync.
    "cookbook GRPOTrainer (train_async)": "import asyncio\n"
    + GRPO_DRIVER.replace("RUN_TRAINER", "asyncio.run(trainer.train_async())"),
    "cookbook DPOTrainer": """
from trio_cookbook.trainer import DPOConfig, DPOTrainer
rows = [{"messages": messages(q), "chosen": a, "rejected": r} for q, a, r in QUESTIONS]
args = DPOConfig(batch_size=2, max_steps=2, learning_rate=1e-4, max_length=256)
trainer = DPOTrainer(MODEL, args=args, train_dataset=rows, lora_rank=8)
state = trainer.train()
print("DRIVER steps", state.global_step)
""",
    "cookbook OPDTrainer": f"""
from trio_cookbook.trainer import OPDConfig, OPDTrainer
rows = [{{"messages": messages(q)}} for q, _, _ in QUESTIONS]
args = OPDConfig(batch_size=2, max_steps=2, max_completion_length=8, learning_rate=1e-4)
trainer = OPDTrainer(MODEL, teacher_model={TEACHER!r}, args=args, train_dataset=rows,
                     lora_rank=8)
state = trainer.train()
print("DRIVER steps", state.global_step)
""",
}

EXAMPLES: dict[str, list[str]] = {
    "01_train_sft.py": ["--steps", "3"],
    "02_inference.py": ["--num-samples", "2", "--max-tokens", "8"],
    "03_checkpoint_resume.py": ["--steps", "4", "--save-at", "2"],
    "04_model_management.py": [],
    "05_grpo_importance_sampling.py": ["--steps", "2"],
    "06_async_pipeline.py": ["--updates", "2"],
    "07_custom_loss_dpo.py": ["--steps", "2"],
}


@dataclass
class Row:
    suite: str
    name: str
    result: str
    seconds: float
    findings: str
    note: str = ""


def fetch_cookbook() -> Path:
    """The unpacked wheel under bench/out/compat (downloaded once)."""
    unpacked = OUT / "pytrio_cookbook-0.1.0"
    if (unpacked / "trio_cookbook" / "__init__.py").is_file():
        return unpacked
    wheels = OUT / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--python-version",
            "3.12",
            "--only-binary=:all:",
            COOKBOOK,
            "-d",
            str(wheels),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("pytrio_cookbook-0.1.0-*.whl")
    staging = unpacked.with_name(unpacked.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(staging)
    staging.rename(unpacked)
    return unpacked


def summarise(report_path: Path) -> str:
    if not report_path.is_file():
        return "no report"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    parts = [
        f"{finding['rule'] or '-'} {finding['check']} x{finding['count']}"
        for finding in report["findings"]
    ]
    seen = report["observed"]
    cost = f" ({seen['events']} events, checker {seen['checker_cpu_s']:.2f} s CPU)"
    return ("; ".join(parts) or "none") + cost


def run_entry(
    suite: str, name: str, argv: list[str], *, env: dict[str, str], work: Path, note: str = ""
) -> Row:
    report = work / f"{suite}-{name}.json".replace(" ", "_").replace("/", "_")
    data_dir = Path(tempfile.mkdtemp(prefix="compat-", dir=work))
    command = [
        sys.executable,
        "-m",
        "trio_local.cli",
        "run",
        "--data-dir",
        str(data_dir),
        "--check-report",
        str(report),
        "--",
        *argv,
    ]
    started = time.perf_counter()
    try:
        process = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
        code, stdout, stderr = process.returncode, process.stdout, process.stderr
    except subprocess.TimeoutExpired:
        code, stdout, stderr = -1, "", f"timed out after {TIMEOUT_S} s"
    seconds = time.perf_counter() - started
    ok = code == 0 and (suite != "cookbook" or "DRIVER steps 2" in stdout)
    if ok:
        trained = [line.split()[-1] for line in stdout.splitlines() if "DRIVER train_s" in line]
        result = f"ran (train() {float(trained[0]):.1f} s)" if trained else "ran"
    else:
        lines = [line for line in stderr.strip().splitlines() if line.strip()]
        result = f"FAILED (exit {code}): {lines[-1][:160] if lines else stdout[-160:]}"
    shutil.rmtree(data_dir, ignore_errors=True)
    return Row(suite, name, result, seconds, summarise(report), note)


def progress(row: Row) -> None:
    print(f"{row.suite} {row.name}: {row.result} in {row.seconds:.1f} s", flush=True)


def render(rows: list[Row]) -> str:
    header = ("suite", "entry", "result", "seconds", "--check findings")
    table = [header] + [
        (row.suite, row.name, row.result, f"{row.seconds:.1f}", row.findings) for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(4)]
    lines = []
    for line in table:
        cells = [cell.ljust(width) for cell, width in zip(line[:4], widths, strict=True)]
        lines.append("  ".join([*cells, line[4]]).rstrip())
    notes = [f"- {row.name}: {row.note}" for row in rows if row.note]
    return "\n".join(lines + (["", *notes] if notes else []))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="entry names to run")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    cookbook = fetch_cookbook()
    work = Path(tempfile.mkdtemp(prefix="run-", dir=OUT))
    stubs = work / "stubs" / "swanlab"
    stubs.mkdir(parents=True)
    (stubs / "__init__.py").write_text(SWANLAB_STUB, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(cookbook), str(stubs.parent)]),
        "TQDM_DISABLE": "1",
    }
    note = (
        "Requires-Python >=3.12 in its metadata; run on 3.11 unchanged. Depends on datasets, "
        "numpy, swanlab, tqdm: the trainers import only swanlab (stubbed) and tqdm; datasets "
        "is never imported (the drivers pass in-memory rows, so no dataset or network is needed)"
    )
    rows: list[Row] = []
    for index, (name, body) in enumerate(DRIVERS.items()):
        if args.only and name not in args.only:
            continue
        script = work / f"driver_{index}.py"
        script.write_text(
            f"MODEL = {STUDENT!r}\n" + textwrap.dedent(COMMON) + textwrap.dedent(body),
            encoding="utf-8",
        )
        rows.append(
            run_entry(
                "cookbook",
                name,
                [sys.executable, str(script)],
                env=env,
                work=work,
                note=note if index == 0 else "",
            )
        )
        progress(rows[-1])
    for name, extra in EXAMPLES.items():
        if args.only and name not in args.only:
            continue
        argv = [sys.executable, str(ROOT / "examples" / name), *extra]
        rows.append(run_entry("examples", name, argv, env=dict(os.environ), work=work))
        progress(rows[-1])
    print()
    print(render(rows))
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(row.result.startswith("ran") for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
