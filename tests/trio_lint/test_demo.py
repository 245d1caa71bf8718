"""What `make demo` shows: the buggy demo script is flagged and fixable; examples/ is clean."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.lint import run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_make_demo_runs_trio_lint_on_the_demo_script() -> None:
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "trio-lint --no-cache demo/buggy_train.py" in recipe
    assert "trio-lint --no-cache --diff demo/buggy_train.py" in recipe
    assert "trio-lint examples/" in recipe


def test_demo_script_findings_and_diff() -> None:
    found = run_cli("--no-cache", "demo/buggy_train.py", "--output-format", "concise", cwd=ROOT)
    assert found.code == 1
    codes = set(re.findall(r": (PTR\d{3}) ", found.out))
    assert {"PTR001", "PTR101", "PTR201", "PTR202", "PTR301"} <= codes
    diff = run_cli("--no-cache", "--diff", "demo/buggy_train.py", cwd=ROOT)
    assert diff.code == 1
    assert "+params = trio.SamplingParams(max_tokens=32, temperature=0.0)" in diff.out
    assert '.result().metrics["loss' in diff.out
    assert (ROOT / "demo" / "buggy_train.py").read_text().count("max_new_tokens") == 1


def test_examples_are_lint_clean() -> None:
    result = run_cli("--no-cache", "examples/", cwd=ROOT)
    assert result.code == 0, result.out
