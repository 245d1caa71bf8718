"""Every bench/*.py runs at a tiny size and prints its table, so a bench cannot rot unseen.

The sizes check that each bench still works end to end (the same code paths, the real SDK, the
real services), not its numbers: the ratios a bench prints mean something only at its default
sizes on a quiet machine. A bench added to bench/ without a row here fails the first test."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
TIMEOUT = 600

# bench script -> (tiny arguments, a line of its table that must be printed)
SMOKE = {
    "hook_bench.py": (["--repeat", "1"], r"^file\s+lines\s+out\s+wall s\s+cpu s"),
    "lint_bench.py": (["--files", "4", "--detection-only"], r"detection"),
    "lint_fp_bench.py": (["--packages", "peft", "--show", "1"], r"^rule\s+name\s+severity"),
    "lint_reach_table.py": (["--route", "local-name"], r"^PTR206 missing-max-tokens\s+ok"),
    # The cookbook alone: tinker-cookbook's 542 files are the bench's sweep, not its smoke.
    "lint_realworld_bench.py": (
        ["--corpus", "pytrio-cookbook"],
        r"^rule\s+findings\s+true\s+false\s+unjudged\s+precision",
    ),
    "local_bench.py": (
        ["--steps", "1", "--batch", "1", "--seq", "16", "--rounds", "1"],
        r"^\| ratio SDK / plain\s+\|",
    ),
    "local_bounds_bench.py": (["--max-tokens", "4"], r"^\| .* \|$"),
    "local_compat_bench.py": (
        ["--only", "cookbook SFTTrainer"],
        r"^cookbook\s+cookbook SFTTrainer\s+ran",
    ),
    "local_cycles_bench.py": (
        ["--updates", "1", "--batch", "1", "--concurrency", "1", "--cycle-ms", "50"],
        r"^\| .*cycles",
    ),
    "local_speed_bench.py": (
        # The fan-out section only: the others start seven services between them.
        ["--prompts", "1", "--group", "2", "--max-tokens", "2", "--skip-first", "--skip-async"],
        r"^\| one request of n samples\s+\|",
    ),
    "lsp_bench.py": (["--edits", "2", "--lines", "40"], r"load average"),
    "mcp_bench.py": (
        [
            *("--calls", "3", "--starts", "1", "--steps", "1", "--rounds", "1"),
            *("--rl-iterations", "1", "--rl-group", "2", "--rl-prompts", "1", "--rl-warmup", "0"),
        ],
        r"^sample \+ train_on_rewards\s+\d",
    ),
    "site_packages_sweep.py": (["--limit", "20"], r"^scope\s+files\s+seconds"),
}


def test_every_bench_has_a_smoke_run():
    assert sorted(SMOKE) == sorted(path.name for path in BENCH.glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SMOKE))
def test_the_bench_runs_at_a_tiny_size_and_prints_its_table(script, tmp_path):
    arguments, table_line = SMOKE[script]
    # Its own process group: a bench that overruns is stopped with every service it started.
    process = subprocess.Popen(
        [sys.executable, str(BENCH / script), *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{script} ran over {TIMEOUT} s:\n{stdout[-3000:]}\n{stderr[-3000:]}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # what it left running
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    output = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, output
    assert re.search(table_line, done.stdout, re.M), output
