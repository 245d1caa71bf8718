"""trio-lint false positives on large real codebases that use the same names as PyTRIO.

    .venv/bin/python bench/lint_fp_bench.py [--packages transformers torch peft] [--show 5]

transformers, torch and peft are full of `sample`, `forward`, `generate`, `labels`, `lr`,
`max_new_tokens`, `save_state` and `-100`. None of them uses PyTRIO, so every finding is a false
positive. The bench lints the installed packages with `sdk-modules = ["pytrio", "tinker"]` and
`--force-sdk` (every file is parsed and checked as if it imported the SDK), through the console
script, and prints findings per 10k lines per rule. Target: zero errors (issue 4).
(The engine's speed bench is bench/lint_bench.py; this is the rule catalogue's part.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

from trio_lint.rules import rules_by_code

TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")
CONFIG = """[tool.trio-lint]
exclude = [".git"]
respect-gitignore = false
sdk-modules = ["pytrio", "tinker"]
force-sdk = true
"""


def count_lines(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*.py"):
        files += 1
        with path.open("rb") as handle:
            lines += sum(1 for _ in handle)
    return files, lines


def lint(root: Path, config: Path) -> tuple[list[dict], float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [
            TRIO_LINT,
            "--config",
            str(config),
            "--no-cache",
            "--exit-zero",
            "--select",
            "ALL",
            "--output-format",
            "json",
            str(root),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"trio-lint failed on {root} ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout or "[]"), elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=["transformers", "torch", "peft"])
    parser.add_argument("--show", type=int, default=5, help="example findings printed per rule")
    args = parser.parse_args()
    site = Path(sysconfig.get_paths()["purelib"])
    rules = rules_by_code()
    per_rule: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    total_files = total_lines = 0
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "trio-lint.toml"
        config.write_text(CONFIG.replace("[tool.trio-lint]\n", ""))
        print(
            f"{'package':<14}{'files':>8}{'lines':>11}{'findings':>10}{'per 10k':>9}{'wall s':>8}"
        )
        for name in args.packages:
            root = site / name
            if not root.is_dir():
                print(f"{name:<14} not installed; skipped")
                continue
            files, lines = count_lines(root)
            found, elapsed = lint(root, config)
            total_files, total_lines = total_files + files, total_lines + lines
            for item in found:
                code = item["code"]
                per_rule[code] += 1
                where = f"{Path(item['filename']).relative_to(site)}:{item['location']['row']}"
                examples.setdefault(code, []).append(f"{where}: {item['message']}")
            rate = len(found) / lines * 10_000 if lines else 0.0
            print(f"{name:<14}{files:>8}{lines:>11}{len(found):>10}{rate:>9.2f}{elapsed:>8.1f}")
    print()
    print(f"{'rule':<8}{'name':<36}{'severity':<12}{'findings':>9}{'per 10k lines':>15}")
    errors = 0
    for code in sorted(rules):
        rule = rules[code]
        count = per_rule.get(code, 0)
        if rule.severity == "error" and not code.startswith("PTR9"):
            errors += count
        if count or not code.startswith("PTR9"):
            rate = count / total_lines * 10_000 if total_lines else 0.0
            print(f"{code:<8}{rule.name:<36}{rule.severity:<12}{count:>9}{rate:>15.3f}")
    for code in sorted(per_rule):
        if code not in rules:
            print(f"{code:<8}{'(engine)':<36}{'':<12}{per_rule[code]:>9}")
    engine = sum(n for code, n in per_rule.items() if code.startswith("PTR9"))
    total = sum(per_rule.values()) - engine
    print()
    rate = total / total_lines * 10_000 if total_lines else 0.0
    print(
        f"rule findings (all false positives): {total} in {total_files} files / {total_lines} "
        f"lines ({rate:.3f} per 10k lines); from error-severity rules: {errors} "
        f"(target 0: {'met' if errors == 0 else 'NOT met'}); engine diagnostics (PTR9xx, files "
        f"that do not parse on this Python, not rule findings): {engine}"
    )
    for code in sorted(examples):
        print(f"\n{code} examples:")
        for line in examples[code][: args.show]:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
