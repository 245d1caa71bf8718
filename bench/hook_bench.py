"""Latency of the plugin's PostToolUse hook (hooks/lint_edit.py) against its 0.5 s budget.

Runs the hook as Claude Code does (a subprocess fed a PostToolUse event on stdin, CLAUDE_PLUGIN_ROOT
set, trio-lint found in this checkout's .venv) on typical files: each examples/ script written
clean, the same script with a bug (findings reported), and a Python file that never mentions the
SDK (skipped before trio-lint starts). Prints the median wall time and the median CPU time of the
hook and everything it starts (its children's rusage): on a shared machine the CPU time is the
latency an idle core would give.

    .venv/bin/python bench/hook_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "hooks" / "lint_edit.py"
BUDGET_S = 0.5


def run_once(project: Path, name: str) -> tuple[float, float, str]:
    event = {
        "session_id": "bench",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / name), "content": ""},
    }
    env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(ROOT), "CLAUDE_PROJECT_DIR": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.run(
        [sys.executable, str(HOOK)],
        input=json.dumps(event),
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, process.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases: list[tuple[str, str]] = []
    for script in sorted((ROOT / "examples").glob("*.py")):
        text = script.read_text()
        cases.append((f"{script.name} (clean)", text))
        # A typical assistant mistake: the AdamParams field under its torch name.
        cases.append((f"{script.name} (lr= bug)", text.replace("learning_rate=", "lr=")))
    cases.append(("no PyTRIO (skipped)", "import torch\nprint(torch.ones(2))\n" * 50))
    print(f"{'file':<40} {'lines':>5} {'out':>5} {'wall s':>7} {'cpu s':>6} {'cpu/budget':>10}")
    cpus = []
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        for label, text in cases:
            (project / "train.py").write_text(text)
            runs = [run_once(project, "train.py") for _ in range(args.repeat)]
            wall = statistics.median(run[0] for run in runs)
            cpu = statistics.median(run[1] for run in runs)
            out = "find" if runs[0][2] else "-"
            cpus.append(cpu)
            lines = text.count("\n")
            print(
                f"{label:<40} {lines:>5} {out:>5} {wall:>7.3f} {cpu:>6.3f} {cpu / BUDGET_S:>10.2f}"
            )
    print(f"worst median CPU {max(cpus):.3f} s = {max(cpus) / BUDGET_S:.2f} of the 0.5 s budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
