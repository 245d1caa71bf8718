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

# Files per console-script call: the whole list would not fit in one command line.
CHUNK = 2000


def _site_packages_files() -> list[Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    return sorted(p for p in site.rglob("*.py") if p.is_file())


def _parses(path: Path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return False
    return True


@pytest.mark.slow
def test_every_site_packages_file_lints_without_crashes(tmp_path: Path) -> None:
    """Every .py file of the installed site-packages (torch, transformers, peft, pytrio and the
    rest), linted by the console script with --force-sdk so every file is parsed and walked by
    every rule: no internal error, and a syntax error only where Python agrees."""
    files = _site_packages_files()
    assert any("/pytrio/" in p.as_posix() for p in files) and len(files) > 5000
    records = []
    for start in range(0, len(files), CHUNK):
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
                *map(str, files[start : start + CHUNK]),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        records += json.loads(proc.stdout)
    crashes = [r for r in records if r["code"] == "PTR903"]
    assert crashes == []
    unparsable = {r["filename"] for r in records if r["code"] == "PTR900"}
    assert all(not _parses(Path(name)) for name in unparsable)
