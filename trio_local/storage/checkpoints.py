"""Checkpoint directories: a peft-style adapter in safetensors, plus optimizer state for
`save_state` checkpoints. Each checkpoint is written into a staging directory and renamed into
place, so after a crash there is the complete checkpoint or none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trio_local.storage.files import staged_directory

ADAPTER_FILE = "adapter_model.safetensors"
ADAPTER_CONFIG = "adapter_config.json"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_STATE = "trainer_state.json"
# Files a downloaded archive carries: the adapter, loadable by peft.
ARCHIVE_FILES = (ADAPTER_CONFIG, ADAPTER_FILE)


@dataclass
class CheckpointData:
    adapter: dict[str, Any]  # tensors by peft state-dict key
    adapter_config: dict[str, Any]
    optimizer: dict[str, Any] | None = None  # tensors "<param index>.<state key>"
    trainer_state: dict[str, Any] | None = None  # step, param groups, lora settings


def _save_tensors(tensors: dict[str, Any], path: Path) -> None:
    from safetensors.torch import save

    path.write_bytes(save(tensors))


def write_checkpoint(target: Path, data: CheckpointData, *, overwrite: bool) -> int:
    """Write `data` to `target` atomically and return the checkpoint's size in bytes."""
    with staged_directory(target, overwrite=overwrite) as staging:
        _save_tensors(data.adapter, staging / ADAPTER_FILE)
        (staging / ADAPTER_CONFIG).write_text(json.dumps(data.adapter_config, indent=2))
        if data.optimizer is not None:
            _save_tensors(data.optimizer, staging / OPTIMIZER_FILE)
        if data.trainer_state is not None:
            (staging / TRAINER_STATE).write_text(json.dumps(data.trainer_state, indent=2))
    return sum(path.stat().st_size for path in target.iterdir() if path.is_file())


def read_checkpoint(path: Path) -> CheckpointData:
    from safetensors.torch import load_file

    optimizer_path = path / OPTIMIZER_FILE
    state_path = path / TRAINER_STATE
    return CheckpointData(
        adapter=load_file(path / ADAPTER_FILE),
        adapter_config=json.loads((path / ADAPTER_CONFIG).read_text()),
        optimizer=load_file(optimizer_path) if optimizer_path.is_file() else None,
        trainer_state=json.loads(state_path.read_text()) if state_path.is_file() else None,
    )
