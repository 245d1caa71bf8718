"""trio-local asks torch for transparent huge pages before it imports torch (THP_MEM_ALLOC_ENABLE),
so the logits slices a training pass allocates at every step are not paid for in 4 KB page
faults. Checked in fresh processes: torch reads the variable once, at its first allocation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

PROBE = """
import json, os
from trio_local.engine.libraries import HUGE_PAGES_VARIABLE, import_model_libraries
import_model_libraries("torch")
import torch
block = torch.ones(256 * 1024 * 1024 // 4)  # 256 MB, touched
rollup = open("/proc/self/smaps_rollup").read().splitlines()
huge = next(int(line.split()[1]) for line in rollup if line.startswith("AnonHugePages:"))
print(json.dumps({"value": os.environ.get(HUGE_PAGES_VARIABLE), "huge_kb": huge}))
"""
THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k != "THP_MEM_ALLOC_ENABLE"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_the_engine_turns_huge_pages_on_and_keeps_a_users_choice() -> None:
    assert probe()["value"] == "1"
    assert probe(THP_MEM_ALLOC_ENABLE="0")["value"] == "0"


@pytest.mark.skipif(
    not THP_MODE.is_file() or "[madvise]" not in THP_MODE.read_text(),
    reason="the kernel gives huge pages only to memory that asks for them (THP mode madvise)",
)
def test_a_large_tensor_lands_on_huge_pages() -> None:
    assert probe()["huge_kb"] >= 128 * 1024  # most of the 256 MB
    assert probe(THP_MEM_ALLOC_ENABLE="0")["huge_kb"] < 16 * 1024
