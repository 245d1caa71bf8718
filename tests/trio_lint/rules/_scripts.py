"""Shared helpers: the realistic buggy scripts under scripts/ and their `# bug:` markers."""

from __future__ import annotations

import json
import re
from pathlib import Path

SCRIPTS = Path(__file__).parent / "scripts"
_MARKER = re.compile(r"#\s*bug:\s*(PTR\d{3}(?:\s*,\s*PTR\d{3})*)")
_CONFIG = re.compile(r"trio-lint-config:\s*(\{.*\})")


def script_paths() -> list[Path]:
    """PTRnnn_*.py (one rule's bugs each) and clean_*.py (correct code full of the same names)."""
    scripts = [*SCRIPTS.glob("PTR*.py"), *SCRIPTS.glob("clean_*.py")]
    return sorted(p for p in scripts if not p.name.endswith(".fixed.py"))


def expected_findings(source: str) -> list[tuple[int, str]]:
    """(line, code) for every `# bug: CODE[, CODE]` marker, sorted."""
    found = []
    for number, line in enumerate(source.splitlines(), start=1):
        match = _MARKER.search(line)
        if match:
            found += [(number, code.strip()) for code in match.group(1).split(",")]
    return sorted(found)


def script_config(source: str) -> dict:
    """The script's `trio-lint-config: {...}` line (JSON), plus the defaults every script uses."""
    match = _CONFIG.search(source)
    extra = json.loads(match.group(1)) if match else {}
    return {"target-version": "0.2", **extra}
