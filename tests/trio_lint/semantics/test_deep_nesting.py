"""Deeply nested code (generated lookup tables, long operator chains) is linted, not reported as
an internal error: the semantic model's pass must survive more than 1,000 frames of nesting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TRIO_LINT = str(Path(sys.executable).with_name("trio-lint"))


@pytest.mark.parametrize(
    "source",
    [
        # A right-deep chain of 900 conditional expressions (brackets cannot nest past 200).
        "import pytrio as trio\nPICK = " + "1 if a else " * 900 + "0\n",
        # A left-deep chain of 2,000 additions.
        "import pytrio as trio\nTOTAL = " + " + ".join(["1"] * 2000) + "\n",
    ],
    ids=["conditional-chain", "long-chain"],
)
def test_deep_nesting_is_linted_without_internal_errors(tmp_path, source) -> None:
    path = tmp_path / "deep.py"
    path.write_text(source)
    done = subprocess.run(
        [TRIO_LINT, "--no-cache", "--select", "ALL", "--output-format", "json", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    codes = [d["code"] for d in json.loads(done.stdout or "[]")]
    assert "PTR903" not in codes and "PTR900" not in codes, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
