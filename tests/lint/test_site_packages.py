"""Robustness on real code: lint installed site-packages with the SDK prefilter forced off."""

from __future__ import annotations

import ast
import json
import subprocess
import sysconfig
import warnings
from pathlib import Path

import pytest
from lint_helpers import TRIO_LINT

SAMPLE_STRIDE = (
    12  # every 12th file (sorted) plus all of pytrio; bench/lint_bench.py lints them all
)


def _sample() -> list[Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    files = sorted(p for p in site.rglob("*.py") if p.is_file())
    pytrio = [p for p in files if "/pytrio/" in p.as_posix()]
    return sorted(set(files[::SAMPLE_STRIDE]) | set(pytrio))


def _parses(path: Path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return False
    return True


@pytest.mark.slow
def test_site_packages_sample_lints_without_crashes(tmp_path: Path) -> None:
    """A deterministic sample (every 12th file of site-packages, sorted, plus every file of the
    pytrio SDK), linted by the console script with --force-sdk so every file is parsed and
    walked by every rule: no internal error, and a syntax error only where Python agrees."""
    files = _sample()
    assert len(files) > 300
    proc = subprocess.run(
        [
            TRIO_LINT,
            "--force-sdk",
            "--select",
            "ALL",
            "--no-cache",
            "--exit-zero",
            "--output-format",
            "json",
            *map(str, files),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = json.loads(proc.stdout)
    crashes = [r for r in records if r["code"] == "PTR903"]
    assert crashes == []
    unparsable = {r["filename"] for r in records if r["code"] == "PTR900"}
    assert all(not _parses(Path(name)) for name in unparsable)
