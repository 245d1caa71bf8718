"""Helpers for running the real `trio-lint` console script on real files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
TRIO_LINT = str(BIN / "trio-lint")

BAD = textwrap.dedent(
    """\
    import pytrio as trio

    adam = trio.AdamParams(lr=1e-4)
    params = trio.SamplingParams(max_new_tokens=64)
    x = trio.ModelInput.from_ints([-100, 1])
    """
)
FIXED = BAD.replace("lr=", "learning_rate=").replace("max_new_tokens", "max_tokens")
CLEAN = "import pytrio as trio\n\nadam = trio.AdamParams(learning_rate=1e-4)\n"


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*args: str, cwd: Path, stdin: str | None = None) -> Run:
    proc = subprocess.run(
        [TRIO_LINT, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
