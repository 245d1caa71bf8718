"""The real code of the skill (examples/ and best-practices/) through the console script with the
default rules: it must be clean, or the rule catalogue cries wolf on the code we recommend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TRIO_LINT = str(Path(sys.executable).parent / "trio-lint")


def test_examples_and_best_practices_are_clean() -> None:
    proc = subprocess.run(
        [TRIO_LINT, "--no-cache", "--output-format", "json", "examples", "best-practices"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    found = json.loads(proc.stdout)
    files = {item["filename"] for item in found}
    assert all(Path(name).is_absolute() or not name.startswith("..") for name in files)
    unexpected = [
        f"{item['filename']}:{item['location']['row']}: {item['code']} {item['message']}"
        for item in found
    ]
    assert unexpected == []
    assert proc.returncode == 0, proc.stderr


def test_the_same_code_with_a_planted_bug_is_flagged(tmp_path: Path) -> None:
    # Guard against a vacuous pass: the examples are really parsed and checked, so one HF habit
    # planted in each makes the same run fail.
    scripts = sorted((ROOT / "examples").glob("*.py"))
    planted = 0
    for script in scripts:
        source = script.read_text()
        if "learning_rate=" not in source:
            continue
        (tmp_path / script.name).write_text(source.replace("learning_rate=", "lr=", 1))
        planted += 1
    assert planted >= 3
    proc = subprocess.run(
        [TRIO_LINT, "--no-cache", "--output-format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    flagged = {
        Path(item["filename"]).name for item in json.loads(proc.stdout) if item["code"] == "PTR202"
    }
    assert len(flagged) == planted
